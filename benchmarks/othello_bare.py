"""A bare bitboard Othello perft: plain ints, no objects, 8x8 only.

The yardstick that ``benchmarks/perft.py`` runs beside the engine's public
API. It uses the engine's algorithms (``games.othello``: one directional
"dumb7fill" per direction for the moves, a walk along the placed square's
precomputed rays for the flips) written out for the 8x8 board with
module-level constants, and keeps a position as two ints, ``own`` (the side
to move) and ``opp``. Whatever the
engine costs beyond this is the price of its states and its API.

Conventions match ``games.perft``: a forced pass is one ply, a finished game
at remaining depth > 0 contributes no leaf.

>>> perft(*START, 4), perft(*START, 4, play_leaves=True)
(244, 244)
"""

from __future__ import annotations

__all__ = ["START", "perft"]

_SIZE = 8
_FULL = (1 << _SIZE * _SIZE) - 1
_FIRST_COLUMN = sum(1 << row * _SIZE for row in range(_SIZE))
_INNER = _FULL & ~_FIRST_COLUMN & ~(_FIRST_COLUMN << _SIZE - 1)
_STEPS = ((1, _INNER), (_SIZE - 1, _INNER), (_SIZE, _FULL), (_SIZE + 1, _INNER))
"""(shift, mask) per direction pair: ``<<`` goes E, SW, S, SE; ``>>`` W, NE, N, NW."""


def _rays(index: int) -> tuple[tuple[int, tuple[tuple[int, int], ...]], ...]:
    """Return square ``index``'s rays of two or more squares as ``(first, ((square, run), ...))``.

    ``first`` is the adjacent square; ``run`` is what ``square`` flips when it closes the line.
    """
    row, col = divmod(index, _SIZE)
    rays = []
    for row_step, col_step in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
        squares, r, c = [], row + row_step, col + col_step
        while 0 <= r < _SIZE and 0 <= c < _SIZE:
            squares.append(1 << (r * _SIZE + c))
            r, c = r + row_step, c + col_step
        if len(squares) >= 2:
            rays.append((squares[0], tuple((square, sum(squares[:i])) for i, square in enumerate(squares) if i)))
    return tuple(rays)


_RAYS = {1 << index: _rays(index) for index in range(_SIZE * _SIZE)}
"""The rays of each square, by its bitboard."""

START = (1 << 28 | 1 << 35, 1 << 27 | 1 << 36)
"""``(own, opp)`` at the start: Black (to move) on e4 and d5, White on d4 and e5."""


def placing_moves(own: int, opp: int) -> int:
    """Return the bitboard of empty squares where ``own`` can place a disc."""
    moves = 0
    for step, mask in _STEPS:
        crossable = opp & mask
        run = frontier = (own << step) & crossable
        while frontier:
            frontier = (frontier << step) & crossable
            run |= frontier
        moves |= run << step
        run = frontier = (own >> step) & crossable
        while frontier:
            frontier = (frontier >> step) & crossable
            run |= frontier
        moves |= run >> step
    return moves & _FULL & ~(own | opp)


def flips(square: int, own: int, opp: int) -> int:
    """Return the ``opp`` discs flipped by ``own`` placing on bitboard ``square``."""
    flipped = 0
    for first, rest in _RAYS[square]:
        if first & opp:
            for closer, run in rest:
                if not closer & opp:
                    if closer & own:
                        flipped |= run
                    break
    return flipped


def perft(own: int, opp: int, depth: int, play_leaves: bool = False) -> int:
    """Return the leaves ``depth`` plies below the position ``(own, opp)``, ``own`` to move.

    With ``play_leaves`` every leaf's bitboards are computed; otherwise the
    last ply's moves are counted (a bit count), like ``games.perft.perft``.
    """
    if depth == 0:
        return 1
    moves = placing_moves(own, opp)
    if not moves:
        if not placing_moves(opp, own):
            return 0  # neither side can place: the game is over
        return 1 if depth == 1 else perft(opp, own, depth - 1, play_leaves)
    if depth == 1:
        return _play_all(own, opp, moves) if play_leaves else moves.bit_count()
    total = 0
    while moves:
        square = moves & -moves
        moves ^= square
        flipped = flips(square, own, opp)
        total += perft(opp ^ flipped, own | square | flipped, depth - 1, play_leaves)
    return total


def _play_all(own: int, opp: int, moves: int) -> int:
    """Compute the position after each move in ``moves``; return how many there were."""
    count = 0
    while moves:
        square = moves & -moves
        moves ^= square
        flipped = flips(square, own, opp)
        _leaf = (opp ^ flipped, own | square | flipped)
        count += 1
    return count
