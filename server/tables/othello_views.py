"""The view of an 8x8 Othello position written as MessagePack straight from its bitboards, for every move's fan-out.

Every move of a game sends its new position to both seats and every
spectator; for Othello, building that view as a dict
(:meth:`games.othello.OthelloState.view`) and encoding it was about a quarter
of a move's work on the server. :data:`view_map` (the optional C accelerator
``_othello_views.c``, built at install time where a C compiler is there)
writes the same bytes as ``msgspec`` encoding that dict, and
:func:`server.tables.fanout.send_moved` embeds them in the ``moved`` frame
as :class:`msgspec.Raw`. Where it was not built, or for other board sizes,
the dict is built and encoded as before: the bytes on the wire are the same
(``tests/server/test_othello_views.py``).
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["view_map", "applies"]

view_map: Callable[..., bytes] | None
"""``view_map(black, white, ply, to_move, last_move, legal_moves)`` -> the view's MessagePack map (see the C
function's docstring), or ``None`` where the accelerator was not built."""
try:
    from ._othello_views import view as view_map
except ImportError:  # no C compiler at install time: the views are built as dicts
    view_map = None


def applies(game_name: str, options: Any) -> bool:
    """Whether :data:`view_map` can write the views of a table of ``game_name`` with these resolved ``options``."""
    return view_map is not None and game_name == "othello" and options.get("size") == 8
