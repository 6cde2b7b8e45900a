"""Text picture of a Nimble view: the row of pawn counts over the square numbers.

As in the seed's ``display(board, n)`` (seed 000, part 2.2)::

     0 | 0 | 1 | 2 | 0 | 2
    ---+---+---+---+---+---
     1 | 2 | 3 | 4 | 5 | 6

A long row is cut into blocks that fit a terminal line. The status line gives
the number of pawns and how many are still off square 1 (movable).
"""

from __future__ import annotations

from typing import Any

__all__ = ["render"]

_LINE_WIDTH = 78
"""Widest block of squares, in characters."""
_COMPACT_WIDTH = 58
"""Widest block in a compact picture (a 60-column terminal)."""


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the picture of a Nimble ``view`` (see ``games.nimble.NimbleState._view``).

    ``last_move`` (``"4-2"``) is named under the row; ``compact`` cuts the row into blocks of 58 characters.

    Args:
        view: the view map; uses ``board``, ``pawns`` and ``movable``.
        seat: the viewer's seat (unused: everything is public).
    """
    counts = [str(count) for count in view["board"]]
    numbers = [str(square) for square in range(1, len(counts) + 1)]
    widths = [max(len(a), len(b)) for a, b in zip(counts, numbers)]
    lines: list[str] = []
    for block in _blocks(widths, _COMPACT_WIDTH if compact else _LINE_WIDTH):
        if lines:
            lines.append("")
        lines.extend(_block_lines([counts[k] for k in block], [numbers[k] for k in block],
                                  [widths[k] for k in block]))
    lines.append("")
    lines.append(f"Pawns: {view['pawns']}, of which {view['movable']} can still move (off square 1)")
    if last_move:
        lines.append(f"Last move: {last_move}")
    return "\n".join(lines)


def _blocks(widths: list[int], line_width: int) -> list[list[int]]:
    """Split square indices into runs whose drawn width fits ``line_width``."""
    blocks: list[list[int]] = [[]]
    used = 0
    for index, width in enumerate(widths):
        cell = width + 3
        if blocks[-1] and used + cell > line_width:
            blocks.append([])
            used = 0
        blocks[-1].append(index)
        used += cell
    return blocks


def _block_lines(counts: list[str], numbers: list[str], widths: list[int]) -> list[str]:
    """Return the three lines (counts, rule, square numbers) of one block."""
    top = "|".join(f" {text:>{width}} " for text, width in zip(counts, widths))
    rule = "+".join("-" * (width + 2) for width in widths)
    bottom = "|".join(f" {text:>{width}} " for text, width in zip(numbers, widths))
    return [top.rstrip(), rule, bottom.rstrip()]
