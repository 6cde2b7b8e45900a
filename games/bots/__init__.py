"""Computer players: pure move choosers for every game.

>>> import random, games, games.bots
>>> state = games.get("nimble").new_state({}, seed=1)
>>> bot = games.bots.chooser("nimble", 5)
>>> bot.choose(state.view(0), games.bots.Budget(nodes=10_000), random.Random(1)) in state.legal_moves()
True

Each game has a module here (``games/bots/othello.py`` ...) with
``make_chooser(level) -> MoveChooser``. The contract is in
:mod:`games.bots.base`. :func:`choose_move` is the one call a worker process
needs: plain arguments in, a move out.
"""

from __future__ import annotations

import importlib
import random
from typing import Any, Mapping

from .base import MAX_LEVEL, MIN_LEVEL, Budget, Deadline, MoveChooser, NotYourMove

__all__ = [
    "Budget",
    "Deadline",
    "MoveChooser",
    "NotYourMove",
    "MAX_LEVEL",
    "MIN_LEVEL",
    "chooser",
    "choose_move",
    "default_seconds",
]

_GAMES = ("othello", "nimble", "mingmang", "morris", "tactego", "hexapawn")

_SECONDS_BY_LEVEL = {1: 0.05, 2: 0.1, 3: 0.25, 4: 0.5, 5: 1.0}


def default_seconds(level: int) -> float:
    """Return the default thinking time per move at ``level``, in seconds.

    The strongest level thinks about one second a move (issue 11).

    Raises:
        ValueError: if ``level`` is not from :data:`MIN_LEVEL` to :data:`MAX_LEVEL`.
    """
    if level not in _SECONDS_BY_LEVEL:
        raise ValueError(f"level must be an integer from {MIN_LEVEL} to {MAX_LEVEL}, not {level!r}")
    return _SECONDS_BY_LEVEL[level]


def chooser(game: str, level: int) -> MoveChooser:
    """Return the move chooser for ``game`` at ``level``.

    Raises:
        LookupError: if ``game`` has no computer player.
        ValueError: if ``level`` is out of range.
    """
    if game not in _GAMES:
        raise LookupError(f"no computer player for {game!r}; games: {', '.join(_GAMES)}")
    module = importlib.import_module(f"{__name__}.{game}")
    return module.make_chooser(level)


def choose_move(game: str, level: int, view: Mapping[str, Any], seconds: float | None, seed: int,
                nodes: int | None = None) -> str:
    """Choose a move from plain, picklable arguments (what a worker process runs).

    Args:
        game, level: which chooser.
        view: the view of the seat to move.
        seconds: the time budget (``None``: the level's default), in seconds.
        seed: seeds the chooser's random generator.
        nodes: an optional node budget as well.

    Raises:
        LookupError, ValueError: as :func:`chooser`; NotYourMove as ``MoveChooser.choose``.
    """
    bot = chooser(game, level)
    if seconds is None and nodes is None:
        seconds = default_seconds(level)
    return bot.choose(view, Budget(seconds=seconds, nodes=nodes), random.Random(seed))
