"""The 8x8 Othello opening book: scored moves for the first plies from the standard start.

Built by ``benchmarks/othello_book_build.py`` (every move of every book
position scored by a search; the lines within a margin of the best are
followed, for both sides) and shipped as ``games/bots/data/othello_book.json``.
A position is stored once for its eight symmetric copies: under the one
whose ``(own, opp)`` pair is smallest (:func:`canonical`); moves are stored
in that copy's squares and turned back on lookup.

:func:`book_move` picks at random among the moves whose score is within a
margin of the best one, so that a player using the book does not play one
fixed line; levels 4 and 5 use it (``games.bots.othello``).
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

__all__ = ["BOOK_FILE", "Book", "book_move", "canonical", "load_book", "transforms"]

BOOK_FILE = Path(__file__).resolve().parent / "data" / "othello_book.json"
"""The shipped book."""

FORMAT = "parlour-othello-book-1"
"""The book file's ``format`` entry."""

Book = dict[tuple[int, int], tuple[tuple[int, int], ...]]
"""Canonical ``(own, opp)`` -> ``((move square, score in hundredths of a disc), ...)``."""


@functools.lru_cache(maxsize=1)
def transforms() -> tuple[tuple[int, ...], ...]:
    """Return the eight symmetries of the 8x8 board as square permutations (``perm[square]`` = its image).

    The first is the identity.
    """
    maps = (lambda r, c: (r, c), lambda r, c: (r, 7 - c), lambda r, c: (7 - r, c), lambda r, c: (7 - r, 7 - c),
            lambda r, c: (c, r), lambda r, c: (c, 7 - r), lambda r, c: (7 - c, r), lambda r, c: (7 - c, 7 - r))
    result = []
    for symmetry in maps:
        perm = []
        for square in range(64):
            row, col = symmetry(*divmod(square, 8))
            perm.append(row * 8 + col)
        result.append(tuple(perm))
    return tuple(result)


def _apply(perm: tuple[int, ...], bits: int) -> int:
    moved = 0
    while bits:
        low = bits & -bits
        bits ^= low
        moved |= 1 << perm[low.bit_length() - 1]
    return moved


def canonical(own: int, opp: int) -> tuple[tuple[int, int], tuple[int, ...]]:
    """Return ``((own, opp) of the smallest symmetric copy, the permutation that makes it)``."""
    best = None
    for perm in transforms():
        pair = (_apply(perm, own), _apply(perm, opp))
        if best is None or pair < best[0]:
            best = (pair, perm)
    assert best is not None
    return best


@functools.lru_cache(maxsize=2)
def load_book(path: Path = BOOK_FILE) -> Book:
    """Read a book file (cached: once per process and path).

    Raises:
        OSError: if the file cannot be read.
        ValueError: if it is not a book of this format, or an entry is malformed.
    """
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("positions"), dict):
        raise ValueError(f"{path} is not a {FORMAT} file")
    book: Book = {}
    for key, moves in data["positions"].items():
        own_text, _, opp_text = key.partition(":")
        try:
            pair = (int(own_text, 16), int(opp_text, 16))
            entries = tuple((int(square), int(score)) for square, score in moves)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: bad book entry {key!r}: {error}") from None
        if not entries or any(not 0 <= square < 64 for square, _ in entries):
            raise ValueError(f"{path}: bad book entry {key!r}")
        book[pair] = entries
    return book


def book_move(book: Book, own: int, opp: int, rng: random.Random, margin: int) -> int | None:
    """Return a book move for ``(own, opp)`` (a square index), or ``None`` if the position is not in the book.

    Chooses uniformly among the stored moves scored within ``margin``
    (hundredths of a disc) of the best.
    """
    if (own | opp).bit_count() > 4 + 30:
        return None
    pair, perm = canonical(own, opp)
    entries = book.get(pair)
    if not entries:
        return None
    best = max(score for _, score in entries)
    square = rng.choice([square for square, score in entries if score >= best - margin])
    return perm.index(square)
