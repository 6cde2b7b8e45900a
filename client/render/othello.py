"""Text picture of an Othello view, drawn like the seed's display example.

Source: seed ``002_e6146ce5720fcbb1.txt``, section 3.3 ("Display"): the board
with column letters across the top and row numbers down the side, ``X`` for
Black and ``O`` for White, ``.`` for an empty square; the number of discs of
each side; whether the player to move can place a disc or must pass. The
terminal client adds the turn number, whose turn, the result and the commands.

Example (the start of an 8x8 game)::

        A B C D E F G H
     1  . . . . . . . .
     2  . . . . . . . .
     3  . . . . . . . .
     4  . . . O X . . .
     5  . . . X O . . .
     6  . . . . . . . .
     7  . . . . . . . .
     8  . . . . . . . .

    Discs: X Black 2, O White 2
    Black (X) can place a disc
"""

from __future__ import annotations

from typing import Any

from . import bracket, destination

__all__ = ["render"]

_COLUMNS = "ABCDEFGHIJKLMNOP"
_NAMES = (("Black", "X"), ("White", "O"))


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the board and the Othello status lines for ``view``.

    The disc placed by ``last_move`` is drawn in brackets (``[X]``);
    ``compact`` leaves out the blank line under the board.

    Args:
        view: an Othello view (``size``, ``board``, ``discs``, ``must_pass``,
            ``to_move``; see :meth:`games.othello.OthelloState._view`).
        seat: the viewer's seat, or ``None`` for a spectator; the picture is
            the same for everyone.

    Returns:
        Lines joined by newlines, without a trailing newline.
    """
    lines = _board_lines(view["size"], view["board"])
    _mark(lines, destination(last_move))
    if not compact:
        lines.append("")
    lines.append(_discs_line(view["discs"]))
    status = _status_line(view.get("to_move"), view.get("must_pass", False))
    if status:
        lines.append(status)
    return "\n".join(lines)


def _board_lines(size: int, board: list[str]) -> list[str]:
    """Return the header of column letters and one numbered line per row."""
    lines = ["    " + " ".join(_COLUMNS[:size])]
    for number, row in enumerate(board, start=1):
        lines.append(f"{number:>2}  " + " ".join(row))
    return lines


def _mark(lines: list[str], square: str | None) -> None:
    """Bracket ``square`` (``"d3"``) in the board lines, if it is on the board."""
    if square is None:
        return
    column, row = _COLUMNS.find(square[0].upper()), int(square[1:])
    if 0 <= column and 1 <= row < len(lines):
        lines[row] = bracket(lines[row], 4 + 2 * column)


def _discs_line(discs: list[int]) -> str:
    """Return the disc counts of both sides."""
    (black, x), (white, o) = _NAMES
    return f"Discs: {x} {black} {discs[0]}, {o} {white} {discs[1]}"


def _status_line(to_move: int | None, must_pass: bool) -> str:
    """Return whether the side to move can place a disc or must pass ('' when over)."""
    if to_move is None:
        return ""
    name, mark = _NAMES[to_move]
    if must_pass:
        return f"{name} ({mark}) cannot place a disc and must pass"
    return f"{name} ({mark}) can place a disc"
