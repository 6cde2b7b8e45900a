"""Ming Mang's level-5 search: make/unmake principal variation search with capture quiescence.

Source: RULES.md "Ming Mang". The generic :class:`games.bots.search.AlphaBeta`
builds a new immutable :class:`games.mingmang.MingMangState` for every
child; this searcher plays and takes back slides on one ``bytearray`` (the
engine's padded board: ``0`` empty, ``1`` White, ``2`` Black, ``3`` border)
and adds what the generic one lacks:

- **quiescence over captures**: at the horizon the side to move may stand
  pat on the evaluation or play on its captures (at most
  :data:`QUIESCENCE_PLIES` of them in a row), so a search never stops in the
  middle of an exchange (custodian captures change the pawns' colour: one
  capture swings the count by two per pawn);
- a **transposition table** keyed by the engine's exact board key
  (:meth:`games.mingmang.MingMangState.key`, updated by XOR) and the seat to
  move, kept across the iterations of one search;
- **move ordering**: the table move, captures by pawns taken, two killer
  moves per ply, then the history heuristic;
- **iterative deepening** with a null-window search of every move after the
  first (PVS); the deadline is polled every :data:`CLOCK_EVERY` nodes;
- **null-move pruning** and **late move reductions** (quiet moves late in
  the order searched a ply shallower first): a ply deeper for the same
  positions in the middle game, so a deeper look at the threats that a
  shallower opponent cannot see coming.

Scores are for the seat to move, in hundredths of a pawn
(:func:`evaluate_board`); a win ``n`` plies from the root is
``WIN - n``. Superko games are not searched here: their legality depends on
the history (the chooser falls back to the generic search).

>>> import random, games
>>> from games.bots import Budget
>>> state = games.get("mingmang").from_diagram("x...\\no...\\n..x.\\n....", 0)
>>> MingMangSearch(state, Budget(nodes=2_000).start()).run(random.Random(1)).move  # takes Black's last pawn
'c3-a3'
"""

from __future__ import annotations

import random
import re

from games.mingmang import MingMangState, captures

from .base import Deadline
from .search import MATE_ZONE, WIN, SearchResult, Transpositions

__all__ = ["MingMangSearch", "evaluate_board", "lines", "slides", "QUIESCENCE_PLIES", "PAWN", "SLIDE", "THREAT"]

PAWN, SLIDE, THREAT = 100, 2, 12
"""Evaluation weights: per pawn, per available slide, per enemy pawn open to capture (the progress term)."""
QUIESCENCE_PLIES = 6
"""The most captures in a row the quiescence search follows beyond the nominal depth."""
CLOCK_EVERY = 64
"""Nodes between two readings of the clock."""
NULL_MOVE_REDUCTION, NULL_MOVE_MIN_DEPTH, NULL_MOVE_MIN_SLIDES = 2, 3, 12
"""Null-move pruning: the pass is searched this many plies shallower (besides its own ply), from this depth, for a
side with at least this many slides (with few, passing could be a real advantage: a side without a move loses)."""
FULL_DEPTH_MOVES, REDUCE_MIN_DEPTH = 4, 3
"""Late move reductions: the first moves searched at full depth (besides every non-quiet one), and the least depth
at which the later quiet ones are reduced by a ply."""


class _OutOfTime(Exception):
    """The deadline expired inside an iteration."""


_EMPTY_RUN = re.compile(b"\x00+")
_OPEN = (re.compile(b"(?=\x02\x01\x00|\x00\x01\x02)"), re.compile(b"(?=\x01\x02\x00|\x00\x02\x01)"))
"""Per colour (index ``colour - 1``): that colour's pawn flanked by an enemy on one side, empty on the other."""
_TARGETS = (re.compile(b"(?=(\x00\x02+\x01|\x01\x02+\x00))"), re.compile(b"(?=(\x00\x01+\x02|\x02\x01+\x00))"))
"""Per colour (index ``colour - 1``): an empty square beside a run of enemy pawns closed by that colour's pawn
(the square is the group's first byte when that is empty, else its last)."""


def lines(board: bytes | bytearray, width: int) -> tuple[bytes, bytes]:
    """The padded board row by row, and column by column (each column with its two border cells).

    In both, a run of cells between two border cells is one row or column,
    so a pattern never spans two lines.
    """
    rows = bytes(board)
    return rows, b"".join(rows[c::width] for c in range(1, width - 1))


def evaluate_board(board: bytes | bytearray, me: int, width: int) -> int:
    """Score a running position for the pawns of colour ``me`` (1 White, 2 Black), in hundredths of a pawn.

    ``PAWN`` per pawn more than the opponent, ``SLIDE`` per slide more
    (:func:`slides`), and ``THREAT`` per open enemy pawn more than the
    opponent has: a pawn is open along a row or column where one neighbour
    is an enemy pawn and the other empty (the enemy takes it by sliding a pawn
    there); a pawn open along both its row and its column counts twice.
    """
    return _score(*lines(board, width), me)[0]


def _score(rows: bytes, columns: bytes, me: int) -> tuple[int, int]:
    """:func:`evaluate_board` from the board's :func:`lines`, and the slides ``me`` has (0: ``me`` has lost)."""
    foe = me ^ 3
    mobility = slides(rows, columns)
    open_mine = open_foe = 0
    for text in (rows, columns):
        open_mine += len(_OPEN[me - 1].findall(text))
        open_foe += len(_OPEN[foe - 1].findall(text))
    score = (PAWN * (rows.count(me) - rows.count(foe)) + SLIDE * (mobility[me] - mobility[foe])
             + THREAT * (open_foe - open_mine))
    return score, mobility[me]


def slides(rows: bytes, columns: bytes) -> list[int]:
    """Slides available per cell code (index 1: White's, 2: Black's) on the board given by :func:`lines`.

    Each run of empty squares along a row or column is one slide per square
    for the pawn at either end of it.
    """
    mobility = [0, 0, 0, 0]
    for text in (rows, columns):
        for run in _EMPTY_RUN.finditer(text):
            start, end = run.span()
            length = end - start
            mobility[text[start - 1]] += length
            mobility[text[end]] += length
    return mobility


class MingMangSearch:
    """One search of one running, non-superko position.

    Args:
        state: the position (its ``options["superko"]`` must be false).
        deadline: the running budget; every position visited counts one node.
        max_depth: the deepest iteration, in plies.

    Raises:
        ValueError: if the game is over or superko is on.
    """

    def __init__(self, state: MingMangState, deadline: Deadline, max_depth: int = 64) -> None:
        if state.outcome is not None:
            raise ValueError("the game is over: there is nothing to search")
        if state.options["superko"]:
            raise ValueError("superko positions depend on the history: use the generic search")
        geo = state._geo  # read-only: the engine's precomputed tables
        self.board = bytearray(state._board)
        self.key = state.key()[0]
        self.side = state.to_move
        self.ply = state.ply
        self.max_plies = state.options["max_plies"]
        self.max_depth = max_depth
        self._rays, self._dirs, self._width = geo.rays, geo.dirs, geo.width
        self._names, self._mark = geo.names, geo.mark
        self._deadline = deadline
        self._table: Transpositions[int, tuple[int, int]] = Transpositions()
        self._killers: dict[int, list[tuple[int, int]]] = {}
        self._history: dict[tuple[int, int], int] = {}
        self._column_index = _column_index(geo.width)

    # -- moves -------------------------------------------------------------

    def _slides(self, me: int) -> list[tuple[int, int]]:
        """Every slide of colour ``me`` as (from, to) indices."""
        board, rays = self.board, self._rays
        moves = []
        append = moves.append
        i = board.find(me)
        while i >= 0:
            for ray in rays[i]:
                for j, _ in ray:
                    if board[j]:
                        break
                    append((i, j))
            i = board.find(me, i + 1)
        return moves

    def _captures(self, me: int) -> list[tuple[int, int, int]]:
        """The capturing slides of colour ``me`` as (pawns taken, from, to), most pawns first."""
        board, dirs = self.board, self._dirs
        rows, columns = lines(board, self._width)
        targets = set()
        for text, where in ((rows, None), (columns, self._column_index)):
            for found in _TARGETS[me - 1].finditer(text):
                run = found.group(1)
                k = found.start() if run[0] == 0 else found.start() + len(run) - 1
                targets.add(k if where is None else where[k])
        captures = []
        for to in targets:
            gain = self._gain(to, me)
            for d in dirs:
                j = to + d
                while board[j] == 0:
                    j += d
                if board[j] == me:
                    captures.append((gain, j, to))
        captures.sort(reverse=True)
        return captures

    def _gain(self, to: int, me: int) -> int:
        """How many enemy pawns a pawn of ``me`` arriving on ``to`` would capture."""
        return len(captures(self.board, to, me, self._dirs))

    def _make(self, start: int, to: int, me: int) -> list[int]:
        """Slide ``start`` -> ``to`` for ``me``, capturing; return the captured indices (for :meth:`_unmake`)."""
        board, mark = self.board, self._mark
        caught = captures(board, to, me, self._dirs)  # the board before the slide: see captures()
        board[start] = 0
        board[to] = me
        key = self.key ^ mark[me][start] ^ mark[me][to]
        flip = mark[3]
        for c in caught:
            board[c] = me
            key ^= flip[c]
        self.key = key
        self.ply += 1
        return caught

    def _unmake(self, start: int, to: int, me: int, caught: list[int]) -> None:
        board, mark = self.board, self._mark
        foe, flip = me ^ 3, mark[3]
        key = self.key
        for c in caught:
            board[c] = foe
            key ^= flip[c]
        board[to] = 0
        board[start] = me
        self.key = key ^ mark[me][start] ^ mark[me][to]
        self.ply -= 1

    # -- search ------------------------------------------------------------

    def run(self, rng: random.Random) -> SearchResult:
        """Search until the deadline, ``max_depth`` or a proof; return the best move found.

        The root moves are shuffled by ``rng`` first (ties between equal
        moves), then ordered captures first; with no finished iteration the
        first of them is returned.
        """
        me = self.side + 1
        moves = self._slides(me)
        rng.shuffle(moves)
        moves.sort(key=lambda m: -self._gain(m[1], me))
        self._deadline.spend(len(moves))
        best_move, best_score, depth_done = moves[0], 0, 0
        for depth in range(1, self.max_depth + 1):
            try:
                move, score, complete = self._root(moves, me, depth)
            except _OutOfTime:
                break
            if move is not None:
                best_move, best_score = move, score
                depth_done = depth if complete else depth - 1
            if not complete or abs(score) >= MATE_ZONE:
                break
            moves.remove(move)
            moves.insert(0, move)
        start, to = best_move
        text = f"{self._names[start]}-{self._names[to]}"
        return SearchResult(text, float(best_score), depth_done, self._deadline.nodes)

    def _root(self, moves: list[tuple[int, int]], me: int, depth: int
              ) -> tuple[tuple[int, int] | None, int, bool]:
        """One iteration; ``(best move, score, finished)``, move ``None`` if even the first ran out of time."""
        alpha, beta = -WIN - 1, WIN + 1
        best, best_score = None, -WIN - 1
        for index, (start, to) in enumerate(moves):
            caught = self._make(start, to, me)
            try:
                if index == 0:
                    score = -self._negamax(depth - 1, -beta, -alpha, 1)
                else:
                    score = -self._negamax(depth - 1, -alpha - 1, -alpha, 1)
                    if score > alpha:
                        score = -self._negamax(depth - 1, -beta, -score, 1)
            except _OutOfTime:
                if best is None:
                    raise
                return best, best_score, False
            finally:
                self._unmake(start, to, me, caught)
            if score > best_score:
                best, best_score = (start, to), score
                alpha = max(alpha, score)
        return best, best_score, True

    def _tick(self) -> None:
        deadline = self._deadline
        deadline.nodes += 1
        if deadline.expired() or (deadline.nodes % CLOCK_EVERY == 0 and deadline.seconds_left() == 0.0):
            raise _OutOfTime

    def _negamax(self, depth: int, alpha: int, beta: int, height: int, me: int = 0, null_ok: bool = True) -> int:
        """The score for the side to move, colour ``me`` (by default ``self.side`` flipped every ply), ``depth`` deep.

        Two selective steps cut the width of the tree (the searches below
        them are null-window, so a wrong guess costs a re-search, not a move):
        **null-move pruning** (with :data:`NULL_MOVE_MIN_SLIDES` or more slides
        and ``depth`` >= :data:`NULL_MOVE_MIN_DEPTH`, pass: if the opponent,
        moving twice, still cannot bring the score under ``beta`` the node
        cuts off) and **late move reductions** (a quiet move after the first
        :data:`FULL_DEPTH_MOVES` is searched one ply shallower first; one that
        beats ``alpha`` there is searched again at full depth).
        """
        self._tick()
        if not me:
            me = ((self.side + height) & 1) + 1
        if self.max_plies is not None and self.ply >= self.max_plies:
            moves = self._slides(me)
            return -(WIN - height) if not moves else 0
        if depth <= 0:
            return self._quiesce(alpha, beta, height, QUIESCENCE_PLIES, me)
        key = (self.key, me)
        known, tt_move = self._table.probe(key, depth, alpha, beta, height)
        if known is not None:
            return known
        moves = self._slides(me)
        if not moves:
            return -(WIN - height)
        if (null_ok and depth >= NULL_MOVE_MIN_DEPTH and len(moves) >= NULL_MOVE_MIN_SLIDES
                and abs(beta) < MATE_ZONE and beta - alpha == 1):
            score = -self._negamax(depth - 1 - NULL_MOVE_REDUCTION, -beta, -beta + 1, height + 1, me ^ 3, False)
            if score >= beta:
                return beta
        moves, tactical = self._ordered(moves, me, tt_move, height)
        original_alpha = alpha
        best, best_move = -WIN - 1, None
        for index, (start, to) in enumerate(moves):
            caught = self._make(start, to, me)
            try:
                if index == 0:
                    score = -self._negamax(depth - 1, -beta, -alpha, height + 1, me ^ 3)
                else:
                    reduce = index >= max(tactical, FULL_DEPTH_MOVES) and depth >= REDUCE_MIN_DEPTH
                    score = -self._negamax(depth - 1 - reduce, -alpha - 1, -alpha, height + 1, me ^ 3)
                    if reduce and score > alpha:
                        score = -self._negamax(depth - 1, -alpha - 1, -alpha, height + 1, me ^ 3)
                    if alpha < score < beta:
                        score = -self._negamax(depth - 1, -beta, -score, height + 1, me ^ 3)
            finally:
                self._unmake(start, to, me, caught)
            if score > best:
                best, best_move = score, (start, to)
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        self._remember_cutoff(best_move, caught, height, depth)
                        break
        self._table.store(key, depth, best, original_alpha, beta, height, best_move)
        return best

    def _remember_cutoff(self, move: tuple[int, int], caught: list[int], height: int, depth: int) -> None:
        """A quiet move that cut off: a killer at this height, and history credit."""
        if caught:
            return
        killers = self._killers.setdefault(height, [])
        if move not in killers:
            killers.insert(0, move)
            del killers[2:]
        self._history[move] = self._history.get(move, 0) + depth * depth

    def _ordered(self, moves: list[tuple[int, int]], me: int, tt_move: tuple[int, int] | None, height: int
                 ) -> tuple[list[tuple[int, int]], int]:
        """The table move, captures (most pawns first), killers, then by history; and how many lead that are not
        quiet (the table move, captures and killers: never reduced)."""
        gains: dict[int, int] = {}
        killers = self._killers.get(height, ())
        history = self._history
        gain_of = self._gain

        def rank(move: tuple[int, int]) -> tuple[int, int]:
            if move == tt_move:
                return (-1_000_000, 0)
            to = move[1]
            gain = gains.get(to)
            if gain is None:
                gain = gains[to] = gain_of(to, me)
            if gain:
                return (-1000 * gain, 0)
            if move in killers:
                return (-1, 0)
            return (0, -history.get(move, 0))

        ranks = {move: rank(move) for move in moves}
        ordered = sorted(moves, key=ranks.__getitem__)
        return ordered, sum(1 for r in ranks.values() if r[0] < 0)

    def _quiesce(self, alpha: int, beta: int, height: int, plies_left: int, me: int) -> int:
        """Stand pat on the evaluation, or play on the captures of the side to move (``me``)."""
        stand, moves = _score(*lines(self.board, self._width), me)
        if not moves:
            return -(WIN - height)
        if self.max_plies is not None and self.ply >= self.max_plies:
            return 0
        if stand >= beta or plies_left == 0:
            return stand
        alpha = max(alpha, stand)
        best = stand
        for _, start, to in self._captures(me):
            self._tick()
            caught = self._make(start, to, me)
            try:
                score = -self._quiesce(-beta, -alpha, height + 1, plies_left - 1, me ^ 3)
            finally:
                self._unmake(start, to, me, caught)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best


def _column_index(width: int) -> tuple[int, ...]:
    """For each position in :func:`lines`' column text, the board index it shows."""
    return tuple(row * width + column for column in range(1, width - 1) for row in range(width))

