"""Text picture of a Nine Men's Morris view (see ``games.morris``).

The board is drawn as three nested squares with their connecting lines, the
point names as coordinates (columns a-g, ranks 1-7 from the BOTTOM, as in the
notation), Player 1's counters as ``X``, Player 2's as ``O`` and empty points
as ``+``; below it, each player's counters in hand and on the board and their
phase, the optional rules in force and the last move::

    7  X-----------+-----------O
       |           |           |
    6  |   +-------+-------+   |
    ...
    1  +-----------+-----------+
       a   b   c   d   e   f   g

The compact picture (for terminals of 60x20) has one row per rank::

    7 X-----+-----O
    6 | +---+---+ |
    5 | | +-+-+ | |
    4 +-+-+   +-+-+
    3 | | +-+-+ | |
    2 | +---+---+ |
    1 +-----+-----+
      a b c d e f g

The point ``last_move`` went to is drawn in brackets (``[X]``).
"""

from __future__ import annotations

from typing import Any

from . import bracket, destination

__all__ = ["render"]

_SYMBOLS = {0: "X", 1: "O", None: "+"}
_FILES = "abcdefg"
_LINES = (
    "a7 d7 g7", "b6 d6 f6", "c5 d5 e5", "a4 b4 c4", "e4 f4 g4", "c3 d3 e3", "b2 d2 f2", "a1 d1 g1",
    "a7 a4 a1", "b6 b4 b2", "c5 c4 c3", "d7 d6 d5", "d3 d2 d1", "e5 e4 e3", "f6 f4 f2", "g7 g4 g1",
)  # fmt: skip
"""The 16 lines of the board; consecutive points of a line are joined."""
_COLUMN_WIDTH = 4  # characters between two files
_MARGIN = 3  # characters before file a (the rank label and spaces)
_COMPACT = (1, 2, 2)  # rows between ranks, characters between files, characters before file a


def _cell(point: str, shape: tuple[int, int, int] = (2, _COLUMN_WIDTH, _MARGIN)) -> tuple[int, int]:
    """(row, column) of a point in the picture; rank 7 is the top row."""
    rows, columns, margin = shape
    return (7 - int(point[1])) * rows, margin + _FILES.index(point[0]) * columns


def _grid(board: dict[str, int | None], shape: tuple[int, int, int] = (2, _COLUMN_WIDTH, _MARGIN)) -> list[list[str]]:
    """The picture of the board as rows of characters, with rank labels."""
    rows, columns, margin = shape
    grid = [[" "] * (margin + 6 * columns + 1) for _ in range(6 * rows + 1)]
    for line in _LINES:
        points = line.split()
        for start, end in zip(points, points[1:]):
            (row1, col1), (row2, col2) = _cell(start, shape), _cell(end, shape)
            for row in range(row1 + 1, row2):
                grid[row][col1] = "|"
            for col in range(col1 + 1, col2):
                grid[row1][col] = "-"
    for point, owner in board.items():
        row, col = _cell(point, shape)
        grid[row][col] = _SYMBOLS.get(owner, "?")
    for rank in range(1, 8):
        grid[(7 - rank) * rows][0] = str(rank)
    return grid


def _status(view: dict[str, Any], seat: int | None, compact: bool = False) -> list[str]:
    """Per-player counts and phase, the rules in force and the last move (shorter when ``compact``)."""
    lines = []
    for player in (0, 1):
        you = " (you)" if player == seat else ""
        if compact:
            lines.append(f"P{player + 1} {_SYMBOLS[player]}{you}: {view['in_hand'][player]} in hand, {view['on_board'][player]} on board, {view['phase'][player]}")
            continue
        lines.append(
            f"Player {player + 1} ({_SYMBOLS[player]}){you}: {view['in_hand'][player]} in hand, "
            f"{view['on_board'][player]} on board, {view['phase'][player]}"
        )
    rules = [name for name, key in (("flying", "flying"), ("mill protection", "mill_protection")) if view.get(key)]
    if view.get("max_plies"):
        rules.append(f"draw after {view['max_plies']} plies")
    if rules:
        lines.append("Rules: " + ", ".join(rules))
    if view.get("last_move"):
        lines.append(f"Last move: {view['last_move']}")
    return lines


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the board of a ``morris`` view and its status lines.

    Args:
        view: a view from ``MorrisState.view`` (keys ``board``, ``in_hand``,
            ``on_board``, ``phase``; optionally ``flying``,
            ``mill_protection``, ``max_plies``, ``last_move``).
        seat: the viewer's seat (0 or 1, marked "(you)"), or ``None``.
        last_move: the move that led here; the point it went to is bracketed.
        compact: one row per rank, no blank line (8 lines of at most 14 characters for the board).
    """
    shape = (_COMPACT if compact else (2, _COLUMN_WIDTH, _MARGIN))
    rows = ["".join(row).rstrip() for row in _grid(view["board"], shape)]
    square = destination(last_move)
    if square is not None and square in view["board"]:
        row, column = _cell(square, shape)
        rows[row] = bracket(rows[row], column)
    files = " " * shape[2] + (" " * (shape[1] - 1)).join(_FILES)
    return "\n".join([*rows, files, *([] if compact else [""]), *_status(view, seat, compact)])
