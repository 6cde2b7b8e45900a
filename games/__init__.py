"""Pure rules engines for Parlour's games.

>>> import games
>>> state = games.get("othello").new_state({"size": 8})
>>> state.to_move, len(state.legal_moves())
(0, 4)

The contract is in :mod:`games.base`; each game is one module registered
below. Source of every rule: ``RULES.md``.
"""

from __future__ import annotations

from .base import MAX_PLIES, Game, GameError, IllegalMove, InvalidOption, Option, Outcome, State
from .hexapawn import Hexapawn
from .mingmang import MingMang
from .morris import Morris
from .nimble import Nimble
from .othello import Othello
from .tactego import Tactego

__all__ = [
    "Game",
    "GameError",
    "IllegalMove",
    "InvalidOption",
    "MAX_PLIES",
    "Option",
    "Outcome",
    "State",
    "UnknownGame",
    "get",
    "names",
]


class UnknownGame(GameError, LookupError):
    """No game has the name asked for; the message lists the known games."""


_REGISTRY: dict[str, Game] = {game.name: game for game in (Othello(), Nimble(), MingMang(), Morris(), Tactego(), Hexapawn())}


def names() -> list[str]:
    """Return the short names of every game, in registration order."""
    return list(_REGISTRY)


def get(name: str) -> Game:
    """Return the game called ``name`` (``"othello"``, ``"nimble"``, ...).

    Raises:
        UnknownGame: if there is no such game; the message lists the known ones.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownGame(f"no game called {name!r}; known games: {', '.join(_REGISTRY)}") from None
