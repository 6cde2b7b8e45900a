"""The Hexapawn board: White's pawns start on row 1 (the top), Black's at the bottom.

A seated White player sees the rows reversed so that White's pawns start at
the bottom, as Black sees theirs, with the files still ``a`` to the right
(as a chess board is shown for Black, ranks reversed); spectators see it as
the notation is drawn (row 1 at the top). A move is two clicks: the pawn, then where it goes.
"""

from __future__ import annotations

from .grid import SquareBoard

__all__ = ["HexapawnBoard"]

_MARKS = {1: ("w", 0), 2: ("b", 1)}


class HexapawnBoard(SquareBoard):
    """Hexapawn from ``view`` (keys ``size``, ``board`` rows of 0/1/2, ``pawns``)."""

    game = "hexapawn"
    sides = ("white", "black")

    def flipped(self) -> bool:
        """White (seat 0) starts at the top: reverse the rows for White."""
        return self.seat == 0

    def symbol(self, row: int, col: int) -> tuple[str, int | None]:
        """``w`` for a White pawn, ``b`` for a Black one."""
        return _MARKS.get(self.view["board"][row][col], ("", None))

    def status_lines(self) -> list[str]:
        """Pawn counts."""
        white, black = self.view["pawns"]
        if self.compact:
            return [f"Pawns: w {white}, b {black}"]
        return [f"White (w) pawns: {white}   Black (b) pawns: {black}"]
