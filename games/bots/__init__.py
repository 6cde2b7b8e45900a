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
from typing import Any, Iterable, Mapping

import games

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
    "warm_up",
    "warmed",
]

_GAMES = ("othello", "nimble", "mingmang", "morris", "tactego", "hexapawn")

_SECONDS_BY_LEVEL = {1: 0.05, 2: 0.1, 3: 0.25, 4: 0.5, 5: 1.0}

_WARM_UP_PLIES = 12
"""Random plies played before the warm-up search: past Othello's opening book, into the evaluation."""
_WARM_UP_NODES = 200
"""The warm-up search's node budget per game (a few milliseconds)."""
_warmed: list[str] = []


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


def warm_up(only: Iterable[str] | None = None) -> tuple[str, ...]:
    """Load what the strongest choosers load on their first move (data files, tables); return the games warmed.

    A worker process calls this once at start, so that no move's budget pays
    for reading Othello's pattern tables and opening book. Per game (every
    game, or those in ``only``): a position ``_WARM_UP_PLIES`` seeded random
    plies from the default start, searched by levels 4 and 5 for
    ``_WARM_UP_NODES`` nodes each. Deterministic; no randomness leaks into
    later moves.

    Raises:
        LookupError: if ``only`` names a game without a computer player.
    """
    wanted = _GAMES if only is None else tuple(only)
    for game in wanted:
        if game not in _GAMES:
            raise LookupError(f"no computer player for {game!r}; games: {', '.join(_GAMES)}")
    for game in wanted:
        state = games.get(game).new_state({}, 1)
        rng = random.Random(1)
        for _ in range(_WARM_UP_PLIES):
            if state.outcome is not None or not state.legal_moves():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome is None and state.to_move is not None:
            for level in (MAX_LEVEL - 1, MAX_LEVEL):
                chooser(game, level).choose(state.view(state.to_move), Budget(nodes=_WARM_UP_NODES), random.Random(0))
        if game not in _warmed:
            _warmed.append(game)
    return tuple(_warmed)


def warmed() -> tuple[str, ...]:
    """The games :func:`warm_up` has loaded in this process (empty before it ran)."""
    return tuple(_warmed)
