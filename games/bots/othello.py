"""Othello computer players: levels 1 to 5 and the one-ply greedy baseline.

>>> import random, games
>>> from games.bots import Budget
>>> state = games.get("othello").new_state({"size": 8})
>>> make_chooser(5).choose(state.view(0), Budget(nodes=2_000), random.Random(1)) in state.legal_moves()
True

The levels (RULES.md, "Othello", for the rules they play by):

1. a third of its moves random, the others a beginner's: a corner when it
   can, never next to an empty corner when it need not (it beats random
   play; a beginner wins);
2. one ply of the full evaluation with a lot of noise;
3. two plies with some noise and the exact solver for the last 6 empties;
4. iterative deepening up to 4 plies, exact solver for the last 10 empties;
5. iterative deepening as deep as the budget allows, the exact solver as
   soon as the budget can afford it (about 12-14 empties at 1 s on 8x8).

On 8x8, levels 4 and 5 open from the shipped book
(:mod:`games.bots.othello_book`), at random among its moves within 1.5 and
0.8 discs of the best, so that they do not play one fixed line; the search
evaluates with the trained pattern tables (:mod:`games.bots.othello_patterns`).

Every level stops at the caller's budget (``default_seconds(level)`` in a
server) and plays its best move so far. The search itself is in
:mod:`games.bots.othello_search`.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import games

from .base import Budget, MoveChooser
from .greedy import GreedyChooser
from .othello_board import Board, board
from .othello_book import book_move, load_book
from .othello_eval import trained_evaluator
from .othello_search import OutOfBudget, Searcher

__all__ = ["OthelloChooser", "greedy_chooser", "make_chooser"]

@dataclass(frozen=True, slots=True)
class _Level:
    """How one level plays.

    Attributes:
        random_share: chance of a uniformly random move (level 1 only).
        max_depth: the deepest search, in plies (0: no search, :func:`square_values` only).
        noise: up to this much (hundredths of a disc) is added to each move's
            score before the best is taken (0: the best move, no noise).
        solve_empties: the most empties the exact solver is tried on (it
            starts only when the budget left looks enough for it).
        book_margin: on 8x8, play from the opening book a move scored within
            this (hundredths of a disc) of the book's best (-1: no book).
    """

    random_share: float
    max_depth: int
    noise: int
    solve_empties: int
    book_margin: int = -1


_LEVELS = {
    1: _Level(random_share=0.35, max_depth=0, noise=0, solve_empties=0),
    2: _Level(random_share=0.0, max_depth=1, noise=150, solve_empties=0),
    3: _Level(random_share=0.0, max_depth=2, noise=200, solve_empties=6),
    4: _Level(random_share=0.0, max_depth=4, noise=0, solve_empties=10, book_margin=150),
    5: _Level(random_share=0.0, max_depth=64, noise=0, solve_empties=32, book_margin=80),
}


class OthelloChooser(MoveChooser):
    """The Othello computer player at one level (see the module docstring).

    Rebuilds the position with ``Othello.state_from_view`` and searches the
    bitboards; uses nothing but the view.
    """

    game = "othello"

    def __init__(self, level: int, tables: Path | None = None) -> None:
        """A player at ``level``; ``tables``: a pattern data file to evaluate 8x8 with instead of the shipped one.

        ``tables`` is for benchmarks that compare fitted files
        (``benchmarks/strength.py --tables``); other board sizes ignore it.

        Raises:
            OSError: if ``tables`` cannot be read.
            ValueError: if ``tables`` is not a pattern data file of this layout.
        """
        super().__init__(level)
        self._plan = _LEVELS[level]
        self._evaluate: Callable[[int, int], int] | None = None
        if tables is not None:
            from . import othello_patterns  # noqa: PLC0415 (read only when a file is given)

            othello_patterns.load_weights(tables)  # raises what is wrong with the file
            self._evaluate = trained_evaluator(8, tables)

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        asked_at = budget.clock()
        state = games.get("othello").state_from_view(view)
        own, opp = (state.black, state.white) if state.to_move == 0 else (state.white, state.black)
        geometry = board(state.size)
        plan = self._plan
        if plan.max_depth == 0:
            return geometry.names[_tilted_random(own, opp, geometry, plan.random_share, rng)]
        if plan.book_margin >= 0 and state.size == 8:
            move = _from_book(own, opp, plan.book_margin, rng)
            if move is not None:
                return geometry.names[move]
        evaluate = self._evaluate if state.size == 8 else None
        searcher = Searcher(state.size, _budget_left(budget, asked_at), evaluate=evaluate)
        if plan.noise:
            return geometry.names[_noisy(searcher, own, opp, plan, rng)]
        result = searcher.best_move(own, opp, max_depth=plan.max_depth, solve_empties=plan.solve_empties)
        return geometry.names[result.move]


def _budget_left(budget: Budget, asked_at: float) -> Budget:
    """Return what is left of ``budget`` since ``asked_at`` (its clock's reading when the move was asked for).

    Rebuilding the position and reading the book count against the move's
    time, so the search ends when the move is due, not that much later.
    Node budgets are kept as they are; a spent time budget leaves a
    microsecond (the search then plays its ordering's first move).
    """
    if budget.seconds is None:
        return budget
    left = budget.seconds - (budget.clock() - asked_at)
    return Budget(seconds=max(left, 1e-6), nodes=budget.nodes, clock=budget.clock)


def _from_book(own: int, opp: int, margin: int, rng: random.Random) -> int | None:
    """Return a move of the shipped opening book (8x8), or ``None`` out of the book or without one."""
    try:
        book = load_book()
    except (OSError, ValueError):
        return None
    move = book_move(book, own, opp, rng, margin)
    if move is None or not board(8).flips(move, own, opp):
        return None
    return move


def _tilted_random(own: int, opp: int, geometry: Board, random_share: float, rng: random.Random) -> int:
    """Return a random move, or (with chance ``1 - random_share``) a beginner's choice.

    The beginner knows one thing: corners are good and the squares next to
    an empty corner give it away (:func:`square_values`); among the moves of
    the best kind it picks one at random. (Flipping the most discs, the
    obvious beginner's rule, loses to random play: it hands the opponent
    moves.)
    """
    moves, index = geometry.moves(own, opp), []
    while moves:
        low = moves & -moves
        moves ^= low
        index.append(low.bit_length() - 1)
    if rng.random() < random_share:
        return rng.choice(index)
    values = square_values(geometry.size)
    best = max(values[i] for i in index)
    return rng.choice([i for i in index if values[i] == best])


@functools.lru_cache(maxsize=None)
def square_values(size: int) -> tuple[int, ...]:
    """Return a beginner's value per square: corners 3, other edges 1, X- and C-squares -2 and -1, others 0."""
    geometry = board(size)
    values = [0] * geometry.squares
    for index in range(geometry.squares):
        if geometry.corners >> index & 1:
            values[index] = 3
        elif geometry.edges >> index & 1:
            values[index] = 1
    for _, x, c in geometry.x_squares:
        values[x.bit_length() - 1] = -2
        for index in range(geometry.squares):
            if c >> index & 1:
                values[index] = -1
    return tuple(values)


def _noisy(searcher: Searcher, own: int, opp: int, plan: _Level, rng: random.Random) -> int:
    """Score every move ``plan.max_depth`` plies deep (shallower if the budget ends) and add noise.

    With ``plan.solve_empties`` or fewer empty squares the last search goes
    to the end: proven scores are multiples of a disc's ``SCALE``, far above
    the noise, so the level then plays perfectly.
    """
    scores = None
    depths = list(range(1, plan.max_depth + 1))
    empties = searcher.squares - (own | opp).bit_count()
    if empties <= plan.solve_empties:
        depths.append(empties)
    for depth in depths:
        try:
            scores = searcher.move_scores(own, opp, depth)
        except OutOfBudget:
            break
    if scores is None:  # not even one ply fitted: play the move the ordering likes best
        return searcher.ordered_moves(own, opp)[0]
    noisy = [(score + rng.uniform(0, plan.noise), index) for index, score in scores]
    return max(noisy)[1]


def make_chooser(level: int) -> MoveChooser:
    """Return the Othello chooser for ``level`` (1 = a beginner wins, 5 = the strongest).

    Raises:
        ValueError: if ``level`` is not an integer from 1 to 5.
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be an integer from 1 to 5, not {level!r}")
    return OthelloChooser(level)


def _disc_margin(state: Any, seat: int) -> int:
    """``seat``'s discs minus the opponent's: what the greedy player maximizes."""
    counts = state.disc_counts()
    return counts[seat] - counts[1 - seat]


def greedy_chooser() -> MoveChooser:
    """Return the one-ply greedy player: the move leaving the most discs (ties at random)."""
    return GreedyChooser("othello", _disc_margin)
