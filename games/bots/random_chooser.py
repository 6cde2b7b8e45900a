"""A chooser that plays a uniformly random legal move: the floor every level must beat."""

from __future__ import annotations

import random
from typing import Any, Mapping

from .base import Budget, MoveChooser

__all__ = ["RandomChooser"]


class RandomChooser(MoveChooser):
    """Plays any legal move with equal chance, for any game (level 1 only)."""

    game = "any"

    def __init__(self, level: int = 1) -> None:
        super().__init__(level)

    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        return rng.choice(legal)
