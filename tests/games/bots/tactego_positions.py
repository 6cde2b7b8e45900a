"""Tactego positions drawn as pictures, for the computer players' tests."""

from __future__ import annotations

import games
from games.tactego import Piece, TactegoState, _geometry

GAME = games.get("tactego")


def position(
    picture: str,
    pieces: str,
    *,
    to_move: int = 0,
    flags: tuple[int, int] | None = None,
    lost: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> TactegoState:
    """A running position from rows of ``.``, ``r7``, ``b10``, ``rF``: ``*`` marks a revealed piece, ``+`` a moved one.

    ``pieces`` is the game's pieces option (its text); ``flags`` each side's flags left (by default those drawn).
    """
    rows = [line.split() for line in picture.strip().splitlines()]
    board: list[Piece | None] = []
    for token in (token for row in rows for token in row):
        if token == ".":
            board.append(None)
            continue
        rank = token[1:].rstrip("*+")
        board.append(Piece(0 if token[0] == "r" else 1, rank, 0 if rank == "F" else int(rank), "*" in token, "+" in token))
    options = GAME.resolve_options({"rows": len(rows), "cols": len(rows[0]), "pieces": pieces})
    counts = tuple(sum(1 for p in board if p is not None and p.owner == s) for s in (0, 1))
    if flags is None:
        flags = tuple(sum(1 for p in board if p is not None and p.owner == s and p.is_flag) for s in (0, 1))
    return TactegoState(GAME, options, "test", _geometry(len(rows), len(rows[0])), tuple(board), 0, to_move, None,
                        None, counts, flags, lost, None)


SMALL_SET = "10 1\n7 1\n5 2\nF 1"
"""A 10, a 7, two 5s and a flag a side: the pieces option of :func:`small_set_position`."""


def small_set_position(picture: str, lost: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> TactegoState:
    """A running Red-to-move position of :data:`SMALL_SET` pieces a side, ``lost`` naming the ranks each side lost."""
    state = position(picture, SMALL_SET, lost=lost)
    counts = tuple(5 - len(lost[seat]) for seat in (0, 1))
    return TactegoState(GAME, state.options, "test", state._geometry, state.board, 0, 0, None, None, counts,
                        (1, 1), lost, None)
