"""Generic perft: count the leaves of any game's move tree.

Perft ("performance test", from computer chess) walks every line of play to
a fixed depth and counts the positions reached. Known counts check a move
generator; the time taken measures its speed. It works for every game's
:class:`~games.base.State` through its public API alone: ``children()`` at
every inner position and, at the last ply, ``move_count()`` (the default,
"bulk counting", as chess perfts do) or ``children()`` again
(``play_leaves=True``: every leaf position is built).

>>> from games.othello import Othello
>>> perft(Othello().new_state(), 3)
56
>>> perft(Othello().new_state(), 3, play_leaves=True)
56

Conventions:

- Every legal move is one ply, including a forced ``pass`` (Othello).
- A finished game is a dead end: at remaining depth 0 it is a leaf like any
  other position, but at remaining depth > 0 it contributes 0 leaves (nothing
  is played below it). This matches the published Othello perft table
  (4, 12, 56, 244, 1396, 8200, 55092, 390216, ...).
- Games that do not override ``State.children()`` play each move from its
  canonical text, so the count also exercises their parser on its own
  output; Othello builds its successors straight from the bitboards.
"""

from __future__ import annotations

from .base import State

__all__ = ["perft"]


def perft(state: State, depth: int, *, play_leaves: bool = False) -> int:
    """Return the number of positions reached from ``state`` in exactly ``depth`` plies.

    Args:
        state: any game's position.
        depth: plies to play, ``>= 0``; depth 0 counts ``state`` itself.
        play_leaves: build every leaf position (``children()`` at the last
            ply) instead of counting the last ply's moves (``move_count()``).
            The count is the same; only the work differs.

    Returns:
        The leaf count (see the module docstring for passes and finished games).

    Raises:
        ValueError: if ``depth`` is negative.
    """
    if depth < 0:
        raise ValueError(f"depth must be at least 0, not {depth}")
    if depth == 0:
        return 1
    return _perft_played(state, depth) if play_leaves else _perft_counted(state, depth)


def _perft_counted(state: State, depth: int) -> int:
    """Leaves ``depth`` (>= 1) plies below ``state``; the last ply counted in bulk."""
    if depth == 1:
        return state.move_count()
    total = 0
    for child in state.children():
        total += _perft_counted(child, depth - 1)
    return total


def _perft_played(state: State, depth: int) -> int:
    """Leaves ``depth`` (>= 1) plies below ``state``; every leaf is built."""
    if depth == 1:
        return len(state.children())
    total = 0
    for child in state.children():
        total += _perft_played(child, depth - 1)
    return total
