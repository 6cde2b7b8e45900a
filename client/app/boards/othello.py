"""The Othello board: discs on a square grid, the same for every viewer.

Othello has no sides to turn towards (Black and White start alike), so the
board is never flipped. It is drawn on plain green felt, Black's discs dark
and White's light. A move is one click on the square to place on; the
squares where a disc may go are marked when it is your turn. A forced pass is
said under the board.
"""

from __future__ import annotations

from rich.style import Style

from .base import Palette
from .grid import SquareBoard

__all__ = ["OthelloBoard"]

_SEATS = (("Black", "X"), ("White", "O"))


class OthelloBoard(SquareBoard):
    """Othello from ``view`` (keys ``size``, ``board`` rows of ``X``/``O``/``.``, ``discs``, ``must_pass``)."""

    game = "othello"
    sides = ("black", "white")

    def background(self, row: int, col: int, palette: Palette) -> Style:
        """Every square is the same green."""
        return palette.felt

    def symbol(self, row: int, col: int) -> tuple[str, int | None]:
        """A disc (``●``, or ``X``/``O`` in monochrome) or nothing."""
        mark = self.view["board"][row][col]
        if mark == ".":
            return "", None
        owner = 0 if mark == "X" else 1
        return (mark if self.palette().mono else "●"), owner

    def path_of(self, move: str) -> list[str]:
        """A placement is one square."""
        return [move]

    def targets(self) -> set[str]:
        """Every square a disc may be placed on (no selection needed)."""
        return {move for move in self.legal_moves}

    def status_lines(self) -> list[str]:
        """Disc counts, and who must pass."""
        black, white = self.view["discs"]
        lines = [f"Discs: Black (X) {black}, White (O) {white}"]
        to_move = self.view.get("to_move")
        if to_move is not None and (self.view.get("forced_pass") or self.view.get("must_pass")):
            lines.append(f"{_SEATS[to_move][0]} cannot place a disc and must pass")
        elif self.last_move == "pass" and to_move is not None:
            lines.append(f"{_SEATS[1 - to_move][0]} could not place a disc and passed")
        return lines
