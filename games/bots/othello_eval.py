"""The Othello evaluation: mobility, frontier, corners, X- and C-squares, edges, stability, parity.

A score is in hundredths of a disc from the side to move's point of view
(``+100`` is worth about one disc more than the opponent), always strictly
inside ``±LIMIT`` so that it stays below any proven result (see
:mod:`games.bots.othello_search`). The weights change with the game stage
(the share of the board already covered) and are scaled to the board size:
mobility and frontier counts grow with the board, the four corners do not.

Terms (RULES.md, "Othello", for the rules; the terms are standard play):

- mobility: moves the side to move has minus the opponent's;
- frontier: discs next to an empty square (they give the opponent moves),
  counted against the side that owns them;
- corners, and the X-squares (diagonal) and C-squares (edge) next to an
  empty corner, which give that corner away;
- edge discs, and stable discs: those that can never be flipped, counted
  here as the runs along an edge from an owned corner and every disc on a
  full edge;
- parity: with an odd number of empty squares the side to move should get
  the last move;
- discs: few are good early (fewer moves for the opponent), many late.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from .othello_board import Board, board

__all__ = ["LIMIT", "best_evaluator", "evaluator", "hand_terms", "stage_weights", "trained_evaluator"]

LIMIT = 9_999
"""Evaluations stay within ``±LIMIT``; a proven win by one disc scores more."""

# (mobility, frontier, corner, x_square, c_square, edge, stable, parity, disc) at the
# opening (board empty), the middle game (half full) and the end (full), for size 8.
_OPENING = (90, -25, 700, -350, -120, 5, 60, 0, -5)
_MIDDLE = (75, -20, 700, -300, -100, 15, 100, 30, 0)
_ENDING = (30, -5, 500, -80, -20, 20, 120, 120, 60)


def stage_weights(size: int, discs: int) -> tuple[int, ...]:
    """Return the nine weights of the evaluation for ``discs`` on a ``size`` board.

    Linear between the opening, middle and end weights of an 8x8 board;
    mobility and frontier are scaled by ``8 / size`` and stability and
    edges by the same, since those counts grow with the board.
    """
    stage = discs / (size * size)
    if stage <= 0.5:
        low, high, t = _OPENING, _MIDDLE, stage / 0.5
    else:
        low, high, t = _MIDDLE, _ENDING, (stage - 0.5) / 0.5
    scale = 8 / size
    mixed = [a + (b - a) * t for a, b in zip(low, high)]
    for term in (0, 1, 5, 6):  # mobility, frontier, edge, stable
        mixed[term] *= scale
    return tuple(int(round(w)) for w in mixed)


@functools.lru_cache(maxsize=None)
def evaluator(size: int) -> Callable[[int, int], int]:
    """Return ``evaluate(own, opp) -> score`` for a ``size`` board (cached per size).

    ``own`` are the discs of the side to move. The score is within
    ``±LIMIT`` (hundredths of a disc).
    """
    terms, mobility = hand_terms(size), board(size).mobility
    return lambda own, opp: terms(own, opp, mobility(own, opp))


@functools.lru_cache(maxsize=None)
def hand_terms(size: int) -> Callable[[int, int, int], int]:
    """Return ``terms(own, opp, mobility) -> score``: :func:`evaluator` given the mobility difference.

    ``mobility`` is ``own``'s moves minus ``opp``'s (``board(size).mobility``),
    so that an evaluation that needs it too (the trained one) counts moves
    once per position.
    """
    weights = tuple(stage_weights(size, discs) for discs in range(size * size + 1))
    return _build(board(size), weights)


@functools.lru_cache(maxsize=None)
def trained_evaluator(size: int, path: Path | None = None) -> Callable[[int, int], int] | None:
    """Return the trained pattern evaluation for ``size`` (8x8 only), or ``None`` where there is none.

    The tables are read from ``path`` (default: the package's data file)
    once per process (:func:`games.bots.othello_patterns.load_weights`); a
    missing or unreadable file leaves the hand-weighted :func:`evaluator` in
    charge.
    """
    if size != 8:
        return None
    from . import othello_patterns  # noqa: PLC0415 (its tables are built on first use only)

    try:
        weights = othello_patterns.load_weights(path or othello_patterns.DATA_FILE)
    except (OSError, ValueError):
        return None
    return othello_patterns.evaluator(weights, LIMIT, hand=hand_terms(size))


def best_evaluator(size: int) -> Callable[[int, int], int]:
    """Return the strongest evaluation for ``size``: the trained patterns on 8x8, else :func:`evaluator`."""
    return trained_evaluator(size) or evaluator(size)


def _build(geometry: Board, weights: tuple[tuple[int, ...], ...]) -> Callable[[int, int, int], int]:
    """Bind the constants of one board into the evaluation closure (given the mobility difference)."""
    neighbours = geometry.neighbours
    full, corners, edges, squares = geometry.full, geometry.corners, geometry.edges, geometry.squares
    edge_lines, edge_masks = geometry.edge_lines, geometry.edge_masks
    near_empty_corners = _near_empty_corners(geometry)

    def stable_discs(own: int, occupied: int) -> int:
        """Discs of ``own`` that can never flip: edge runs from an own corner, and full edges."""
        stable = 0
        if own & corners:
            for line in edge_lines:
                if own & line[0]:
                    for bit in line:
                        if own & bit:
                            stable |= bit
                        else:
                            break
        for edge in edge_masks:
            if occupied & edge == edge:
                stable |= own & edge
        return stable.bit_count()

    def evaluate(own: int, opp: int, mobility: int) -> int:
        occupied = own | opp
        discs = occupied.bit_count()
        w_mob, w_front, w_corner, w_x, w_c, w_edge, w_stable, w_parity, w_disc = weights[discs]
        score = w_mob * mobility
        near_empty = neighbours(full ^ occupied)
        score += w_front * ((own & near_empty).bit_count() - (opp & near_empty).bit_count())
        score += w_corner * ((own & corners).bit_count() - (opp & corners).bit_count())
        x, c = near_empty_corners[occupied & corners]
        if x:
            score += w_x * ((own & x).bit_count() - (opp & x).bit_count())
            score += w_c * ((own & c).bit_count() - (opp & c).bit_count())
        score += w_edge * ((own & edges).bit_count() - (opp & edges).bit_count())
        if occupied & corners:  # a full edge holds two corners
            score += w_stable * (stable_discs(own, occupied) - stable_discs(opp, occupied))
        if (squares - discs) & 1:
            score += w_parity
        score += w_disc * (own.bit_count() - opp.bit_count())
        return LIMIT if score > LIMIT else -LIMIT if score < -LIMIT else score

    return evaluate


def _near_empty_corners(geometry: Board) -> dict[int, tuple[int, int]]:
    """Map each way the corners can be occupied (``occupied & corners``) to ``(x_squares, c_squares)``:
    the X-squares and the C-squares next to the corners left empty, as two bitboards."""
    table = {}
    corner_bits = [corner for corner, _, _ in geometry.x_squares]
    for subset in range(1 << len(corner_bits)):
        occupied = x = c = 0
        for n, bit in enumerate(corner_bits):
            if subset >> n & 1:
                occupied |= bit
        for corner, x_square, c_squares in geometry.x_squares:
            if not occupied & corner:
                x, c = x | x_square, c | c_squares
        table[occupied] = (x, c)
    return table
