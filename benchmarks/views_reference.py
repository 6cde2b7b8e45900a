"""The engines' views as they were built before issue 10: square by square, every call.

The yardstick for ``benchmarks/views.py`` (old against new, side by side)
and for ``tests/games/test_views.py`` (the new views must equal these
exactly). Each function is the engine's ``_view`` of commit 5f01709,
written against the state's fields, plus the common part that
:meth:`games.base.State.view` adds; nothing here calls the code it checks
(no ``rows()``, ``diagram()``, ``to_board()``, ``board``, ``position_text()``
or ``_view``).

>>> import games
>>> state = games.get("othello").new_state({"size": 6})
>>> view(state, None) == state.view(None)
True
"""

from __future__ import annotations

from typing import Any, Callable

from games.base import State
from games.morris import _BIT, POINTS, Position, format_position

__all__ = ["REFERENCES", "view"]


def view(state: State, seat: int | None) -> dict[str, Any]:
    """Return what ``state.view(seat)`` returned before issue 10 (the same map, built the old way).

    Raises:
        KeyError: for a game this module has no reference of.
        ValueError: if ``seat`` is not 0, 1 or ``None``.
    """
    if seat not in (0, 1, None):
        raise ValueError(f"seat must be 0, 1 or None, not {seat!r}")
    shown = REFERENCES[state.game.name](state, seat)
    shown.update(
        game=state.game.name,
        ply=state.ply,
        to_move=state.to_move,
        outcome=state.outcome.to_dict() if state.outcome is not None else None,
    )
    if seat is not None and seat == state.to_move:
        shown["legal_moves"] = state.legal_moves()
    return shown


def _othello(state: Any, seat: int | None) -> dict[str, Any]:
    size, black, white = state.size, state.black, state.white
    rows = []
    for row in range(size):
        chars = []
        for col in range(size):
            bit = 1 << (row * size + col)
            chars.append("X" if black & bit else "O" if white & bit else ".")
        rows.append("".join(chars))
    return {
        "size": size,
        "board": rows,
        "discs": [black.bit_count(), white.bit_count()],
        "must_pass": state.must_pass,
        "last_move": state.last_move,
    }


def _nimble(state: Any, seat: int | None) -> dict[str, Any]:
    board = state.board
    return {
        "board": list(board),
        "pawns": sum(board),
        "movable": sum(board) - board[0],
        "last_move": state.last_move,
    }


def _hexapawn(state: Any, seat: int | None) -> dict[str, Any]:
    size, board = state.size, state._board
    return {
        "size": size,
        "board": [list(board[row * size:(row + 1) * size]) for row in range(size)],
        "pawns": [board.count(1), board.count(2)],
        "last_move": state.last_move,
    }


def _mingmang(state: Any, seat: int | None) -> dict[str, Any]:
    geo, board = state._geo, state._board
    w, n = geo.width, geo.size
    diagram = "\n".join("".join(".xo"[board[r * w + c]] for c in range(1, n + 1)) for r in range(1, n + 1))
    return {
        "size": n,
        "board": diagram.split("\n"),
        "counts": [board.count(1), board.count(2)],
        "last_move": state.last_move,
        "captured": [geo.names[c] for c in state._captured],
        "superko": state.options["superko"],
        "max_plies": state.options["max_plies"],
        "history": _mingmang_history(state) if state.options["superko"] else None,
    }


def _mingmang_history(state: Any) -> dict[str, Any]:
    """The superko history a view carries (issue 11): the starting board and seat, and every move since."""
    start, side = state._origin
    w, n = state._geo.width, state._geo.size
    rows = ["".join(".xo"[start[r * w + c]] for c in range(1, n + 1)) for r in range(1, n + 1)]
    moves, trail = [], state._trail
    while trail is not None:
        trail, move = trail
        moves.insert(0, move)
    return {"board": rows, "to_move": side, "moves": moves}


def _morris(state: Any, seat: int | None) -> dict[str, Any]:
    first, second = state._boards
    hands = state._hands
    on_board = [first.bit_count(), second.bit_count()]
    values = tuple(1 if first & bit else 2 if second & bit else 0 for bit in _BIT)

    def phase(s: int) -> str:
        if hands[s]:
            return "placing"
        return "flying" if state.options["flying"] and on_board[s] == 3 else "moving"

    return {
        "board": {name: 0 if first & bit else 1 if second & bit else None for name, bit in zip(POINTS, _BIT)},
        "in_hand": list(hands),
        "on_board": on_board,
        "phase": [phase(s) for s in (0, 1)],
        "flying": state.options["flying"],
        "mill_protection": state.options["mill_protection"],
        "max_plies": state.options["max_plies"],
        "last_move": state.last_move,
        "position": format_position(Position(values, hands, state._turn + 1)),
    }


def _tactego(state: Any, seat: int | None) -> dict[str, Any]:
    geometry, board, hidden = state._geometry, state._board, state.options["hidden"]

    def visible(piece: Any) -> bool:
        return not hidden or piece.revealed or piece.owner == seat

    cells = [None if p is None else [p.owner, p.rank if visible(p) else "?"] for p in board]
    cols = geometry.cols
    return {
        "rows": geometry.rows,
        "cols": cols,
        "hidden": hidden,
        "board": [cells[r * cols:(r + 1) * cols] for r in range(geometry.rows)],
        "revealed": [geometry.names[i] for i, p in enumerate(board) if p is not None and p.revealed],
        "counts": list(state._counts),
        "flags": list(state._flags),
        "lost": [list(state._lost[0]), list(state._lost[1])],
        "has_moved": [geometry.names[i] for i, p in enumerate(board) if p is not None and p.moved],
        "max_plies": state.options["max_plies"],
        "last_combat": dict(state._combat) if state._combat is not None else None,
    }


REFERENCES: dict[str, Callable[[Any, int | None], dict[str, Any]]] = {
    "othello": _othello,
    "nimble": _nimble,
    "hexapawn": _hexapawn,
    "mingmang": _mingmang,
    "morris": _morris,
    "tactego": _tactego,
}
"""The game-specific part of the old view, by game name."""
