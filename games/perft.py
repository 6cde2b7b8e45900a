"""Generic perft: count the leaves of any game's move tree.

Perft ("performance test", from computer chess) walks every line of play to
a fixed depth and counts the positions reached. Known counts check a move
generator; the time taken measures its speed. It works for every game's
:class:`~games.base.State` through ``legal_moves()`` and ``play()`` alone.

>>> from games.othello import Othello
>>> perft(Othello().new_state(), 3)
56

Conventions:

- Every legal move is one ply, including a forced ``pass`` (Othello).
- A finished game is a dead end: at remaining depth 0 it is a leaf like any
  other position, but at remaining depth > 0 it contributes 0 leaves (nothing
  is played below it). This matches the published Othello perft table
  (4, 12, 56, 244, 1396, 8200, 55092, 390216, ...).
- Moves are played from their canonical text, so the count also exercises
  each engine's parser on its own output.
"""

from __future__ import annotations

from .base import State

__all__ = ["perft"]


def perft(state: State, depth: int) -> int:
    """Return the number of positions reached from ``state`` in exactly ``depth`` plies.

    Args:
        state: any game's position.
        depth: plies to play, ``>= 0``; depth 0 counts ``state`` itself.

    Returns:
        The leaf count (see the module docstring for passes and finished games).

    Raises:
        ValueError: if ``depth`` is negative.
    """
    if depth < 0:
        raise ValueError(f"depth must be at least 0, not {depth}")
    return _perft(state, depth)


def _perft(state: State, depth: int) -> int:
    """Recursive worker of :func:`perft`; counts the last ply in bulk."""
    if depth == 0:
        return 1
    if state.outcome is not None:
        return 0
    moves = state.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(_perft(state.play(move), depth - 1) for move in moves)
