"""Tactego by determinized Monte Carlo playouts: a longer horizon than a two-ply search.

Today's search (:class:`~games.bots.tactego.DeterminizingChooser`) sees two
plies and one capture; its losses come from an enemy 10 or 9 that walks up to
the last flag over several moves. Here every candidate root move is instead
played out many times:

1. every legal move is scored at depth 1 on a few determinizations (the
   existing search: :func:`~games.bots.tactego._score_moves`); a move that
   wins in every sample (a flag taken) is played at once, and the best
   :attr:`PlayoutPlan.candidates` go on, with up to
   :attr:`PlayoutPlan.defences` moves towards a seen enemy piece that
   threatens one of our flags (:func:`_defences`);
2. each round draws one determinization (``Tactego.sample_state``: the
   opponent's hidden ranks drawn from what the seat sees, no flag on a
   moved piece) and plays every candidate out from it with the same random
   stream (common random numbers, so the candidates differ only where their
   moves do), up to :attr:`PlayoutPlan.horizon` plies, both sides playing
   the default policy :func:`_policy`, which uses only what *that side* could
   see: its own ranks, the enemy's ranks that fought, and which enemy
   pieces moved;
3. a playout ends in a win (+1), a loss (-1) or, at the horizon, the
   material balance squashed into (-1, 1); the candidate with the best mean
   over complete rounds is played.

A playout ply counts as one node of the budget, so ``Budget(nodes=N)`` is
deterministic for a given random generator. The playouts run on one flat
list of integers per round (no game states), with the search's neighbour
tables: about 10 µs a ply, some 90,000 nodes a CPU second, and 3,000 nodes
cost 1.03x the CPU of the two-ply search at 3,000 (``benchmarks/tactego_move_cost.py``).

Not level 5 by itself (docs/BENCHMARKS.md, *Tactego level 5*): against
capture-first it won 186 of 200 games on fresh seeds at 3,000 nodes a move
(93.0 %), where the two-ply search (then level 5) won 167 of the same 200 (83.5 %); at 0.1 s
a move on a machine at load 13-19 (some hundreds of nodes a move) it won
78.5 % of 200, the search 78.0 %; and it loses to level 4 (8 won, 5
drawn, 17 lost of 30 at 0.1 s a move; 8 won, 11 drawn, 11 lost of 30 at 3,000 nodes): levels must stay
ordered. Level 5 (:mod:`.tactego_hybrid`) uses its rounds (:func:`_play_out`)
only among the moves the two-ply search cannot tell apart.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any, Mapping

from ..tactego import FLAG, UNKNOWN, Tactego, TactegoState
from .base import Budget, Deadline, MoveChooser
from .tactego import _score_moves, _squares, _Tally, choice_setup
from .tactego_search import WIN, OutOfBudget, SearchBoard, piece_value

__all__ = ["PlayoutBoard", "PlayoutChooser", "PlayoutPlan"]


@dataclass(frozen=True)
class PlayoutPlan:
    """How the playout chooser spends its budget.

    Attributes:
        first_samples: determinizations every legal move is scored on at depth 1.
        candidates: how many of the best depth-1 moves are played out.
        horizon: plies a playout runs after the root move, at most.
        attack_threshold: a side attacks an enemy piece when its view's
            chance of winning that fight is at least this (0 to 1).
        chase: how often the seat choosing (when it does not attack)
            steps towards the nearest enemy piece that fought and that it beats.
        opponent_chase: the same for the other seat.
        defences: at most this many moves are played out besides the
            candidates: those bringing a piece closer to a seen enemy piece
            it beats that stands within ``threat_distance`` of one of our
            flags (:func:`_defences`), best depth-1 value first.
        threat_distance: see ``defences`` (king moves).
        material_scale: material difference (in :func:`piece_value` units)
            that a horizon position maps to 0.5 (``x / (1 + |x|)``).
    """

    first_samples: int = 6
    candidates: int = 6
    horizon: int = 30
    attack_threshold: float = 0.5
    chase: float = 0.5
    opponent_chase: float = 0.5
    material_scale: float = 20.0
    defences: int = 4
    threat_distance: int = 3


class PlayoutBoard:
    """One determinization as flat lists that a playout changes in place.

    ``board`` squares hold ``0`` or ``±(strength + 1)`` (a flag ``±1``; seat 0
    positive) as in :class:`SearchBoard`; ``revealed[i]`` and ``moved[i]``
    say what both seats know of the piece on square ``i``; ``hidden[seat]``
    counts that seat's never-fought pieces by ``strength + 1``, which is
    exactly the pool of ranks the other seat cannot place; ``values`` is
    each ``strength + 1``'s material (:func:`piece_value`; a flag nothing).
    """

    __slots__ = ("board", "revealed", "moved", "hidden", "steps", "cols", "values", "_chance")

    def __init__(self, state: TactegoState, steps: tuple[tuple[int, ...], ...]) -> None:
        cells = state.board
        self.board = [0 if p is None else (p.strength + 1) * (1 if p.owner == 0 else -1) for p in cells]
        self.revealed = [p is not None and p.revealed for p in cells]
        self.moved = [p is not None and p.moved for p in cells]
        top = max((abs(v) for v in self.board), default=1)
        self.hidden = [[0] * (top + 1), [0] * (top + 1)]
        for v, seen in zip(self.board, self.revealed):
            if v and not seen:
                self.hidden[0 if v > 0 else 1][abs(v)] += 1
        self.steps = steps
        self.cols = state.options["cols"]
        self.values = [0.0, 0.0] + [piece_value(s) for s in range(1, top)]
        self._chance = [self._chances(self.hidden[1]), self._chances(self.hidden[0])]
        """Per seat, per attacker ``strength + 1``: its chance of beating an unseen enemy piece (:meth:`_chances`)."""

    def copy_lists(self) -> tuple[list[int], list[bool], list[bool], list[list[int]]]:
        """Fresh copies of the mutable lists (a playout changes them)."""
        return list(self.board), list(self.revealed), list(self.moved), [list(self.hidden[0]), list(self.hidden[1])]

    @staticmethod
    def _chances(enemy: list[int]) -> list[list[float]]:
        """Per attacker ``strength + 1`` (the index): ``[chance if it may be a flag, chance if it moved]``
        of beating one of the never-fought pieces counted in ``enemy`` (by ``strength + 1``), all alike likely."""
        total = sum(enemy)
        flags = enemy[1] if len(enemy) > 1 else 0
        table = []
        beaten = 0
        for a in range(len(enemy)):
            if a >= 1:
                beaten += enemy[a]
            unmoved = beaten / total if total else 0.0
            moved = (beaten - flags) / (total - flags) if total > flags else 0.0
            table.append([unmoved, moved])
        return table

    def playout(self, sign: int, origin: int, target: int, horizon: int, plan: PlayoutPlan,
                rng: random.Random) -> tuple[float, int]:
        """Play ``origin``-``target`` for the seat with ``sign``, then both seats' policy for up to ``horizon`` plies.

        Returns:
            ``(value, plies)``: the value for ``sign``'s seat in [-1, 1]
            (win 1, loss -1, else the squashed material balance) and the
            plies played (the root move included).
        """
        board, revealed, moved, hidden = self.copy_lists()
        flags = [board.count(1), board.count(-1)]
        chance = self._chance
        steps, threshold, forward = self.steps, plan.attack_threshold, _forward(self.steps, self.cols)
        mover = sign
        plies = 0
        while True:
            if plies:
                move = _policy(board, revealed, moved, chance, steps, mover, threshold, forward[mover > 0], rng,
                               plan.chase if mover == sign else plan.opponent_chase, self.cols)
                if move is None:
                    return (-1.0 if mover == sign else 1.0), plies
                origin, target = move
            plies += 1
            a, d = board[origin], board[target]
            board[origin] = 0
            seen, was_moved = revealed[origin], True
            revealed[origin] = moved[origin] = False
            if d == 0:
                board[target], revealed[target], moved[target] = a, seen, was_moved
            else:
                if not seen:
                    hidden[0 if a > 0 else 1][abs(a)] -= 1
                if not revealed[target]:
                    hidden[0 if d > 0 else 1][abs(d)] -= 1
                if d == 1 or d == -1:
                    board[target], revealed[target], moved[target] = a, True, True
                    flags[0 if d > 0 else 1] -= 1
                    if not flags[0 if d > 0 else 1]:
                        return (1.0 if mover == sign else -1.0), plies
                if abs(a) >= abs(d):
                    board[target], revealed[target], moved[target] = a, True, True
                else:
                    revealed[target] = True
                chance = [self._chances(hidden[1]), self._chances(hidden[0])]
            if plies > horizon:
                break
            mover = -mover
        return _squash(_material(board, self.values) * sign / plan.material_scale), plies


@functools.lru_cache(maxsize=64)
def _forward(steps: tuple[tuple[int, ...], ...], cols: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per square, its steps one row towards the enemy's side: ``[0]`` for seat 1 (up), ``[1]`` for seat 0 (down)."""
    return tuple(tuple(tuple(j for j in steps[i] if j // cols - i // cols == direction) for i in range(len(steps)))
                 for direction in (-1, 1))


def _squash(x: float) -> float:
    """``x`` mapped into (-1, 1), about linear near 0 (a rational tanh)."""
    return x / (1.0 + abs(x))


def _material(board: list[int], values: list[float]) -> float:
    """Seat 0's material less seat 1's, ``values`` indexed by ``strength + 1`` (a flag, 1, counts nothing)."""
    total = 0.0
    for v in board:
        if v > 1:
            total += values[v]
        elif v < -1:
            total -= values[-v]
    return total


def _policy(board: list[int], revealed: list[bool], moved: list[bool], chance: list[list[list[float]]],
            steps: tuple[tuple[int, ...], ...], sign: int, threshold: float, forward: tuple[tuple[int, ...], ...],
            rng: random.Random, chase: float = 0.0, cols: int = 8) -> tuple[int, int] | None:
    """The default policy's move for the seat with ``sign``, from what that seat sees; ``None`` without a move.

    Attack the enemy piece with the best chance of winning from this seat's
    view (a fought piece's rank is known; an unseen one is any of the
    enemy's never-fought ranks, a flag only if it never moved) when that
    chance is at least ``threshold``, ties broken at random. Otherwise, with
    probability ``chase``, step a piece towards the nearest enemy piece that
    fought and that it beats (ranks that fought are known to both seats);
    else a random piece steps to a random empty square of ``forward`` (its
    steps towards the enemy's side; a few pieces are tried), or any step.
    """
    table = chance[0 if sign > 0 else 1]
    best, attacks = -1.0, []
    mine, known = [], []
    for i, v in enumerate(board):
        a = v * sign
        if a <= 1:
            if a < -1 and revealed[i]:
                known.append((i, -a))
            continue
        mine.append((i, a))
        for j in steps[i]:
            w = board[j] * sign
            if w < 0:
                if revealed[j]:
                    p = 1.0 if (w == -1 or a >= -w) else 0.0
                else:
                    p = table[a][1 if moved[j] else 0]
                if p > best:
                    best, attacks = p, [(i, j)]
                elif p == best:
                    attacks.append((i, j))
    if attacks and best >= threshold:
        return attacks[int(rng.random() * len(attacks))]
    if not mine:
        return None
    if known and chase and rng.random() < chase:
        step = _chase(board, mine, known, cols, rng)
        if step is not None:
            return step
    for _ in range(4):
        i = mine[int(rng.random() * len(mine))][0]
        free = [j for j in forward[i] if not board[j]]
        if free:
            return i, free[int(rng.random() * len(free))]
    quiet = [(i, j) for i, _ in mine for j in steps[i] if not board[j]]
    pool = quiet or attacks
    if not pool:
        return None
    return pool[int(rng.random() * len(pool))]


def _chase(board: list[int], mine: list[tuple[int, int]], known: list[tuple[int, int]], cols: int,
           rng: random.Random) -> tuple[int, int] | None:
    """A step of one of ``mine`` towards the nearest of ``known`` it beats, onto an empty square; ``None`` if none.

    ``mine`` and ``known`` are (square, strength + 1) pairs; distance is in king moves.
    """
    nearest, found = 1 << 30, []
    for i, a in mine:
        r, c = divmod(i, cols)
        for j, w in known:
            if a < w:
                continue
            dr, dc = j // cols - r, j % cols - c
            distance = max(abs(dr), abs(dc))
            if distance > nearest:
                continue
            target = (r + (dr > 0) - (dr < 0)) * cols + c + (dc > 0) - (dc < 0)
            if board[target]:
                continue
            if distance < nearest:
                nearest, found = distance, []
            found.append((i, target))
    if not found:
        return None
    return found[int(rng.random() * len(found))]


class PlayoutChooser(MoveChooser):
    """A Tactego player by determinized playouts alone (see the module docstring; no level uses it).

    Deterministic for a given view, node budget and random generator: every
    random choice comes from the generator given to :meth:`choose`.
    """

    game = "tactego"

    def __init__(self, level: int = 5, plan: PlayoutPlan | None = None) -> None:
        super().__init__(level)
        self.plan = plan or PlayoutPlan()
        self.last_nodes = 0
        """Nodes (search nodes and playout plies) the last choice spent (for benchmarks)."""

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        game, seat, sign, moves, steps = choice_setup(view, legal)
        deadline = budget.start()
        plan = self.plan
        shallow = _Tally(len(moves))
        for index in range(plan.first_samples):
            board = SearchBoard(game.sample_state(view, rng, seat), steps, deadline)
            try:
                shallow.add(_score_moves(board, sign, moves, range(len(moves)), 1, ignore_budget=index == 0, rng=rng))
            except OutOfBudget:
                break
        order = shallow.ranking()
        self.last_nodes = deadline.nodes
        if shallow.best(order) > WIN / 2 or deadline.expired():
            return legal[order[0]]
        chosen = order[: plan.candidates]
        defences = _defences(view, seat, moves, plan.threat_distance)
        chosen += [i for i in order if i in defences][: plan.defences]
        chosen = list(dict.fromkeys(chosen))
        means = _play_out(game, view, seat, sign, [moves[i] for i in chosen], steps, deadline, plan, rng)
        self.last_nodes = deadline.nodes
        if means is None:
            return legal[order[0]]
        best = max(range(len(chosen)), key=lambda k: (means[k], -k))
        return legal[chosen[best]]


def _defences(view: Mapping[str, Any], seat: int, moves: list[tuple[int, int]], reach: int = 3) -> set[int]:
    """Indices of ``moves`` that bring one of ``seat``'s pieces closer to a seen enemy piece it beats
    standing within ``reach`` king moves of one of ``seat``'s flags (taking it included).

    Everything here is in ``seat``'s view: its own flags and ranks, and enemy ranks that fought.
    """
    cells, _ = _squares(view)
    cols = view["cols"]
    flags = [i for i, cell in enumerate(cells) if cell is not None and cell[0] == seat and cell[1] == FLAG]
    threats = [(i, int(cell[1])) for i, cell in enumerate(cells)
               if cell is not None and cell[0] != seat and cell[1] not in (UNKNOWN, FLAG)
               and any(_distance(i, flag, cols) <= reach for flag in flags)]
    found = set()
    for index, (origin, target) in enumerate(moves):
        strength = int(cells[origin][1])
        for square, rank in threats:
            if strength >= rank and _distance(target, square, cols) < _distance(origin, square, cols):
                found.add(index)
    return found


def _distance(a: int, b: int, cols: int) -> int:
    """King-move distance between squares ``a`` and ``b`` of a board ``cols`` wide."""
    return max(abs(a // cols - b // cols), abs(a % cols - b % cols))


def _play_out(game: Tactego, view: Mapping[str, Any], seat: int, sign: int, moves: list[tuple[int, int]],
              steps: tuple[tuple[int, ...], ...], deadline: Deadline, plan: PlayoutPlan,
              rng: random.Random) -> list[float] | None:
    """Each move's mean playout value over complete rounds (``None`` when no round finished)."""
    sums = [0.0] * len(moves)
    rounds = 0
    while not deadline.expired():
        board = PlayoutBoard(game.sample_state(view, rng, seat), steps)
        stream = rng.random()
        values = []
        for origin, target in moves:
            value, plies = board.playout(sign, origin, target, plan.horizon, plan, random.Random(stream))
            deadline.nodes += plies
            values.append(value)
        if deadline.expired() and rounds:
            break
        for k, value in enumerate(values):
            sums[k] += value
        rounds += 1
    if not rounds:
        return None
    return [s / rounds for s in sums]
