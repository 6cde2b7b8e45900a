"""Bitboard primitives for the Othello search: move generation and flips, built for speed.

The search never builds :class:`games.othello.OthelloState` objects: a
position is a pair of plain ``int`` bitboards ``(own, opp)``, the discs of
the side to move and of its opponent, with bit ``row * size + col`` for a
square (row 0 at the top, the layout of :mod:`games.othello`). Playing a
move is ``(opp ^ flips, own | square | flips)``: the pair seen from the
other side.

:func:`board` returns the (cached) :class:`Board` of one size: its two hot
functions are closures with every constant bound locally, the eight
directions unrolled, and no object made per call.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from games.othello import placement_generator

__all__ = ["Board", "board", "squares_of"]


@dataclass(frozen=True, eq=False, slots=True)
class Board:
    """Everything the search needs about one board size.

    Attributes:
        size: squares per side (an even number from 6 to 16).
        squares: ``size * size``.
        full: every square set.
        moves: ``moves(own, opp) -> bitboard`` of the empty squares where
            ``own`` can place a disc.
        flips: ``flips(index, own, opp) -> bitboard`` of the ``opp`` discs
            that ``own`` placing on square ``index`` flips (0: illegal there).
        mobility: ``mobility(own, opp) -> int``: the number of moves ``own``
            has minus the number ``opp`` has (both from one fill, see
            :func:`_mobility`).
        neighbours: ``neighbours(bitboard) -> bitboard`` of the squares next
            to any set square, in the eight directions (the set squares are
            included only if next to another one).
        corners: the four corners.
        x_squares: per corner, ``(corner, x_square, c_squares)``: the
            diagonal neighbour and the two edge neighbours.
        edges: the border squares except the corners.
        edge_lines: per corner, its two edges as tuples of single-bit ints,
            starting at the corner (for edge stability).
        edge_masks: the four whole edges (corners included), for full-edge checks.
        names: square names by index (``names[0] == "a1"``).
    """

    size: int
    squares: int
    full: int
    moves: Callable[[int, int], int]
    flips: Callable[[int, int, int], int]
    mobility: Callable[[int, int], int]
    neighbours: Callable[[int], int]
    corners: int
    x_squares: tuple[tuple[int, int, int], ...]
    edges: int
    edge_lines: tuple[tuple[int, ...], ...]
    edge_masks: tuple[int, ...]
    names: tuple[str, ...]


def squares_of(bitboard: int) -> list[int]:
    """Return the indices of the set bits of ``bitboard``, lowest first."""
    indices = []
    while bitboard:
        low = bitboard & -bitboard
        indices.append(low.bit_length() - 1)
        bitboard ^= low
    return indices


@functools.lru_cache(maxsize=None)
def board(size: int) -> Board:
    """Return the :class:`Board` of a ``size`` x ``size`` game (cached per size).

    Raises:
        ValueError: if ``size`` is not an even number from 6 to 16.
    """
    if size not in range(6, 17, 2):
        raise ValueError(f"an othello board is an even size from 6 to 16, not {size!r}")
    squares = size * size
    full = (1 << squares) - 1
    first_col = sum(1 << (row * size) for row in range(size))
    last_col = first_col << (size - 1)
    inner = full & ~first_col & ~last_col
    top_row, bottom_row = (1 << size) - 1, ((1 << size) - 1) << (squares - size)
    corner_list = (0, size - 1, squares - size, squares - 1)
    corners = sum(1 << i for i in corner_list)
    border = first_col | last_col | top_row | bottom_row
    columns = "abcdefghijklmnop"
    return Board(
        size=size,
        squares=squares,
        full=full,
        moves=placement_generator(size),
        flips=_flipper(size),
        mobility=_mobility(size, full, first_col),
        neighbours=_neighbourhood(size, full, inner),
        corners=corners,
        x_squares=_x_squares(size, corner_list),
        edges=border & ~corners,
        edge_lines=_edge_lines(size, corner_list),
        edge_masks=(top_row, bottom_row, first_col, last_col),
        names=tuple(f"{columns[i % size]}{i // size + 1}" for i in range(squares)),
    )


def _flipper(size: int) -> Callable[[int, int, int], int]:
    """Build ``flips(index, own, opp)`` for one size from per-square rays.

    A ray is the tuple of single-bit squares from a square outward in one
    direction; only rays of two or more squares can flank anything.
    """
    rays = []
    for index in range(size * size):
        row, col = divmod(index, size)
        square_rays = []
        for d_row, d_col in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
            ray = []
            r, c = row + d_row, col + d_col
            while 0 <= r < size and 0 <= c < size:
                ray.append(1 << (r * size + c))
                r, c = r + d_row, c + d_col
            if len(ray) >= 2:
                square_rays.append(tuple(ray))
        rays.append(tuple(square_rays))
    rays_by_square = tuple(rays)

    def flips(index: int, own: int, opp: int) -> int:
        flipped = 0
        for ray in rays_by_square[index]:
            if not opp & ray[0]:
                continue
            run = 0
            for bit in ray:
                if opp & bit:
                    run |= bit
                else:
                    if own & bit:
                        flipped |= run
                    break
        return flipped

    return flips


def _mobility(size: int, full: int, first_col: int) -> Callable[[int, int], int]:
    """Build ``mobility(own, opp)``: ``own``'s moves minus ``opp``'s, both counted from one fill.

    The two boards go side by side in one int (``own`` to move in the low
    ``size * size`` bits, ``opp`` to move ``lane`` bits higher, with a gap
    wider than the longest shift so that no run crosses from one board to the
    other), so each direction's fill serves both sides: about half the cost
    of two move generations.
    """
    squares = size * size
    lane = squares + 2 * (size + 1)
    inner = full & ~first_col & ~(first_col << (size - 1))
    wide_inner, wide_full = inner | inner << lane, full | full << lane
    steps = ((1, wide_inner), (size - 1, wide_inner), (size, wide_full), (size + 1, wide_inner))

    def mobility(own: int, opp: int) -> int:
        mover = own | opp << lane
        other = opp | own << lane
        moves = 0
        for step, mask in steps:
            crossable = other & mask
            run = frontier = (mover << step) & crossable
            while frontier:
                frontier = (frontier << step) & crossable
                run |= frontier
            moves |= run << step
            run = frontier = (mover >> step) & crossable
            while frontier:
                frontier = (frontier >> step) & crossable
                run |= frontier
            moves |= run >> step
        moves &= wide_full & ~(mover | other)
        return (moves & full).bit_count() - (moves >> lane).bit_count()

    return mobility


def _neighbourhood(size: int, full: int, inner: int) -> Callable[[int], int]:
    """Build ``neighbours(bitboard)``: the squares next to a set square in any of eight directions."""
    sw, s, se = size - 1, size, size + 1
    first_col = sum(1 << (row * size) for row in range(size))
    leaves_west = full & ~first_col  # squares that may shift one column west without wrapping
    leaves_east = full & ~(first_col << (size - 1))

    def neighbours(bits: int) -> int:
        east = bits & leaves_east
        west = bits & leaves_west
        near = (bits << s) | (bits >> s) | (east << 1) | (west >> 1)
        near |= (east << se) | (east >> sw) | (west << sw) | (west >> se)
        return near & full

    return neighbours


def _x_squares(size: int, corner_list: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    """Return per corner ``(corner, x_square, c_squares)`` as bitboards."""
    result = []
    for corner in corner_list:
        row, col = divmod(corner, size)
        d_row = 1 if row == 0 else -1
        d_col = 1 if col == 0 else -1
        x = 1 << ((row + d_row) * size + col + d_col)
        c = (1 << ((row + d_row) * size + col)) | (1 << (row * size + col + d_col))
        result.append((1 << corner, x, c))
    return tuple(result)


def _edge_lines(size: int, corner_list: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Return, per corner, both edges leaving it as tuples of single-bit squares, corner first."""
    lines = []
    for corner in corner_list:
        row, col = divmod(corner, size)
        d_row = 1 if row == 0 else -1
        d_col = 1 if col == 0 else -1
        lines.append(tuple(1 << (row * size + col + d_col * k) for k in range(size)))
        lines.append(tuple(1 << ((row + d_row * k) * size + col) for k in range(size)))
    return tuple(lines)
