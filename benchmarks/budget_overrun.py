"""Does a computer move keep to its budget? Wall and CPU time of each move, in-process and through the server's workers.

Plays ``--moves`` moves of seeded random games (the computer's moves at
``--level`` with ``--seconds`` each; the other seat random) and records per
move:

- **in-process**: :func:`games.bots.choose_move` in this process, with the
  wall time and this process's CPU time it took (a wall time well above the
  CPU time says the process waited for a core: the machine's load, not the
  search);
- **pool** (``--pool``): the same moves through the server's
  :class:`server.play.workers.WorkerPool` (spawned workers at the lowest
  priority, warmed up at start), timed from the request to the answer:
  what a player waits, the sending of the view included.

Prints, per way, the first move's time (a fresh process) and the p50, p99
and maximum of the others, and how many exceeded the budget by more than
``--over-ms``.

Usage::

    python benchmarks/budget_overrun.py --game othello --seconds 0.1 --moves 60 --pool
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402

CHILD = """
import random, sys, time, json
import games
from games.bots import choose_move
game, level, seconds, moves, seed = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, sys.argv[6])
from budget_overrun import positions
out = []
for view in positions(game, moves, seed):
    wall, cpu = time.perf_counter(), time.process_time()
    choose_move(game, level, view, seconds, 1)
    out.append((time.perf_counter() - wall, time.process_time() - cpu))
print(json.dumps(out))
"""


def positions(game: str, count: int, seed: int, from_ply: int = 10) -> list[dict]:
    """``count`` views of the seat to move from seeded random games of ``game`` (default options), each at least
    ``from_ply`` plies in (past Othello's opening book: a searched move) and with two legal moves or more."""
    rng, views = random.Random(seed), []
    engine = games.get(game)
    while len(views) < count:
        state = engine.new_state({}, rng.randrange(1 << 30))
        while state.outcome is None and len(views) < count:
            if state.ply >= from_ply and len(state.legal_moves()) > 1:
                views.append(state.view(state.to_move))
            state = state.play(rng.choice(state.legal_moves()))
    return views


def in_process(game: str, level: int, seconds: float, moves: int, seed: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each move, chosen in a fresh Python process (so the first move is a first move)."""
    import json

    done = subprocess.run([sys.executable, "-c", CHILD, game, str(level), str(seconds), str(moves), str(seed),
                           str(Path(__file__).resolve().parent)], cwd=ROOT, capture_output=True, text=True, check=True)
    return [tuple(pair) for pair in json.loads(done.stdout)]


async def through_pool(game: str, level: int, seconds: float, moves: int, seed: int) -> list[float]:
    """Wall seconds of each move asked of a fresh :class:`WorkerPool` with one worker."""
    from server.play.workers import WorkerPool

    pool = WorkerPool(1)
    times = []
    try:
        for view in positions(game, moves, seed):
            started = time.perf_counter()
            await pool.choose(game, level, view, seconds, 1)
            times.append(time.perf_counter() - started)
    finally:
        await pool.close()
    return times


def report(label: str, times: list[float], seconds: float, over_ms: float) -> str:
    """First move, then p50 / p99 / max of the rest, and the count over budget + ``over_ms``."""
    first, rest = times[0], sorted(times[1:]) or [times[0]]

    def rank(p: float) -> float:
        return rest[max(0, min(len(rest) - 1, int(round(p / 100 * len(rest) + 0.5)) - 1))]

    over = sum(t > seconds + over_ms / 1000 for t in times)
    return (f"{label:<22} first {first * 1000:7.1f} ms  p50 {rank(50) * 1000:7.1f}  p99 {rank(99) * 1000:7.1f}  "
            f"max {rest[-1] * 1000:7.1f} ms  over budget+{over_ms:g} ms: {over} of {len(times)}")


def main(argv: list[str] | None = None) -> int:
    """Run the measurement; print one line per way of choosing."""
    parser = argparse.ArgumentParser(description="Wall and CPU time of computer moves against their budget.")
    parser.add_argument("--game", default="othello", choices=games.names())
    parser.add_argument("--level", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.1, help="the budget per move (default 0.1)")
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--over-ms", type=float, default=20.0, help="count moves over the budget by more than this")
    parser.add_argument("--pool", action="store_true", help="also through the server's worker pool")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.moves < 2:
        parser.error("--seconds must be positive and --moves at least 2")
    with open("/proc/loadavg") if os.path.exists("/proc/loadavg") else open(os.devnull) as load:
        print(f"{args.game} level {args.level}, {args.seconds:g} s a move, {args.moves} moves; load {load.read().strip()}")
    pairs = in_process(args.game, args.level, args.seconds, args.moves, args.seed)
    print(report("in-process wall", [wall for wall, _ in pairs], args.seconds, args.over_ms))
    print(report("in-process CPU", [cpu for _, cpu in pairs], args.seconds, args.over_ms))
    if args.pool:
        times = asyncio.run(through_pool(args.game, args.level, args.seconds, args.moves, args.seed))
        print(report("pool (request->move)", times, args.seconds, args.over_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
