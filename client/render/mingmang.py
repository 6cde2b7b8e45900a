"""Text picture of a Ming Mang view (see ``games.mingmang``).

The board is drawn as the seed prints it (part 3.2: ``x`` White, ``o`` Black,
``.`` empty), framed by column letters (``a`` from the left) and row numbers
(``1`` at the top) matching the move notation ``a4-f4``; below it, the pawn
count of each side and what the last move captured. Squares captured by the
last move are marked with ``*`` after the pawn.

Example (8 x 8 start)::

       a b c d e f g h
     1 x o o o o o o o 1
     2 x . . . . . . o 2
     ...
     8 x x x x x x x o 8
       a b c d e f g h
    White (x): 14 pawns   Black (o): 14 pawns
"""

from __future__ import annotations

from typing import Any

from . import destination

__all__ = ["render"]


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the board of a ``mingmang`` view as text, with coordinates and counts.

    The pawn ``last_move`` moved is followed by ``<``; the picture is the same when ``compact``.

    Args:
        view: the map from ``MingMangState.view`` (keys ``size``, ``board``,
            ``counts``, ``last_move``, ``captured``, ``superko``, ``max_plies``).
        seat: the viewer (0 White, 1 Black, ``None`` spectator); the board is
            the same for everyone, so it only labels the viewer's colour.

    Returns:
        Lines joined by ``"\\n"``, without a trailing newline.
    """
    size = view["size"]
    letters = "   " + " ".join(chr(ord("a") + c) for c in range(size))
    captured = set(view.get("captured") or ())
    moved = destination(last_move)
    lines = [letters]
    for r, row in enumerate(view["board"], 1):
        cells = []
        for c, symbol in enumerate(row):
            square = f"{chr(ord('a') + c)}{r}"
            mark = "*" if square in captured else "<" if square == moved else " "
            cells.append(symbol + mark)
        lines.append(f"{r:>2} {''.join(cells)}{r}")
    lines.append(letters)
    lines.extend(_status(view, seat))
    return "\n".join(lines)


def _status(view: dict[str, Any], seat: int | None) -> list[str]:
    """Return the lines under the board: counts, the last capture, the rules in force."""
    white, black = view["counts"]
    lines = [f"{_side('White', 'x', white, seat == 0)}   {_side('Black', 'o', black, seat == 1)}"]
    if view.get("last_move"):
        taken = view.get("captured") or []
        if taken:
            lines.append(f"Last move {view['last_move']} captured {len(taken)}: {' '.join(taken)}")
        else:
            lines.append(f"Last move {view['last_move']}, no capture")
    rules = []
    if view.get("superko"):
        rules.append("superko: no move may repeat an earlier position")
    if view.get("max_plies"):
        rules.append(f"drawn at ply {view['max_plies']}")
    if rules:
        lines.append("Rules: " + "; ".join(rules))
    return lines


def _side(name: str, symbol: str, count: int, mine: bool) -> str:
    """Return one side's count, e.g. ``"White (x): 14 pawns (you)"``."""
    plural = "" if count == 1 else "s"
    return f"{name} ({symbol}): {count} pawn{plural}" + (" (you)" if mine else "")
