"""Othello perft through the public API beside the bare bitboard perft, in instructions (callgrind).

``benchmarks/perft.py --ratio-only`` compares CPU seconds, which a shared
machine blurs by tens of percent; instruction counts do not move. Each
measurement is its own ``valgrind --tool=callgrind`` run of a small Python
program; a run that does everything but the perft (imports, the start
position, the bare perft's tables) is subtracted from each, so the figures
are the perft's own work:

- **counted**: ``games.perft.perft(state, depth)`` (``children()`` at inner
  positions, ``move_count()`` at the last ply) against
  ``othello_bare.perft(own, opp, depth)`` (the last ply's moves counted);
- **played**: ``perft(..., play_leaves=True)`` (every leaf a state made by
  ``children()``) against ``othello_bare.perft(..., play_leaves=True)``
  (every leaf's bitboards computed).

The ratio is API / bare (at most 1: the public API is no dearer than bare
ints). Needs ``valgrind``.

Usage::

    python benchmarks/perft_instructions.py              # perft(7): a minute or two under callgrind
    python benchmarks/perft_instructions.py --depth 6
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SETUP = f"""\
import sys
sys.path[:0] = [{str(ROOT)!r}, {str(HERE)!r}]
from games.othello import Othello
from games.perft import perft
import othello_bare
state = Othello().new_state({{"size": 8}})
"""
"""What every run does before its perft (and all the baseline run does)."""

RUNS = {
    "api counted": "perft(state, {depth})",
    "bare counted": "othello_bare.perft(*othello_bare.START, {depth})",
    "api played": "perft(state, {depth}, play_leaves=True)",
    "bare played": "othello_bare.perft(*othello_bare.START, {depth}, play_leaves=True)",
}
"""The perft each run makes after :data:`SETUP`."""


def instructions(program: str) -> int:
    """Instructions ``python -c program`` executes under callgrind (every thread, start-up included)."""
    with tempfile.TemporaryDirectory(prefix="parlour-perft-") as scratch:
        out_file = Path(scratch) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", sys.executable, "-c", program],
            check=True, capture_output=True, timeout=3600,
        )  # fmt: skip
        match = re.search(r"^(?:summary|totals):\s*(\d+)", out_file.read_text(), re.MULTILINE)
        if match is None:
            raise RuntimeError("callgrind wrote no totals")
        return int(match[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Othello perft, public API beside bare ints, in instructions.")
    parser.add_argument("--depth", type=int, default=7, help="perft depth from the 8x8 start (default: 7)")
    args = parser.parse_args(argv)
    if args.depth < 1:
        parser.error("--depth must be at least 1")
    if not shutil.which("valgrind"):
        print("perft_instructions.py needs valgrind", file=sys.stderr)
        return 1
    base = instructions(SETUP)
    counts = {name: instructions(SETUP + call.format(depth=args.depth)) - base for name, call in RUNS.items()}
    print(f"Othello 8x8 perft({args.depth}), million instructions (start-up subtracted):")
    print("| walk | API | bare | API / bare |")
    print("|---|---|---|---|")
    for walk in ("counted", "played"):
        api, bare = counts[f"api {walk}"], counts[f"bare {walk}"]
        print(f"| {walk} | {api / 1e6:,.0f} | {bare / 1e6:,.0f} | {api / bare:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
