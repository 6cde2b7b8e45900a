"""Is the Othello endgame solver exact? It is checked against an independent brute-force solver.

Plays random games on 8x8 (or ``--size``) to positions with 1 to
``--max-empties`` empty squares (uniformly many, a placement to make), and
compares, per position, :meth:`games.bots.othello_search.Searcher.solve`
(full window: the exact final disc margin) and the root's level-5 choice
(:meth:`Searcher.best_move` with the solver on: its proven score) with
:func:`brute_force`: negamax over every move on the plain bitboard
primitives of ``benchmarks/othello_bare.py`` (an implementation of the rules
that shares no code with the search), with no table and no move ordering:
plain alpha-beta (exact at the root's full window), or, below
``--prune-above`` empties, every line played to the end.

Prints the positions checked, the mismatches (each one with its board, and
the exit status is 1), and the mean and longest time of each side.

Usage::

    python benchmarks/othello_solver_check.py                        # 1,000 positions, up to 12 empties
    python benchmarks/othello_solver_check.py --positions 100 --max-empties 8 --prune-above 8
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, Path(__file__).resolve().parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import games  # noqa: E402
from games.bots import Budget  # noqa: E402
from games.bots.othello_search import INFINITY, SCALE, Searcher  # noqa: E402

PRUNE_ABOVE = 0
"""Above this many empties :func:`brute_force` prunes with alpha-beta (still exact); at or below it, none.

0: alpha-beta everywhere (12 empties take 3-7 s; without pruning below 8 empties, 30 s and more on 10)."""


def brute_force(own: int, opp: int, size: int = 8, alpha: int = -INFINITY, beta: int = INFINITY,
                prune_above: int = PRUNE_ABOVE) -> int:
    """Return the final disc margin (``own`` minus ``opp``) under perfect play, ``own`` to move.

    Plain negamax on :mod:`othello_bare`'s primitives (8x8 only) or, for
    other sizes, on the engine's ``children()``; with more than
    ``prune_above`` empties it prunes at ``(alpha, beta)`` (fail-hard: exact
    inside the window).
    """
    if size != 8:
        return _by_engine(own, opp, size)
    import othello_bare  # noqa: PLC0415 (8x8 only)

    moves = othello_bare.placing_moves(own, opp)
    if not moves:
        if not othello_bare.placing_moves(opp, own):
            return own.bit_count() - opp.bit_count()
        return -brute_force(opp, own, size, -beta, -alpha, prune_above)
    prune = 64 - (own | opp).bit_count() > prune_above
    best = -INFINITY
    while moves:
        square = moves & -moves
        moves ^= square
        flipped = othello_bare.flips(square, own, opp)
        score = -brute_force(opp ^ flipped, own | square | flipped, size, -beta, -max(alpha, best), prune_above)
        best = max(best, score)
        if prune and best >= beta:
            break
    return best


def _by_engine(own: int, opp: int, size: int) -> int:
    """:func:`brute_force` for any size, through ``OthelloState.children()`` (no pruning)."""
    state = _state(own, opp, size)
    return _engine_negamax(state) * (1 if state.to_move == 0 else -1)


def _state(own: int, opp: int, size: int):
    """An engine state with ``own`` to move as Black."""
    from games.othello import OthelloState  # noqa: PLC0415

    return OthelloState.from_diagram("\n".join(_rows(own, opp, size)), 0, 0)


def _rows(own: int, opp: int, size: int) -> list[str]:
    return ["".join("X" if own >> (r * size + c) & 1 else "O" if opp >> (r * size + c) & 1 else "."
                    for c in range(size)) for r in range(size)]


def _engine_negamax(state) -> int:
    """Black's final margin under perfect play, by minimax over ``children()``."""
    if state.outcome is not None:
        black, white = state.outcome.score
        return black - white
    values = [_engine_negamax(child) for child in state.children()]
    return max(values) if state.to_move == 0 else min(values)


def random_position(size: int, empties: int, rng: random.Random) -> tuple[int, int]:
    """A random-play position with ``empties`` empty squares and a placement to make, as ``(own, opp)``."""
    engine = games.get("othello")
    while True:
        state = engine.new_state({"size": size})
        while state.outcome is None and size * size - sum(state.disc_counts()) > empties:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome is None and not state.must_pass:
            return (state.black, state.white) if state.to_move == 0 else (state.white, state.black)


def check(positions: int, max_empties: int, seed: int, size: int = 8,
          prune_above: int = PRUNE_ABOVE) -> tuple[int, list[str], dict[str, list[float]]]:
    """Check the solver on ``positions`` random positions; return ``(checked, mismatches, seconds)``.

    ``mismatches`` describes each disagreement; ``seconds`` holds the time of
    each side (``"brute force"``, ``"solver"``, ``"root"``) per position.
    """
    rng = random.Random(seed)
    mismatches: list[str] = []
    seconds: dict[str, list[float]] = {"brute force": [], "solver": [], "root": []}
    for number in range(positions):
        own, opp = random_position(size, rng.randint(1, max_empties), rng)
        started = time.perf_counter()
        truth = brute_force(own, opp, size, prune_above=prune_above)
        seconds["brute force"].append(time.perf_counter() - started)
        started = time.perf_counter()
        solved = Searcher(size, Budget(nodes=10**12)).solve(own, opp, -INFINITY, INFINITY)
        seconds["solver"].append(time.perf_counter() - started)
        started = time.perf_counter()
        root = Searcher(size, Budget(nodes=10**12)).best_move(own, opp, solve_empties=64)
        seconds["root"].append(time.perf_counter() - started)
        if solved != truth or not root.exact or root.score != truth * SCALE:
            board = "\n".join(_rows(own, opp, size))
            mismatches.append(f"position {number} (X to move): brute force {truth}, solver {solved}, "
                              f"root {root.score} exact={root.exact}\n{board}")
    return positions, mismatches, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=1000, help="positions checked (default 1000)")
    parser.add_argument("--max-empties", type=int, default=12, help="the most empty squares (default 12)")
    parser.add_argument("--size", type=int, default=8, help="board size (default 8; others are slow)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--prune-above", type=int, default=PRUNE_ABOVE,
                        help=f"the brute force prunes with alpha-beta above this many empties (default {PRUNE_ABOVE})")
    args = parser.parse_args(argv)
    checked, mismatches, seconds = check(args.positions, args.max_empties, args.seed, args.size, args.prune_above)
    print(f"Othello {args.size}x{args.size} endgame solver against brute force: {checked} random-play positions "
          f"with 1 to {args.max_empties} empties, seed {args.seed}, brute force pruning above {args.prune_above}")
    print(f"exact: {checked - len(mismatches)} of {checked}")
    for name, times in seconds.items():
        print(f"{name}: mean {statistics.mean(times) * 1000:.1f} ms, longest {max(times) * 1000:.1f} ms")
    for mismatch in mismatches:
        print(mismatch)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
