"""Text picture of a Hexapawn view: the grid with column letters and row numbers.

Row 1 is at the top, as in the notation (``a1`` is the top-left square).
Pawns are drawn as in the seed's display: ``w`` white, ``b`` black, ``-``
empty::

        a b c
      1 w w w 1
      2 - - - 2
      3 b b b 3
        a b c

    White pawns: 3   Black pawns: 3
"""

from __future__ import annotations

from typing import Any

from . import bracket, destination

__all__ = ["render"]

_COLUMNS = "abcdefgh"
_MARKS = {0: "-", 1: "w", 2: "b"}


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the picture of a Hexapawn ``view`` (see ``games.hexapawn.HexapawnState._view``).

    The square ``last_move`` went to is drawn in brackets; ``compact`` leaves out the blank line.

    Args:
        view: the view map; uses ``size``, ``board`` (rows from the top,
            0 empty / 1 white / 2 black) and ``pawns`` (``[white, black]``).
        seat: the viewer's seat (unused: everything is public).
    """
    size = view["size"]
    letters = "    " + " ".join(_COLUMNS[:size])
    lines = [letters]
    for number, row in enumerate(view["board"], 1):
        marks = " ".join(_MARKS[value] for value in row)
        lines.append(f"  {number} {marks} {number}")
    square = destination(last_move)
    if square is not None and square[0] in _COLUMNS[:size] and 1 <= int(square[1:]) <= size:
        row = int(square[1:])
        lines[row] = bracket(lines[row], 4 + 2 * _COLUMNS.index(square[0]))
    lines.append(letters)
    if not compact:
        lines.append("")
    white, black = view["pawns"]
    lines.append(f"White pawns: {white}   Black pawns: {black}")
    return "\n".join(lines)
