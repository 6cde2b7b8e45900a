"""Board widgets for the six games, one module each, on a shared base.

>>> board_class("othello").__name__
'OthelloBoard'
"""

from __future__ import annotations

from .base import BoardWidget, wants_mono
from .hexapawn import HexapawnBoard
from .mingmang import MingMangBoard
from .morris import MorrisBoard
from .nimble import NimbleBoard
from .othello import OthelloBoard
from .tactego import TactegoBoard

__all__ = ["BoardWidget", "board_class", "make_board", "wants_mono"]

_BOARDS: dict[str, type[BoardWidget]] = {
    board.game: board for board in (OthelloBoard, NimbleBoard, MingMangBoard, MorrisBoard, TactegoBoard, HexapawnBoard)
}


def board_class(game: str) -> type[BoardWidget]:
    """The board widget class of ``game`` (``"othello"``, ...).

    Raises:
        KeyError: for a game without a board widget.
    """
    return _BOARDS[game]


def make_board(view: dict, seat: int | None, **options) -> BoardWidget:
    """A board widget for ``view`` (its ``game`` key picks the class); ``options`` go to the widget."""
    return board_class(view["game"])(view, seat, **options)
