"""A table's seats and spectators: sitting, watching, dealing a secret setup as play starts, leaving.

Part of :class:`server.tables.table.Table` (a mixin): these methods check who
may sit and raise :class:`RequestError` with a stable code otherwise; the bus
subscriptions follow the seats.
"""

from __future__ import annotations

import secrets

from games import State
from protocol import Code

from ..core.errors import RequestError
from ..core.session import Session

__all__ = ["TableSeating"]


class TableSeating:
    """The seating methods of :class:`server.tables.table.Table`."""

    def watch(self, session: Session) -> None:
        """Make ``session`` a spectator: it gets the table's events as spectators see them."""
        self.spectators.add(session)
        self.bus.subscribe(self.topic, session, None)

    def unwatch(self, session: Session) -> None:
        """Stop ``session`` spectating (no-op if it does not)."""
        if session in self.spectators:
            self.spectators.discard(session)
            self.bus.unsubscribe(self.topic, session)

    def assign_seat(self, seat: int, holder: Session) -> None:
        """Give ``seat`` to ``holder`` without any check (a restored table's stored seating)."""
        self.seats[seat] = holder
        self.bus.subscribe(self.topic, holder, seat)

    def sit(self, peer: Session, seat: int | None) -> int:
        """Seat a session at ``seat`` (``None``: the first free seat); return the seat.

        Raises:
            RequestError: ``already_seated``, ``table_full`` or ``game_over``.
        """
        if self.outcome is not None:
            raise RequestError(Code.GAME_OVER, f"the game at table {self.id} is over; watch it to look at it")
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
        self.bus.subscribe(self.topic, peer, seat)
        return seat

    def plan_deal(self) -> tuple[str, State] | None:
        """Draw the secret setup of a table not dealt yet: a fresh seed and its starting state.

        Returns ``None`` when the setup was dealt at creation. Nothing changes
        until :meth:`deal` (the server persists the seed in between).
        """
        if self.dealt:
            return None
        seed = secrets.token_hex(8)
        return seed, self.game.new_state(self.options, seed)

    def deal(self, seed: str, state: State) -> None:
        """Make a planned deal (see :meth:`plan_deal`) the table's setup."""
        self.seed = seed
        self.state = state
        self.dealt = True

    def seat_both(self, first: Session, second: Session) -> None:
        """Seat the two players of a game that starts at once (a rematch), even one its setup already decides."""
        for seat, holder in enumerate((first, second)):
            self.seat_player(seat, holder)

    def seat_player(self, seat: int, holder: Session) -> None:
        """Seat one player of a game that starts at once (a rematch), even one its setup already decides."""
        self.seats[seat] = holder
        self.seat_names[seat] = holder.name
        self.bus.subscribe(self.topic, holder, seat)

    def ready_to_start(self) -> bool:
        """Whether both seats are now filled and play has not begun."""
        return not self.started and all(name is not None for name in self.seat_names)

    def unseat(self, peer: Session) -> int | None:
        """Remove a session from its seat or the spectators; return the seat it held."""
        self.spectators.discard(peer)
        self.bus.unsubscribe(self.topic, peer)
        if peer not in self.seats:
            return None
        seat = self.seats.index(peer)
        self.seats[seat] = None
        if not self.started:
            self.seat_names[seat] = None
        return seat

    def is_empty(self) -> bool:
        """Whether nobody sits at or watches the table any more."""
        return not self.spectators and all(holder is None for holder in self.seats)
