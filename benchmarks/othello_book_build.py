"""Build the 8x8 Othello opening book (``games/bots/data/othello_book.json``) by searching from the start.

From the standard start, every position up to ``--plies`` plies deep is
expanded like this: each legal move is scored by a ``--depth``-ply search
with the shipped evaluation (:meth:`games.bots.othello_search.Searcher.move_scores`);
the moves within ``--keep`` hundredths of a disc of the best are stored and
followed (for both sides: the book answers an opponent's good deviations,
and a bad one leaves it), the others are dropped. Symmetric copies are one
position (:func:`games.bots.othello_book.canonical`). Positions are expanded
in ``--jobs`` processes, ply by ply. The searches evaluate with the shipped
pattern tables (or ``--tables``); the book records which (``tables``: the
file's SHA-256), so that a test can tell a book built with older tables.

Usage::

    nice -n 19 python benchmarks/othello_book_build.py --plies 7 --depth 6 --jobs 2   # the shipped book
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from games.bots import Budget  # noqa: E402
from games.bots.othello_board import board  # noqa: E402
from games.bots.othello_book import BOOK_FILE, FORMAT, canonical  # noqa: E402
from games.bots.othello_eval import trained_evaluator  # noqa: E402
from games.bots.othello_patterns import DATA_FILE  # noqa: E402
from games.bots.othello_search import Searcher  # noqa: E402

START = (0x0000000810000000, 0x0000001008000000)
"""The standard start, Black to move: ``(own, opp)``."""


def tables_digest(path: Path) -> str:
    """The SHA-256 (hex) of the pattern file at ``path``: what a book records of the tables that built it.

    Raises:
        OSError: if the file cannot be read.
    """
    return hashlib.sha256(path.read_bytes()).hexdigest()


def score_moves(task: tuple[int, int, int, Path]) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """Score every move of the canonical position ``(own, opp)`` with a ``depth``-ply search of the tables at ``path``.

    Raises:
        ValueError: if ``path`` is not a pattern file that loads.
    """
    own, opp, depth, path = task
    evaluate = trained_evaluator(8, path)
    if evaluate is None:
        raise ValueError(f"{path} is not a pattern file that loads")
    scores = Searcher(8, Budget(nodes=10**12), evaluate=evaluate).move_scores(own, opp, depth)
    return (own, opp), sorted(scores, key=lambda entry: -entry[1])


def build(plies: int, depth: int, keep: int, jobs: int,
          tables: Path = DATA_FILE) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """Return the book: canonical position -> kept ``(move, score)`` pairs, best first, searched with ``tables``."""
    flips = board(8).flips
    book: dict[tuple[int, int], list[tuple[int, int]]] = {}
    layer = {canonical(*START)[0]}
    started = time.perf_counter()
    with multiprocessing.Pool(jobs) as pool:
        for ply in range(plies):
            following: set[tuple[int, int]] = set()
            for pair, scores in pool.imap_unordered(score_moves, [(o, p, depth, tables) for o, p in layer]):
                best = scores[0][1]
                kept = [(square, score) for square, score in scores if score >= best - keep]
                book[pair] = kept
                own, opp = pair
                for square, _ in kept:
                    flipped = flips(square, own, opp)
                    child = (opp ^ flipped, own | (1 << square) | flipped)
                    if board(8).moves(*child):  # a pass ends the book line
                        following.add(canonical(*child)[0])
            print(f"  ply {ply}: {len(layer)} positions, book {len(book)}, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)
            layer = following - book.keys()
    return book


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plies", type=int, default=6, help="book depth in plies from the start (default 6)")
    parser.add_argument("--depth", type=int, default=6, help="search depth scoring each move (default 6)")
    parser.add_argument("--keep", type=int, default=150, help="moves within this of the best are kept (default 150)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tables", type=Path, default=DATA_FILE,
                        help=f"the pattern tables the searches evaluate with (default {DATA_FILE})")
    parser.add_argument("--out", type=Path, default=BOOK_FILE)
    args = parser.parse_args(argv)
    book = build(args.plies, args.depth, args.keep, args.jobs, args.tables)
    data = {"format": FORMAT, "plies": args.plies, "depth": args.depth, "keep": args.keep,
            "tables": tables_digest(args.tables),
            "positions": {f"{own:x}:{opp:x}": moves for (own, opp), moves in sorted(book.items())}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}: {len(book)} positions, {args.out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
