"""The Othello search: iterative-deepening principal variation search and an exact endgame solver.

A position is ``(own, opp)``, the bitboards of the side to move and of its
opponent (:mod:`games.bots.othello_board`). Scores are negamax scores from
the side to move's point of view: heuristic ones from
:func:`games.bots.othello_eval.evaluator` stay within ``±LIMIT``; a proven
result scores ``disc difference * SCALE``, so a proven win by one disc beats
every heuristic score and a proven draw is worth 0.

- :meth:`Searcher.search`: fail-soft principal variation search (null
  windows after the first move) with a transposition table keyed by the
  ``(own, opp)`` pair itself (a perfect key: no Zobrist hashing, no
  collisions), the table's move first, then the others by the opponent's
  mobility after them (fewest first) with corners ahead and X-squares
  behind, each child looked up in the table first (enhanced transposition
  cutoffs); at 1-2 plies left the table's move, the killer move (the
  last move that cut off at that many plies left), then corners, plain
  squares, X/C-squares. A pass keeps the depth; two passes end the game.
- :meth:`Searcher.solve`: the exact endgame solver on disc differences:
  fastest-first ordering (the reply that leaves the opponent fewest moves)
  while many squares are empty; for the last few (:data:`FEW_EMPTIES`) no
  move list at all, each empty square tried in parity order (those in a
  quadrant with an odd number of empties first) and skipped when it flips
  nothing; its own transposition table.
- :meth:`Searcher.best_move`: iterative deepening at the root with
  aspiration windows; the exact solver takes over (a win/draw/loss proof
  first, then the exact margin) once the depth reaches the end,
  or earlier when the budget left, at the speed the search has had so far,
  looks enough for the empties (:func:`solve_cost`; about 14 empties at 1 s
  on 8x8 on an idle core).

The search polls its budget every :data:`POLL_EVERY` nodes and unwinds with
:class:`OutOfBudget`; the root then plays the best move of the deepest
finished iteration (or of the unfinished one once its first move is
searched, or a later move has proved better than the first in its null-window
search). With a node budget and no time limit it is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .base import Budget, Deadline
from .othello_board import board
from .othello_eval import best_evaluator

__all__ = ["INFINITY", "SCALE", "OutOfBudget", "RootResult", "Searcher", "solve_cost"]

SCALE = 10_000
"""A proven result of ``d`` discs scores ``d * SCALE`` (above every heuristic score, ``±LIMIT``)."""
INFINITY = 1_000_000_000
POLL_EVERY = 64
"""Nodes between two looks at the budget (about a millisecond of search)."""
ASPIRATION = 600
"""Half-width of the root's aspiration window, in hundredths of a disc (6 discs: 3-4 % fewer nodes than 1.5
discs to depths 6, 7 and 8 on 24 positions, `othello_search_speed.py`; the re-searches after a miss cost more
than the narrower window saves)."""
ORDER_BY_MOBILITY_DEPTH = 3
ETC_DEPTH = 3
"""From this many plies left a node looks its children up in the transposition table before searching any
(enhanced transposition cutoffs: one proven ``>= beta`` cuts at once). With the killer moves at 1-2 plies
left, 5-7 % fewer nodes and 4-9 % less CPU to depths 6, 7 and 8 on 24 positions (`othello_search_speed.py`)."""
"""From this many plies left the middle-game search orders moves by the opponent's mobility after them
(closer to the leaves the static order is cheaper than what it saves: to depth 7 on ten
middle-game positions 12 % less CPU than from 2 plies, `othello_search_speed.py --compare`)."""
SOLVER_NODE_SPEED = 2
"""How many solver nodes take the time of one middle-game node (about 2.5 measured: 180,000 against
65,000-70,000 nodes per CPU second on 8x8, `othello_search_speed.py`), for :meth:`Searcher._can_afford`."""
FEW_EMPTIES = 6
"""From this many empties the solver orders moves by the opponent's mobility after them (fastest first); below
it, it tries each empty square in parity order instead of generating moves (:meth:`Searcher._solve_few`:
about twice as fast on 13-empty solves, `othello_search_speed.py`)."""
SOLVER_TABLE_EMPTIES = 7
"""The solver keeps transposition-table entries from this many empties up."""
TABLE_LIMIT = 200_000
"""Entries in one transposition table before it is cleared (bounds memory to some 60 MB on 8x8)."""

_SOLVE_NODES = (1, 2, 4, 8, 16, 40, 80, 150, 300, 500, 1_000, 2_500, 6_000, 12_000, 30_000, 90_000,
                300_000, 800_000, 2_000_000, 5_000_000, 12_000_000)
"""Rough nodes a root solve with ``e`` empties needs (the median over level-4 games on 8x8, rounded up)."""


def solve_cost(empties: int) -> int:
    """Return the rough number of nodes an exact solve with ``empties`` empty squares costs."""
    if empties < len(_SOLVE_NODES):
        return _SOLVE_NODES[empties]
    return _SOLVE_NODES[-1] * 2 ** (empties - len(_SOLVE_NODES) + 1)


class OutOfBudget(Exception):
    """The budget ran out; raised inside the search and caught at the root."""


@dataclass(frozen=True, slots=True)
class RootResult:
    """What one :meth:`Searcher.best_move` call found.

    Attributes:
        move: the square index to play (``-1`` for a pass).
        score: its negamax score (see the module docstring), or ``None`` if
            not even depth 1 finished.
        depth: the deepest finished iteration (the empties when ``exact``).
        exact: whether ``score`` is proven (win/draw/loss at least).
        nodes: positions examined.
    """

    move: int
    score: int | None
    depth: int
    exact: bool
    nodes: int


class Searcher:
    """One search over one ``size`` board, within one budget.

    Args:
        size: squares per side (even, 6..16).
        budget: how long to search; a :class:`Deadline` is started now, before
            the evaluation is built (a first search pays for reading its tables).
        evaluate: the evaluation at the leaves (default: the trained patterns on
            8x8, the hand-weighted one elsewhere: ``othello_eval.best_evaluator``).

    Raises:
        ValueError: if ``size`` is not an Othello board size.
    """

    def __init__(self, size: int, budget: Budget, evaluate: Callable[[int, int], int] | None = None) -> None:
        self.deadline: Deadline = budget.start()  # first: reading the evaluation's tables counts
        self._clock = budget.clock
        self._started = self._clock()
        left = budget.seconds
        geometry = board(size)
        self.geometry = geometry
        self.moves: Callable[[int, int], int] = geometry.moves
        self.flips: Callable[[int, int, int], int] = geometry.flips
        self.evaluate = evaluate or best_evaluator(size)
        self.squares = geometry.squares
        self.table: dict[tuple[int, int], tuple[int, int, int, int]] = {}
        self.solver_table: dict[tuple[int, int], tuple[int, int]] = {}
        self.nodes = 0
        self._ends_at = None if left is None else self._started + left
        self._node_limit = budget.nodes
        self._reported = 0
        self._poll_at = self._next_poll()
        self._priority = _square_priority(geometry)
        self._first = geometry.corners
        self._last = sum(x | c for _, x, c in geometry.x_squares)
        self._partial: tuple[int, int] | None = None
        self._regions = _quadrants(size)
        self._killers = [-1] * (self.squares + 2)  # per plies left: the move that last cut off there

    # -- the budget ---------------------------------------------------------

    def _next_poll(self) -> int:
        at = self.nodes + POLL_EVERY
        if self._node_limit is not None and at > self._node_limit:
            at = self._node_limit
        return at

    def _poll(self) -> None:
        """Report the nodes to the deadline; raise :class:`OutOfBudget` once it is spent."""
        self.deadline.spend(self.nodes - self._reported)
        self._reported = self.nodes
        if self.deadline.expired() or (self._ends_at is not None and self._clock() >= self._ends_at):
            raise OutOfBudget
        self._poll_at = self._next_poll()

    # -- ordering -----------------------------------------------------------

    def _children(self, own: int, opp: int, moves: int, first: int) -> list[tuple[int, int, int, int]]:
        """Return ``(key, index, child_own, child_opp)`` per move, best-looking first.

        ``first`` (a square index, or -1) comes first; then fewest opponent
        moves after the move, corners ahead and X/C-squares behind.
        """
        flips, generate, priority = self.flips, self.moves, self._priority
        children = []
        while moves:
            square = moves & -moves
            moves ^= square
            index = square.bit_length() - 1
            flipped = flips(index, own, opp)
            child_own, child_opp = opp ^ flipped, own | square | flipped
            if index == first:
                key = -INFINITY
            else:
                key = generate(child_own, child_opp).bit_count() * 16 - priority[index]
            children.append((key, index, child_own, child_opp))
        children.sort()
        return children

    def _static_order(self, moves: int, first: int, second: int = -1) -> list[int]:
        """Return the move indices: ``first``, ``second`` (a killer move; -1: none), then corners, plain
        squares, X/C-squares (an index that is not a move of ``moves`` is left out)."""
        ordered = [first] if first >= 0 and moves >> first & 1 else []
        if ordered:
            moves ^= 1 << first
        if second >= 0 and moves >> second & 1:
            ordered.append(second)
            moves ^= 1 << second
        last = self._last
        for group in (moves & self._first, moves & ~self._first & ~last, moves & last):
            while group:
                square = group & -group
                group ^= square
                ordered.append(square.bit_length() - 1)
        return ordered

    def _parity_order(self, moves: int, empty: int) -> list[int]:
        """Return the move indices for the last empties: first those in a quadrant with an odd number of
        empty squares (the side that moves there can also have the last move there), each group by
        :meth:`_static_order`."""
        odd = 0
        for region in self._regions:
            if (empty & region).bit_count() & 1:
                odd |= region
        if not odd & moves or not moves & ~odd:
            return self._static_order(moves, -1)
        return self._static_order(moves & odd, -1) + self._static_order(moves & ~odd, -1)

    # -- the middle game ----------------------------------------------------

    def search(self, own: int, opp: int, depth: int, alpha: int, beta: int) -> int:
        """Return the fail-soft negamax score of ``(own, opp)`` searched ``depth`` plies.

        Hands over to :meth:`solve` once ``depth`` reaches the end of the game.

        Raises:
            OutOfBudget: when the budget runs out.
        """
        self.nodes += 1
        if self.nodes >= self._poll_at:
            self._poll()
        empties = self.squares - (own | opp).bit_count()
        if depth >= empties:
            low = alpha // SCALE
            high = -(-beta // SCALE)
            return self.solve(own, opp, low, high) * SCALE
        if depth <= 0:
            return self.evaluate(own, opp)
        key = (own, opp)
        entry = self.table.get(key)
        first = -1
        if entry is not None:
            stored_depth, lower, upper, first = entry
            if stored_depth >= depth:
                if lower >= beta or lower == upper:
                    return lower
                if upper <= alpha:
                    return upper
                if lower > alpha:
                    alpha = lower
                if upper < beta:
                    beta = upper
        moves = self.moves(own, opp)
        if not moves:
            if not self.moves(opp, own):
                return (own.bit_count() - opp.bit_count()) * SCALE
            return -self.search(opp, own, depth, -beta, -alpha)
        if depth == 1:
            best, best_move = self._frontier(own, opp, moves, first, beta)
            self._store(key, depth, alpha, beta, best, best_move)
            return best
        best, best_move, low = -INFINITY, -1, alpha
        if depth >= ORDER_BY_MOBILITY_DEPTH:
            children = [(index, o, p) for _, index, o, p in self._children(own, opp, moves, first)]
            if depth >= ETC_DEPTH:
                cut = self._etc(children, depth, beta)
                if cut is not None:
                    self._store(key, depth, alpha, beta, cut[0], cut[1])
                    return cut[0]
        else:
            flips = self.flips
            children = []
            for index in self._static_order(moves, first, self._killers[depth]):
                flipped = flips(index, own, opp)
                children.append((index, opp ^ flipped, own | (1 << index) | flipped))
        search = self.search
        for index, child_own, child_opp in children:
            if best_move < 0:
                score = -search(child_own, child_opp, depth - 1, -beta, -low)
            else:
                score = -search(child_own, child_opp, depth - 1, -low - 1, -low)
                if low < score < beta:
                    score = -search(child_own, child_opp, depth - 1, -beta, -score)
            if score > best or best_move < 0:
                best, best_move = score, index
                if score > low:
                    low = score
                    if low >= beta:
                        self._killers[depth] = index
                        break
        self._store(key, depth, alpha, beta, best, best_move)
        return best

    def _etc(self, children: list[tuple[int, int, int]], depth: int, beta: int) -> tuple[int, int] | None:
        """Enhanced transposition cutoff: ``(score, move)`` if a child's table entry already proves ``>= beta``."""
        get, need = self.table.get, depth - 1
        for index, child_own, child_opp in children:
            entry = get((child_own, child_opp))
            if entry is not None and entry[0] >= need and -entry[2] >= beta:
                return -entry[2], index
        return None

    def _frontier(self, own: int, opp: int, moves: int, first: int, beta: int) -> tuple[int, int]:
        """Score a node one ply above the leaves: evaluate each child, stop at ``beta``.

        The leaves are counted as nodes, without a call per leaf.
        """
        flips, evaluate = self.flips, self.evaluate
        best, best_move = -INFINITY, -1
        for index in self._static_order(moves, first, self._killers[1]):
            flipped = flips(index, own, opp)
            self.nodes += 1
            score = -evaluate(opp ^ flipped, own | (1 << index) | flipped)
            if score > best:
                best, best_move = score, index
                if score >= beta:
                    self._killers[1] = index
                    break
        if self.nodes >= self._poll_at:
            self._poll()
        return best, best_move

    def _store(self, key: tuple[int, int], depth: int, alpha: int, beta: int, score: int, move: int) -> None:
        """Keep a search result as a (lower, upper) bound pair with its best move."""
        table = self.table
        if len(table) >= TABLE_LIMIT:
            table.clear()
        if score <= alpha:
            table[key] = (depth, -INFINITY, score, move)
        elif score >= beta:
            table[key] = (depth, score, INFINITY, move)
        else:
            table[key] = (depth, score, score, move)

    # -- the endgame --------------------------------------------------------

    def solve(self, own: int, opp: int, alpha: int, beta: int) -> int:
        """Return the exact final disc difference (own minus opponent) under perfect play.

        Fail-soft alpha-beta within ``(alpha, beta)`` in discs: a result at
        or below ``alpha`` is an upper bound, at or above ``beta`` a lower
        bound, and exact in between.

        Raises:
            OutOfBudget: when the budget runs out.
        """
        empties = self.squares - (own | opp).bit_count()
        if empties < FEW_EMPTIES:
            return self._solve_few(own, opp, alpha, beta)
        self.nodes += 1
        if self.nodes >= self._poll_at:
            self._poll()
        moves = self.moves(own, opp)
        if not moves:
            if not self.moves(opp, own):
                return own.bit_count() - opp.bit_count()
            return -self.solve(opp, own, -beta, -alpha)
        key = None
        if empties >= SOLVER_TABLE_EMPTIES:
            key = (own, opp)
            entry = self.solver_table.get(key)
            if entry is not None:
                lower, upper = entry
                if lower >= beta or lower == upper:
                    return lower
                if upper <= alpha:
                    return upper
                alpha, beta = max(alpha, lower), min(beta, upper)
        best, low, solve = -INFINITY, alpha, self.solve
        for _, _, child_own, child_opp in self._children(own, opp, moves, -1):
            score = -solve(child_own, child_opp, -beta, -low)
            if score > best:
                best = score
                if score > low:
                    low = score
                    if low >= beta:
                        break
        if key is not None:
            table = self.solver_table
            if len(table) >= TABLE_LIMIT:
                table.clear()
            if best <= alpha:
                table[key] = (-INFINITY, best)
            elif best >= beta:
                table[key] = (best, INFINITY)
            else:
                table[key] = (best, best)
        return best

    def _solve_few(self, own: int, opp: int, alpha: int, beta: int) -> int:
        """:meth:`solve` for the last few empty squares (fewer than :data:`FEW_EMPTIES`).

        No move list is generated: each empty square is tried in parity order
        and skipped when it flips nothing (``flips`` is cheaper than a move
        generation when few squares are empty). Same results as :meth:`solve`.

        Raises:
            OutOfBudget: when the budget runs out.
        """
        self.nodes += 1
        if self.nodes >= self._poll_at:
            self._poll()
        empty = self.geometry.full ^ (own | opp)
        flips = self.flips
        if not empty & (empty - 1):  # one empty square: whoever can, fills it (or none: the board is full)
            margin = own.bit_count() - opp.bit_count()
            if not empty:
                return margin
            index = empty.bit_length() - 1
            flipped = flips(index, own, opp)
            if flipped:
                return margin + 1 + 2 * flipped.bit_count()
            flipped = flips(index, opp, own)
            if flipped:
                return margin - 1 - 2 * flipped.bit_count()
            return margin
        best, low, solve_few = -INFINITY, alpha, self._solve_few
        for index in self._parity_order(empty, empty):
            flipped = flips(index, own, opp)
            if flipped:
                score = -solve_few(opp ^ flipped, own | (1 << index) | flipped, -beta, -low)
                if score > best:
                    best = score
                    if score > low:
                        low = score
                        if low >= beta:
                            break
        if best > -INFINITY:
            return best
        while empty:  # no move: pass if the opponent has one, else the game is over
            square = empty & -empty
            if flips(square.bit_length() - 1, opp, own):
                return -solve_few(opp, own, -beta, -alpha)
            empty ^= square
        return own.bit_count() - opp.bit_count()

    # -- the root -----------------------------------------------------------

    def best_move(self, own: int, opp: int, max_depth: int = 64, solve_empties: int = 0) -> RootResult:
        """Search ``(own, opp)`` by iterative deepening and return the best move found.

        Args:
            own, opp: the position; ``own`` is to move and has a legal placement.
            max_depth: the deepest iteration in plies.
            solve_empties: the most empty squares to solve exactly (win/draw/loss,
                and the margin when losing); the solver starts after the
                first iterations, once the budget left looks enough for it
                (:meth:`_can_afford`), else iterative deepening goes on.

        Never raises :class:`OutOfBudget`: the best move so far is returned.
        """
        children = self._children(own, opp, self.moves(own, opp), -1)
        roots = [(index, o, p) for _, index, o, p in children]
        empties = self.squares - (own | opp).bit_count()
        result = RootResult(roots[0][0], None, 0, False, 0)
        score = None
        try:
            for depth in range(1, max_depth + 1):
                if depth >= empties or (empties <= solve_empties and depth >= 3
                                        and self._can_afford(solve_cost(empties))):
                    return self._solve_root(roots, result, empties)
                score, move = self._aspiration(roots, depth, score)
                result = RootResult(move, score, depth, False, self.nodes)
                roots.sort(key=lambda root: root[0] != move)
        except OutOfBudget:
            if self._partial is not None:
                move, score = self._partial
                result = RootResult(move, score, result.depth, False, self.nodes)
        return RootResult(result.move, result.score, result.depth, result.exact, self.nodes)

    def _can_afford(self, nodes: int) -> bool:
        """Whether about ``nodes`` more nodes fit in what is left of the budget.

        Time is turned into nodes at the speed this search has had so far
        (times :data:`SOLVER_NODE_SPEED`: a solver node costs less than one
        with an evaluation), so a busy machine solves fewer empties rather
        than running out.
        """
        left = INFINITY if self._node_limit is None else self._node_limit - self.nodes
        if self._ends_at is not None:
            now = self._clock()
            elapsed = now - self._started
            if self.nodes < POLL_EVERY or elapsed <= 0:
                return False
            left = min(left, self.nodes / elapsed * (self._ends_at - now) * SOLVER_NODE_SPEED)
        return nodes * 3 <= left * 2

    def _aspiration(self, roots: list[tuple[int, int, int]], depth: int, guess: int | None) -> tuple[int, int]:
        """Search the root ``depth`` plies in a window around ``guess``; widen it on a miss."""
        if guess is None or abs(guess) >= SCALE:
            return self._root(roots, depth, -INFINITY, INFINITY)
        alpha, beta = guess - ASPIRATION, guess + ASPIRATION
        score, move = self._root(roots, depth, alpha, beta)
        if score <= alpha:
            score, move = self._root(roots, depth, -INFINITY, score + 1)
        elif score >= beta:
            score, move = self._root(roots, depth, score - 1, INFINITY)
        if not alpha < score < beta:
            score, move = self._root(roots, depth, -INFINITY, INFINITY)
        return score, move

    def _root(self, roots: list[tuple[int, int, int]], depth: int, alpha: int, beta: int) -> tuple[int, int]:
        """PVS over the root moves; remember the best one for an interrupted iteration.

        A move whose null-window search proves it better than the best so far
        is remembered at once (its score a lower bound), before its re-search
        with the full window: the budget often ends in that re-search.
        """
        best, best_move, low = -INFINITY, roots[0][0], alpha
        self._partial = None
        for n, (index, child_own, child_opp) in enumerate(roots):
            if n == 0:
                score = -self.search(child_own, child_opp, depth - 1, -beta, -low)
            else:
                score = -self.search(child_own, child_opp, depth - 1, -low - 1, -low)
                if low < score < beta:  # better than the best so far: played if the budget ends in the re-search
                    self._partial = (index, score)
                    score = -self.search(child_own, child_opp, depth - 1, -beta, -score)
            if score > best:
                best, best_move = score, index
                if score > alpha:
                    self._partial = (index, score)
                if score > low:
                    low = score
                    if low >= beta:
                        break
        return best, best_move

    def _solve_root(self, roots: list[tuple[int, int, int]], fallback: RootResult, empties: int) -> RootResult:
        """Prove win, draw or loss, then find the exact margin: the move that wins by most or loses by least.

        Returns ``fallback`` (the heuristic choice) if not even the proof fits
        the budget, and the proven winning move (scored as a one-disc win, a
        lower bound) if the margin does not.
        """
        try:
            score, move = self._solve_moves(roots, -1, 1)
        except OutOfBudget:
            return RootResult(fallback.move, fallback.score, fallback.depth, False, self.nodes)
        if score == 0:
            return RootResult(move, 0, empties, True, self.nodes)
        if score > 0:
            roots.sort(key=lambda root: root[0] != move)
            try:
                score, move = self._solve_moves(roots, 0, INFINITY)
            except OutOfBudget:
                return RootResult(move, SCALE, empties, True, self.nodes)
            return RootResult(move, score * SCALE, empties, True, self.nodes)
        try:
            score, move = self._solve_moves(roots, -INFINITY, 0)
        except OutOfBudget:
            return RootResult(fallback.move if fallback.score is not None else move, -SCALE, empties, True,
                              self.nodes)
        return RootResult(move, score * SCALE, empties, True, self.nodes)

    def _solve_moves(self, roots: list[tuple[int, int, int]], alpha: int, beta: int) -> tuple[int, int]:
        """Exact alpha-beta over the root moves in discs; return ``(score, move)``."""
        best, best_move, low = -INFINITY, roots[0][0], alpha
        for index, child_own, child_opp in roots:
            score = -self.solve(child_own, child_opp, -beta, -low)
            if score > best:
                best, best_move = score, index
                if score > low:
                    low = score
                    if low >= beta:
                        break
        return best, best_move

    def ordered_moves(self, own: int, opp: int) -> list[int]:
        """Return the square indices ``own`` can play, the most promising first (fewest replies, corners)."""
        return [index for _, index, _, _ in self._children(own, opp, self.moves(own, opp), -1)]

    def move_scores(self, own: int, opp: int, depth: int) -> list[tuple[int, int]]:
        """Return ``(move, score)`` for every move, each searched ``depth`` plies with a full window.

        For the weaker levels, which add noise to every move's score.

        Raises:
            OutOfBudget: when the budget runs out.
        """
        scores = []
        for _, index, child_own, child_opp in self._children(own, opp, self.moves(own, opp), -1):
            scores.append((index, -self.search(child_own, child_opp, depth - 1, -INFINITY, INFINITY)))
        return scores


def _quadrants(size: int) -> tuple[int, ...]:
    """Return the four quadrants of a ``size`` board as bitboards (the regions of parity ordering)."""
    half = size // 2
    regions = [0, 0, 0, 0]
    for index in range(size * size):
        row, col = divmod(index, size)
        regions[(row >= half) * 2 + (col >= half)] |= 1 << index
    return tuple(regions)


def _square_priority(geometry) -> tuple[int, ...]:
    """Return a per-square ordering bonus: corners high, X-squares and C-squares low, edges a little up."""
    priority = [0] * geometry.squares
    for index in range(geometry.squares):
        bit = 1 << index
        if bit & geometry.corners:
            priority[index] = 64
        elif bit & geometry.edges:
            priority[index] = 4
    for _, x, c in geometry.x_squares:
        priority[x.bit_length() - 1] = -32
        for index in range(geometry.squares):
            if c >> index & 1:
                priority[index] = -8
    return tuple(priority)
