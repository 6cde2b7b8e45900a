"""Nimble's computer player: perfect play, because Nimble is Nim.

Why (RULES.md "Nimble"): a pawn on square ``i`` is a Nim heap of ``i - 1``
counters. Moving it to square ``j < i`` takes the heap down to ``j - 1``, any
amount from 1 to ``i - 1``; pawns never interact (any number may share a
square), so the position is the sum of one heap per pawn. The player who
cannot move (every pawn on square 1, every heap empty) loses: normal play.
By Bouton's theorem the player to move loses exactly when the nim-sum, the
XOR of ``i - 1`` over every pawn, is 0. A winning move makes it 0 again: a
pawn on square ``i`` with ``(i - 1) ^ nim_sum < i - 1`` goes to square
``((i - 1) ^ nim_sum) + 1``.

Levels: level 5 always plays a winning move when there is one; in a lost
position it steps one pawn a single square (the game lasts longest and the
opponent keeps the most chances to go wrong). Lower levels play a uniformly
random move instead with probability :data:`BLUNDER_CHANCE` per move.

>>> import random, games
>>> from games.bots import Budget
>>> state = games.get("nimble").new_state({"board": [0, 0, 1, 2, 0, 2]})
>>> nim_sum(state.board), winning_moves(state.board)
(2, ['3-1', '4-2'])
>>> make_chooser(5).choose(state.view(0), Budget(nodes=1), random.Random(0)) in ['3-1', '4-2']
True
"""

from __future__ import annotations

import functools
import random
from typing import Any, Mapping, Sequence

from .base import Budget, MoveChooser
from .greedy import GreedyChooser

__all__ = ["BLUNDER_CHANCE", "NimbleChooser", "make_chooser", "greedy_chooser", "nim_sum", "winning_moves"]

BLUNDER_CHANCE = {1: 0.6, 2: 0.4, 3: 0.2, 4: 0.08, 5: 0.0}
"""Per level, the chance that a move is a uniformly random one instead of the best."""


def nim_sum(board: Sequence[int]) -> int:
    """Return the XOR of ``i - 1`` over every pawn (``board[0]`` is square 1).

    Zero means the player to move loses against perfect play.
    """
    total = 0
    for square, count in enumerate(board, 1):
        if count & 1:
            total ^= square - 1
    return total


def winning_moves(board: Sequence[int]) -> list[str]:
    """Return every move ``i-j`` that leaves a nim-sum of 0 (empty if the position is lost)."""
    total = nim_sum(board)
    if total == 0:
        return []
    moves = []
    for square, count in enumerate(board, 1):
        target = (square - 1) ^ total
        if count and target < square - 1:
            moves.append(f"{square}-{target + 1}")
    return moves


def _stalling_moves(board: Sequence[int]) -> list[str]:
    """Return every one-square step ``i-(i-1)``: each makes the game last as long as it can."""
    return [f"{square}-{square - 1}" for square, count in enumerate(board, 1) if count and square > 1]


class NimbleChooser(MoveChooser):
    """Plays Nim's winning move (level 5 is perfect); lower levels blunder at random.

    The budget is never needed: the move is computed in time linear in the board.
    """

    game = "nimble"

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        if rng.random() < BLUNDER_CHANCE[self.level]:
            return rng.choice(legal)
        board = view["board"]
        return rng.choice(winning_moves(board) or _stalling_moves(board))


def _no_material(state: Any, seat: int) -> float:
    """Nimble has no material: every position that does not end the game scores the same."""
    return 0.0


@functools.lru_cache(maxsize=None)
def make_chooser(level: int) -> MoveChooser:
    """Return the Nimble chooser for ``level`` (1..5; 5 plays perfectly).

    Raises:
        ValueError: if ``level`` is out of range.
    """
    return NimbleChooser(level)


def greedy_chooser() -> MoveChooser:
    """Return the one-ply greedy Nimble player: it takes a win at once, otherwise moves at random."""
    return GreedyChooser("nimble", _no_material)
