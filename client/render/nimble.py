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


def render(view: dict[str, Any], seat: int | None) -> str:
    """Return the picture of a Nimble ``view`` (see ``games.nimble.NimbleState._view``).

    Args:
        view: the view map; uses ``board``, ``pawns`` and ``movable``.
        seat: the viewer's seat (unused: everything is public).
    """
    counts = [str(count) for count in view["board"]]
    numbers = [str(square) for square in range(1, len(counts) + 1)]
    widths = [max(len(a), len(b)) for a, b in zip(counts, numbers)]
    lines: list[str] = []
    for block in _blocks(widths):
        if lines:
            lines.append("")
        lines.extend(_block_lines([counts[k] for k in block], [numbers[k] for k in block],
                                  [widths[k] for k in block]))
    lines.append("")
    lines.append(f"Pawns: {view['pawns']}, of which {view['movable']} can still move (off square 1)")
    return "\n".join(lines)


def _blocks(widths: list[int]) -> list[list[int]]:
    """Split square indices into runs whose drawn width fits ``_LINE_WIDTH``."""
    blocks: list[list[int]] = [[]]
    used = 0
    for index, width in enumerate(widths):
        cell = width + 3
        if blocks[-1] and used + cell > _LINE_WIDTH:
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
