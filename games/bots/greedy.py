"""The one-ply greedy player: the baseline every strongest level must beat.

A :class:`GreedyChooser` rebuilds the position with ``Game.state_from_view``
(perfect-information games only), plays each legal move, takes a win at once,
never walks into an immediate loss when it has another move, and otherwise
plays the move whose resulting position scores best for its seat under the
game's ``evaluate(child_state, seat)`` (material: pawns, counters, discs).
Equal scores are broken by the random generator, so a greedy player is not
predictable but is reproducible from its seed.

Each game module exposes ``greedy_chooser() -> MoveChooser`` built on this.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

import games

from .base import Budget, MoveChooser

__all__ = ["Evaluate", "GreedyChooser"]

Evaluate = Callable[[Any, int], float]
"""``evaluate(state, seat) -> score``: higher is better for ``seat``; the state is a running or finished game."""


class GreedyChooser(MoveChooser):
    """Plays the move with the best immediate evaluation (one ply, no look-ahead).

    Args:
        game: the game's short name (``"morris"``).
        evaluate: scores a position for a seat, higher is better.
        level: reported level (the greedy player has one strength; default 1).

    The budget is not needed: one ply costs one ``children()`` call.
    """

    def __init__(self, game: str, evaluate: Evaluate, level: int = 1) -> None:
        super().__init__(level)
        self.game = game
        self._evaluate = evaluate

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        state = games.get(self.game).state_from_view(view)
        seat = state.to_move
        best_score, best_moves = float("-inf"), []
        for move, child in zip(state.legal_moves(), state.children()):
            outcome = child.outcome
            if outcome is not None and outcome.winner == seat:
                return move
            if outcome is not None and outcome.winner is not None:
                score = float("-inf")  # walks into a loss: only if nothing else is left
            else:
                score = self._evaluate(child, seat)
            if score > best_score or not best_moves:
                best_score, best_moves = score, [move]
            elif score == best_score:
                best_moves.append(move)
        return rng.choice(best_moves)

    def __repr__(self) -> str:
        return f"<GreedyChooser {self.game}>"
