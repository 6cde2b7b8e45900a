"""The square-grid boards (Othello, Ming Mang, Tactego, Hexapawn).

Squares are named by a column letter from the left and a row number from the
TOP (``a1`` is the top-left square; PROTOCOL.md §10). The grid is framed by
column letters above and below and row numbers on both sides; a flipped board
(the viewer's side at the bottom) runs the numbers bottom to top; its
letters still run left to right (``a`` at the left, as read) unless the
game turns it half a turn (:attr:`GridBoard.half_turn`).
"""

from __future__ import annotations

from rich.style import Style

from .base import BoardWidget, Canvas, Palette, Square

__all__ = ["GridBoard", "SquareBoard", "square_name"]

_MARGIN = 3
"""Columns left of the first cell: a two-digit row number and a space."""


def square_name(row: int, col: int) -> str:
    """The notation of the square in ``row`` and ``col`` (0-based, from the top left): ``a1``."""
    return f"{chr(ord('a') + col)}{row + 1}"


class GridBoard(BoardWidget):
    """A board of ``rows() x cols()`` squares; subclasses say what stands on each.

    Subclasses implement :meth:`rows`, :meth:`cols` and :meth:`symbol`, and
    may change :attr:`cell_width` / :attr:`compact_cell_width`.
    """

    cell_width = 3
    compact_cell_width = 2
    half_turn = False
    """Whether a flipped board is turned half a turn (files right to left too) rather than only its rows reversed."""

    def rows(self) -> int:
        """How many rows the board has."""
        raise NotImplementedError

    def cols(self) -> int:
        """How many columns the board has."""
        raise NotImplementedError

    def symbol(self, row: int, col: int) -> tuple[str, int | None]:
        """What stands on a square: its text (without padding) and its owner's seat (``None``: empty)."""
        raise NotImplementedError

    def width_of_cell(self) -> int:
        """The cell width in the current style."""
        return self.compact_cell_width if self.compact else self.cell_width

    def screen_of(self, row: int, col: int) -> tuple[int, int]:
        """The (screen row, screen column index) of a board square: rows reversed if :meth:`flipped`, columns too with :attr:`half_turn`."""
        if not self.flipped():
            return row, col
        return self.rows() - 1 - row, self.cols() - 1 - col if self.half_turn else col

    def layout(self) -> tuple[int, int, list[Square]]:
        """Rows of letters above and below, a number column either side."""
        width = self.width_of_cell()
        squares = []
        for row in range(self.rows()):
            for col in range(self.cols()):
                y, x = self.screen_of(row, col)
                squares.append(Square(square_name(row, col), y + 1, _MARGIN + x * width, width))
        return self.rows() + 2, _MARGIN + self.cols() * width + 3, squares

    def paint(self, canvas: Canvas, palette: Palette) -> None:
        """Column letters above and below the grid, row numbers at both sides."""
        width = self.width_of_cell()
        bottom = self.rows() + 1
        right = _MARGIN + self.cols() * width + 1
        for col in range(self.cols()):
            _, x = self.screen_of(0, col)
            letter = chr(ord("a") + col).center(width)
            canvas.put(0, _MARGIN + x * width, letter, palette.frame)
            canvas.put(bottom, _MARGIN + x * width, letter, palette.frame)
        for row in range(self.rows()):
            y, _ = self.screen_of(row, 0)
            canvas.put(y + 1, 0, f"{row + 1:>2}", palette.frame)
            canvas.put(y + 1, right, f"{row + 1:<2}", palette.frame)

    def piece(self, square: Square, palette: Palette) -> tuple[str, Style]:
        """The symbol centred in its cell, on a light or dark square."""
        col = ord(square.name[0]) - ord("a")
        row = int(square.name[1:]) - 1
        text, owner = self.symbol(row, col)
        background = self.background(row, col, palette)
        style = background + self.side_style(owner, palette) if owner is not None else background
        return text.center(square.width), style

    def background(self, row: int, col: int, palette: Palette) -> Style:
        """A square's background: light and dark squares in turn."""
        return palette.light if (row + col) % 2 == 0 else palette.dark


class SquareBoard(GridBoard):
    """A square board of ``view["size"]`` rows and columns (Othello, Hexapawn, Ming Mang)."""

    def rows(self) -> int:
        """The board's size."""
        return self.view["size"]

    def cols(self) -> int:
        """The board's size."""
        return self.view["size"]
