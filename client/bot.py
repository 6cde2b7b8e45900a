"""``parlour bot``: a computer player that plays over the protocol, like a person.

A :class:`Bot` is a front end of the client library, as the terminal is: it
says ``hello`` with ``bot=True`` (lobbies show it as a program), sits at
tables and plays. It sees only what its seat may see (the ``view`` the
server sends it) and chooses moves with :func:`games.bots.choose_move` in a
worker process (:class:`client.thinker.ProcessThinker`), so the event loop keeps answering
heartbeats and offers while it thinks.

Finding games (``mode``):

- ``create``: create a table and wait for an opponent; again after each game;
- ``join``: join open tables of its game as they appear in the lobby;
- ``auto`` (the default): join an open table if there is one, else create
  one; while it waits at its own table, an open table with a lower id is
  joined instead (so two ``auto`` bots that both created a table meet).

Its policy, stated:

- draw offers: ``never`` accepted (the default), ``always``, or
  ``when-losing``: when it has less material than its opponent (Othello
  discs, Ming Mang and Tactego pieces, Hexapawn pawns, Morris men in hand and
  on the board; never in Nimble, which has no material);
- takebacks: declined (accepted with ``accept_takebacks``);
- rematches: accepted. After a game it waits ``rematch_wait_s`` for the
  opponent's rematch offer, then leaves the table and looks for the next game;
- it never offers anything and never resigns while it can play;
- after ``games`` finished games, or on :meth:`Bot.stop` (SIGINT, SIGTERM),
  it leaves every table it sits at (a running game is forfeited at once
  rather than left to run out the grace period: the opponent wins; a game
  in which a side has not moved yet is aborted instead), closes
  the connection and returns 0.

A lost connection is resumed with the session's token (the seat and the game
come back with ``resumed``), retrying with backoff; a session the server no
longer knows starts afresh under the same name.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

import msgspec

import games
from games.bots import default_seconds
from protocol import messages as m

from .claims import NameClaims
from .connection import Client, ConnectionLost, ServerError
from .line_text import shutdown_text
from .sanitize import printable, printable_lines
from .thinker import ProcessThinker

__all__ = [
    "Bot",
    "BotSettings",
    "DRAW_POLICIES",
    "MODES",
    "material",
    "resume_or_renew",
]

MODES = ("auto", "create", "join")
DRAW_POLICIES = ("never", "always", "when-losing")

RECONNECT_DELAYS_S = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
"""Waits between reconnection attempts (the last one repeats), each stretched by a random 0-50 %
so that many bots cut off at once do not all knock at the same moment."""
LOBBY_RECHECK_S = 5.0
"""How often a bot with no game lists the lobby again, besides reacting to its pushes."""
TICK_S = 0.25
"""The longest the bot waits for a push before checking its timers (rematch wait, stop)."""
CLOCK_SHARE = 1 / 20
"""At a timed table, the most of its remaining time the bot spends on one move."""
MIN_THINK_S = 0.01

_MATERIAL_KEYS = {"othello": "discs", "mingmang": "counts", "tactego": "counts", "hexapawn": "pawns"}


@dataclass(frozen=True)
class BotSettings:
    """What a bot plays and how it behaves (see the module docstring for the policy).

    Attributes:
        game: the game's short name (``"othello"``).
        level: 1 (a beginner can win) to 5 (the strongest).
        mode: ``"auto"``, ``"create"`` or ``"join"``.
        options: the game options of the tables it creates.
        time_control: the clock of the tables it creates (``"5+3"``), ``None``: none.
        seconds: thinking time per move (``None``: the level's default); at a
            timed table never more than :data:`CLOCK_SHARE` of what is left.
        accept_draws: one of :data:`DRAW_POLICIES`.
        accept_takebacks: grant the opponent's takeback requests.
        games: stop after this many finished games (``None``: never).
        rematch_wait_s: how long it waits for a rematch offer after a game.
        give_up_s: stop trying to reconnect after this long without a connection.
        seed: seeds the move choosers (``None``: a random seed).
        pace_s: the least time between its turn coming and its move (for
            games people watch: a bot can otherwise answer in milliseconds).
    """

    game: str
    level: int
    mode: str = "auto"
    options: Mapping[str, Any] = field(default_factory=dict)
    time_control: str | None = None
    seconds: float | None = None
    accept_draws: str = "never"
    accept_takebacks: bool = False
    games: int | None = None
    rematch_wait_s: float = 10.0
    give_up_s: float = 300.0
    seed: int | None = None
    pace_s: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.accept_draws not in DRAW_POLICIES:
            raise ValueError(f"accept_draws must be one of {', '.join(DRAW_POLICIES)}, not {self.accept_draws!r}")
        default_seconds(self.level)  # raises ValueError for a level out of range
        games.get(self.game).resolve_options(self.options)  # raises InvalidOption


def material(view: Mapping[str, Any], seat: int) -> tuple[int, int] | None:
    """The material of ``seat`` and of its opponent in a view, or ``None`` for a game without material.

    Othello counts discs, Ming Mang and Tactego pieces, Hexapawn pawns, Morris
    men in hand and on the board; Nimble has no material.

    >>> material({"game": "othello", "discs": [10, 4]}, 1)
    (4, 10)
    """
    game = view.get("game")
    if game == "morris":
        mine = view["in_hand"][seat] + view["on_board"][seat]
        theirs = view["in_hand"][1 - seat] + view["on_board"][1 - seat]
        return (mine, theirs)
    key = _MATERIAL_KEYS.get(str(game))
    if key is None or key not in view:
        return None
    return (view[key][seat], view[key][1 - seat])


Connect = Callable[[str | None], Awaitable[Client]]
"""Opens a connection for the bot: resumes the session of the token given (``None``: a new session)."""


def resume_or_renew(host: str, port: int, name: str, claims: NameClaims | None = None, **connect_options: Any) -> Connect:
    """A :data:`Connect` for ``host:port`` as ``name`` that says hello as a bot and watches the lobby.

    With a token it resumes that session; if the server no longer knows it
    (``bad_token``: the session held no seat, or expired), it starts a new one,
    proving or claiming the name through ``claims`` (``None``: as a guest).
    ``connect_options`` go to :meth:`Client.connect` (``ssl``, ``password``, ...).
    """

    async def connect(token: str | None) -> Client:
        options = dict(connect_options, bot=True, watch_lobby=True)
        if token is not None:
            try:
                return await Client.connect(host, port, name=name, token=token, **options)
            except ServerError as exc:
                if exc.code != "bad_token":
                    raise
        if claims is not None:
            return await claims.connect(host, port, name, **options)
        return await Client.connect(host, port, name=name, **options)

    return connect


@dataclass
class Sitting:
    """A table the bot sits at: what it knows of it, and the move it is thinking about."""

    table: m.TableInfo
    seat: int
    view: dict[str, Any]
    clock: dict[str, Any] | None = None
    ended_at: float | None = None
    """The event-loop time the game ended, for the rematch wait."""
    thinking: asyncio.Task[None] | None = None
    thinking_ply: int = -1

    @property
    def running(self) -> bool:
        """The game is on (both seats filled, no outcome)."""
        return self.table.status == "playing" and self.view.get("outcome") is None

    def stop_thinking(self) -> None:
        """Forget the move being thought about (the position changed)."""
        if self.thinking is not None:
            self.thinking.cancel()
            self.thinking = None
        self.thinking_ply = -1


class BotError(Exception):
    """The bot cannot go on; the message says why."""


class Bot:
    """Plays ``settings.game`` over one connection, resumed when it drops.

    Args:
        settings: what to play and the policy.
        client: the first connection (already said hello as a bot).
        connect: opens another one after the connection is lost.
        say: prints one line of what the bot does.
        thinker: chooses moves (default: a :class:`ProcessThinker`).
    """

    def __init__(
        self,
        settings: BotSettings,
        client: Client,
        connect: Connect,
        say: Callable[[str], None],
        thinker: ProcessThinker | None = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self._connect = connect
        self._say = say
        self.thinker = thinker or ProcessThinker(settings.game)
        self._rng = random.Random(settings.seed)
        self.tables: dict[int, Sitting] = {}
        self.games_played = 0
        self._stopping: str | None = None
        self._stop_event = asyncio.Event()
        self._lobby_changed = True
        self._next_lobby_check = 0.0
        self._told_shutdown = False  # a shutdown notice was said since the last connection
        self._created: set[int] = set()

    # --- the outside -----------------------------------------------------------------------

    def stop(self, reason: str = "asked to stop") -> None:
        """Ask the bot to leave its tables and end :meth:`run` (safe to call from a signal handler)."""
        if self._stopping is None:
            self._stopping = reason
        self._stop_event.set()

    async def run(self) -> int:
        """Play until told to stop or the game count is reached; return the exit status.

        0: stopped as asked (or after ``settings.games`` games); 1: the
        connection could not be restored, or the session was taken over.
        """
        status = 0
        try:
            while True:
                await self._play_connected()
                if self._stopping is not None:
                    break
                if not await self._reconnect():
                    status = 0 if self._stopping is not None else 1  # stopped while reconnecting: as asked
                    break
        except BotError as exc:
            self._say(f"Stopping: {exc}")
            status = 1
        finally:
            await self._shut_down()
        return status

    # --- the main loop ---------------------------------------------------------------------

    async def _play_connected(self) -> None:
        """Handle pushes and timers until the connection is lost or the bot stops."""
        while self._stopping is None:
            try:
                event = await self.client.next_event(m.Message, timeout_s=TICK_S)
            except TimeoutError:
                event = None
            except ConnectionLost:
                return
            try:
                if event is not None:
                    await self._on_event(event)
                await self._on_tick()
            except ConnectionLost:
                return
            except ServerError as exc:
                self._say(f"error ({exc.code}): {printable_lines(exc.message)}")

    async def _on_tick(self) -> None:
        """Leave finished tables once the rematch wait is over; look for a game when there is none."""
        now = asyncio.get_running_loop().time()
        for table_id, sitting in list(self.tables.items()):
            if sitting.ended_at is not None and now - sitting.ended_at >= self.settings.rematch_wait_s:
                await self._leave(table_id, "no rematch offered")
        if self._stopping is None:
            await self._seek(now)

    async def _reconnect(self) -> bool:
        """Resume the session with backoff; ``False`` when giving up (or stopping meanwhile)."""
        for sitting in self.tables.values():
            sitting.stop_thinking()
        if self.client.superseded:
            self._say("Signed in elsewhere: another connection took over this session; stopping so as not to take it back.")
            return False
        if self._told_shutdown:
            self._say("Reconnecting when the server is back...")
        else:
            self._say(f"Connection lost ({printable_lines(self.client.close_reason or 'closed')}); reconnecting...")
        self._told_shutdown = False
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + self.settings.give_up_s
        attempt = 0
        token = self.client.token
        while loop.time() < give_up_at:
            delay = RECONNECT_DELAYS_S[min(attempt, len(RECONNECT_DELAYS_S) - 1)] * (1 + self._rng.random() / 2)
            attempt += 1
            try:
                await asyncio.wait_for(self._stop_event.wait(), delay)
                return False  # stopped while waiting
            except TimeoutError:
                pass
            try:
                client = await self._connect(token)
            except ServerError as exc:
                if exc.code in ("too_many_connections", "shutting_down"):
                    continue
                self._say(f"Cannot reconnect: the server refused ({exc.code}): {printable_lines(exc.message)}")
                return False
            except OSError:  # refused, unreachable, timed out, TLS
                continue
            await self._resumed_with(client)
            return True
        self._say(f"Gave up reconnecting after {self.settings.give_up_s:g} s.")
        return False

    async def _resumed_with(self, client: Client) -> None:
        self.client = client
        assert client.welcome is not None
        self.tables.clear()  # the server tells again where we sit (resumed), or we start afresh
        self._created.clear()
        self._lobby_changed = True
        if client.welcome.resumed:
            self._say("Reconnected; resuming the session.")
            await client.ping()  # every resumed push comes before the pong: none is missed by the next seek
        else:
            self._say("Reconnected with a new session (the old one had expired).")

    async def _shut_down(self) -> None:
        """Leave every table (forfeiting a running game), close the connection, stop the worker."""
        for sitting in self.tables.values():
            sitting.stop_thinking()
        if not self.client.closed.is_set():
            for table_id in list(self.tables):
                try:
                    await asyncio.wait_for(self._leave(table_id, self._stopping or "stopping"), 5.0)
                except (ServerError, ConnectionLost, TimeoutError):
                    break
        await self.client.close()
        self.thinker.close()
        self._say(f"Stopped ({self._stopping or 'connection gone'}); {self.games_played} game(s) played.")

    # --- finding a game --------------------------------------------------------------------

    async def _seek(self, now: float) -> None:
        """Find a game when the bot sits at no table (a finished one is left after the rematch wait).

        In ``auto`` mode, a bot waiting alone at its own table still looks for an older open table.
        """
        open_tables = list(self.tables.values())
        waiting_at_own = len(open_tables) == 1 and open_tables[0].table.status == "waiting"
        if open_tables and not (waiting_at_own and self.settings.mode == "auto"):
            return
        if not (self._lobby_changed or now >= self._next_lobby_check):
            return
        self._lobby_changed = False
        self._next_lobby_check = now + LOBBY_RECHECK_S
        if self.settings.mode in ("join", "auto"):
            below = open_tables[0].table.id if open_tables else None
            if await self._join_open_table(below):
                for sitting in open_tables:  # the table we waited at: nobody came, so nobody is let down
                    if sitting.table.status == "waiting":
                        await self._leave(sitting.table.id, "joined an older table instead")
                return
        if not open_tables and self.settings.mode in ("create", "auto"):
            await self._create()

    async def _join_open_table(self, below: int | None) -> bool:
        """Join the oldest open table of our game (with an id below ``below``, if given); whether one was joined."""
        tables = await self.client.list_tables()
        for table in tables:
            if not self._joinable(table) or (below is not None and table.id >= below):
                continue
            try:
                joined = await self.client.join_table(table.id)
            except ServerError:
                continue  # taken meanwhile, or full: try the next
            self._sit(joined)
            return True
        return False

    def _joinable(self, table: m.TableInfo) -> bool:
        return (
            table.game == self.settings.game
            and table.status == "waiting"
            and table.seats.count(None) == 1
            and table.id not in self.tables
        )

    async def _create(self) -> None:
        settings = self.settings
        joined = await self.client.create_table(settings.game, dict(settings.options), time_control=settings.time_control)
        self._created.add(joined.table.id)
        self._say(f"Created table {joined.table.id} ({settings.game}); waiting for an opponent.")
        self._sit(joined)

    def _sit(self, joined: m.TableJoined) -> None:
        assert joined.seat is not None
        sitting = Sitting(joined.table, joined.seat, joined.view, clock=joined.table.clock)
        self.tables[joined.table.id] = sitting
        if joined.table.id not in self._created:
            self._say(f"Joined table {joined.table.id} as {self._seat_name(joined.seat)}.")
        self._maybe_think(sitting)

    async def _leave(self, table_id: int, why: str) -> None:
        sitting = self.tables.pop(table_id, None)
        if sitting is None:
            return
        sitting.stop_thinking()
        forfeit = ""
        if sitting.running:  # before both sides moved (two plies) leaving aborts the game rather than forfeiting it
            forfeit = " (forfeiting the running game)" if int(sitting.view.get("ply", 0)) >= 2 else " (aborting the game: a side had not moved yet)"
        try:
            await self.client.leave_table(table_id)
        except ServerError as exc:
            if exc.code not in ("no_such_table", "not_at_table"):
                raise
        self._say(f"Left table {table_id}{forfeit}: {why}.")

    # --- pushes -----------------------------------------------------------------------------

    async def _on_event(self, event: m.Message) -> None:
        if isinstance(event, m.TableUpdated):
            await self._on_table_updated(event.table)
            return
        if isinstance(event, m.Resumed):
            if event.seat is not None:
                self.tables[event.table.id] = Sitting(event.table, event.seat, event.view, clock=event.table.clock)
                self._say(f"Back at table {event.table.id} as {self._seat_name(event.seat)}.")
                self._maybe_think(self.tables[event.table.id])
            return
        if isinstance(event, m.RematchStarted):
            if event.seat is None:
                return  # a bot watches no table, so it follows no rematch as a spectator
            self.tables[event.table.id] = Sitting(event.table, event.seat, event.view, clock=event.table.clock)
            self._say(f"Rematch at table {event.table.id}: playing {self._seat_name(event.seat)}.")
            await self._leave(event.previous, "the rematch started")
            self._maybe_think(self.tables[event.table.id])
            return
        if isinstance(event, m.Error):
            self._say(f"error ({printable(event.code)}): {printable_lines(event.message)}")
            return
        if isinstance(event, m.Shutdown):
            self._say(shutdown_text(event.message))
            self._told_shutdown = True  # the reconnection that follows need not say why again
            return
        sitting = self.tables.get(getattr(event, "table", None))  # type: ignore[arg-type]
        if sitting is not None:
            await self._at_table(sitting, event)

    async def _on_table_updated(self, table: m.TableInfo) -> None:
        sitting = self.tables.get(table.id)
        if sitting is None:
            if self._joinable(table):
                self._lobby_changed = True
            return
        sitting.table = _replace(table, options=sitting.table.options)  # the lobby summarises long options
        if table.clock is not None:
            sitting.clock = table.clock

    async def _at_table(self, sitting: Sitting, event: m.Message) -> None:
        if isinstance(event, m.GameStarted):
            sitting.view = event.view
            sitting.table = _replace(sitting.table, seats=event.seats, status="playing")
            names = " vs ".join(printable(name or "?") for name in event.seats)
            self._say(f"Game at table {sitting.table.id} starts: {names}.")
        elif isinstance(event, m.Moved):
            sitting.view = event.view
            if event.clock is not None:
                sitting.clock = event.clock
        elif isinstance(event, m.TakenBack):
            sitting.view = event.view
            sitting.stop_thinking()
            if event.clock is not None:
                sitting.clock = event.clock
            self._say(f"Table {sitting.table.id}: {event.plies} ply(s) taken back.")
        elif isinstance(event, m.GameOver):
            self._game_over(sitting, event.outcome)
            return
        elif isinstance(event, m.Offered):
            if event.seat != sitting.seat:
                await self._answer(sitting, event)
            return
        elif isinstance(event, m.PlayerAway):
            self._say(f"Table {sitting.table.id}: {printable(event.name)} lost their connection.")
            return
        else:
            return
        self._maybe_think(sitting)

    def _game_over(self, sitting: Sitting, outcome: dict[str, Any]) -> None:
        sitting.stop_thinking()
        sitting.view = dict(sitting.view, outcome=outcome, to_move=None)
        sitting.view.pop("legal_moves", None)
        sitting.table = _replace(sitting.table, status="over", outcome=outcome)
        sitting.ended_at = asyncio.get_running_loop().time()
        self.games_played += 1
        winner = outcome.get("winner")
        result = "aborted" if outcome.get("aborted") is True else "draw" if winner is None else "won" if winner == sitting.seat else "lost"
        reason = printable(str(outcome.get("reason", "")))
        self._say(f"Game over at table {sitting.table.id}: {result} ({reason}). Games played: {self.games_played}.")
        if self.settings.games is not None and self.games_played >= self.settings.games:
            self.stop(f"played {self.games_played} game(s)")

    async def _answer(self, sitting: Sitting, offer: m.Offered) -> None:
        accept = self._accepts(sitting, offer.kind)
        if offer.kind == "rematch" and sitting.table.id in self.tables:
            sitting.ended_at = None  # answered: no more waiting for it
        try:
            await self.client.answer(sitting.table.id, offer.kind, accept)
        except ServerError as exc:
            if offer.kind == "rematch":
                sitting.ended_at = asyncio.get_running_loop().time()  # the rematch could not start: leave as usual
            self._say(f"Table {sitting.table.id}: could not answer the {offer.kind} offer ({exc.code}): {printable_lines(exc.message)}")
            return
        self._say(f"Table {sitting.table.id}: {'accepted' if accept else 'declined'} the {offer.kind} offer.")

    def _accepts(self, sitting: Sitting, kind: str) -> bool:
        if kind == "rematch":
            return self._stopping is None
        if kind == "takeback":
            return self.settings.accept_takebacks
        if kind == "draw":
            policy = self.settings.accept_draws
            if policy != "when-losing":
                return policy == "always"
            counts = material(sitting.view, sitting.seat)
            return counts is not None and counts[0] < counts[1]
        return False

    # --- thinking ----------------------------------------------------------------------------

    def _maybe_think(self, sitting: Sitting) -> None:
        """Start choosing a move if it is our turn and we are not already thinking about this ply."""
        view = sitting.view
        if not sitting.running or not view.get("legal_moves") or view.get("forced_pass"):
            return
        ply = view["ply"]
        if sitting.thinking is not None and sitting.thinking_ply == ply:
            return
        sitting.stop_thinking()
        sitting.thinking_ply = ply
        sitting.thinking = asyncio.create_task(self._think_and_move(sitting, ply, view))

    def _think_seconds(self, sitting: Sitting) -> float:
        seconds = self.settings.seconds or default_seconds(self.settings.level)
        clock = sitting.clock
        if clock is not None and clock.get("remaining_ms") is not None:
            left_s = clock["remaining_ms"][sitting.seat] / 1000
            seconds = min(seconds, left_s * CLOCK_SHARE)
        return max(MIN_THINK_S, seconds)

    async def _think_and_move(self, sitting: Sitting, ply: int, view: dict[str, Any]) -> None:
        table_id = sitting.table.id
        loop = asyncio.get_running_loop()
        turn_began = loop.time()
        try:
            move = await self.thinker.choose(self.settings.level, view, self._think_seconds(sitting), self._rng.getrandbits(32))
        except concurrent.futures.process.BrokenProcessPool:
            self._say("The thinking process died twice; stopping.")
            self.stop("the thinking process died")
            return
        except Exception as exc:  # a chooser's bug must not stop the game: any legal move will do
            move = self._rng.choice(view["legal_moves"])
            self._say(f"Table {table_id}: the chooser failed ({type(exc).__name__}: {exc}); playing {printable(move)} at random.")
        await asyncio.sleep(max(0.0, self.settings.pace_s - (loop.time() - turn_began)))
        if self.tables.get(table_id) is not sitting or sitting.view.get("ply") != ply:
            return  # the position moved on while we thought
        try:
            await self.client.move(table_id, move, ply=ply)
        except ServerError as exc:
            self._say(f"Table {table_id}: the move {printable(move)} was refused ({exc.code}): {printable_lines(exc.message)}")
            return
        except ConnectionLost:
            return  # the move is played again after resuming, if it was lost
        self._say(f"Table {table_id}: played {printable(move)}.")

    def _seat_name(self, seat: int) -> str:
        return games.get(self.settings.game).seats[seat]


def _replace(table: m.TableInfo, **changes: Any) -> m.TableInfo:
    return msgspec.structs.replace(table, **changes)
