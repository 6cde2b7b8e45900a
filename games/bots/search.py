"""Generic game-tree search: iterative-deepening negamax alpha-beta for two-seat games.

:class:`AlphaBeta` searches any engine's :class:`games.base.State` through
``legal_moves()``/``children()``: principal variation search (the first move
with the full window, the others with a null window and a re-search when
they beat it), a transposition table keyed by a game-supplied ``key(state)``,
move ordering (the table's best move, then moves that win at once, then a
game-supplied ``priority`` such as material won, then the history
heuristic), and iterative deepening that stops when the :class:`Deadline`
expires and returns the best move of the deepest finished iteration (or of
the unfinished one, once it has proved a better move). The clock is read
at every node (``Deadline`` alone reads it every 256 positions; a node
costs far more than reading the clock), so a search overruns its time by
about the cost of one node's ``children()``: well under a millisecond on
small boards, ~10 ms for the 400 moves of a 16 x 16 Ming Mang opening. A game plugs in
``evaluate(state, seat)``: a score for the seat to move of a running game,
higher is better, a whole number well inside ``±WIN``.

Assumes the seats alternate (every game that uses it does; Othello, which
passes, has its own engine). Scores of finished games: ``WIN - plies`` for a
win (a faster win scores higher, a slower loss is resisted longer), ``0``
for a draw.

:class:`SearchChooser` turns a search into a :class:`MoveChooser` with
per-level depth limits and deliberate blunders.

Deterministic: the only randomness is the shuffle of the root moves (ties
between equal moves), drawn from the caller's generator, and the only clock
is the :class:`Deadline`: with a node budget the same view and seed give the
same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, Mapping, TypeVar

import games

from .base import Budget, Deadline, MoveChooser

__all__ = [
    "WIN",
    "AlphaBeta",
    "LEVELS",
    "Level",
    "Priority",
    "SearchChooser",
    "SearchResult",
    "Evaluate",
    "Key",
    "MATE_ZONE",
    "Transpositions",
]

WIN = 1_000_000
"""The score of winning now; a win ``n`` plies ahead scores ``WIN - n``."""
MATE_ZONE = WIN - 10_000
"""Scores beyond this are proven wins (or, negated, losses)."""

Evaluate = Callable[[Any, int], float]
"""``evaluate(state, seat)``: how good the running ``state`` is for ``seat`` (its seat to move).

Whole numbers only (as ints or floats): the null window of the principal
variation search is one point wide."""
Key = Callable[[Any], Hashable]
"""``key(state)``: identifies the position for the transposition table (equal keys: same moves, same future)."""
Priority = Callable[[Any, Any, int], float]
"""``priority(parent, child, seat)``: how promising the move to ``child`` looks (higher first), e.g. material won."""

_EXACT, _LOWER, _UPPER = 0, 1, 2
"""A table entry's bound: its score is exact, at least (a cutoff) or at most (no move beat alpha)."""

Score = TypeVar("Score", int, float)
"""A search's scores: whole numbers, as ints (make/unmake searches) or floats (:class:`AlphaBeta`)."""
MoveT = TypeVar("MoveT")


class _OutOfBudget(Exception):
    """The deadline expired in the middle of an iteration."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found.

    Attributes:
        move: the best move found, in the engine's canonical notation.
        score: its score for the seat to move (``±WIN`` range: proven).
        depth: the deepest finished iteration, in plies (0 if none finished).
        nodes: positions generated.
    """

    move: str
    score: float
    depth: int
    nodes: int

    @property
    def proven(self) -> bool:
        """Whether the score is a forced win or loss, not an estimate."""
        return abs(self.score) >= MATE_ZONE


class AlphaBeta:
    """Iterative-deepening principal variation search over a game's states.

    Args:
        evaluate: scores a running state for its seat to move.
        key: the transposition-table key of a state.
        priority: optional move-ordering hint (captures first ...).

    One instance may run many searches; each :meth:`search` starts with an
    empty table, so its result depends on its arguments alone.
    """

    def __init__(self, evaluate: Evaluate, key: Key, priority: Priority | None = None) -> None:
        self._evaluate = evaluate
        self._key = key
        self._priority = priority
        self._table: Transpositions[float, str] = Transpositions()
        self._history: dict[str, int] = {}
        self._deadline: Deadline | None = None

    def search(self, root: Any, deadline: Deadline, rng: random.Random, max_depth: int = 64) -> SearchResult:
        """Search ``root`` (a running state) until ``deadline`` expires, ``max_depth`` or a proof.

        Returns:
            The best move of the deepest finished iteration (or a better one
            the unfinished iteration proved); with no finished iteration,
            the first move in the shuffled, ordered root list.

        Raises:
            ValueError: if the game is over at ``root``.
        """
        if root.outcome is not None:
            raise ValueError("the game is over: there is nothing to search")
        self._table, self._history, self._deadline = Transpositions(), {}, deadline
        seat = root.to_move
        pairs = list(zip(root.legal_moves(), root.children()))
        deadline.spend(len(pairs))
        rng.shuffle(pairs)
        pairs = self._ordered(root, seat, pairs, None)
        best = SearchResult(pairs[0][0], 0.0, 0, deadline.nodes)
        for depth in range(1, max_depth + 1):
            found = self._root(pairs, seat, depth)
            if found is None:  # out of budget
                break
            move, score, complete = found
            best = SearchResult(move, score, depth if complete else depth - 1, deadline.nodes)
            if not complete or abs(score) >= MATE_ZONE:
                break
            pairs.sort(key=lambda pair: pair[0] != move)  # stable: the rest keep their order
        return SearchResult(best.move, best.score, best.depth, deadline.nodes)

    def _root(self, pairs: list[tuple[str, Any]], seat: int, depth: int) -> tuple[str, float, bool] | None:
        """Search every root move to ``depth``; ``None`` if the budget ran out before the first finished.

        Returns ``(move, score, finished)``: ``finished`` is false when the
        budget ran out after the first move, which is then the best proved so far.
        """
        alpha, beta = -WIN - 1, WIN + 1
        best_move, best_score = None, -WIN - 1
        for index, (move, child) in enumerate(pairs):
            try:
                score = self._child_score(child, seat, depth, alpha, beta, 1, first=index == 0)
            except _OutOfBudget:
                return None if best_move is None else (best_move, best_score, False)
            if score > best_score:
                best_move, best_score = move, score
            alpha = max(alpha, score)
        assert best_move is not None
        return best_move, best_score, True

    def _child_score(self, child: Any, seat: int, depth: int, alpha: float, beta: float, height: int,
                     first: bool) -> float:
        """Score the move to ``child`` for ``seat`` (the mover), PVS-style."""
        if child.outcome is not None:
            return _final_score(child, seat, height)
        if first:
            return -self._negamax(child, depth - 1, -beta, -alpha, height)
        score = -self._negamax(child, depth - 1, -alpha - 1, -alpha, height)
        if alpha < score < beta:
            score = -self._negamax(child, depth - 1, -beta, -score, height)
        return score

    def _negamax(self, state: Any, depth: int, alpha: float, beta: float, height: int) -> float:
        """The score of running ``state`` for its seat to move, searched ``depth`` plies deep."""
        deadline = self._deadline
        if deadline.expired() or deadline.seconds_left() == 0.0:
            raise _OutOfBudget
        seat = state.to_move
        if depth <= 0:
            return self._evaluate(state, seat)
        key = self._key(state)
        known, tt_move = self._table.probe(key, depth, alpha, beta, height)
        if known is not None:
            return known
        pairs = list(zip(state.legal_moves(), state.children()))
        deadline.spend(len(pairs))
        original_alpha = alpha
        best_score, best_move = -WIN - 1, None
        for index, (move, child) in enumerate(self._ordered(state, seat, pairs, tt_move)):
            score = self._child_score(child, seat, depth, alpha, beta, height + 1, first=index == 0)
            if score > best_score:
                best_score, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        self._history[move] = self._history.get(move, 0) + depth * depth
                        break
        self._table.store(key, depth, best_score, original_alpha, beta, height, best_move)
        return best_score

    def _ordered(self, state: Any, seat: int, pairs: list[tuple[str, Any]], tt_move: str | None
                 ) -> list[tuple[str, Any]]:
        """Order moves: the table's move, wins at once, then by priority and history."""
        priority, history = self._priority, self._history

        def rank(pair: tuple[str, Any]) -> tuple[int, float, int]:
            move, child = pair
            if move == tt_move:
                return (0, 0.0, 0)
            outcome = child.outcome
            if outcome is not None and outcome.winner == seat:
                return (1, 0.0, 0)
            hint = priority(state, child, seat) if priority is not None else 0.0
            return (2, -hint, -history.get(move, 0))

        return sorted(pairs, key=rank)


def _final_score(state: Any, seat: int, height: int) -> float:
    """The score of a finished game for ``seat``, ``height`` plies below the root."""
    winner = state.outcome.winner
    if winner is None:
        return 0.0
    return WIN - height if winner == seat else -(WIN - height)


class Transpositions(Generic[Score, MoveT]):
    """A search's transposition table: per position key, the deepest result found there and its best move.

    Scores are for the side to move at the position; proven ones are kept
    counted from the position (:func:`_to_table`), so an entry reads right at
    any height.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[int, Score, int, MoveT | None]] = {}

    def probe(self, key: Hashable, depth: int, alpha: Score, beta: Score, height: int) -> tuple[Score | None, MoveT | None]:
        """``(score, move)`` for a node ``height`` plies below the root, to be searched ``depth`` plies deep in (``alpha``, ``beta``).

        ``score`` is the stored one when it settles the node (searched at
        least as deep, and exact or a bound outside the window), else
        ``None``; ``move`` is the stored best move, to try first (``None`` if none).
        """
        entry = self._entries.get(key)
        if entry is None:
            return None, None
        stored_depth, stored, flag, move = entry
        if stored_depth >= depth:
            score = _from_table(stored, height)
            if flag == _EXACT or (flag == _LOWER and score >= beta) or (flag == _UPPER and score <= alpha):
                return score, move
        return None, move

    def store(self, key: Hashable, depth: int, score: Score, alpha: Score, beta: Score, height: int, move: MoveT | None) -> None:
        """Keep ``score`` and ``move`` of a node searched ``depth`` plies deep in the window (``alpha``, ``beta``) it was given."""
        flag = _UPPER if score <= alpha else _LOWER if score >= beta else _EXACT
        self._entries[key] = (depth, _to_table(score, height), flag, move)


def _to_table(score: Score, height: int) -> Score:
    """``score``, found ``height`` plies below the root, as a transposition table stores it.

    Proven results (beyond :data:`MATE_ZONE`) are counted from the node, not
    the root, so an entry reads right at any height (:func:`_from_table`).
    """
    if score >= MATE_ZONE:
        return score + height
    if score <= -MATE_ZONE:
        return score - height
    return score


def _from_table(score: Score, height: int) -> Score:
    """A score stored by :func:`_to_table`, as seen ``height`` plies below the root."""
    if score >= MATE_ZONE:
        return score - height
    if score <= -MATE_ZONE:
        return score + height
    return score


@dataclass(frozen=True, slots=True)
class Level:
    """How one level plays.

    Attributes:
        max_depth: the deepest iteration, in plies.
        blunder: the chance (0..1) that a move is a uniformly random one instead.
    """

    max_depth: int
    blunder: float


LEVELS: dict[int, Level] = {
    1: Level(max_depth=1, blunder=0.5),
    2: Level(max_depth=2, blunder=0.25),
    3: Level(max_depth=3, blunder=0.1),
    4: Level(max_depth=5, blunder=0.0),
    5: Level(max_depth=64, blunder=0.0),
}
"""The default ladder: level 1 looks one ply ahead and plays at random half the time; level 5 searches as deep as the budget allows."""


class SearchChooser(MoveChooser):
    """A chooser that rebuilds the position from the view and searches it with :class:`AlphaBeta`.

    Args:
        game: the game's short name; its ``state_from_view`` must work.
        level: 1..5.
        evaluate, key, priority: as :class:`AlphaBeta`.
        levels: the per-level plan (default :data:`LEVELS`).

    Raises:
        ValueError: if ``level`` is out of range.
    """

    def __init__(self, game: str, level: int, evaluate: Evaluate, key: Key, priority: Priority | None = None,
                 levels: Mapping[int, Level] = LEVELS) -> None:
        super().__init__(level)
        self.game = game
        self._plan = levels[level]
        self._evaluate, self._key, self._priority = evaluate, key, priority

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        if rng.random() < self._plan.blunder:
            return rng.choice(legal)
        return self.search(view, budget, rng).move

    def search(self, view: Mapping[str, Any], budget: Budget, rng: random.Random) -> SearchResult:
        """Search the view's position within ``budget`` at this level's depth (no blunders)."""
        state = games.get(self.game).state_from_view(view)
        searcher = AlphaBeta(self._evaluate, self._key, self._priority)
        return searcher.search(state, budget.start(), rng, self._plan.max_depth)

    def __repr__(self) -> str:
        return f"<SearchChooser {self.game} level {self.level}>"
