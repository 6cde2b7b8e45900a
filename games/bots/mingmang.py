"""Ming Mang's computer player: alpha-beta on material, mobility and threats.

Source: RULES.md "Ming Mang". Levels 1-4 (and level 5 in superko games)
search with :class:`games.bots.search.AlphaBeta`; level 5 without superko
with :class:`games.bots.mingmang_search.MingMangSearch` (make/unmake,
quiescence over captures: it sees through exchanges that the generic
search cuts off at its horizon). This module adds :func:`evaluate`
(pawns, then slides available),
captures-first move ordering and the transposition key
(:meth:`games.mingmang.MingMangState.key`: the board and the seat to move;
with ``superko`` the legal moves still come from the real history, which
``state_from_view`` rebuilds from the view's ``history``).

>>> import random, games
>>> from games.bots import Budget
>>> state = games.get("mingmang").from_diagram("x...\\no...\\n..x.\\n....", 0)
>>> make_chooser(5).choose(state.view(0), Budget(nodes=300), random.Random(1))  # captures a2: Black has none left
'c3-a3'
"""

from __future__ import annotations

import functools
import random
from typing import Any, Mapping

import games
from games.mingmang import MingMangState

from .base import Budget, MoveChooser
from .greedy import GreedyChooser
from .mingmang_search import MingMangSearch
from .search import SearchChooser, SearchResult

__all__ = ["MingMangChooser", "evaluate", "material", "make_chooser", "greedy_chooser", "open_to_capture"]

_PAWN, _SLIDE, _THREAT = 100, 2, 12
"""Evaluation weights: per pawn, per available slide, per enemy pawn open to capture."""


def material(state: MingMangState, seat: int) -> float:
    """Pawns of ``seat`` minus the opponent's: the greedy player's evaluation."""
    counts = state.counts()
    return float(counts[seat] - counts[1 - seat])


def evaluate(state: MingMangState, seat: int) -> float:
    """Score a running position for ``seat`` (higher is better), in hundredths of a pawn.

    100 per pawn more than the opponent, 2 per slide more than the opponent
    has (room to move, and to threaten; a side without a move loses), and 12
    per enemy pawn open to capture more than the opponent has
    (:func:`open_to_capture`): the progress term. Without it two careful
    searches shuffle pawns until the ply limit draws the game; with it a
    search prefers the moves that bring pawns into contact and build threats.
    """
    counts = state.counts()
    pawns = counts[seat] - counts[1 - seat]
    slides = state.mobility(seat) - state.mobility(1 - seat)
    threats = open_to_capture(state, seat) - open_to_capture(state, 1 - seat)
    return float(_PAWN * pawns + _SLIDE * slides + _THREAT * threats)


def open_to_capture(state: MingMangState, seat: int) -> int:
    """Count the enemy pawns that ``seat`` flanks on one side, along a row or column, with the other side empty.

    A pawn of ``seat`` arriving on that empty square would capture it (if one
    can get there): a threat. Each enemy pawn counts once.
    """
    board, width = state._board, state._geo.width  # read-only; the engine has no public board accessor
    me, enemy = seat + 1, 2 - seat
    count = 0
    i = board.find(enemy)
    while i >= 0:
        for step in (1, width):
            before, after = board[i - step], board[i + step]
            if (before == me and after == 0) or (after == me and before == 0):
                count += 1
                break
        i = board.find(enemy, i + 1)
    return count


def _key(state: MingMangState) -> tuple[int, int]:
    return state.key()


def _captures_first(parent: MingMangState, child: MingMangState, seat: int) -> float:
    """Move ordering: the pawns a move captures (each changes colour)."""
    return float(child.counts()[seat] - parent.counts()[seat])


@functools.lru_cache(maxsize=None)
def make_chooser(level: int) -> MoveChooser:
    """Return the Ming Mang chooser for ``level`` (1..5).

    Raises:
        ValueError: if ``level`` is out of range.
    """
    if level == 5:
        return MingMangChooser(level)
    return SearchChooser("mingmang", level, evaluate, _key, _captures_first)


class MingMangChooser(SearchChooser):
    """Level 5: :class:`~games.bots.mingmang_search.MingMangSearch` (quiescence, make/unmake) as deep as the
    budget allows; superko games, whose legal moves depend on the history, go to the generic search."""

    def __init__(self, level: int) -> None:
        super().__init__("mingmang", level, evaluate, _key, _captures_first)

    def search(self, view: Mapping[str, Any], budget: Budget, rng: random.Random) -> SearchResult:
        """Search the view's position within ``budget``; see :meth:`SearchChooser.search`."""
        state = games.get("mingmang").state_from_view(view)
        if state.options["superko"]:
            return super().search(view, budget, rng)
        return MingMangSearch(state, budget.start(), self._plan.max_depth).run(rng)


def greedy_chooser() -> MoveChooser:
    """Return the one-ply greedy Ming Mang player (takes a win, else the most pawns)."""
    return GreedyChooser("mingmang", material)
