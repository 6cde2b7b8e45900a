"""Text pictures of each game's view, for the terminal client.

Each game has a module here with ``render(view, seat) -> str``: the board with
coordinates matching the game's notation, plus the game's own status lines
(disc counts, counters in hand, ...). The common lines (turn number, whose
turn, the result, the commands) are the terminal client's job.
"""

from __future__ import annotations

import importlib
from typing import Any


def render(view: dict[str, Any], seat: int | None) -> str:
    """Return the picture of ``view`` as seen from ``seat`` (``None``: spectator).

    Raises:
        KeyError: if ``view["game"]`` has no renderer.
    """
    name = view["game"]
    if not name.isidentifier():
        raise KeyError(name)
    try:
        module = importlib.import_module(f"client.render.{name}")
    except ModuleNotFoundError:
        raise KeyError(name) from None
    return module.render(view, seat)
