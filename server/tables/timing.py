"""A table's clock: setting it, starting and stopping it, charging a move's time.

Part of :class:`server.tables.table.Table` (a mixin), beside
:func:`clock_seat`, which says whose time runs (the :class:`server.tables.clock.Clock`
itself keeps the times).
"""

from __future__ import annotations

import time

from games import State

from .clock import Clock, TimeControl
from .played import Played

__all__ = ["TableClock", "clock_seat"]


class TableClock:
    """The clock methods of :class:`server.tables.table.Table`."""

    def set_time_control(self, control: TimeControl | None) -> None:
        """Give the table a clock (``None``: untimed). Call before play starts."""
        self.clock = Clock(control) if control is not None else None

    def start_clock(self) -> None:
        """Set the clock as the position wants it (game start, takeback, restart): see :func:`clock_seat`."""
        if self.clock is not None:
            _settle_clock(self.clock, clock_seat(self.state, self.moved), time.monotonic())

    def stop_clock(self) -> None:
        """Stop the clock for good and drop the flag and abort timers."""
        if self.flag_timer is not None:
            self.flag_timer.cancel()
            self.flag_timer = None
        if self.abort_timer is not None:
            self.abort_timer.cancel()
            self.abort_timer = None
        if self.clock is not None and self.clock.running is not None:
            self.clock.stop(time.monotonic())

    def press_clock(self, played: list[Played]) -> None:
        """Charge the mover's time for ``played`` (forced passes cost nothing).

        A side's first move costs nothing and earns no increment: its time
        was not running (:func:`clock_seat`). After the plies, the time of the
        seat to move runs only if that seat has moved before.

        Raises:
            FlagFell: the mover's flag fell before the move arrived.
        """
        clock = self.clock
        if clock is None:
            return
        now = time.monotonic()
        mover = played[0].seat
        if clock.running == mover:
            clock.press(mover, now)
            for ply in played[1:]:
                clock.pass_turn(ply.seat, 1 - ply.seat, now)
        moved = self.moved if mover in self.moved else self.moved | {mover}
        _settle_clock(clock, clock_seat(played[-1].state, moved), now)



def clock_seat(state: State, moved: set[int]) -> int | None:
    """The seat whose time runs in ``state``, given the seats that have ``moved`` (played a move of their own).

    That is the seat to move once it has moved before: a side's time starts
    only after its own first move (as on lichess), so no flag falls before
    both sides have moved. ``None`` once the game is over.
    """
    seat = state.to_move
    return seat if seat is not None and seat in moved and state.outcome is None else None


def _settle_clock(clock: Clock, seat: int | None, now: float) -> None:
    """Make ``seat``'s time the running one at ``now`` (``None``: stop the clock)."""
    if clock.running == seat:
        return
    clock.stop(now)
    if seat is not None:
        clock.start(seat, now)
