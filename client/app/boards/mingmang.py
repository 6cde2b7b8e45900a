"""The Ming Mang board: White's wall is the left column and the bottom row.

A seated Black player sees the board turned half a turn, so their own wall
is at the bottom and on the left, as White sees theirs. A move is two
clicks: the pawn, then the square it slides to. Pawns the last move captured
are marked on their squares and listed under the board.
"""

from __future__ import annotations

from .grid import SquareBoard

__all__ = ["MingMangBoard"]

_OWNERS = {"x": 0, "o": 1}


class MingMangBoard(SquareBoard):
    """Ming Mang from ``view`` (keys ``size``, ``board`` rows of ``x``/``o``/``.``, ``counts``, ``captured``)."""

    game = "mingmang"
    sides = ("white", "black")
    half_turn = True  # White's walls (left, bottom) turned onto Black's (right, top): a mirror would not match them

    def flipped(self) -> bool:
        """Black (seat 1) starts top and right: turn the board for Black."""
        return self.seat == 1

    def symbol(self, row: int, col: int) -> tuple[str, int | None]:
        """A pawn (``●``, or ``x``/``o`` in monochrome) or nothing."""
        mark = self.view["board"][row][col]
        if mark not in _OWNERS:
            return "", None
        return (mark if self.palette().mono else "●"), _OWNERS[mark]

    def captured_squares(self) -> set[str]:
        """The squares whose pawns the last move captured (they now hold the capturer's)."""
        return set(self.view.get("captured") or ())

    def status_lines(self) -> list[str]:
        """Pawn counts and what the last move captured."""
        white, black = self.view["counts"]
        lines = [f"White x {white}, Black o {black}" if self.compact else f"White (x): {white} pawns   Black (o): {black} pawns"]
        captured = self.view.get("captured") or []
        if captured:
            lines.append(f"Captured by {self.last_move}: {' '.join(captured)}")
        return lines
