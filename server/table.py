"""A table: one game session, its seats and spectators.

The table holds the only true state of its game. Every change goes through
:meth:`Table.play`, :meth:`Table.resign` and the seating methods, which check
who may do it and raise :class:`RequestError` with a stable code otherwise.
Views are made per seat at the send boundary (:meth:`Table.view_for`), so a
connection only ever receives what its seat may see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import games
from games import Game, IllegalMove, Outcome, State
from protocol import Code
from protocol.messages import TableInfo

from .peer import Peer

__all__ = ["RequestError", "Table", "Played"]


class RequestError(Exception):
    """A request that is refused; becomes an ``error`` reply.

    Attributes:
        code: the stable error code.
        message: a human explanation.
        field: the request field at fault (``"options.size"``), if one is.
    """

    def __init__(self, code: Code, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


@dataclass(frozen=True, slots=True)
class Played:
    """One ply applied at a table: who played what, whether the server forced it, and the position after."""

    seat: int
    move: str
    ply: int
    forced: bool
    state: State


class Table:
    """One game with two seats and any number of spectators.

    Args:
        table_id: the lobby id (positive integer).
        game: the rules engine.
        options: the resolved options.
        seed: the setup seed (recorded; kept from players while it is secret).
        state: the starting state.
    """

    def __init__(self, table_id: int, game: Game, options: dict[str, Any], seed: str | int | None, state: State) -> None:
        self.id = table_id
        self.game = game
        self.options = options
        self.seed = seed
        self.state = state
        self.moves: list[str] = []
        self.seats: list[Peer | None] = [None, None]
        self.seat_names: list[str | None] = [None, None]
        self.spectators: set[Peer] = set()
        self.started = False
        self.resigned: Outcome | None = None

    @classmethod
    def create(cls, table_id: int, game_name: str, options: dict[str, Any], seed: str | int | None) -> "Table":
        """Build a table for a new game.

        Raises:
            RequestError: ``unknown_game`` or ``bad_option`` with the engine's reason.
        """
        try:
            game = games.get(game_name)
        except games.UnknownGame as exc:
            raise RequestError(Code.UNKNOWN_GAME, str(exc)) from None
        try:
            resolved = game.resolve_options(options)
            state = game.new_state(resolved, seed)
        except games.InvalidOption as exc:
            field = "seed" if exc.option == "seed" else f"options.{exc.option}" if exc.option else "options"
            raise RequestError(Code.BAD_OPTION, str(exc), field) from None
        return cls(table_id, game, resolved, seed, state)

    # --- status ------------------------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended (by the rules or by resignation), or ``None``."""
        return self.resigned or self.state.outcome

    @property
    def status(self) -> str:
        """``"waiting"`` for players, ``"playing"``, or ``"over"``."""
        if self.outcome is not None:
            return "over"
        return "playing" if self.started else "waiting"

    def info(self) -> TableInfo:
        """Return the table as the lobby shows it (the seed hidden while secret)."""
        secret = self.outcome is None and self.game.seed_is_secret(self.options)
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
        )

    def members(self) -> list[tuple[Peer, int | None]]:
        """Every connected peer at the table, with its seat (``None``: spectator)."""
        seated = [(peer, seat) for seat, peer in enumerate(self.seats) if peer is not None]
        return seated + [(peer, None) for peer in self.spectators]

    def view_for(self, seat: int | None) -> dict[str, Any]:
        """The current view for ``seat``, with the table-level outcome (resignation) folded in."""
        view = self.state.view(seat)
        if self.resigned is not None:
            view["outcome"] = self.resigned.to_dict()
            view["to_move"] = None
            view.pop("legal_moves", None)
        return view

    # --- seating ------------------------------------------------------------------

    def sit(self, peer: Peer, seat: int | None) -> int:
        """Seat ``peer`` at ``seat`` (``None``: the first free seat); return the seat.

        Raises:
            RequestError: ``already_seated``, ``table_full`` or ``game_over``.
        """
        if self.outcome is not None:
            raise RequestError(Code.GAME_OVER, f"the game at table {self.id} is over")
        if peer in self.seats:
            raise RequestError(Code.ALREADY_SEATED, f"you already sit at table {self.id}")
        free = [s for s in (0, 1) if self.seats[s] is None and self.seat_names[s] is None]
        if seat is None:
            if not free:
                raise RequestError(Code.TABLE_FULL, f"table {self.id} has no free seat")
            seat = free[0]
        elif seat not in free:
            raise RequestError(Code.TABLE_FULL, f"seat {seat} ({self.game.seats[seat]}) at table {self.id} is taken")
        self.spectators.discard(peer)
        self.seats[seat] = peer
        self.seat_names[seat] = peer.name
        return seat

    def ready_to_start(self) -> bool:
        """Whether both seats are now filled and play has not begun."""
        return not self.started and all(name is not None for name in self.seat_names)

    def unseat(self, peer: Peer) -> int | None:
        """Remove ``peer`` from its seat or the spectators; return the seat it held."""
        self.spectators.discard(peer)
        if peer not in self.seats:
            return None
        seat = self.seats.index(peer)
        self.seats[seat] = None
        if not self.started:
            self.seat_names[seat] = None
        return seat

    def is_empty(self) -> bool:
        """Whether nobody is connected to the table any more."""
        return not self.spectators and all(peer is None for peer in self.seats)

    # --- play ---------------------------------------------------------------------

    def seat_of(self, peer: Peer) -> int:
        """Return the seat ``peer`` holds here.

        Raises:
            RequestError: ``not_seated``.
        """
        if peer not in self.seats:
            raise RequestError(Code.NOT_SEATED, f"you do not hold a seat at table {self.id}")
        return self.seats.index(peer)

    def _check_running(self) -> None:
        if self.outcome is not None:
            raise RequestError(Code.GAME_OVER, f"the game at table {self.id} is over")
        if not self.started:
            raise RequestError(Code.NOT_STARTED, f"table {self.id} is waiting for a second player")

    def play(self, peer: Peer, move: str, ply: int | None) -> list[Played]:
        """Play ``move`` for ``peer``'s seat, then any forced passes that follow.

        Returns:
            The plies applied, the player's own first.

        Raises:
            RequestError: ``not_seated``, ``not_started``, ``game_over``,
                ``not_your_turn``, ``stale_ply`` or ``illegal_move`` (with the rule).
        """
        seat = self.seat_of(peer)
        self._check_running()
        if self.state.to_move != seat:
            raise RequestError(Code.NOT_YOUR_TURN, f"it is {self.game.seats[1 - seat]}'s turn, not yours")
        if ply is not None and ply != self.state.ply:
            raise RequestError(Code.STALE_PLY, f"the game is at ply {self.state.ply}, not {ply}")
        try:
            state = self.state.play(move)
        except IllegalMove as exc:
            raise RequestError(Code.ILLEGAL_MOVE, exc.reason) from None
        played = [self._advance(seat, state, forced=False)]
        while self.state.outcome is None and self.state.legal_moves() == ["pass"]:
            mover = self.state.to_move
            assert mover is not None
            played.append(self._advance(mover, self.state.play("pass"), forced=True))
        return played

    def _advance(self, seat: int, state: State, *, forced: bool) -> Played:
        assert state.last_move is not None
        self.state = state
        self.moves.append(state.last_move)
        return Played(seat, state.last_move, state.ply, forced, state)

    def resign(self, peer: Peer, reason: str = "resignation") -> Outcome:
        """End the game with ``peer``'s seat losing.

        Raises:
            RequestError: ``not_seated``, ``not_started`` or ``game_over``.
        """
        seat = self.seat_of(peer)
        self._check_running()
        return self.forfeit(seat, reason)

    def forfeit(self, seat: int, reason: str) -> Outcome:
        """End a running game with ``seat`` losing for ``reason``."""
        self.resigned = Outcome(winner=1 - seat, reason=f"{self.game.seats[seat]} {reason}")
        return self.resigned


def _wire_options(options: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in options.items()}
