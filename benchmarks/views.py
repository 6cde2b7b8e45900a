"""View-building benchmark: microseconds per ``State.view()``, old against new, per game.

For each game at its default options (seed ``"bench"`` for the games with a
chance setup) it plays random games (moves drawn from ``random.Random(seed)``,
each game cut after ``--plies`` plies) and keeps ``--positions`` positions.
The server builds three views of every position it reaches (seat 0, seat 1,
spectators), so each round times, on the same positions:

- ``old``: the three views built the way they were before issue 10
  (``benchmarks/views_reference.py``: square by square, every call);
- ``new``: the three views from ``State.view()`` on positions that have not
  built a view yet (the first call of each position pays for its board);
- ``new 1st``: one ``State.view(None)`` per position, each a position that has
  not built a view yet (the cost when only one view is wanted).

Before any view is timed, each position's moves and outcome are worked out
(as the server has done by the time it sends a view), so every column times
only the view. Positions are rebuilt from their moves for every round, so no
round starts with views already built. Times are the process's CPU time
(``time.process_time``), taken with the cyclic garbage collector off (as
``timeit`` does: its passes over the freshly built positions would land on
whichever side happens to run then); each figure is the median over
``--rounds``; ``speed-up`` is old / new. Before timing, every new view is checked against
the old one; a difference makes the exit status 1.

Usage::

    python benchmarks/views.py
    python benchmarks/views.py --games othello tactego --rounds 9 --positions 500
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from benchmarks import views_reference  # noqa: E402
from games.base import State  # noqa: E402

SEATS = (0, 1, None)
BENCH_SEED = "bench"
HEADER = f"{'game':<10} {'positions':>9} {'old µs/view':>12} {'new µs/view':>12} {'speed-up':>9} {'new 1st µs':>11}"


def sample_lines(game: games.Game, positions: int, plies: int, seed: int) -> list[list[str]]:
    """Return move lists that lead, from the start, to ``positions`` positions of random games.

    A list per position; games are played until they end or reach ``plies``
    plies, then a new game starts, until enough positions are collected.
    """
    rng = random.Random(seed)
    lines: list[list[str]] = []
    while len(lines) < positions:
        state, moves = game.new_state(None, BENCH_SEED), []
        lines.append([])
        while state.outcome is None and len(moves) < plies and len(lines) < positions:
            move = rng.choice(state.legal_moves())
            state = state.play(move)
            moves.append(move)
            lines.append(list(moves))
    return lines


def build(game: games.Game, lines: list[list[str]]) -> list[State]:
    """Return fresh states at the end of each move list, moves and outcome already worked out."""
    states = []
    for moves in lines:
        state = game.new_state(None, BENCH_SEED)
        for move in moves:
            state = state.play(move)
        state.legal_moves()
        states.append(state)
    return states


def check(states: list[State]) -> bool:
    """Whether every seat's new view of every state equals the old one."""
    return all(state.view(seat) == views_reference.view(state, seat) for state in states for seat in SEATS)


def cpu_us(run: Callable[[], None]) -> float:
    """The CPU microseconds ``run()`` takes, collected garbage first and the collector off meanwhile."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        run()
        return (time.process_time() - start) * 1e6
    finally:
        gc.enable()


def time_old(states: list[State]) -> float:
    """µs per view: the three old-style views of every state."""
    reference = views_reference.view

    def run() -> None:
        for state in states:
            for seat in SEATS:
                reference(state, seat)

    return cpu_us(run) / (len(states) * len(SEATS))


def time_new(states: list[State]) -> float:
    """µs per view: the three views of every (fresh) state."""

    def run() -> None:
        for state in states:
            for seat in SEATS:
                state.view(seat)

    return cpu_us(run) / (len(states) * len(SEATS))


def time_first(states: list[State]) -> float:
    """µs per view: one spectator view of every (fresh) state."""

    def run() -> None:
        for state in states:
            state.view(None)

    return cpu_us(run) / len(states)


def bench(name: str, positions: int, plies: int, rounds: int, seed: int) -> tuple[str, bool]:
    """Time one game; return its table row and whether its views matched the old ones."""
    game = games.get(name)
    lines = sample_lines(game, positions, plies, seed)
    agreed = check(build(game, lines))
    old, new, first = [], [], []
    for round_number in range(rounds):
        states, fresh = build(game, lines), build(game, lines)
        if round_number % 2:  # alternate which side runs first
            new.append(time_new(states))
            old.append(time_old(states))
        else:
            old.append(time_old(states))
            new.append(time_new(states))
        first.append(time_first(fresh))
    old_us, new_us, first_us = (statistics.median(times) for times in (old, new, first))
    speed_up = old_us / new_us if new_us > 0 else float("inf")
    row = f"{name:<10} {len(lines):>9} {old_us:>12.2f} {new_us:>12.2f} {speed_up:>8.1f}x {first_us:>11.2f}"
    return row + ("" if agreed else "  VIEWS DIFFER"), agreed


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Microseconds per State.view(), old (square by square) against new.")
    parser.add_argument("--games", nargs="+", default=games.names(), metavar="GAME", help="games to time (default: all)")
    parser.add_argument("--positions", type=int, default=300, help="positions per game (default: %(default)s)")
    parser.add_argument("--plies", type=int, default=120, help="longest random game sampled (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds; medians are printed (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random moves (default: %(default)s)")
    args = parser.parse_args(argv)
    for option in ("positions", "plies", "rounds"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1")
    unknown = [name for name in args.games if name not in games.names()]
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}; known: {', '.join(games.names())}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Print the table; return 1 if some new view differs from the old one."""
    args = parse_args(argv)
    print(f"µs per view(): 3 views (seats 0, 1, spectator) per position, median of {args.rounds} rounds, CPU time")
    print(HEADER)
    all_agreed = True
    for name in args.games:
        row, agreed = bench(name, args.positions, args.plies, args.rounds, args.seed)
        all_agreed &= agreed
        print(row, flush=True)
    return 0 if all_agreed else 1


if __name__ == "__main__":
    sys.exit(main())
