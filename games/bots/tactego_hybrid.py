"""Tactego level 5: two-ply search first, playouts only where the search cannot tell moves apart.

The two-ply search (:class:`~games.bots.tactego.DeterminizingChooser` at
level 5, which was level 5 until issue 22's fifth session: determinization,
two plies, one-capture quiescence, the blind opponent, widening) holds its own against searching opponents but sees no further than
two plies; the playout player (:class:`~games.bots.tactego_playout.PlayoutChooser`)
sees 30 plies ahead but assumes an opponent that plays like capture-first.
This chooser does both, in that order:

1. that search runs on :attr:`HybridPlan.search_share` of the budget
   (the same plan, samples and random draws as ``DeterminizingChooser(5)``);
   a move that takes our strongest piece next to a never-fought enemy
   piece that may equal or outrank it (:func:`_exposing`) is set aside
   unless it wins in every sample or every searched move does so
   (:attr:`HybridPlan.caution`). Of two equal pieces the one that attacks
   first wins, and while the enemy's strongest rank has not fought any of
   its hidden pieces may be it: the search's mean values such a step by
   the flag it may find there, not by the piece that alone can stop the
   enemy's strongest, whose loss the next two plies do not show (without
   it, level 5 won 64 % of the tuning games where its 10 fell first, 95 %
   of the rest);
2. once the enemy's strongest piece has fought and ours equals or
   outranks it, ours hunts it (:func:`_hunting`, :attr:`HybridPlan.hunt`):
   it takes it when next to it, whatever the search's mean says (the mean
   of a raid values the flag it may find over a 10 the next ply loses),
   else heads for the squares between it and our flag (an equal piece no
   nearer than two squares to it: the hunted piece attacks first what
   stands next to it, and on its way to the flag steps next to ours, to be
   taken) when that step's mean is within :attr:`HybridPlan.margin` of the
   best and nothing wins outright;
3. the searched moves whose mean two-ply value is within
   :attr:`HybridPlan.margin` of the best (the best always, at most
   :attr:`HybridPlan.finalists` of them) are the finalists; when there is
   only one, or the best wins outright, it is played and the rest of the
   budget buys more search samples (a capture that wins material, the one
   defence of a threatened flag: the search sees those);
4. otherwise the rest of the budget plays the finalists out
   (:func:`~games.bots.tactego_playout._play_out`: one determinization a
   round, every finalist from it with the same random stream, both sides
   playing the view-only default policy for up to 30 plies) and the best
   playout mean is played (ties: the better two-ply value).

It reads only its seat's view, like every Tactego chooser. Nodes are search
nodes and playout plies alike, so ``Budget(nodes=N)`` is deterministic for a
given random generator.

Measured (docs/BENCHMARKS.md, *Tactego level 5*): at the default budget
against capture-first, 190 of 200 games at 1 s a move on fresh seeds
57200-57399 and 193 of 200 at 90,000 nodes on seeds 57000-57199 (383 of
400, 95.8 %). At 3,000 nodes a move (margin 3): against capture-first
187 of 200 games on fresh seeds 55000-55199 (93.5 %; without the hunt 185
of the same 200) and 87 of 100 on the tuning seeds 45000-45099 (without it
85); against level 4, 50 won, 32 drawn and 38 lost of 120 (seeds 53000-
and 53100-; without it 46-33-41). The caution before it: 183 of 200 on
seeds 54000-54199 where the player without it won 176. About 1.05x the
search's CPU a move at the same node budget.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..tactego import FLAG, UNKNOWN, unseen_ranks
from .base import Budget, MoveChooser
from .tactego import _PLANS, _Plan, _Search, _squares, choice_setup
from .tactego_playout import PlayoutPlan, _play_out
from .tactego_search import WIN

__all__ = ["HybridChooser", "HybridPlan", "SURE_WIN"]

SURE_WIN = 0.9 * WIN
"""A mean two-ply value above this is a win in every sample (one sample short of it costs about WIN / samples)."""


@dataclass(frozen=True)
class HybridPlan:
    """How the hybrid chooser splits its budget.

    Attributes:
        search: the two-ply search's plan (level 5's by default).
        search_share: the share of the budget (nodes and seconds alike, 0 to 1)
            the search gets before the playouts.
        margin: a searched move is a finalist when its mean two-ply value is
            at most this far below the best (in :func:`~.tactego_search.piece_value`
            units: a 1 is worth 1.04, a 10 is worth 14).
        finalists: at most this many finalists, best two-ply value first.
        caution: no move takes our strongest piece next to a never-fought
            enemy piece that may equal or outrank it (:func:`_exposing`)
            unless it wins in every sample or every searched move does so.
        hunt: once the enemy's strongest piece has fought and ours equals or
            outranks it, a capture of it (:func:`_hunting`) is played, else
            the first step towards it whose mean two-ply value is within
            ``margin`` of the best, unless the best wins outright; those
            moves are searched deep as well.
        playout: the playouts' plan (horizon, default policy).
    """

    search: _Plan = field(default_factory=lambda: _PLANS[5])
    search_share: float = 0.5
    margin: float = 3.0
    finalists: int = 4
    caution: bool = True
    hunt: bool = True
    playout: PlayoutPlan = field(default_factory=PlayoutPlan)


class HybridChooser(MoveChooser):
    """Level-5 search, then playouts among its near-equal moves (see the module docstring).

    Deterministic for a given view, node budget and random generator.
    """

    game = "tactego"

    def __init__(self, level: int = 5, plan: HybridPlan | None = None) -> None:
        super().__init__(level)
        self.plan = plan or HybridPlan()
        self.last_finalists = 0
        """How many moves the last choice played out (0: none; for benchmarks and tests)."""
        self.last_nodes = 0
        """Nodes (search nodes and playout plies) the last choice spent."""

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        game, seat, sign, moves, steps = choice_setup(view, legal)
        plan = self.plan
        whole = budget.start()
        first = _share(budget, plan.search_share).start()
        self.last_finalists = 0
        search = _Search(game, view, seat, sign, moves, steps, plan.search, rng)
        exposing = _exposing(view, seat, moves, steps) if plan.caution else set()
        taking, closing = _hunting(view, seat, moves, steps) if plan.hunt else ([], [])
        hunting = [i for i in taking + closing if i not in exposing]
        order, deep, chosen = search.run(first, hunting)
        whole.nodes = self.last_nodes = first.nodes
        if deep.count == 0:
            chosen = search.more(whole, deep, chosen)
            self.last_nodes = whole.nodes
            return legal[_cautious(deep.ranking(chosen), deep.sums, deep.count, exposing) if deep.count
                         else _cautious(order, [0.0] * len(order), 1, exposing)]
        ranked = deep.ranking(chosen)
        if exposing:
            ranked = [i for i in ranked if i not in exposing or deep.sums[i] / deep.count > SURE_WIN] or ranked
        best = deep.sums[ranked[0]] / deep.count
        finalists = [i for i in ranked if deep.sums[i] / deep.count >= best - plan.margin][: plan.finalists]
        hunt = [i for i in hunting if i in chosen and (i in taking or deep.sums[i] / deep.count >= best - plan.margin)]
        if hunt and best <= WIN / 2:
            self.last_nodes = whole.nodes
            return legal[hunt[0]]
        if best > WIN / 2 or len(finalists) < 2 or whole.expired():
            chosen = search.more(whole, deep, chosen)
            self.last_nodes = whole.nodes
            return legal[_cautious(deep.ranking(chosen), deep.sums, deep.count, exposing)]
        self.last_finalists = len(finalists)
        means = _play_out(game, view, seat, sign, [moves[i] for i in finalists], steps, whole, plan.playout, rng)
        self.last_nodes = whole.nodes
        if means is None:
            return legal[ranked[0]]
        pick = max(range(len(finalists)), key=lambda k: (means[k], -k))
        return legal[finalists[pick]]


def _exposing(view: Mapping[str, Any], seat: int, moves: list[tuple[int, int]],
              steps: tuple[tuple[int, ...], ...]) -> set[int]:
    """Indices of ``moves`` that take ``seat``'s strongest piece next to a never-fought enemy piece
    (other than the one it takes) that may equal or outrank it, from what ``seat`` sees.

    An enemy piece that equals ours wins when it attacks first, and one that
    outranks ours wins either way: while such a rank is unseen, our
    strongest piece is safe only away from the enemy's unknown pieces.
    Empty when no unseen rank equals or outranks it (say once the enemy's
    strongest has fought).
    """
    cells, _ = _squares(view)
    ours = [int(cell[1]) for cell in cells if cell is not None and cell[0] == seat and cell[1] != FLAG]
    if not ours:
        return set()
    top = max(ours)
    if not any(rank != FLAG and int(rank) >= top for rank in unseen_ranks(view, seat)):
        return set()
    found = set()
    for index, (origin, target) in enumerate(moves):
        if int(cells[origin][1]) != top:
            continue
        if any(j != target and j != origin and cells[j] is not None and cells[j][0] != seat and cells[j][1] == UNKNOWN
               for j in steps[target]):
            found.add(index)
    return found


def _hunting(view: Mapping[str, Any], seat: int, moves: list[tuple[int, int]],
             steps: tuple[tuple[int, ...], ...]) -> tuple[list[int], list[int]]:
    """Indices of ``moves`` that take ``seat``'s strongest piece at the enemy's strongest once that has fought,
    from what ``seat`` sees: ``(taking, closing)``, the captures of it and the steps towards it, best first.

    The hunted pieces are the enemy's fought pieces of its highest rank
    when no unseen enemy rank outranks them and our strongest equals or
    outranks them. A piece of ours of that strength next to one takes it
    (the attacker wins between equals). Otherwise our strongest heads for
    the squares between a hunted piece and our flag (on a shortest king
    path from one to the other, not held by our other pieces, no nearer the
    hunted piece than two squares for an equal piece, which would attack
    first, or one for a stronger): the steps that come nearer such a
    square, nearest first, then nearest the hunted piece. With no such
    square (no flag left, or all held by our other pieces) it steps nearer
    the hunted piece under the same limit, nearest first, then nearest our
    flag. Steps go onto an empty square or a fought piece no stronger than
    ours. Both lists are empty when there is nothing to hunt.
    """
    cells, _ = _squares(view)
    cols = view["cols"]
    ours = [int(cell[1]) for cell in cells if cell is not None and cell[0] == seat and cell[1] != FLAG]
    known = [int(cell[1]) for cell in cells
             if cell is not None and cell[0] != seat and cell[1] not in (UNKNOWN, FLAG)]
    if not ours or not known:
        return [], []
    top, prey = max(ours), max(known)
    if top < prey or any(rank != FLAG and int(rank) > prey for rank in unseen_ranks(view, seat)):
        return [], []
    hunted = [j for j, cell in enumerate(cells) if cell is not None and cell[0] != seat and cell[1] == str(prey)]
    flags = [j for j, cell in enumerate(cells) if cell is not None and cell[0] == seat and cell[1] == FLAG]
    closest = 2 if top == prey else 1

    def gap(square: int, others: list[int]) -> int:
        return min((_king_gap(square, j, cols) for j in others), default=0)

    between = [t for t in range(len(cells)) for e in hunted for f in flags
               if (cells[t] is None or cells[t][0] != seat or cells[t][1] == str(top))
               and gap(t, [e]) >= closest and gap(t, [e]) + gap(t, [f]) == gap(e, [f])]
    attacks, steps_in = [], []
    for index, (origin, target) in enumerate(moves):
        if int(cells[origin][1]) != top:
            continue
        if target in hunted:
            attacks.append(index)
            continue
        cell = cells[target]
        if cell is not None and (cell[1] == UNKNOWN or (cell[1] != FLAG and int(cell[1]) > top)):
            continue
        near = gap(target, hunted)
        if near < closest:
            continue
        if between:
            if gap(target, between) < gap(origin, between):
                steps_in.append((gap(target, between), near, index))
        elif near < gap(origin, hunted):
            steps_in.append((near, gap(target, flags), index))
    return attacks, [index for _, _, index in sorted(steps_in)]


def _king_gap(a: int, b: int, cols: int) -> int:
    """King moves between squares ``a`` and ``b`` (row-major indices, ``cols`` a row)."""
    return max(abs(a // cols - b // cols), abs(a % cols - b % cols))


def _cautious(ranked: list[int], sums: list[float], count: int, exposing: set[int]) -> int:
    """The first of ``ranked`` not in ``exposing`` (or won in every sample: mean above :data:`SURE_WIN`), else the first."""
    for index in ranked:
        if index not in exposing or sums[index] / count > SURE_WIN:
            return index
    return ranked[0]


def _share(budget: Budget, share: float) -> Budget:
    """``budget`` cut to ``share`` of its nodes and seconds (at least one node)."""
    nodes = None if budget.nodes is None else max(1, int(budget.nodes * share))
    seconds = None if budget.seconds is None else budget.seconds * share
    return Budget(seconds=seconds, nodes=nodes, clock=budget.clock)
