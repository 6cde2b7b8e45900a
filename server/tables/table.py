"""A table: one game session, its seats and spectators.

The table holds the only true state of its game. Every change goes through
:meth:`Table.play`, :meth:`Table.resign` and the seating methods, which check
who may do it and raise :class:`RequestError` with a stable code otherwise.
Views are made per seat at the send boundary (:meth:`Table.view_for`), so a
connection only ever receives what its seat may see.

This module holds the table's state, what it shows (:meth:`Table.info`,
:meth:`Table.view_for`) and a move's plan and apply; the table's other
methods are in its parts: :mod:`server.tables.seating` (seats and
spectators), :mod:`server.tables.offers` (offers and takebacks),
:mod:`server.tables.endings` (resign, forfeit, abort, end) and
:mod:`server.tables.timing` (its clock); :class:`Played` is in
:mod:`server.tables.played`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import msgspec

import games
from games import Game, IllegalMove, Outcome, State
from protocol import Code
from protocol.messages import RatingChange, SeatRating, TableInfo, summarize_options

from ..bus.bus import Bus, table_topic
from ..bus.local import LocalBus
from .clock import Clock
from ..net.peer import Peer
from ..core.errors import RequestError
from ..core.session import Session
from .endings import TableEndings
from .offers import TableOffers
from . import othello_views
from .played import Played
from .seating import TableSeating
from .tablelock import TableLock
from .timing import TableClock

__all__ = ["Table", "Played", "NO_COMPUTER", "PLACEHOLDER_SEED", "computer_name", "forced_pass_due", "view_of"]

NO_COMPUTER: list[int | None] = [None, None]
""":attr:`Table.computer` of a table without a computer seat (compare with ``!=``; never change it)."""

PLACEHOLDER_SEED = "placeholder"
"""The seed of the board shown at a waiting table whose secret setup is dealt only when play starts."""



class Table(TableSeating, TableOffers, TableEndings, TableClock):
    """One game with two seats and any number of spectators.

    Args:
        table_id: the lobby id (positive integer).
        game: the rules engine.
        options: the resolved options.
        seed: the setup seed (recorded; kept from players while it is secret);
            ``None`` while a secret setup is not dealt yet.
        state: the starting state (built from :data:`PLACEHOLDER_SEED` while
            the setup is not dealt yet).
        bus: carries the table's events (topic :attr:`topic`) to its seated
            sessions (each with its seat's view) and spectators (view ``None``);
            by default a bus of its own.
    """

    def __init__(self, table_id: int, game: Game, options: dict[str, Any], seed: str | int | None, state: State, bus: Bus | None = None) -> None:
        self.id = table_id
        self.bus: Bus = bus if bus is not None else LocalBus()
        self.topic = table_topic(table_id)
        self.game = game
        self.options = options
        self.seed = seed
        self.state = state
        self.moves: list[str] = []
        self.forced: list[bool] = []  # per ply of ``moves``: a pass the server played
        self.seats: list[Session | None] = [None, None]
        self.seat_names: list[str | None] = [None, None]
        self.spectators: set[Session] = set()
        self.started = False
        self.ended: Outcome | None = None
        self.lock = TableLock()  # one state-changing request at a time, persistence included
        self.grace: dict[int, asyncio.TimerHandle] = {}  # seat -> forfeit timer while its player is away
        self.created_at = time.time()
        self.moved: set[int] = set()  # seats that have played a move of their own
        self.offers: dict[str, tuple[int, int]] = {}  # kind -> (offering seat, plies)
        self.clock: Clock | None = None
        self.flag_timer: asyncio.TimerHandle | None = None
        self.flag_timer_for = 0.0  # the flag time (time.monotonic()) the flag timer was set for
        self.abort_timer: asyncio.TimerHandle | None = None  # aborts a timed game whose side to move has not moved yet
        self.abort_timer_ply = -1  # the ply the abort timer waits at
        self.rematch: int | None = None  # the table where this game's rematch is played
        self.seed_chosen = False  # a player chose the seed, so it is shown to all: nobody knows more than the others
        self.dealt = True  # False: the state is a placeholder; the secret setup is dealt as play starts
        self.creator_host: str | None = None  # the address whose per-address table budget this table counts against
        self.computer: list[int | None] = [None, None]  # per seat: the level of the computer player sitting there
        self.hints = False  # whether the seated players may ask for hints (always, with a computer seat)
        self.rated = False  # whether the game changes the players' ratings (server.ratings.rated)
        self.seat_ratings: list[SeatRating | None] = [None, None]  # at a rated table: each seated player's rating
        self.rating_changes: list[RatingChange] | None = None  # once a rated game is over: each seat's change
        self.view_map = othello_views.view_map if othello_views.applies(game.name, options) else None
        """Writes this table's views as MessagePack from the position's bitboards (:mod:`.othello_views`); ``None``: dicts."""
        self._planned: State | None = None  # the last position a plan led to, and its seat to move (a property
        self._planned_to_move: int | None = None  # read saved on the next move, if that position is the table's then)

    @classmethod
    def create(
        cls, table_id: int, game_name: str, options: dict[str, Any], seed: str | int | None, *, seed_chosen: bool = False, bus: Bus | None = None
    ) -> "Table":
        """Build a table for a new game.

        ``seed=None`` means the server draws one: at once, or, when the setup
        is secret, only as play starts (:meth:`plan_deal`); until then the
        table is not dealt and its state is drawn from :data:`PLACEHOLDER_SEED`,
        only to show a board. A setup without chance (``Game.setup_uses_chance``
        false: Othello, a Nimble ``board``) has no seed: none is drawn, and a
        given one is checked, then dropped (not sent, not stored, not "chosen").

        Raises:
            RequestError: ``unknown_game`` or ``bad_option`` with the engine's reason.
        """
        try:
            game = games.get(game_name)
        except games.UnknownGame as exc:
            raise RequestError(Code.UNKNOWN_GAME, str(exc)) from None
        try:
            resolved = game.resolve_options(options)
            chance = game.setup_uses_chance(resolved)
            undealt = seed is None and game.seed_is_secret(resolved)
            if seed is None and chance and not undealt:
                seed = secrets.token_hex(8)
            state = game.new_state(resolved, PLACEHOLDER_SEED if undealt else seed)  # refuses an unusable seed
        except games.InvalidOption as exc:
            field = "seed" if exc.option == "seed" else f"options.{exc.option}" if exc.option else "options"
            raise RequestError(Code.BAD_OPTION, str(exc), field) from None
        if not chance:
            seed, seed_chosen = None, False
        table = cls(table_id, game, resolved, seed, state, bus)
        table.seed_chosen = seed_chosen
        table.dealt = not undealt
        return table

    # --- status ------------------------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended (by the rules or by a table action), or ``None``.

        A setup fixed by the options (a Nimble board, a Morris position, a
        chosen seed) that is already decided is over from the start. A secret
        setup not dealt yet has no outcome: its placeholder board decides
        nothing, and a setup dealt as play starts takes effect then.
        """
        return self.ended or (self.state.outcome if self.started or self.dealt else None)

    @property
    def status(self) -> str:
        """``"waiting"`` for players, ``"playing"``, or ``"over"``."""
        if self.outcome is not None:
            return "over"
        return "playing" if self.started else "waiting"

    def lobby_info(self) -> TableInfo:
        """Return the table as the lobby shows it: :meth:`info` with long option texts summarized (bounded size)."""
        info = self.info()
        return msgspec.structs.replace(info, options=summarize_options(info.options))

    def info(self) -> TableInfo:
        """Return the table as those at it see it, full options included (the seed hidden while secret, unless a player chose it)."""
        secret = self.outcome is None and self.game.seed_is_secret(self.options) and not self.seed_chosen
        outcome = self.outcome
        return TableInfo(
            id=self.id,
            game=self.game.name,
            options=_wire_options(self.options),
            seats=list(self.seat_names),
            status=self.status,
            spectators=len(self.spectators),
            ply=self.state.ply,
            seed=None if secret else self.seed,
            outcome=outcome.to_dict() if outcome is not None else None,
            time_control=str(self.clock.control) if self.clock is not None else None,
            clock=self.clock_snapshot(),
            computer=list(self.computer) if self.has_computer() else None,
            hints=self.hints_allowed(),
            bots=self._bots(),
            ratings=self._ratings(),
        )

    def _ratings(self) -> list[SeatRating | None] | None:
        """At a rated table, each seated player's rating as it was when they sat; ``None`` at an unrated one."""
        if not self.rated:
            return None
        return [rating if name is not None else None for rating, name in zip(self.seat_ratings, self.seat_names)]

    def _bots(self) -> list[bool] | None:
        """Per seat, whether its player said ``hello`` as a program; ``None`` when neither did."""
        bots = [holder is not None and holder.bot for holder in self.seats]
        return bots if any(bots) else None

    # --- computer seats ---------------------------------------------------------------

    def has_computer(self) -> bool:
        """Whether the server's computer player sits in a seat here."""
        return self.computer != NO_COMPUTER

    def hints_allowed(self) -> bool:
        """Whether the seated players may ask for hints: the table allows them, or the computer plays here."""
        return self.hints or self.has_computer()

    def seat_computer(self, seat: int, level: int) -> None:
        """Seat the computer player of ``level`` (1-5) in the free ``seat``; its name is :func:`computer_name`."""
        assert self.seats[seat] is None and self.seat_names[seat] is None
        self.computer[seat] = level
        self.seat_names[seat] = computer_name(level)

    def computer_to_move(self) -> tuple[int, int] | None:
        """``(seat, level)`` of a computer seat whose turn it is in a running game, else ``None``."""
        computer = self.computer
        if computer[0] is None and computer[1] is None:
            return None  # no computer seat (every move asks; most tables have none)
        seat = self.state.to_move
        if not self.started or self.outcome is not None or seat is None:
            return None
        level = self.computer[seat]
        return None if level is None else (seat, level)

    def clock_snapshot(self) -> dict[str, Any] | None:
        """Both clocks now (``remaining_ms``, ``running``, ``control``), or ``None`` untimed."""
        return self.clock.snapshot(time.monotonic()) if self.clock is not None else None

    def members(self) -> list[tuple[Peer, int | None]]:
        """Every connected peer at the table, with its seat (``None``: spectator)."""
        seated = [(s.peer, seat) for seat, s in enumerate(self.seats) if s is not None and s.peer is not None]
        return seated + [(s.peer, None) for s in self.spectators if s.peer is not None]

    def view_for(self, seat: int | None, forced_pass: bool | None = None) -> dict[str, Any]:
        """The current view for ``seat``, with a table-level outcome (resignation, ...) folded in.

        Until play starts every seat gets the spectator view: nobody learns
        any hidden part of a setup before both seats are filled. Once the game
        is over everyone sees all of it (:meth:`games.State.revealed`). ``forced_pass``:
        as :func:`view_of`.
        """
        state = self.state
        if (self.ended is not None or state.outcome is not None) and (self.started or self.dealt):
            state = state.revealed()  # the game is over: its hidden setup is public now
        view = state.view(seat if self.started else None)  # view_of(), written out: this makes every move's view
        if forced_pass_due(state) if forced_pass is None else forced_pass:
            view.pop("legal_moves", None)
            view["forced_pass"] = True
        if self.ended is not None:
            view["outcome"] = self.ended.to_dict()
            view["to_move"] = None
            view.pop("legal_moves", None)
        return view

    # --- play ---------------------------------------------------------------------

    def seat_of(self, peer: Session) -> int:
        """Return the seat a session holds here.

        Raises:
            RequestError: ``not_seated``.
        """
        if peer not in self.seats:
            raise RequestError(Code.NOT_SEATED, f"you do not hold a seat at table {self.id}")
        return self.seats.index(peer)

    def check_running(self) -> None:
        """Raise ``game_over`` or ``not_started`` unless the game is being played."""
        if self.outcome is not None:
            raise RequestError(Code.GAME_OVER, f"the game at table {self.id} is over")
        if not self.started:
            raise RequestError(Code.NOT_STARTED, f"table {self.id} is waiting for a second player")

    def plan_move(self, peer: Session, move: str, ply: int | None) -> list[Played]:
        """Check ``move`` for a session's seat and work out the plies it leads to.

        Nothing changes until :meth:`apply` (the server persists in between).

        Returns:
            The plies to apply: the player's own first, then any forced passes.

        Raises:
            RequestError: ``not_seated``, ``not_started``, ``game_over``,
                ``not_your_turn``, ``stale_ply`` or ``illegal_move`` (with the rule).
        """
        seats = self.seats
        seat = 0 if seats[0] is peer else 1 if seats[1] is peer else self.seat_of(peer)  # seat_of() raises not_seated
        return self.plan_seat_move(seat, move, ply)

    def plan_seat_move(self, seat: int, move: str, ply: int | None) -> list[Played]:
        """:meth:`plan_move` for ``seat`` itself (a computer seat, which has no session).

        Raises:
            RequestError: as :meth:`plan_move`, ``not_seated`` aside.
        """
        return self.plan_turn(seat, move, ply)[0]

    def plan_turn(self, seat: int, move: str, ply: int | None) -> tuple[list[Played], Outcome | None]:
        """:meth:`plan_seat_move`, and the outcome of the last position planned (``None``: the game goes on).

        Raises:
            RequestError: as :meth:`plan_seat_move`.
        """
        state = self.state
        # The seat to move (None once the game is over): the last plan's turn() told it, if that plan is the position now.
        to_move = self._planned_to_move if self._planned is state else state.to_move
        if self.ended is not None or not self.started or to_move is None:
            self.check_running()  # raises game_over or not_started (the running game skips the call)
        if to_move != seat:
            raise RequestError(Code.NOT_YOUR_TURN, f"it is {self.game.seats[1 - seat]}'s turn, not yours")
        if ply is not None and ply != state.ply:
            raise RequestError(Code.STALE_PLY, f"the game is at ply {state.ply}, not {ply}")
        try:
            state = state.play(move)
        except IllegalMove as exc:
            raise RequestError(Code.ILLEGAL_MOVE, exc.reason) from None
        played = [Played(seat, state.last_move, state.ply, False, state)]  # type: ignore[arg-type]
        mover, outcome, only_pass = state.turn()  # forced_pass_due(state) and the outcome in one call: every move
        while only_pass:
            assert mover is not None
            state = state.play("pass")
            played.append(Played(mover, "pass", state.ply, True, state))
            mover, outcome, only_pass = state.turn()
        self._planned, self._planned_to_move = state, mover
        return played, outcome

    def apply(self, played: list[Played]) -> None:
        """Make planned plies the table's true state."""
        for ply in played:
            self.moves.append(ply.move)
            self.forced.append(ply.forced)
            if not ply.forced:
                self.moved.add(ply.seat)
        self.state = played[-1].state


def computer_name(level: int) -> str:
    """The name a computer seat of ``level`` shows in ``seats``: ``"Computer 4"`` (reserved: no player can take it)."""
    return f"Computer {level}"


def forced_pass_due(state: State) -> bool:
    """Whether the seat to move in ``state`` can only pass, so the server plays the pass itself.

    A game that is over has no legal moves (:meth:`games.base.State.legal_moves`),
    so the outcome need not be asked first (every ply asks this).
    """
    return state.legal_moves() == _ONLY_PASS


_ONLY_PASS = ["pass"]
"""The legal moves of a seat that can only pass (compared with, never handed out)."""


def view_of(state: State, seat: int | None, forced_pass: bool | None = None) -> dict[str, Any]:
    """The view of ``state`` for ``seat`` (``None``: a spectator) as the server sends it.

    A pass the server is about to play is nobody's to choose: such a view has
    ``"forced_pass": true`` and no ``legal_moves``, for every receiver.
    ``forced_pass`` is ``forced_pass_due(state)`` when the caller knows it already
    (``None``: work it out).
    """
    view = state.view(seat)
    if forced_pass_due(state) if forced_pass is None else forced_pass:
        view.pop("legal_moves", None)
        view["forced_pass"] = True
    return view


def _wire_options(options: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in options.items()}
