"""The trained pattern evaluation of 8x8 Othello: pattern tables per game stage, as in Logistello and Edax.

The tables correct the hand-weighted evaluation of
:mod:`games.bots.othello_eval` (a residual fit: the score is that
evaluation, turned into hundredths of a disc, plus the tables' sum), which
measured stronger at the data set's size than tables alone (see
docs/BENCHMARKS.md).

A pattern is a fixed line of squares (a row, a column, a diagonal, an edge
with its two X-squares, a 3x3 or 2x5 corner block); each of its symmetric
copies on the board (:data:`PATTERNS`: 46 in all) reads its squares in the
same order, as a base-3 number (0 empty, 1 the side to move's disc, 2 the
opponent's). A position's score is, for its stage (by disc count), the sum
of one table entry per copy, plus a weight times the mobility difference
(moves of the side to move minus the opponent's). Scores are in hundredths
of a disc from the side to move's point of view, within ``±LIMIT`` of
:mod:`games.bots.othello_eval`.

The tables are fitted by ``benchmarks/othello_train.py`` and shipped as
``games/bots/data/othello_patterns.bin`` (:func:`load_weights`, read once per
process). The index arithmetic is done for all 46 copies at once: a table
per row of the board maps the row's byte of discs to every copy's share of
its index, packed into one wide int (32 bits per copy), so a position costs
16 lookups and additions, one ``struct.unpack`` and one ``map`` over the
tables (:func:`pattern_indices`, :func:`evaluator`).
"""

from __future__ import annotations

import functools
import json
import struct
import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .othello_board import board

__all__ = [
    "DATA_FILE",
    "PATTERNS",
    "PatternWeights",
    "STAGES",
    "evaluator",
    "feature_vector",
    "load_weights",
    "pattern_indices",
    "save_weights",
    "stage_of",
    "symmetric_indices",
]

DATA_FILE = Path(__file__).resolve().parent / "data" / "othello_patterns.bin"
"""The shipped tables (written by ``benchmarks/othello_train.py``)."""

FORMAT = "parlour-othello-patterns-1"
"""The first line of a data file: what it is and its layout version."""

STAGES = 8
"""Game stages, by the discs on the board (:func:`stage_of`)."""

_SHAPES: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("hv2", tuple((1, c) for c in range(8))),
    ("hv3", tuple((2, c) for c in range(8))),
    ("hv4", tuple((3, c) for c in range(8))),
    ("d8", tuple((i, i) for i in range(8))),
    ("d7", tuple((i, i + 1) for i in range(7))),
    ("d6", tuple((i, i + 2) for i in range(6))),
    ("d5", tuple((i, i + 3) for i in range(5))),
    ("d4", tuple((i, i + 4) for i in range(4))),
    ("edge_x", tuple((0, c) for c in range(8)) + ((1, 1), (1, 6))),
    ("corner3x3", tuple((r, c) for r in range(3) for c in range(3))),
    ("corner2x5", tuple((r, c) for r in range(2) for c in range(5))),
)
"""Each pattern's squares ``(row, col)`` in one of its copies (row 0 holds a1..h1)."""

_SYMMETRIES: tuple[Callable[[int, int], tuple[int, int]], ...] = (
    lambda r, c: (r, c), lambda r, c: (r, 7 - c), lambda r, c: (7 - r, c), lambda r, c: (7 - r, 7 - c),
    lambda r, c: (c, r), lambda r, c: (c, 7 - r), lambda r, c: (7 - c, r), lambda r, c: (7 - c, 7 - r),
)


@dataclass(frozen=True, slots=True)
class Pattern:
    """One copy of a pattern on the board.

    Attributes:
        name: the pattern (``"edge_x"`` ...); copies of one name share a table.
        squares: square indices (``row * 8 + col``), in the order of the index's base-3 digits.
    """

    name: str
    squares: tuple[int, ...]


def _copies() -> tuple[Pattern, ...]:
    """Every distinct copy (by its set of squares) of every pattern under the eight symmetries."""
    copies = []
    for name, shape in _SHAPES:
        seen: set[frozenset[int]] = set()
        for symmetry in _SYMMETRIES:
            squares = tuple(r * 8 + c for r, c in (symmetry(r, c) for r, c in shape))
            if frozenset(squares) not in seen:
                seen.add(frozenset(squares))
                copies.append(Pattern(name, squares))
    return tuple(copies)


PATTERNS = _copies()
"""The 46 pattern copies, in a fixed order (the order of :func:`pattern_indices`)."""

TABLE_SIZES = {name: 3 ** len(shape) for name, shape in _SHAPES}
"""Entries per stage of each pattern's table."""

_FIELD = 32
"""Bits per copy in the packed index sums."""


def stage_of(discs: int) -> int:
    """Return the stage (0 .. ``STAGES - 1``) of an 8x8 position with ``discs`` discs (4 to 64)."""
    return min(STAGES - 1, max(0, (discs - 5) * STAGES // 60))


@functools.lru_cache(maxsize=1)
def _row_tables() -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Per board row: (own table, opp table), each mapping the row's byte to the packed index shares.

    A byte's entry is the entry of the byte without its lowest set bit plus
    that bit's shares (one addition per byte, about a millisecond in all).
    """
    rows = []
    for row in range(8):
        per_bit = [0] * 8
        for number, pattern in enumerate(PATTERNS):
            for digit, square in enumerate(pattern.squares):
                if square // 8 == row:
                    per_bit[square % 8] += 3 ** digit << (_FIELD * number)
        own_table = [0] * 256
        for byte in range(1, 256):
            low = byte & -byte
            own_table[byte] = own_table[byte ^ low] + per_bit[low.bit_length() - 1]
        rows.append((tuple(own_table), tuple(2 * packed for packed in own_table)))
    return tuple(rows)


def _indexer() -> Callable[[int, int], tuple[int, ...]]:
    """Build ``indices(own, opp)``: every copy's base-3 index, as a tuple in :data:`PATTERNS` order."""
    (a0, b0), (a1, b1), (a2, b2), (a3, b3), (a4, b4), (a5, b5), (a6, b6), (a7, b7) = _row_tables()
    unpack = struct.Struct(f"<{len(PATTERNS)}I").unpack
    width = len(PATTERNS) * _FIELD // 8

    def indices(own: int, opp: int) -> tuple[int, ...]:
        o, p = own.to_bytes(8, "little"), opp.to_bytes(8, "little")
        packed = (a0[o[0]] + b0[p[0]] + a1[o[1]] + b1[p[1]] + a2[o[2]] + b2[p[2]] + a3[o[3]] + b3[p[3]]
                  + a4[o[4]] + b4[p[4]] + a5[o[5]] + b5[p[5]] + a6[o[6]] + b6[p[6]] + a7[o[7]] + b7[p[7]])
        return unpack(packed.to_bytes(width, "little"))

    return indices


def pattern_indices(own: int, opp: int) -> tuple[int, ...]:
    """Return the base-3 index of every pattern copy (:data:`PATTERNS` order) for an 8x8 position.

    ``own`` holds the side to move's discs (digit 1), ``opp`` the opponent's (digit 2).
    """
    return _cached_indexer()(own, opp)


@functools.lru_cache(maxsize=1)
def _cached_indexer() -> Callable[[int, int], tuple[int, ...]]:
    return _indexer()


def feature_vector(own: int, opp: int) -> tuple[int, tuple[int, ...], int]:
    """Return ``(stage, indices, mobility)``: what the evaluation of ``(own, opp)`` reads (for training).

    ``mobility`` is the side to move's moves minus the opponent's.
    """
    moves = board(8).moves
    return (stage_of((own | opp).bit_count()), pattern_indices(own, opp),
            moves(own, opp).bit_count() - moves(opp, own).bit_count())


def symmetric_indices(name: str) -> list[int]:
    """Map every index of pattern ``name``'s table to the smallest index a board symmetry makes it equal to.

    A symmetry of the board that maps the pattern's squares onto themselves
    (a row reversed, an edge mirrored with its X-squares swapped, a 3x3
    corner transposed) turns one configuration of those squares into
    another, and a position is worth what its mirror image is worth: the
    two entries should be one. Returns ``TABLE_SIZES[name]`` indices, each
    the smallest of its class (a 2x5 corner, which no symmetry keeps in
    place, maps every index to itself). For training: one entry per class
    sees the data of all of them (``benchmarks/othello_train.py --tie``).

    Raises:
        KeyError: if ``name`` is not one of :data:`TABLE_SIZES`.
    """
    shape = dict(_SHAPES)[name]
    digit_of = {square: digit for digit, square in enumerate(shape)}
    moves = [[digit_of[symmetry(r, c)] for r, c in shape] for symmetry in _SYMMETRIES
             if {symmetry(r, c) for r, c in shape} == set(shape)]  # digit k goes to digit moved[k]
    classes = []
    for index in range(3 ** len(shape)):
        digits = [index // 3 ** k % 3 for k in range(len(shape))]
        classes.append(min(sum(d * 3 ** to for d, to in zip(digits, moved)) for moved in moves))
    return classes


@dataclass(frozen=True, slots=True)
class PatternWeights:
    """The fitted evaluation.

    Attributes:
        tables: per stage, per pattern name, the table (``TABLE_SIZES[name]`` entries, hundredths of a disc).
        mobility: per stage, the weight of one move of mobility difference.
        bias: per stage, a constant (the side to move's edge at that stage).
        info: what the trainer recorded (data set size, fit error ...), for the benchmarks page.
        hand_permille: the hand-weighted evaluation's share: the score adds
            ``hand(own, opp) * hand_permille // 1000`` (its units turned into
            hundredths of a disc); the tables then fit what it gets wrong.
    """

    tables: tuple[dict[str, list[int]], ...]
    mobility: tuple[int, ...]
    bias: tuple[int, ...]
    info: dict[str, object]
    hand_permille: int = 0


def save_weights(weights: PatternWeights, path: Path) -> None:
    """Write ``weights`` to ``path``: a JSON header line, then the zlib-compressed int16 tables.

    Raises:
        ValueError: if a table has the wrong size or an entry does not fit 16 bits.
    """
    values = array("h")
    for stage in range(STAGES):
        for name, _shape in _SHAPES:
            table = weights.tables[stage][name]
            if len(table) != TABLE_SIZES[name]:
                raise ValueError(f"stage {stage} table {name} has {len(table)} entries, not {TABLE_SIZES[name]}")
            values.extend(table)  # OverflowError past 16 bits
    header = {"format": FORMAT, "stages": STAGES, "patterns": [[n, len(s)] for n, s in _SHAPES],
              "mobility": list(weights.mobility), "bias": list(weights.bias), "hand_permille": weights.hand_permille,
              "info": weights.info}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(header).encode() + b"\n" + zlib.compress(values.tobytes(), 9))


@functools.lru_cache(maxsize=4)
def load_weights(path: Path = DATA_FILE) -> PatternWeights:
    """Read a data file written by :func:`save_weights` (cached: once per process and path).

    Raises:
        OSError: if the file cannot be read.
        ValueError: if it is not a pattern file of this layout (format, stages, patterns or sizes differ).
    """
    raw = path.read_bytes()
    line, _, body = raw.partition(b"\n")
    try:
        header = json.loads(line)
    except ValueError:
        raise ValueError(f"{path} does not start with a JSON header line") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path} does not start with a JSON header object")
    shapes = [[n, len(s)] for n, s in _SHAPES]
    if header.get("format") != FORMAT or header.get("stages") != STAGES or header.get("patterns") != shapes:
        raise ValueError(f"{path} is not a {FORMAT} file with {STAGES} stages and the patterns {shapes}")
    values = array("h")
    try:
        values.frombytes(zlib.decompress(body))
    except zlib.error as error:
        raise ValueError(f"{path}: the tables do not decompress ({error})") from None
    per_stage = sum(TABLE_SIZES.values())
    if len(values) != per_stage * STAGES or len(header["mobility"]) != STAGES or len(header["bias"]) != STAGES:
        raise ValueError(f"{path} holds {len(values)} table entries, not {per_stage * STAGES}")
    tables, at = [], 0
    for _stage in range(STAGES):
        stage_tables = {}
        for name, _shape in _SHAPES:
            stage_tables[name] = values[at:at + TABLE_SIZES[name]].tolist()
            at += TABLE_SIZES[name]
        tables.append(stage_tables)
    return PatternWeights(tuple(tables), tuple(header["mobility"]), tuple(header["bias"]), header.get("info", {}),
                          int(header.get("hand_permille", 0)))


def evaluator(weights: PatternWeights, limit: int,
              hand: Callable[[int, int, int], int] | None = None) -> Callable[[int, int], int]:
    """Return ``evaluate(own, opp) -> score`` for 8x8 from ``weights``, clamped to ``±(limit - 1)``.

    ``hand`` is the hand-weighted evaluation the tables correct, as
    ``hand(own, opp, mobility)`` (``othello_eval.hand_terms(8)``: the moves
    are counted once for both); it is needed when ``weights.hand_permille``
    is not 0.

    Raises:
        ValueError: if the weights need ``hand`` and none is given.
    """
    if weights.hand_permille and hand is None:
        raise ValueError("these pattern tables correct the hand-weighted evaluation: pass it as hand")
    mobility = board(8).mobility
    indices = _cached_indexer()
    per_copy = tuple(tuple(weights.tables[stage][pattern.name] for pattern in PATTERNS) for stage in range(STAGES))
    by_discs = tuple((per_copy[stage_of(d)], weights.mobility[stage_of(d)], weights.bias[stage_of(d)])
                     for d in range(65))
    getitem = list.__getitem__
    top = limit - 1
    permille = weights.hand_permille
    base = hand if hand is not None and permille else (lambda own, opp, mob: 0)

    def evaluate(own: int, opp: int) -> int:
        tables, w_mobility, bias = by_discs[(own | opp).bit_count()]
        mob = mobility(own, opp)
        score = (bias + w_mobility * mob + sum(map(getitem, tables, indices(own, opp)))
                 + base(own, opp, mob) * permille // 1000)
        return top if score > top else -top if score < -top else score

    return evaluate
