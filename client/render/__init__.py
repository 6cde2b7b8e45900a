"""Text pictures of each game's view, for the terminal client.

Each game has a module here with ``render(view, seat, *, last_move=None,
compact=False) -> str``: the board with coordinates matching the game's
notation, plus the game's own status lines (disc counts, counters in hand,
...). ``last_move`` (notation) is marked on the board where the game's picture
can show it (``[X]`` around the square moved to); ``compact`` asks for a
picture that fits a 60x20 terminal (fewer blank lines; Morris draws one row
per rank). The common lines (turn number, whose turn, the result, the
commands) are the terminal client's job.
"""

from __future__ import annotations

import importlib
from typing import Any


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the picture of ``view`` as seen from ``seat`` (``None``: spectator).

    ``last_move`` (the notation of the ply that led here) is marked where the
    game's picture can show it; ``compact`` draws for a small terminal (60x20).

    Raises:
        KeyError: if ``view["game"]`` has no renderer.
    """
    name = view["game"]
    if not name.isidentifier():
        raise KeyError(name)
    try:
        module = importlib.import_module(f"client.render.{name}")
    except ModuleNotFoundError:
        raise KeyError(name) from None
    return module.render(view, seat, last_move=last_move, compact=compact)


def bracket(line: str, column: int) -> str:
    """``line`` with the characters either side of ``column`` replaced by ``[`` and ``]`` (to mark a square).

    Used where squares are one character apart with a separator around each;
    the line is returned unchanged when ``column`` has no room either side.
    """
    if not 1 <= column < len(line):
        return line
    padded = line.ljust(column + 2)
    return padded[: column - 1] + "[" + padded[column] + "]" + padded[column + 2 :]


def destination(move: str | None) -> str | None:
    """The square a move in notation ends on: ``"d3"`` for ``d3``, ``b1-b2`` and ``a1-a4xd7``; ``None`` for a pass."""
    if not move or move == "pass":
        return None
    square = move.split("x")[0].split("-")[-1].strip()
    return square.lower() if len(square) >= 2 and square[0].isalpha() and square[1:].isdigit() else None
