"""Fit Multi-ProbCut (Buro) for the Othello search: deep scores regressed on shallow ones, per stage and depth pair.

Plays ``--games`` self-play games of the level-5 search (``--nodes`` a move,
one move in ten at random, from ``strength.py``'s fixed openings), keeps
every ``--every``-th position with 14 to 55 empties, searches each to every
depth from 0 (the evaluation) to ``--max-depth`` with a full window (a fresh
table per search, so a deeper result never stands in for a shallower one),
and fits, per stage of :data:`games.bots.othello_search.PROBCUT_STAGES` and
per pair ``(depth, shallow)`` of :data:`games.bots.othello_search.PROBCUT_PAIRS`,
the least-squares line ``deep = a * shallow + b`` and the standard deviation
of its residuals. It prints the table to paste as ``PROBCUT_FIT``.

Usage::

    python benchmarks/othello_probcut_fit.py --games 30 --max-depth 7
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = Path(__file__).resolve().parent
for folder in (ROOT, BENCHMARKS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import games  # noqa: E402
from games.bots import Budget  # noqa: E402
from games.bots.othello_board import board  # noqa: E402
from games.bots.othello_eval import LIMIT  # noqa: E402
from games.bots.othello_search import INFINITY, PROBCUT_PAIRS, PROBCUT_STAGES, Searcher, probcut_stage  # noqa: E402
from strength import othello_openings  # noqa: E402


def positions(count: int, nodes: int, every: int, seed: int) -> list[tuple[int, int]]:
    """Positions ``(own, opp)`` from ``count`` self-play games (see the module docstring)."""
    rng = random.Random(seed)
    engine = games.get("othello")
    found = []
    for opening in othello_openings()[:count]:
        state = engine.new_state({"size": 8})
        for move in opening:
            state = state.play(move)
        while state.outcome is None:
            legal = state.legal_moves()
            own, opp = (state.black, state.white) if state.to_move == 0 else (state.white, state.black)
            empties = 64 - (own | opp).bit_count()
            if len(legal) == 1 or rng.random() < 0.1:
                state = state.play(rng.choice(legal))
                continue
            if 14 <= empties <= 55 and state.ply % every == 0:
                found.append((own, opp))
            result = Searcher(8, Budget(nodes=nodes)).best_move(own, opp, solve_empties=12)
            state = state.play(board(8).names[result.move])
    return found


def scores(own: int, opp: int, max_depth: int) -> list[int]:
    """The full-window score of ``(own, opp)`` at every depth from 0 to ``max_depth``."""
    found = []
    for depth in range(max_depth + 1):
        searcher = Searcher(8, Budget(nodes=10**9), probcut=False)
        found.append(searcher.search(own, opp, depth, -INFINITY, INFINITY))
    return found


def fit(pairs: list[tuple[int, int]]) -> tuple[float, float, float]:
    """Least squares ``deep = a * shallow + b`` over ``(shallow, deep)`` pairs; return ``(a, b, sigma)``."""
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    a = sum((x - mx) * (y - my) for x, y in pairs) / sxx if sxx else 1.0
    b = my - a * mx
    sigma = statistics.pstdev([y - (a * x + b) for x, y in pairs])
    return a, b, sigma


def main(argv: list[str] | None = None) -> int:
    """Run the fit and print the table; return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--nodes", type=int, default=2000, help="nodes a move in the self-play games")
    parser.add_argument("--every", type=int, default=3, help="keep every N-th ply's position")
    parser.add_argument("--max-depth", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.process_time()
    found = positions(args.games, args.nodes, args.every, args.seed)
    print(f"{len(found)} positions ({time.process_time() - started:.0f} CPU s)", file=sys.stderr)
    by_stage: dict[int, list[list[int]]] = {}
    for own, opp in found:
        empties = 64 - (own | opp).bit_count()
        row = scores(own, opp, args.max_depth)
        if all(abs(score) < LIMIT for score in row):  # a proven end within the horizon is no sample of the evaluation
            by_stage.setdefault(probcut_stage(empties), []).append(row)
    print(f"searched ({time.process_time() - started:.0f} CPU s)", file=sys.stderr)
    print("PROBCUT_FIT = {  # (stage, depth): (a, b, sigma), deep = a * shallow + b")
    for stage in range(len(PROBCUT_STAGES) + 1):
        rows = by_stage.get(stage, [])
        for depth, shallow in sorted(PROBCUT_PAIRS.items()):
            if depth > args.max_depth or not rows:
                continue
            a, b, sigma = fit([(row[shallow], row[depth]) for row in rows])
            print(f"    ({stage}, {depth}): ({a:.3f}, {b:.0f}, {sigma:.0f}),  # {len(rows)} positions, from depth {shallow}")
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
