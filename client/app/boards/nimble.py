"""The Nimble board: one row of numbered squares, each with a pile of pawns.

Each square shows its pawn count above its number (the notation names
squares by number, 1 at the left). A move is two clicks: a square with a
pawn that may move (any square but 1), then a square to its left. Long rows
are cut into blocks, one under the other. The board has no sides.
"""

from __future__ import annotations

from rich.style import Style

from .base import BoardWidget, Canvas, Palette, Square

__all__ = ["NimbleBoard"]

_LINE_WIDTH = 72
_COMPACT_LINE_WIDTH = 54
"""Widest block of squares, in characters."""


class NimbleBoard(BoardWidget):
    """Nimble from ``view`` (keys ``board`` pawn counts, square 1 first; ``pawns``; ``movable``)."""

    game = "nimble"

    def _blocks(self) -> list[list[tuple[int, int]]]:
        """Runs of (square index, cell width) that fit the line width."""
        widest = _COMPACT_LINE_WIDTH if self.compact else _LINE_WIDTH
        blocks: list[list[tuple[int, int]]] = [[]]
        used = 0
        for index, count in enumerate(self.view["board"]):
            width = max(len(str(count)), len(str(index + 1))) + 2
            if blocks[-1] and used + width + 1 > widest:
                blocks.append([])
                used = 0
            blocks[-1].append((index, width))
            used += width + 1
        return blocks

    def layout(self) -> tuple[int, int, list[Square]]:
        """Each block is three lines (counts, a rule, numbers) and a blank line."""
        squares, widest = [], 0
        for number, block in enumerate(self._blocks()):
            col = 0
            for index, width in block:
                squares.append(Square(str(index + 1), number * 4, col, width))
                col += width + 1
            widest = max(widest, col)
        return len(self._blocks()) * 4 - 1, widest, squares

    def square_at(self, x: int, y: int) -> str | None:
        """A click on the count or on the number under it picks the square."""
        return super().square_at(x, y - y % 4)

    def paint(self, canvas: Canvas, palette: Palette) -> None:
        """The rule and the square numbers under the counts."""
        for square in self.squares():
            canvas.put(square.row + 1, square.col - 1, "┼" if square.col else "", palette.frame)
            canvas.put(square.row + 1, square.col, "─" * square.width, palette.frame)
            canvas.put(square.row + 2, square.col, square.name.center(square.width), palette.frame)
            if square.col:
                canvas.put(square.row, square.col - 1, "│", palette.frame)
                canvas.put(square.row + 2, square.col - 1, "│", palette.frame)

    def piece(self, square: Square, palette: Palette) -> tuple[str, Style]:
        """The square's pawn count (bold where pawns can move)."""
        count = self.view["board"][int(square.name) - 1]
        movable = count and square.name != "1"
        return str(count).center(square.width), Style(bold=bool(movable), dim=not count)

    def status_lines(self) -> list[str]:
        """Pawns in all, and how many can still move."""
        if self.compact:
            return [f"Pawns: {self.view['pawns']}, movable: {self.view['movable']}"]
        return [f"Pawns: {self.view['pawns']}, of which {self.view['movable']} can still move (off square 1)"]
