"""Hexapawn's computer player: solved outright up to 5 x 5, alpha-beta beyond.

Source: RULES.md "Hexapawn" and the seed ``004_46c479ffbe022f3e.txt``, which
asks for the computer player's two helpers: ``move_maker`` (every board one
move later: :meth:`games.hexapawn.HexapawnState.successors`) and
``move_chooser`` (pick the best of those boards, "as smart as possible"):
:func:`move_chooser` here, on the seed's own board form.

Hexapawn cannot be drawn and pawns only move forward, so every position is
a forced win for one side. Up to ``size`` 5 the strong levels solve the
position exactly (:class:`Solver`: negamax over win/loss with a
transposition table keyed by the position, stopping at the first winning
move, captures and the least advanced pawns tried first, which keeps the
5 x 5 proof from the start to about 15,000 positions); in a won position they
play a winning move (a win at once if there is one), in a lost one the move
with the best chance against an opponent who may err (:func:`_best_swindles`). On larger boards, and whenever
the budget runs out before the proof, they search with
:class:`games.bots.search.AlphaBeta` and :func:`evaluate`: material,
advancement, passed pawns and mobility.

>>> import random, games
>>> from games.bots import Budget
>>> state = games.get("hexapawn").new_state({"size": 3})
>>> Solver(3, Budget(nodes=10_000).start()).wins(state)  # 3 x 3: the second player wins
False
"""

from __future__ import annotations

import functools
import random
from typing import Any, Mapping, Sequence

import games
from games.hexapawn import BLACK, WHITE, HexapawnState

from .base import Budget, Deadline, MoveChooser
from .greedy import GreedyChooser
from .search import LEVELS, AlphaBeta, Level, SearchChooser, SearchResult

__all__ = [
    "SOLVED_SIZES",
    "Solver",
    "HexapawnChooser",
    "evaluate",
    "material",
    "make_chooser",
    "greedy_chooser",
    "move_chooser",
]

SOLVED_SIZES = range(3, 6)
"""Board sizes the strong levels solve exactly (3 x 3 to 5 x 5)."""
_SOLVING_LEVELS = (4, 5)
"""Levels that solve the position when the board is small enough."""

_PAWN, _ADVANCE, _PASSED, _MOBILITY = 100, 4, 25, 4
"""Evaluation weights: per pawn, per (rows advanced)^2, per row of a passed pawn, per available move."""
_RACE = 50_000
"""The score of a won pawn race (less 100 per step still needed); far below a proven win."""


class _OutOfBudget(Exception):
    """The deadline expired before the proof finished."""


class Solver:
    """Exact win/loss solver for one board size, on bitboards.

    A position is ``(mine, theirs, seat)``: the bit masks of the side to move
    and of the other side (bit ``row * size + col``) and the seat to move.
    Values are memoized in a transposition table for the solver's lifetime;
    every new position counts one node against ``deadline``.

    Args:
        size: the board side (any size works; small ones finish quickly).
        deadline: the running budget; :meth:`wins` raises when it expires.
    """

    def __init__(self, size: int, deadline: Deadline) -> None:
        self.size = size
        self._deadline = deadline
        self._table: dict[tuple[int, int, int], bool] = {}
        full = (1 << size * size) - 1
        row = (1 << size) - 1
        left_column = sum(1 << r * size for r in range(size))
        self._full = full
        self._not_left = full & ~left_column
        self._not_right = full & ~(left_column << size - 1)
        self._far = (row << size * (size - 1), row)  # White's far row (the bottom), Black's (the top)

    def wins(self, state: HexapawnState) -> bool:
        """Whether the seat to move at running ``state`` wins with perfect play.

        Raises:
            ValueError: if the game is over at ``state`` or the size differs.
            _OutOfBudget: if the deadline expires first (internal; :class:`HexapawnChooser` catches it).
        """
        if state.outcome is not None or state.size != self.size:
            raise ValueError("the solver takes a running position of its own size")
        white, black = _masks(state)
        seat = state.to_move
        return self._wins(white, black, 0) if seat == WHITE else self._wins(black, white, 1)

    def _moves(self, mine: int, theirs: int, seat: int) -> list[tuple[int, int, int]]:
        """The moves of ``seat``: ``(mine after, theirs after, destination bit)``.

        Ordered for quick proofs: captures before plain steps, the least
        advanced pawn first.
        """
        size, empty = self.size, self._full & ~(mine | theirs)
        if seat == WHITE:
            groups = (((mine << size) & empty, size, False),
                      (((mine & self._not_left) << size - 1) & theirs, size - 1, True),
                      (((mine & self._not_right) << size + 1) & theirs, size + 1, True))
        else:
            groups = (((mine >> size) & empty, -size, False),
                      (((mine & self._not_left) >> size + 1) & theirs, -size - 1, True),
                      (((mine & self._not_right) >> size - 1) & theirs, -size + 1, True))
        moves = []
        for targets, shift, capture in groups:
            while targets:
                to = targets & -targets
                targets ^= to
                frm = to >> shift if shift > 0 else to << -shift
                moves.append((mine ^ frm ^ to, theirs ^ to if capture else theirs, to))
        steps = (lambda m: m[2]) if seat == WHITE else (lambda m: -m[2])
        moves.sort(key=lambda m: (m[1] == theirs, steps(m)))
        return moves

    def _wins(self, mine: int, theirs: int, seat: int) -> bool:
        """Whether ``seat`` (owning ``mine``, to move) wins; RULES.md's end checks, in order."""
        key = (mine, theirs, seat)
        known = self._table.get(key)
        if known is not None:
            return known
        deadline = self._deadline
        deadline.spend(1)
        if deadline.expired() or (deadline.nodes & 15 == 0 and deadline.seconds_left() == 0.0):
            raise _OutOfBudget
        moves = self._moves(mine, theirs, seat)
        far = self._far[seat]
        result = any(to & far or not after_theirs for _, after_theirs, to in moves)
        if not result:  # no moves at all: a loss (and a player without pawns has none)
            result = any(not self._wins(after_theirs, after_mine, 1 - seat) for after_mine, after_theirs, _ in moves)
        self._table[key] = result
        return result


def _masks(state: HexapawnState) -> tuple[int, int]:
    """Return the white and black bit masks of a position."""
    board, _ = state.key()
    white = black = 0
    for index, value in enumerate(board):
        if value == 1:
            white |= 1 << index
        elif value == 2:
            black |= 1 << index
    return white, black


def material(state: HexapawnState, seat: int) -> float:
    """Pawns of ``seat`` minus the opponent's: the greedy player's evaluation."""
    counts = state.pawn_counts()
    return counts[seat] - counts[1 - seat]


def evaluate(state: HexapawnState, seat: int) -> float:
    """Score a running position for ``seat`` (higher is better), in hundredths of a pawn.

    Per pawn: 100, plus 6 x (rows advanced)^2, plus 25 per row advanced if
    it is passed (no enemy pawn ahead of it in its own or a neighbouring
    column), plus 4 per move it has (a step to an empty square or a capture).
    A decided pawn race (see :func:`_race`) overrides all that: about
    ±50,000.
    """
    board, _ = state.key()
    size = state.size
    totals = [0, 0]
    nearest = [size, size]  # per side, the fewest steps any pawn needs to the far row
    nearest_passed = [size, size]  # the same for passed pawns, which nothing can stop
    for index, value in enumerate(board):
        if not value:
            continue
        side = value - 1
        row, col = divmod(index, size)
        forward = 1 if side == WHITE else -1
        advanced = row if side == WHITE else size - 1 - row
        steps = size - 1 - advanced
        nearest[side] = min(nearest[side], steps)
        score = _PAWN + _ADVANCE * advanced * advanced
        if _is_passed(board, size, side, row, col):
            score += _PASSED * advanced
            nearest_passed[side] = min(nearest_passed[side], steps)
        ahead = (row + forward) * size
        if board[ahead + col] == 0:
            score += _MOBILITY
        enemy = 2 - side
        for c in (col - 1, col + 1):
            if 0 <= c < size and board[ahead + c] == enemy:
                score += _MOBILITY
        totals[side] += score
    race = _race(nearest, nearest_passed, seat, size)
    return float(race or totals[seat] - totals[1 - seat])


def _race(nearest: list[int], nearest_passed: list[int], seat: int, size: int) -> int:
    """A won or lost pawn race for ``seat`` (to move), else 0.

    A passed pawn always has a step and cannot be captured, so it arrives
    in its number of steps: ``seat``, moving first, wins if its passed pawn
    needs no more steps than any enemy pawn; it loses if an enemy passed
    pawn needs fewer steps than any of its own pawns.
    """
    other = 1 - seat
    if nearest_passed[seat] < size and nearest_passed[seat] <= nearest[other]:
        return _RACE - _PAWN * nearest_passed[seat]
    if nearest_passed[other] < size and nearest_passed[other] < nearest[seat]:
        return -(_RACE - _PAWN * nearest_passed[other])
    return 0


def _is_passed(board: Sequence[int], size: int, side: int, row: int, col: int) -> bool:
    """Whether no enemy pawn stands ahead of the pawn on ``row``/``col`` in its own or a neighbouring column."""
    enemy = 2 - side
    rows = range(row + 1, size) if side == WHITE else range(row - 1, -1, -1)
    low, high = max(col - 1, 0), min(col + 1, size - 1)
    for r in rows:
        start = r * size
        if enemy in board[start + low:start + high + 1]:
            return False
    return True


def _key(state: HexapawnState) -> tuple[tuple[int, ...], int | None]:
    return state.key()


def _captures_first(parent: HexapawnState, child: HexapawnState, seat: int) -> float:
    """Move ordering: a move that takes a pawn first."""
    return float(sum(parent.pawn_counts()) - sum(child.pawn_counts()))


class HexapawnChooser(SearchChooser):
    """Hexapawn's chooser: exact on boards up to 5 x 5 at levels 4 and 5, alpha-beta otherwise.

    Raises:
        ValueError: if ``level`` is out of range.
    """

    def __init__(self, level: int, levels: Mapping[int, Level] = LEVELS) -> None:
        super().__init__("hexapawn", level, evaluate, _key, _captures_first, levels)

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        if rng.random() < self._plan.blunder:
            return rng.choice(legal)
        state = games.get("hexapawn").state_from_view(view)
        deadline = budget.start()
        if self.level in _SOLVING_LEVELS and state.size in SOLVED_SIZES:
            solver = Solver(state.size, deadline)
            try:
                return rng.choice(_winning_moves(state, solver) or _best_swindles(state, deadline))
            except _OutOfBudget:
                pass  # not proved within the budget: search instead
        searcher = AlphaBeta(evaluate, _key, _captures_first)
        return searcher.search(state, deadline, rng, self._plan.max_depth).move


def _winning_moves(state: HexapawnState, solver: Solver) -> list[str]:
    """Return the moves that keep a forced win: the immediate wins if any, else every move to a lost position.

    Empty if the position is lost.

    Raises:
        _OutOfBudget: if the budget ran out before the proof.
    """
    seat = state.to_move
    pairs = list(zip(state.legal_moves(), state.children()))
    at_once = [move for move, child in pairs if child.outcome is not None and child.outcome.winner == seat]
    if at_once:
        return at_once
    return [move for move, child in pairs if child.outcome is None and not solver.wins(child)]


def _best_swindles(state: HexapawnState, deadline: Deadline) -> list[str]:
    """In a lost position, the moves with the best chance against an opponent who may err.

    The chance is worked out exactly against a uniformly random opponent
    (expectimax: this seat's best move, the mean over the opponent's
    replies); against perfect play every move loses, so this costs nothing.

    Raises:
        _OutOfBudget: if the budget ran out first.
    """
    seat = state.to_move
    memo: dict[tuple[tuple[int, ...], int | None], float] = {}
    scored = [(_chance_against_random(child, seat, memo, deadline), move) for move, child in zip(state.legal_moves(), state.children())]
    best = max(score for score, _ in scored)
    return [move for score, move in scored if score == best]


def _chance_against_random(state: HexapawnState, seat: int, memo: dict[tuple[tuple[int, ...], int | None], float],
                           deadline: Deadline) -> float:
    """The probability that ``seat`` wins from ``state``, playing its best against uniformly random replies."""
    outcome = state.outcome
    if outcome is not None:
        return 1.0 if outcome.winner == seat else 0.0
    key = _key(state)
    known = memo.get(key)
    if known is not None:
        return known
    deadline.spend()
    if deadline.expired():
        raise _OutOfBudget
    chances = [_chance_against_random(child, seat, memo, deadline) for child in state.children()]
    chance = memo[key] = max(chances) if state.to_move == seat else sum(chances) / len(chances)
    return chance


@functools.lru_cache(maxsize=None)
def make_chooser(level: int) -> MoveChooser:
    """Return the Hexapawn chooser for ``level`` (1..5; 4 and 5 play perfectly up to 5 x 5 within their budget).

    Raises:
        ValueError: if ``level`` is out of range.
    """
    return HexapawnChooser(level)


def greedy_chooser() -> MoveChooser:
    """Return the one-ply greedy Hexapawn player (takes a win, else the most pawns)."""
    return GreedyChooser("hexapawn", material)


def move_chooser(boards: Sequence[Sequence[Sequence[int]]], colour: int,
                 budget: Budget | None = None) -> list[list[int]]:
    """The seed's ``move_chooser``: return the best of the boards one move later.

    Args:
        boards: the successor boards (the seed's list-of-lists form, top row
            first; ``HexapawnState.successors()`` or the seed's ``move_maker``).
        colour: the seed's colour of the player choosing: 1 white, 2 black.
        budget: the whole search budget (default: 200,000 nodes).

    Returns:
        A board won by force for ``colour`` if there is one (a win at once
        first); otherwise the one the search scores best.

    Raises:
        ValueError: for no boards, a bad colour or a malformed board.

    The seed's example, Black to choose:

    >>> start = HexapawnState.from_board([[0, 1, 1], [1, 0, 0], [2, 2, 2]], BLACK)
    >>> move_chooser([s.to_board() for s in start.successors()], 2)
    [[0, 1, 1], [2, 0, 0], [2, 0, 2]]
    """
    if colour not in (1, 2):
        raise ValueError(f"colour must be 1 (white) or 2 (black), not {colour!r}")
    if not boards:
        raise ValueError("there are no boards to choose from")
    seat = colour - 1
    deadline = (budget or Budget(nodes=200_000)).start()
    candidates = [HexapawnState.from_board(board, 1 - seat) for board in boards]
    solver = Solver(candidates[0].size, deadline) if candidates[0].size in SOLVED_SIZES else None
    best_index, best_score = 0, float("-inf")
    for index, candidate in enumerate(candidates):
        score = _candidate_score(candidate, seat, solver, deadline)
        if score > best_score:
            best_index, best_score = index, score
    return candidates[best_index].to_board()


def _candidate_score(candidate: HexapawnState, seat: int, solver: Solver | None, deadline: Deadline) -> float:
    """Score the position after one of ``seat``'s moves: a win, a proof, or the opponent's search negated."""
    outcome = candidate.outcome
    if outcome is not None:
        return float("inf") if outcome.winner == seat else float("-inf")
    if solver is not None:
        try:
            return -1e9 if solver.wins(candidate) else 1e9
        except _OutOfBudget:
            pass
    if deadline.expired():
        return evaluate(candidate, seat)
    result: SearchResult = AlphaBeta(evaluate, _key, _captures_first).search(candidate, deadline, random.Random(0), 6)
    return -result.score
