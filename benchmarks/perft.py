"""Rules-engine benchmark: perft counts and random-playout rates per game.

For each game, at its default options (games with a chance setup get the
seed ``"bench"``), it measures:

- perft: the leaves of the move tree to a fixed depth (``games.perft.perft``),
  the seconds taken and the leaves per second; where the count is known
  (Othello's published table) it is checked, and a mismatch makes the exit
  status 1;
- random playouts: complete games of uniformly random legal moves, drawn
  from ``random.Random(seed)``, played for a fixed time budget; it reports
  games per second and the mean plies per game. A playout still running
  after ``PLAYOUT_PLY_CAP`` plies (games that can cycle) is stopped and
  counted as capped.

Then, when Othello is among the games, the engine's public API against a
bare bitboard perft (``benchmarks/othello_bare.py``: plain ints, no objects,
the engine's algorithms), side by side in this one process: Othello 8x8
perft at ``--ratio-depth`` (default 8), ``--rounds`` times, each round timing
every pairing below one after the other. Each pairing does the same work on
both sides:

- ``counted``: ``games.perft.perft(state, depth)`` (``children()`` at inner
  positions, ``move_count()`` at the last ply) against the bare perft that
  counts the last ply's moves;
- ``played``: ``perft(state, depth, play_leaves=True)`` (every leaf a
  state, built by ``children()``) against the bare perft that computes every
  leaf's bitboards;
- ``notation``: ``legal_moves()`` and ``play(text)`` alone at every position,
  every leaf played, against the same bare perft as ``played``.

It prints each round's seconds and ratio (API / bare, below 1 means the API
was faster) and the medians. Times are the process's CPU time
(``time.process_time``), so other processes competing for the cores of a
shared machine distort a ratio less than they would wall-clock time.

Usage::

    python benchmarks/perft.py                      # every game at its default depth
    python benchmarks/perft.py --games othello --depth 9
    python benchmarks/perft.py --seconds 5 --seed 7
    python benchmarks/perft.py --ratio-only --rounds 9   # only the side-by-side

Games that ``games.get`` does not know are skipped with a note.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from benchmarks import othello_bare  # noqa: E402
from games.base import State  # noqa: E402
from games.perft import perft  # noqa: E402

DEFAULT_DEPTHS: dict[str, int] = {
    "othello": 8,
    "nimble": 4,
    "hexapawn": 6,  # size 3: the whole game tree
    "mingmang": 3,
    "morris": 4,
    "tactego": 3,
}
"""Perft depth (plies) per game, in the order the table lists them."""

KNOWN_LEAVES: dict[tuple[str, int], int] = {
    ("othello", 1): 4,
    ("othello", 2): 12,
    ("othello", 3): 56,
    ("othello", 4): 244,
    ("othello", 5): 1396,
    ("othello", 6): 8200,
    ("othello", 7): 55092,
    ("othello", 8): 390216,
    ("othello", 9): 3005288,
    ("othello", 10): 24571284,
}
"""Published perft counts from the default start position, by (game, depth)."""

SETUP_SEED = "bench"
"""The setup seed given to games with chance (``Game.uses_seed``)."""

PLAYOUT_SECONDS = 2.0
"""Default time budget for random playouts, per game (seconds)."""

PLAYOUT_SEED = 2024
"""Default seed of the ``random.Random`` that picks playout moves."""

PLAYOUT_PLY_CAP = 10_000
"""Plies after which a random playout is stopped and counted as capped."""

RATIO_DEPTH = 8
"""Default perft depth of the side-by-side Othello run (390,216 leaves)."""

RATIO_ROUNDS = 5
"""Default number of rounds of the side-by-side Othello run."""


@dataclass(frozen=True, slots=True)
class Result:
    """One game's measurements.

    Attributes:
        game: the game's short name.
        depth: perft depth in plies.
        leaves: perft leaf count.
        perft_s: seconds spent in perft.
        playouts: complete (or capped) random games played.
        capped: how many of them hit ``PLAYOUT_PLY_CAP``.
        plies: plies played over all playouts.
        playout_s: seconds spent in playouts (at least the budget).
    """

    game: str
    depth: int
    leaves: int
    perft_s: float
    playouts: int
    capped: int
    plies: int
    playout_s: float

    @property
    def leaves_per_s(self) -> float:
        """Perft leaves per second."""
        return self.leaves / self.perft_s if self.perft_s > 0 else float("inf")

    @property
    def games_per_s(self) -> float:
        """Random playouts per second."""
        return self.playouts / self.playout_s if self.playout_s > 0 else float("inf")

    @property
    def plies_per_game(self) -> float:
        """Mean plies per random playout."""
        return self.plies / self.playouts if self.playouts else 0.0

    def check(self) -> str:
        """Return ``"OK"``, ``"MISMATCH (expected N)"`` or ``"-"`` (no known count)."""
        expected = KNOWN_LEAVES.get((self.game, self.depth))
        if expected is None:
            return "-"
        return "OK" if expected == self.leaves else f"MISMATCH (expected {expected})"


def start_state(game: games.Game) -> State:
    """Return ``game``'s start at default options (seed ``"bench"`` if it uses one)."""
    return game.new_state(None, seed=SETUP_SEED if game.uses_seed else None)


def time_perft(state: State, depth: int) -> tuple[int, float]:
    """Return ``(leaves, seconds)`` of ``perft(state, depth)``."""
    began = time.perf_counter()
    leaves = perft(state, depth)
    return leaves, time.perf_counter() - began


def random_playouts(state: State, seconds: float, seed: int) -> tuple[int, int, int, float]:
    """Play random games from ``state`` until ``seconds`` have passed.

    Each game runs to its end (or ``PLAYOUT_PLY_CAP`` plies); the clock is
    checked between games, so the time taken can exceed the budget by one game.

    Returns:
        ``(games, capped, plies, elapsed seconds)``.
    """
    rng = random.Random(seed)
    played = capped = plies = 0
    began = time.perf_counter()
    while True:
        position, length = state, 0
        while position.outcome is None and length < PLAYOUT_PLY_CAP:
            position = position.play(rng.choice(position.legal_moves()))
            length += 1
        played += 1
        plies += length
        capped += position.outcome is None
        elapsed = time.perf_counter() - began
        if elapsed >= seconds:
            return played, capped, plies, elapsed


def bench(game: games.Game, depth: int, seconds: float, seed: int) -> Result:
    """Measure perft at ``depth`` and random playouts for ``seconds`` for ``game``."""
    state = start_state(game)
    leaves, perft_s = time_perft(state, depth)
    playouts, capped, plies, playout_s = random_playouts(state, seconds, seed)
    return Result(game.name, depth, leaves, perft_s, playouts, capped, plies, playout_s)


def notation_perft(state: State, depth: int) -> int:
    """Perft through ``legal_moves()`` and ``play(text)`` alone, every leaf played.

    Same count and conventions as :func:`games.perft.perft`.
    """
    if depth == 0:
        return 1
    if state.outcome is not None:
        return 0
    total = 0
    for move in state.legal_moves():
        total += notation_perft(state.play(move), depth - 1)
    return total


@dataclass(frozen=True, slots=True)
class Pairing:
    """One side-by-side comparison: the engine's API against the bare perft, same work.

    Attributes:
        name: ``"counted"``, ``"played"`` or ``"notation"``.
        api: runs the API perft at a depth and returns its leaf count.
        bare: runs the bare perft at a depth and returns its leaf count.
    """

    name: str
    api: Callable[[int], int]
    bare: Callable[[int], int]


def othello_pairings() -> tuple[Pairing, ...]:
    """Return the three pairings of the side-by-side run (see the module docstring)."""
    start = games.get("othello").new_state()
    own, opp = othello_bare.START
    return (
        Pairing("counted", lambda d: perft(start, d), lambda d: othello_bare.perft(own, opp, d)),
        Pairing(
            "played",
            lambda d: perft(start, d, play_leaves=True),
            lambda d: othello_bare.perft(own, opp, d, play_leaves=True),
        ),
        Pairing("notation", lambda d: notation_perft(start, d), lambda d: othello_bare.perft(own, opp, d, play_leaves=True)),
    )


def timed(run: Callable[[int], int], depth: int) -> tuple[int, float]:
    """Return ``(leaves, CPU seconds of this process)`` of ``run(depth)``."""
    began = time.process_time()
    leaves = run(depth)
    return leaves, time.process_time() - began


def side_by_side(depth: int, rounds: int) -> bool:
    """Time every pairing ``rounds`` times at ``depth``; print rounds and medians.

    Within a round each pairing runs bare first, then API, so both sides of a
    ratio are measured a moment apart. Returns whether every count agreed
    (with each other and with ``KNOWN_LEAVES``).
    """
    pairings = othello_pairings()
    expected = KNOWN_LEAVES.get(("othello", depth))
    times: dict[str, list[tuple[float, float]]] = {p.name: [] for p in pairings}
    counts: set[int] = set() if expected is None else {expected}
    print(f"othello perft({depth}): public API vs bare bitboards, {rounds} rounds (API / bare CPU seconds = ratio)")
    for round_number in range(1, rounds + 1):
        cells = []
        for pairing in pairings:
            bare_leaves, bare_s = timed(pairing.bare, depth)
            api_leaves, api_s = timed(pairing.api, depth)
            counts |= {bare_leaves, api_leaves}
            times[pairing.name].append((api_s, bare_s))
            cells.append(f"{pairing.name} {api_s:.3f}/{bare_s:.3f} = {_ratio(api_s, bare_s):.2f}")
        print(f"  round {round_number}: " + "; ".join(cells), flush=True)
    for name, pairs in times.items():
        ratio = statistics.median(_ratio(api, bare) for api, bare in pairs)
        api_s = statistics.median(api for api, _ in pairs)
        bare_s = statistics.median(bare for _, bare in pairs)
        print(f"  median {name:<8}: API {api_s:.3f} s, bare {bare_s:.3f} s, ratio {ratio:.2f}")
    agreed = len(counts) == 1
    found = ", ".join(str(count) for count in sorted(counts))
    check = f", expected {expected}" if expected is not None else ""
    print(f"  leaves: {found}{check}: {'OK' if agreed else 'MISMATCH'}")
    return agreed


def _ratio(api_s: float, bare_s: float) -> float:
    """Return ``api_s / bare_s`` (infinite when the bare run took no measurable time)."""
    return api_s / bare_s if bare_s > 0 else float("inf")


HEADER = (
    f"{'game':<10} {'depth':>5} {'leaves':>12} {'perft s':>8} {'leaves/s':>10} "
    f"{'check':<8} {'games/s':>9} {'plies/game':>10} {'capped':>6}"
)


def format_row(result: Result) -> str:
    """Return one line of the table for ``result``."""
    return (
        f"{result.game:<10} {result.depth:>5} {result.leaves:>12} {result.perft_s:>8.3f} "
        f"{result.leaves_per_s:>10.0f} {result.check():<8} {result.games_per_s:>9.1f} "
        f"{result.plies_per_game:>10.1f} {result.capped:>6}"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description="Perft counts and random-playout rates of the rules engines.")
    parser.add_argument(
        "--games",
        default=",".join(DEFAULT_DEPTHS),
        help="comma-separated game names (default: %(default)s)",
    )
    parser.add_argument("--depth", type=int, default=None, help="perft depth for every game (default: per game)")
    parser.add_argument(
        "--seconds", type=float, default=PLAYOUT_SECONDS, help="random-playout budget per game (default: %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=PLAYOUT_SEED, help="seed of the playout moves (default: %(default)s)")
    parser.add_argument(
        "--ratio-depth", type=int, default=RATIO_DEPTH, help="perft depth of the Othello API-vs-bare run (default: %(default)s)"
    )
    parser.add_argument(
        "--rounds", type=int, default=RATIO_ROUNDS, help="rounds of the Othello API-vs-bare run; 0 skips it (default: %(default)s)"
    )
    parser.add_argument("--ratio-only", action="store_true", help="run only the Othello API-vs-bare comparison")
    args = parser.parse_args(argv)
    if args.depth is not None and args.depth < 0:
        parser.error("--depth must be at least 0")
    if args.ratio_depth < 1:
        parser.error("--ratio-depth must be at least 1")
    if args.rounds < 0:
        parser.error("--rounds must be at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; return 1 if a known count mismatches."""
    args = parse_args(argv)
    names = [name.strip() for name in args.games.split(",") if name.strip()]
    agreed = True
    if args.ratio_only:
        return 0 if side_by_side(args.ratio_depth, max(args.rounds, 1)) else 1
    results = []
    print(HEADER)
    for name in names:
        try:
            game = games.get(name)
        except games.UnknownGame:
            print(f"{name:<10} skipped: not a registered game")
            continue
        depth = args.depth if args.depth is not None else DEFAULT_DEPTHS.get(name, 3)
        result = bench(game, depth, args.seconds, args.seed)
        results.append(result)
        print(format_row(result), flush=True)
    print()
    for result in results:
        expected = KNOWN_LEAVES.get((result.game, result.depth))
        if expected is not None:
            print(f"check: {result.game} perft({result.depth}) = {result.leaves}, expected {expected}: {result.check()}")
    if "othello" in names and args.rounds:
        print()
        agreed = side_by_side(args.ratio_depth, args.rounds)
    return 1 if not agreed or any(r.check().startswith("MISMATCH") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
