"""Nine Men's Morris's computer player: alpha-beta with a Morris evaluation.

Source: RULES.md "Nine Men's Morris". The search is
:class:`games.bots.search.AlphaBeta`; this module adds what it needs to know
about Morris: :func:`evaluate` (material, closed mills, open mills, mill
threats, double mills, blocked counters, mobility, each weighted by phase:
placing, moving, flying), move ordering (moves that remove a counter
first) and the transposition key (:meth:`games.morris.MorrisState.key`).

>>> import random, games
>>> from games.bots import Budget
>>> state = games.get("morris").new_state().play("a1").play("d7").play("d1").play("g7")
>>> make_chooser(5).choose(state.view(0), Budget(nodes=500), random.Random(1))[:3]  # closes a1-d1-g1
'g1x'
"""

from __future__ import annotations

import functools
from typing import Sequence

from games.morris import MILLS, NEIGHBOURS, MorrisState

from .base import MoveChooser
from .greedy import GreedyChooser
from .search import SearchChooser

__all__ = ["evaluate", "material", "make_chooser", "greedy_chooser"]

_MILLS_AT: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple(mill for mill in MILLS if point in mill) for point in range(24)
)
"""The (two) lines through each point, seed numbering."""

_COUNTER = 1_000
"""A counter (in hand or on the board); everything else is worth less than one."""
_WEIGHTS = {
    # phase: (closed mill, open mill (two and an empty point), mill threat, double mill, blocked, mobility)
    "placing": (60, 45, 0, 0, -8, 2),
    "moving": (40, 20, 90, 220, -25, 12),
    "flying": (40, 0, 150, 0, 0, 0),
}
"""Per phase of the side being scored, the weights of :func:`evaluate`'s terms."""


def material(state: MorrisState, seat: int) -> float:
    """Counters (in hand and on the board) of ``seat`` minus the opponent's: the greedy player's evaluation."""
    hands, on_board = state.hands, state.on_board
    return float(hands[seat] + on_board[seat] - hands[1 - seat] - on_board[1 - seat])


def evaluate(state: MorrisState, seat: int) -> float:
    """Score a running position for ``seat`` (higher is better); a counter is worth 1,000.

    Per side, by its phase (:data:`_WEIGHTS`): closed mills; open mills (two
    counters and an empty point on a line); mill threats (an open mill whose
    empty point a counter not on that line can reach next move: adjacent
    when moving, anywhere when flying); double mills (a counter that can
    step out of a mill into another open mill and back); blocked counters;
    mobility (steps to empty adjacent points). A side down to two counters
    or unable to move has lost, but the engine ends the game before this is asked.
    """
    board = state.board
    hands = state.hands
    flying = state.options["flying"]
    score = 0.0
    for side in (0, 1):
        own = side + 1
        count = hands[side] + board.count(own)
        if hands[side]:
            phase = "placing"
        elif flying and count == 3:
            phase = "flying"
        else:
            phase = "moving"
        terms = _terms(board, own, phase)
        weights = _WEIGHTS[phase]
        value = count * _COUNTER + sum(weight * term for weight, term in zip(weights, terms))
        score += value if side == seat else -value
    return score


def _terms(board: Sequence[int], own: int, phase: str) -> tuple[int, int, int, int, int, int]:
    """Count, for the counters ``own`` (1 or 2) on ``board``: closed mills, open mills,
    mill threats, double mills, blocked counters and mobility."""
    closed = open_ = threats = doubles = 0
    for line in MILLS:
        values = [board[p] for p in line]
        mine = values.count(own)
        if mine == 3:
            closed += 1
        elif mine == 2 and 0 in values:
            open_ += 1
            gap = line[values.index(0)]
            if phase == "flying":
                threats += 1
            elif phase == "moving" and any(board[q] == own and q not in line for q in NEIGHBOURS[gap]):
                threats += 1
    blocked = mobility = 0
    if phase == "moving":
        for point, value in enumerate(board):
            if value != own:
                continue
            steps = sum(1 for q in NEIGHBOURS[point] if board[q] == 0)
            mobility += steps
            if not steps:
                blocked += 1
            elif _swings(board, own, point):
                doubles += 1
    return closed, open_, threats, doubles, blocked, mobility


def _swings(board: Sequence[int], own: int, point: int) -> bool:
    """Whether the counter on ``point`` stands in a closed mill and can step into an open
    mill next door: each step out and back closes a mill (a "double mill")."""
    if not any(all(board[p] == own for p in line) for line in _MILLS_AT[point]):
        return False
    for gap in NEIGHBOURS[point]:
        if board[gap] != 0:
            continue
        for line in _MILLS_AT[gap]:
            if point not in line and all(board[p] == own for p in line if p != gap):
                return True
    return False


def _key(state: MorrisState) -> tuple[int, int, int, int, int]:
    return state.key()


def _removes_first(parent: MorrisState, child: MorrisState, seat: int) -> float:
    """Move ordering: a move that forms a mill (and removes a counter) first."""
    return 1.0 if "x" in (child.last_move or "") else 0.0


@functools.lru_cache(maxsize=None)
def make_chooser(level: int) -> MoveChooser:
    """Return the Morris chooser for ``level`` (1..5).

    Raises:
        ValueError: if ``level`` is out of range.
    """
    return SearchChooser("morris", level, evaluate, _key, _removes_first)


def greedy_chooser() -> MoveChooser:
    """Return the one-ply greedy Morris player (takes a win, else the most counters)."""
    return GreedyChooser("morris", material)
