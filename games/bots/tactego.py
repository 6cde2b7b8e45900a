"""Tactego computer players: they reason only from their own seat's view.

The opponent's hidden ranks are never given to a chooser. The strong levels
use determinization: draw positions consistent with the view
(``Tactego.sample_state``: own pieces as seen, revealed pieces as shown,
unknown pieces from the opponent's unseen ranks, no flag on a square whose
piece has moved), search each with a shallow alpha-beta
(:mod:`.tactego_search`) and average every candidate move's value over the
samples. Two positions that look the same to the seat therefore get the same
move for the same random generator: the hidden ranks cannot leak into it.

Levels:

1. a beginner: three moves in four at random, the rest capture-first
   (with half at random, capture-first won only 64 % of 200 games against
   it; with three in four, 83 % of 300, and it still beats uniformly random
   play in 88 %);
2. capture-first (:func:`greedy_chooser`);
3. determinization, one ply and the opponent's best capture;
4. determinization, two plies on the most promising moves;
5. determinization, two plies on more candidates, as many samples as the
   budget allows; and an opponent that cannot see our ranks where seeing
   them would win: in a sample the opponent knows every rank, our flag
   included, so every line with its strong piece two steps from our flag
   is lost and every move looks alike. Such a move is valued again against
   an opponent choosing its reply on a belief in which our never-fought
   pieces' ranks are shuffled (a flag only where nothing moved,
   ``SearchBoard.belief``); a move it does not lose to is worth that value
   less :data:`BLIND_PENALTY`, and when every candidate is so valued all
   legal moves are searched (a piece offered to the threat, away from the
   flag, is a loss at depth 1).
   That search gets half the budget, its strongest piece does not
   step next to a hidden enemy piece that may match it, and hunts the
   enemy's strongest once that has fought; where it cannot
   tell its best moves apart (two or more within a margin, none winning
   outright) the other half plays them out 30 plies deep
   (:mod:`.tactego_hybrid`, :class:`~.tactego_hybrid.HybridChooser`),
   else it buys more search: 190 of 200 against capture-first at its
   default 1 s a move and 193 of 200 at 90,000 nodes, on fresh seeds;
   187 of 200 at 3,000 nodes (main's level 5 before the hunt 185 of the
   same 200), and 50 won, 32 drawn, 38 lost of 120 against level 4.

Measured on the default 8 x 8 board (level 5 against capture-first, seats
alternating; a search runs about 40,000 nodes a second): 71 of 80 games at
3,000 nodes a move, 16 of 20 at 20,000, 14 of 20 at one second a move on a
loaded machine; 19 of 20 against uniformly random moves. Again (issue 22):
169 of 200 at 0.1 s a move, 173 of 200 at 3,000 nodes on fresh seeds
(docs/BENCHMARKS.md, with every game not won classified by
``benchmarks/tactego_losses.py`` and what was tried to reach 95 %); with
the blind opponent, 179 of 200 at 0.1 s and 174 of 200 at 3,000 nodes on
fresh seeds (the unchanged player 174 and 170 on the same seeds). Every
loss was a flag taken, by the enemy's strongest pieces next to it. Level 3 wins 16 of 20
against capture-first. ``benchmarks/strength.py`` holds
the full measurement.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import games

from ..tactego import FLAG, UNKNOWN, Tactego, unseen_ranks
from .base import Budget, Deadline, MoveChooser
from .tactego_search import WIN, OutOfBudget, SearchBoard

__all__ = ["DeterminizingChooser", "GreedyChooser", "LEVEL_1_RANDOM_SHARE", "choice_setup", "greedy_chooser", "make_chooser"]


BLIND_PENALTY = 50.0
"""What a line costs that an opponent seeing every rank wins but one that cannot see ours does not
(about four strong pieces): such moves rank below every move that holds against both."""

LEVEL_1_RANDOM_SHARE = 0.75
"""The share of level 1's moves played at random (the others capture-first)."""


@dataclass(frozen=True)
class _Plan:
    """How hard a level searches.

    Attributes:
        first_samples: determinizations every move is scored on at depth 1.
        candidates: how many of the best depth-1 moves are searched deeper.
        depth: plies of the deeper search (before its one-capture quiescence).
        samples: at most this many determinizations for the deeper search.
        blind: a move that loses against a sample's all-seeing opponent is
            valued again against one that cannot see our hidden ranks (see
            :func:`_score_moves`), so that a threatened flag is not given up
            as if the opponent knew where it stands.
        widen: when every candidate loses the game (or keeps the flag only
            from a blind opponent) in the first deep sample, search
            every legal move deeper instead (a move that gives a piece up at
            depth 1 may be the one that keeps the flag).
    """

    first_samples: int
    candidates: int
    depth: int
    samples: int
    blind: bool = False
    widen: bool = False


_PLANS = {
    3: _Plan(first_samples=4, candidates=0, depth=1, samples=0),
    4: _Plan(first_samples=6, candidates=5, depth=2, samples=40),
    5: _Plan(first_samples=8, candidates=8, depth=2, samples=10_000, blind=True, widen=True),
}


def make_chooser(level: int) -> MoveChooser:
    """The Tactego chooser for ``level`` (1 weakest to 5 strongest; see the module docstring).

    Raises:
        ValueError: if ``level`` is not from 1 to 5.
    """
    if level == 1:
        return GreedyChooser(level, random_share=LEVEL_1_RANDOM_SHARE)
    if level == 2:
        return GreedyChooser(level)
    if level == 5:
        from .tactego_hybrid import HybridChooser  # noqa: PLC0415 (it imports this module)

        return HybridChooser(level)
    return DeterminizingChooser(level)


def greedy_chooser() -> MoveChooser:
    """The capture-first baseline: the player the strongest level must beat in most games."""
    return GreedyChooser(2)


# --------------------------------------------------------------------------
# Reading a view
# --------------------------------------------------------------------------


def choice_setup(view: Mapping[str, Any], legal: list[str]) -> tuple[Tactego, int, int, list[tuple[int, int]], tuple[tuple[int, ...], ...]]:
    """What every searching chooser starts from: ``(game, seat, sign, moves, steps)``.

    ``sign`` is +1 for Red and -1 for Blue; ``moves`` are ``legal`` as
    (origin, target) square indices; ``steps`` each square's neighbours.
    """
    game: Tactego = games.get("tactego")  # type: ignore[assignment]
    seat = view["to_move"]
    _, names = _squares(view)
    return game, seat, 1 if seat == 0 else -1, [_move_squares(move, names) for move in legal], _steps(view["rows"], view["cols"])


def _squares(view: Mapping[str, Any]) -> tuple[list[Any], dict[str, int]]:
    """The view's board flattened row-major, and each square name's index."""
    cols = view["cols"]
    cells = [cell for row in view["board"] for cell in row]
    names = {f"{chr(ord('a') + i % cols)}{i // cols + 1}": i for i in range(len(cells))}
    return cells, names


def _move_squares(move: str, names: Mapping[str, int]) -> tuple[int, int]:
    """``"b2-c3"`` (canonical, as ``legal_moves`` gives it) as square indices."""
    origin, target = move.split("-")
    return names[origin], names[target]


def win_chance(attacker: str, defender: str, unseen: list[str], flag_possible: bool) -> float:
    """The chance that ``attacker`` beats ``defender`` (a rank, or ``"?"``) from what the seat knows.

    An unknown defender is any of the ``unseen`` ranks with equal chance,
    except that it cannot be a flag when it has moved (``flag_possible``
    false). Equal or higher strength wins; a flag is always captured.
    """
    strength = int(attacker)
    if defender != UNKNOWN:
        return 1.0 if defender == FLAG or strength >= int(defender) else 0.0
    pool = unseen if flag_possible else [rank for rank in unseen if rank != FLAG]
    if not pool:
        return 0.0
    return sum(1 for rank in pool if rank == FLAG or strength >= int(rank)) / len(pool)


# --------------------------------------------------------------------------
# Capture-first
# --------------------------------------------------------------------------


class GreedyChooser(MoveChooser):
    """Capture-first: attack whenever it can, else step forward.

    Among attacks it takes one with the best chance of winning from what its
    view shows (:func:`win_chance`); without an attack it plays a random
    forward move (towards the opponent's side), or any move. With
    ``random_share`` (0 to 1) it plays that share of its moves at random.
    """

    game = "tactego"

    def __init__(self, level: int = 2, random_share: float = 0.0) -> None:
        super().__init__(level)
        self.random_share = random_share

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        if self.random_share and rng.random() < self.random_share:
            return rng.choice(legal)
        seat = view["to_move"]
        cells, names = _squares(view)
        attacks = []
        for move in legal:
            origin, target = _move_squares(move, names)
            if cells[target] is not None:
                attacks.append((move, cells[origin][1], cells[target][1], move.split("-")[1]))
        if attacks:
            unseen = unseen_ranks(view, seat)
            moved = set(view["has_moved"])
            chances = [win_chance(mine, theirs, unseen, square not in moved) for _, mine, theirs, square in attacks]
            best = max(chances)
            return rng.choice([attack[0] for attack, chance in zip(attacks, chances) if chance == best])
        forward, cols = (1 if seat == 0 else -1), view["cols"]
        ahead = []
        for move in legal:
            origin, target = _move_squares(move, names)
            if target // cols - origin // cols == forward:
                ahead.append(move)
        return rng.choice(ahead or legal)


# --------------------------------------------------------------------------
# Determinization
# --------------------------------------------------------------------------


class DeterminizingChooser(MoveChooser):
    """Determinization search (levels 3-5): sample, search each sample, average.

    Every legal move is first scored at depth 1 on a few sampled positions;
    the best ``candidates`` of them are then searched ``depth`` plies deep on
    fresh samples until the budget runs out, and the move with the best mean
    wins. A sample cut short by the budget is dropped whole, so every
    candidate is compared on the same samples. Deterministic for a given
    view, node budget and random generator.
    """

    game = "tactego"

    def __init__(self, level: int) -> None:
        super().__init__(level)
        if level not in _PLANS:
            raise ValueError(f"determinization covers levels {min(_PLANS)} to {max(_PLANS)}, not {level!r}")
        self.plan = _PLANS[level]

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        game, seat, sign, moves, steps = choice_setup(view, legal)
        search = _Search(game, view, seat, sign, moves, steps, self.plan, rng)
        order, deep, chosen = search.run(budget.start())
        return legal[deep.ranking(chosen)[0] if deep.count else order[0]]


class _Search:
    """The determinizing search of levels 3-5 (and of the hybrid level 5's first half), giving its tallies.

    Every move at depth 1 on a few samples, then the best ``plan.candidates``
    deeper on fresh samples, and every move deeper when all of those lose
    (``plan.widen``). :class:`DeterminizingChooser` plays the best of the
    tallies; :mod:`.tactego_hybrid` plays some of its near-equal moves out.
    """

    def __init__(self, game: Tactego, view: Mapping[str, Any], seat: int, sign: int, moves: list[tuple[int, int]],
                 steps: tuple[tuple[int, ...], ...], plan: _Plan, rng: random.Random) -> None:
        self.game, self.view, self.seat, self.sign = game, view, seat, sign
        self.moves, self.steps, self.plan, self.rng = moves, steps, plan, rng
        self.known = not any(cell is not None and cell[1] == UNKNOWN for row in view["board"] for cell in row)
        self.order: list[int] = []

    def _sample(self, deadline: Deadline) -> SearchBoard:
        return SearchBoard(self.game.sample_state(self.view, self.rng, self.seat), self.steps, deadline)

    def run(self, deadline: Deadline, extra: Iterable[int] = ()) -> tuple[list[int], _Tally, list[int]]:
        """``(order, deep, chosen)``: the depth-1 ranking, the deep tally and the moves it covers.

        ``extra`` move indices are searched deeper as well as the plan's best candidates.
        """
        plan, moves, blind = self.plan, self.moves, self.rng if self.plan.blind else None
        shallow = _Tally(len(moves))
        every = range(len(moves))
        for index in range(1 if self.known else plan.first_samples):
            try:
                shallow.add(_score_moves(self._sample(deadline), self.sign, moves, every, 1, rng=blind))
            except OutOfBudget:
                if index == 0:
                    shallow.add(_score_moves(self._sample(deadline), self.sign, moves, every, 1, ignore_budget=True))
                break
        self.order = order = shallow.ranking()
        deep = _Tally(len(moves))
        if not plan.candidates:
            return order, deep, order[:1]
        chosen = order[: plan.candidates]
        chosen += [index for index in extra if index not in chosen]
        return order, deep, self.more(deadline, deep, chosen)

    def more(self, deadline: Deadline, deep: _Tally, chosen: list[int]) -> list[int]:
        """Add deep samples of ``chosen`` to ``deep`` until ``deadline`` or the plan's samples run out.

        Returns the moves ``deep`` now covers: every legal move, emptying
        ``deep`` first, when the first deep sample finds every one of
        ``chosen`` losing (level 5's ``widen``).
        """
        plan, blind = self.plan, self.rng if self.plan.blind else None
        while deep.count < (1 if self.known else plan.samples) and not deadline.expired():
            try:
                deep.add(_score_moves(self._sample(deadline), self.sign, self.moves, chosen, plan.depth, rng=blind))
            except OutOfBudget:
                break
            if plan.widen and len(chosen) < len(self.moves) and deep.count == 1 \
                    and deep.best(chosen) < -BLIND_PENALTY / 2:
                chosen = self.order
                deep.sums, deep.count = [0.0] * len(self.moves), 0
        return chosen


class _Tally:
    """Sums of per-move values over complete samples."""

    def __init__(self, size: int) -> None:
        self.sums = [0.0] * size
        self.count = 0

    def add(self, values: Mapping[int, float]) -> None:
        for index, value in values.items():
            self.sums[index] += value
        self.count += 1

    def best(self, among: list[int]) -> float:
        """The best mean value among the move indices ``among``."""
        return max(self.sums[i] for i in among) / self.count

    def ranking(self, among: list[int] | None = None) -> list[int]:
        """Move indices best first (ties keep ``legal_moves`` order)."""
        indices = list(range(len(self.sums))) if among is None else list(among)
        return sorted(indices, key=lambda i: -self.sums[i])


def _score_moves(board: SearchBoard, sign: int, moves: list[tuple[int, int]], which: Iterable[int], depth: int,
                 ignore_budget: bool = False, rng: random.Random | None = None) -> dict[int, float]:
    """Each chosen move's value on ``board``: a full-window search under each.

    With ``rng``, a move that loses the game against this sample's opponent
    (who sees every rank, our flag included) is valued again against one who
    cannot see our hidden ranks (:meth:`SearchBoard.blind_reply`, on a
    belief drawn from ``rng``); if that one does not win, the move is worth
    that value less :data:`BLIND_PENALTY` instead of a loss.
    """
    if ignore_budget:
        board.unlimited = True
    enemy = 1 if sign > 0 else 0
    values = {}
    for index in which:
        if not board.unlimited and board.out_of_time():
            raise OutOfBudget
        origin, target = moves[index]
        attacker = board.board[origin]
        saved = board.make(origin, target)
        if board.flags[enemy] == 0:
            value = WIN - board.ply
        else:
            value = -board.negamax(-sign, depth - 1, -WIN - 1.0, WIN + 1.0)
            if rng is not None and value < -WIN / 2:
                blind = board.blind_reply(sign, board.belief(sign, origin, target, saved[0], rng))
                if blind > -WIN / 2:
                    value = blind - BLIND_PENALTY
        board.unmake(origin, target, attacker, saved)
        values[index] = value
    return values


@functools.lru_cache(maxsize=None)
def _steps(rows: int, cols: int) -> tuple[tuple[int, ...], ...]:
    """Each square's one-step neighbours (8 directions) as indices."""
    steps = []
    for i in range(rows * cols):
        r, c = divmod(i, cols)
        steps.append(tuple((r + dr) * cols + c + dc for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                           if (dr or dc) and 0 <= r + dr < rows and 0 <= c + dc < cols))
    return tuple(steps)
