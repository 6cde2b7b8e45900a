"""How fast and how deep the Othello search goes: nodes per second and depth reached per budget.

For each board size it plays random openings to three stages (the opening,
the middle game, the last fifth of the squares empty), runs the level-5
search (:class:`games.bots.othello_search.Searcher`) for ``--seconds`` on
each position and prints, per size and stage, the mean nodes per second
(wall clock and process CPU: on a shared machine the CPU figure is the
engine's own speed), the mean deepest finished iteration, and how many
searches proved the result exactly.

``--compare`` runs today's search and the search before issue 22 (read from
git history by ``benchmarks/othello_previous.py``) on the same positions, one after
the other, and adds a fixed-depth row per stage: the CPU seconds and nodes
each needs to finish ``--depth`` plies (a smaller tree and a faster node
both count there; nodes per second alone rewards a search for wasting nodes).
``--against-commit REV`` does the same with the search as it was at git
revision REV (``othello_previous.load_at``: its own tables too) instead of
the one before issue 22: node counts are exact whatever the machine's load,
so they compare two versions of the search on any machine.

Usage::

    python benchmarks/othello_search_speed.py                     # 8x8, 1 s, 5 positions per stage
    python benchmarks/othello_search_speed.py --sizes 6,8,16 --seconds 0.5 --positions 3
    python benchmarks/othello_search_speed.py --compare --depth 6   # previous beside new, 8x8
    python benchmarks/othello_search_speed.py --against-commit main --depth 7 --positions 8   # main beside new
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, Path(__file__).resolve().parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import games  # noqa: E402
from games.bots import Budget  # noqa: E402
from games.bots.othello_search import Searcher  # noqa: E402
import othello_previous  # noqa: E402

STAGES = (("opening", 0.10), ("middle", 0.50), ("end", 0.80))
"""Stage name and the share of the board covered when the search starts."""

SEARCHERS: dict[str, Callable[[int, Budget], Any]] = {"new": Searcher, "previous": lambda *args: othello_previous.Searcher(*args)}
"""The searches ``--compare`` runs, by the name printed in the table."""


def _position(size: int, covered: float, rng: random.Random):
    """A random-play position with about ``covered`` of the board filled and a placement to make."""
    engine = games.get("othello")
    target = max(5, int(size * size * covered))
    while True:
        state = engine.new_state({"size": size})
        while state.outcome is None and sum(state.disc_counts()) < target:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome is None and not state.must_pass:
            return state


def _positions(size: int, covered: float, count: int, seed: int) -> list[tuple[int, int]]:
    """``count`` random-play positions as ``(own, opp)`` pairs, the same ones for every searcher."""
    rng = random.Random(seed * 1000 + size * 10 + int(covered * 10))
    sides = []
    for _ in range(count):
        state = _position(size, covered, rng)
        sides.append((state.black, state.white) if state.to_move == 0 else (state.white, state.black))
    return sides


def measure(size: int, seconds: float, positions: int, seed: int, name: str = "new") -> list[str]:
    """Return one Markdown table row per stage for ``size``: the searcher ``name`` run for ``seconds`` a position."""
    rows = []
    make = SEARCHERS[name]
    for stage, covered in STAGES:
        wall_rates, cpu_rates, depths, exact = [], [], [], 0
        for own, opp in _positions(size, covered, positions, seed):
            started_wall, started_cpu = time.perf_counter(), time.process_time()
            result = make(size, Budget(seconds=seconds)).best_move(own, opp, solve_empties=32)
            wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
            wall_rates.append(result.nodes / wall)
            cpu_rates.append(result.nodes / max(cpu, 1e-6))
            depths.append(result.depth)
            exact += result.exact
        rows.append(f"| {name} | {size}x{size} | {stage} | {statistics.mean(wall_rates):,.0f} "
                    f"| {statistics.mean(cpu_rates):,.0f} "
                    f"| {statistics.mean(depths):.1f} (min {min(depths)}, max {max(depths)}) | {exact}/{positions} |")
    return rows


def fixed_depth(size: int, depth: int, positions: int, seed: int, name: str) -> list[str]:
    """Return one Markdown row per stage: CPU seconds and nodes for searcher ``name`` to finish ``depth`` plies."""
    rows = []
    make = SEARCHERS[name]
    for stage, covered in STAGES[:2]:
        seconds, nodes = [], []
        for own, opp in _positions(size, covered, positions, seed):
            started = time.process_time()
            result = make(size, Budget(nodes=10**12)).best_move(own, opp, max_depth=depth, solve_empties=0)
            seconds.append(time.process_time() - started)
            nodes.append(result.nodes)
        rows.append(f"| {name} | {size}x{size} | {stage} | {depth} | {statistics.mean(seconds):.3f} "
                    f"| {statistics.mean(nodes):,.0f} | {sum(nodes) / max(sum(seconds), 1e-6):,.0f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="8", help="comma-separated board sizes (default 8)")
    parser.add_argument("--seconds", type=float, default=1.0, help="budget per search (default 1.0)")
    parser.add_argument("--positions", type=int, default=5, help="positions per stage (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compare", action="store_true", help="the search before issue 22 beside today's")
    parser.add_argument("--depth", type=int, default=6, help="with --compare: the fixed depth searched (default 6)")
    parser.add_argument("--against-commit", default=None, metavar="REV",
                        help="compare with the search at git revision REV (e.g. main), not the one before issue 22")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.against_commit is not None:
        try:
            SEARCHERS[args.against_commit] = othello_previous.load_at(args.against_commit).Searcher
        except othello_previous.PreviousPlayerUnavailable as error:
            parser.error(f"--against-commit {args.against_commit}: {error}")
        args.compare = True
    names = ((args.against_commit or "previous"), "new") if args.compare else ("new",)
    print(f"Othello level-5 search, {args.seconds} s per position, {args.positions} random-play positions per stage")
    print()
    print("| search | board | stage | nodes/s (wall) | nodes/s (CPU) | depth reached | proved exact |")
    print("|---|---|---|---:|---:|---|---:|")
    for size in sizes:
        for name in names:
            for row in measure(size, args.seconds, args.positions, args.seed, name):
                print(row, flush=True)
    if args.compare:
        print()
        print("| search | board | stage | depth | CPU s to finish it | nodes | nodes/s (CPU) |")
        print("|---|---|---|---:|---:|---:|---:|")
        for size in sizes:
            for name in names:
                for row in fixed_depth(size, args.depth, args.positions, args.seed, name):
                    print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
