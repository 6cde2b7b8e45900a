"""Computer seats: the server's own player, thinking in worker processes.

When it is a computer seat's turn, :meth:`ComputerPlayers.wake` sends that
seat's view (never the state: the computer sees only what its seat may see)
to a worker (:mod:`server.play.workers`). The move comes back on the event loop
and is played through the same pipeline as a person's move
(:meth:`server.play.authority.Authority.play_computer_move`): same checks, same
commit, same clocks and fan-out. An answer for a position the table has left
meanwhile (a takeback, a resignation, the end of the game) is dropped.

A game is never left stuck: if no move comes back (a worker crashed twice,
the chooser failed) or the move is refused, the computer plays a random legal
move and the server logs why.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import random
import secrets
from typing import Any, Awaitable, Callable

from games.bots import MAX_LEVEL, MIN_LEVEL, default_seconds
from protocol import Code

from ..core.errors import RequestError
from ..tables.table import Table, view_of
from .workers import ThinkingFailed, WorkerPool

__all__ = ["ComputerPlayers", "StaleMove", "has_computer_player", "DEFAULT_HINT_SECONDS", "HINT_LEVEL"]

log = logging.getLogger(__name__)

DEFAULT_HINT_SECONDS = 0.2
"""How long the computer thinks for a hint, in seconds."""
HINT_LEVEL = MAX_LEVEL
"""The level whose move a hint gives."""
RETRY_S = 1.0
"""How long the computer waits to try again after its move could not be saved."""

PlaySeatMove = Callable[[Table, int, str, list[str]], Awaitable[None]]


class StaleMove(Exception):
    """The table is no longer where the computer's move was thought out for; the move is dropped."""


def has_computer_player(game: str) -> bool:
    """Whether ``game`` (a known game's name) has a chooser module in :mod:`games.bots`."""
    return importlib.util.find_spec(f"games.bots.{game}") is not None


class ComputerPlayers:
    """Thinks for every computer seat of a server, one move at a time per table.

    Args:
        pool: the worker processes.
        play: ``await play(table, seat, move, moves_before)`` plays ``move``
            for the computer ``seat``; raises :class:`StaleMove` when the
            table's moves are no longer ``moves_before``, ``RequestError`` when
            the rules refuse the move.
        seconds: the strongest level's thinking time per move (``None``: the
            defaults of :func:`games.bots.default_seconds`); lower levels
            think proportionally less.
        hint_seconds: how long a hint is thought about.
    """

    def __init__(self, pool: WorkerPool, play: PlaySeatMove, seconds: float | None = None, hint_seconds: float = DEFAULT_HINT_SECONDS) -> None:
        self.pool = pool
        self._play = play
        self._seconds = seconds
        self.hint_seconds = hint_seconds
        self._thinking: dict[int, tuple[list[str], asyncio.Task[None]]] = {}  # table id -> (its moves then, the task)
        self._closed = False

    def seconds_for(self, level: int) -> float:
        """The thinking time per move of ``level``, in seconds."""
        if self._seconds is None:
            return default_seconds(level)
        return self._seconds * default_seconds(level) / default_seconds(MAX_LEVEL)

    @property
    def thinking(self) -> int:
        """How many computer seats are thinking now."""
        return len(self._thinking)

    def wake(self, table: Table) -> None:
        """Start thinking if a computer seat of ``table`` is to move (no-op otherwise, or if it already thinks there)."""
        turn = table.computer_to_move()
        if turn is None or self._closed:
            return
        current = self._thinking.get(table.id)
        if current is not None:
            if current[0] == table.moves:
                return
            current[1].cancel()  # thought out for a position taken back: its answer would be dropped anyway
        seat, level = turn
        moves = list(table.moves)
        task = asyncio.ensure_future(self._think(table, seat, level, view_of(table.state, seat), moves))
        self._thinking[table.id] = (moves, task)
        task.add_done_callback(lambda done: self._done(table.id, done))

    def _done(self, table_id: int, task: asyncio.Task[None]) -> None:
        current = self._thinking.get(table_id)
        if current is not None and current[1] is task:
            del self._thinking[table_id]

    async def _think(self, table: Table, seat: int, level: int, view: dict[str, Any], moves: list[str]) -> None:
        seed = secrets.randbits(63)
        try:
            move = await self.pool.choose(table.game.name, level, view, self.seconds_for(level), seed)
        except ThinkingFailed as exc:
            log.error("table %d: the computer (level %d) found no move (%s); it plays a random legal move", table.id, level, exc)
            move = _random_move(view, seed)
        try:
            await self._play(table, seat, move, moves)
        except StaleMove:
            log.debug("table %d: the computer's move %s came after the position changed; dropped", table.id, move)
        except RequestError as exc:
            if exc.code is not Code.ILLEGAL_MOVE:
                log.debug("table %d: the computer's move %s was refused (%s); dropped", table.id, move, exc.message)
                return
            log.error("table %d: the computer (level %d) chose %r, which the rules refuse (%s); it plays a random legal move",
                      table.id, level, move, exc.message)
            await self._play_random(table, seat, view, moves, seed)
        except Exception as exc:  # the move could not be saved (disk full, ...): try again shortly
            log.error("table %d: the computer's move could not be played (%s); trying again in %g s", table.id, exc, RETRY_S)
            asyncio.get_running_loop().call_later(RETRY_S, self.wake, table)

    async def _play_random(self, table: Table, seat: int, view: dict[str, Any], moves: list[str], seed: int) -> None:
        try:
            await self._play(table, seat, _random_move(view, seed), moves)
        except (StaleMove, RequestError) as exc:
            log.error("table %d: the computer's random move was refused too (%s)", table.id, exc)

    async def hint(self, table: Table, seat: int) -> tuple[int, str]:
        """The move the computer would play for ``seat`` now, and the ply it is for.

        Raises:
            RequestError: ``internal_error`` when no move came back from the workers.
        """
        view = view_of(table.state, seat)
        ply = table.state.ply
        try:
            move = await self.pool.choose(table.game.name, HINT_LEVEL, view, self.hint_seconds, secrets.randbits(63))
        except ThinkingFailed as exc:
            log.error("table %d: no hint for %s: %s", table.id, table.game.seats[seat], exc)
            raise RequestError(Code.INTERNAL_ERROR, "the computer could not find a hint just now; try again") from None
        return ply, move

    async def close(self) -> None:
        """Stop thinking (answers still out are dropped) and stop the worker processes."""
        self._closed = True
        tasks = [task for _, task in self._thinking.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.pool.close()


def check_level(level: int, field: str) -> None:
    """Raise ``bad_request`` naming ``field`` unless ``level`` is a computer level."""
    if not MIN_LEVEL <= level <= MAX_LEVEL:
        raise RequestError(Code.BAD_REQUEST, f"a computer level is {MIN_LEVEL} to {MAX_LEVEL}, not {level}", field)


def _random_move(view: dict[str, Any], seed: int) -> str:
    """A legal move of ``view`` drawn with ``seed`` (``"pass"`` if the view lists none: the rules then judge it)."""
    return random.Random(seed).choice(view.get("legal_moves") or ["pass"])
