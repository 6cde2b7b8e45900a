"""How a table's game ends by a table action: resigning, forfeiting, aborting, and the end itself.

Part of :class:`server.tables.table.Table` (a mixin): each ``Outcome`` is
planned here, committed by the authority (:mod:`server.play.endings`), then
applied by :meth:`TableEndings.end`.
"""

from __future__ import annotations

from games import Outcome
from protocol import Code

from ..core.errors import RequestError
from ..core.session import Session

__all__ = ["TableEndings"]


class TableEndings:
    """The ending methods of :class:`server.tables.table.Table`."""

    def resign(self, peer: Session, reason: str = "resigned") -> Outcome:
        """The outcome of a session's seat resigning (applied by :meth:`end`).

        Raises:
            RequestError: ``not_seated``, ``not_started`` or ``game_over``.
        """
        seat = self.seat_of(peer)
        self.check_running()
        return self.forfeit(seat, reason)

    def forfeit(self, seat: int, reason: str) -> Outcome:
        """The outcome of ``seat`` losing for ``reason`` (applied by :meth:`end`)."""
        return Outcome(winner=1 - seat, reason=f"{self.game.seats[seat]} {reason}")

    def abortable(self) -> bool:
        """Whether a side has not played a move of its own yet: leaving now aborts the game instead of forfeiting it."""
        return len(self.moved) < 2

    def plan_abort(self, peer: Session) -> Outcome:
        """The outcome of a session's seat aborting the game before its own first move (applied by :meth:`end`).

        Raises:
            RequestError: ``not_seated``, ``game_over``, ``not_started``, or
                ``bad_action`` once the seat has played a move of its own.
        """
        seat = self.seat_of(peer)
        self.check_running()
        if seat in self.moved:
            raise RequestError(
                Code.BAD_ACTION,
                "you have already moved: a game can be aborted only before your own first move; resign or offer a draw instead",
            )
        return self.aborted(seat, "aborted the game")

    def aborted(self, seat: int, reason: str) -> Outcome:
        """The outcome of the game aborted because of ``seat`` for ``reason``: no winner, no result, not rated."""
        return Outcome(winner=None, reason=f"{self.game.seats[seat]} {reason}", aborted=True)

    def end(self, outcome: Outcome) -> None:
        """End a running game by a table action (resignation, abandonment, agreement)."""
        self.ended = outcome
        for timer in self.grace.values():
            timer.cancel()
        self.grace.clear()
        self.stop_clock()
        self.offers.pop("draw", None)
        self.offers.pop("takeback", None)
