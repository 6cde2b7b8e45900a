"""How fast and how deep the Othello search goes: nodes per second and depth reached per budget.

For each board size it plays random openings to three stages (the opening,
the middle game, the last fifth of the squares empty), runs the level-5
search (:class:`games.bots.othello_search.Searcher`) for ``--seconds`` on
each position and prints, per size and stage, the mean nodes per second
(wall clock and process CPU: on a shared machine the CPU figure is the
engine's own speed), the mean deepest finished iteration, and how many
searches proved the result exactly.

Usage::

    python benchmarks/othello_search_speed.py                     # 8x8, 1 s, 5 positions per stage
    python benchmarks/othello_search_speed.py --sizes 6,8,16 --seconds 0.5 --positions 3
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import games  # noqa: E402
from games.bots import Budget  # noqa: E402
from games.bots.othello_search import Searcher  # noqa: E402

STAGES = (("opening", 0.10), ("middle", 0.50), ("end", 0.80))
"""Stage name and the share of the board covered when the search starts."""


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


def measure(size: int, seconds: float, positions: int, seed: int) -> list[str]:
    """Return one Markdown table row per stage for ``size``."""
    rows = []
    rng = random.Random(seed)
    for stage, covered in STAGES:
        wall_rates, cpu_rates, depths, exact = [], [], [], 0
        for _ in range(positions):
            state = _position(size, covered, rng)
            own, opp = (state.black, state.white) if state.to_move == 0 else (state.white, state.black)
            budget = Budget(seconds=seconds)
            started_wall, started_cpu = time.perf_counter(), time.process_time()
            result = Searcher(size, budget).best_move(own, opp, solve_empties=32)
            wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
            wall_rates.append(result.nodes / wall)
            cpu_rates.append(result.nodes / max(cpu, 1e-6))
            depths.append(result.depth)
            exact += result.exact
        rows.append(f"| {size}x{size} | {stage} | {statistics.mean(wall_rates):,.0f} | {statistics.mean(cpu_rates):,.0f} "
                    f"| {statistics.mean(depths):.1f} (min {min(depths)}, max {max(depths)}) | {exact}/{positions} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="8", help="comma-separated board sizes (default 8)")
    parser.add_argument("--seconds", type=float, default=1.0, help="budget per search (default 1.0)")
    parser.add_argument("--positions", type=int, default=5, help="positions per stage (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"Othello level-5 search, {args.seconds} s per position, {args.positions} random-play positions per stage")
    print()
    print("| board | stage | nodes/s (wall) | nodes/s (CPU) | depth reached | proved exact |")
    print("|---|---|---:|---:|---|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        for row in measure(size, args.seconds, args.positions, args.seed):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
