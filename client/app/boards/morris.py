"""The Nine Men's Morris board: 24 points on three nested squares.

Points are named by a file ``a``-``g`` and a rank ``1``-``7`` counted from
the BOTTOM (PROTOCOL.md §10), so rank 7 is drawn at the top. The board has no
sides, so it is never turned. Moves are clicks: a placement is one click on
an empty point; a slide is the counter, then the point it goes to; when the
move closes a mill, one more click on the opponent's counter to remove (the
removable counters are highlighted, and the line under the board says so).
The compact style draws one line per rank, for 60x20 terminals.
"""

from __future__ import annotations

import re

from rich.style import Style

from .base import BoardWidget, Canvas, Palette, Square

__all__ = ["MorrisBoard"]

_FILES = "abcdefg"
_LINES = (
    "a7 d7 g7", "b6 d6 f6", "c5 d5 e5", "a4 b4 c4", "e4 f4 g4", "c3 d3 e3", "b2 d2 f2", "a1 d1 g1",
    "a7 a4 a1", "b6 b4 b2", "c5 c4 c3", "d7 d6 d5", "d3 d2 d1", "e5 e4 e3", "f6 f4 f2", "g7 g4 g1",
)  # fmt: skip
"""The 16 lines of the board; consecutive points of a line are joined."""
_MARGIN = 3
"""Columns left of file ``a``: the rank number and spaces."""
_HORIZONTAL, _VERTICAL = "─", "│"


def _joined() -> tuple[set[str], set[str]]:
    """The points with a line going left, and those with a line going right."""
    left, right = set(), set()
    for line in _LINES:
        points = line.split()
        if points[0][1] == points[1][1]:  # along a rank
            right.update(points[:-1])
            left.update(points[1:])
    return left, right


_LEFT, _RIGHT = _joined()


class MorrisBoard(BoardWidget):
    """Morris from ``view`` (keys ``board`` point -> seat or ``None``, ``in_hand``, ``on_board``, ``phase``)."""

    game = "morris"
    sides = ("light", "amber")
    """Player 1's X light, Player 2's O amber (on the terminal's own background)."""

    def _spacing(self) -> tuple[int, int]:
        """Screen rows per rank and columns per file."""
        return (1, 3) if self.compact else (2, 4)

    def _place(self, point: str) -> tuple[int, int]:
        """The (row, column) of a point's own character."""
        rank_rows, file_cols = self._spacing()
        return (7 - int(point[1])) * rank_rows, _MARGIN + _FILES.index(point[0]) * file_cols

    def layout(self) -> tuple[int, int, list[Square]]:
        """Seven ranks, the file letters under them."""
        rank_rows, file_cols = self._spacing()
        squares = []
        for point in self.view["board"]:
            row, col = self._place(point)
            squares.append(Square(point, row, col - 1, 3))
        return 6 * rank_rows + 2, _MARGIN + 6 * file_cols + 2, squares

    def paint(self, canvas: Canvas, palette: Palette) -> None:
        """The board's lines, rank numbers on the left, file letters below."""
        for line in _LINES:
            points = line.split()
            for start, end in zip(points, points[1:]):
                (row1, col1), (row2, col2) = self._place(start), self._place(end)
                for row in range(row1 + 1, row2):
                    canvas.put(row, col1, _VERTICAL, palette.frame)
                for col in range(col1 + 1, col2):
                    canvas.put(row1, col, _HORIZONTAL, palette.frame)
        rank_rows, file_cols = self._spacing()
        for rank in range(1, 8):
            canvas.put((7 - rank) * rank_rows, 0, str(rank), palette.frame)
        for index, letter in enumerate(_FILES):
            canvas.put(canvas.height - 1, _MARGIN + index * file_cols, letter, palette.frame)

    def piece(self, square: Square, palette: Palette) -> tuple[str, Style]:
        """The counter (``X`` or ``O``) or ``+``, with the lines beside it."""
        owner = self.view["board"][square.name]
        left = _HORIZONTAL if square.name in _LEFT else " "
        right = _HORIZONTAL if square.name in _RIGHT else " "
        if owner is None:
            return f"{left}+{right}", palette.frame
        return f"{left}{'XO'[owner]}{right}", self.side_style(owner, palette)

    def path_of(self, move: str) -> list[str]:
        """``d2`` -> ``[d2]``, ``d2-d3xa1`` -> ``[d2, d3, a1]``: the removal is one more click."""
        return re.split(r"[-x]", move)

    def last_squares(self) -> set[str]:
        """The points the last move placed on or moved between (not the removed counter's)."""
        move = self.last_move
        return set(re.split(r"-", move.split("x")[0])) if move else set()

    def captured_squares(self) -> set[str]:
        """The point the last move removed a counter from."""
        move = self.last_move
        return {move.split("x")[1]} if move and "x" in move else set()

    def status_lines(self) -> list[str]:
        """Counters per player, and what to click when a mill was just closed."""
        view = self.view
        player, hand, board = ("P", "hand", "board") if self.compact else ("Player ", "in hand", "on board")
        lines = [
            f"{'XO'[seat]} {player}{seat + 1}: {view['in_hand'][seat]} {hand}, "
            f"{view['on_board'][seat]} {board}, {view['phase'][seat]}"
            for seat in (0, 1)
        ]
        if self.must_remove():
            other = 1 - self.view["to_move"]
            mark = "XO"[other]
            lines.append(f"Mill! Remove an {mark}: pick it" if self.compact else f"Mill! Remove one of Player {other + 1}'s counters ({mark}): pick it")
        return lines

    def must_remove(self) -> bool:
        """Whether the points picked so far close a mill, so the next pick removes an opponent's counter."""
        depth = len(self.path)
        moves = [self.path_of(move) for move in self.legal_moves]
        following = [path for path in moves if path[:depth] == self.path and len(path) > depth]
        return depth > 0 and bool(following) and all(len(path) == depth + 1 and self._removes(path) for path in following)

    def _removes(self, path: list[str]) -> bool:
        """Whether a move's last point is a removal (it holds a counter: a move's own points are empty)."""
        return self.view["board"].get(path[-1]) is not None
