"""What a Tactego level-5 move costs: CPU seconds a move at a node budget, side by side, and nodes a second buys.

Positions come from games of capture-first against itself (setup seeds
``--seed`` on, every 3rd position from ply 6, level 5 to move in them
alternately as Red and Blue). Each position is searched by every player named
with ``--player KIND:NODES`` in turn (``search``: the determinizing chooser,
``games.bots.tactego.DeterminizingChooser(5)``; ``playout``: the playout
chooser, ``games.bots.tactego_playout.PlayoutChooser``; ``hybrid``: the
search, then playouts among its near-equal moves,
``games.bots.tactego_hybrid.HybridChooser``), so a change in the
machine's load falls on all of them alike. It prints each player's mean CPU
seconds a move (``time.process_time``), their ratio to the first player's, the
nodes a CPU second buys (the budget over that time: what a quiet core's second
of wall clock gives), and,
with ``--seconds S``, the nodes the playout chooser reaches in S seconds of
wall clock (mean and median over the positions; quote the load beside it).

Usage::

    python benchmarks/tactego_move_cost.py --positions 60 --player search:3000 --player playout:2500
    python benchmarks/tactego_move_cost.py --positions 20 --player playout:2500 --seconds 1
    python benchmarks/tactego_move_cost.py --positions 40 --player search:3000 --player hybrid:3000
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from games.bots import Budget, MoveChooser  # noqa: E402
from games.bots.tactego import DeterminizingChooser, greedy_chooser  # noqa: E402
from games.bots.tactego_hybrid import HybridChooser  # noqa: E402
from games.bots.tactego_playout import PlayoutChooser  # noqa: E402


def positions(count: int, seed: int) -> list[dict]:
    """``count`` views of the seat to move from capture-first games (see the module docstring)."""
    views: list[dict] = []
    game_seed = seed
    greedy = greedy_chooser()
    while len(views) < count:
        state = games.get("tactego").new_state({"max_plies": 400}, game_seed)
        rng = random.Random(game_seed)
        while state.outcome is None and len(views) < count:
            view = state.view(state.to_move)
            if state.ply >= 6 and state.ply % 3 == 0 and len(view["legal_moves"]) > 1:
                views.append(view)
            state = state.play(greedy.choose(view, Budget(nodes=1), rng))
        game_seed += 1
    return views


def player(spec: str) -> tuple[str, MoveChooser, int]:
    """``KIND:NODES`` as (label, chooser, nodes); raise ValueError for a bad one."""
    kind, _, nodes = spec.partition(":")
    choosers = {"search": lambda: DeterminizingChooser(5), "playout": lambda: PlayoutChooser(5),
                "hybrid": lambda: HybridChooser(5)}
    if kind not in choosers or not nodes.isdigit() or int(nodes) < 1:
        raise ValueError(f"a player is search:NODES, playout:NODES or hybrid:NODES, not {spec!r}")
    return spec, choosers[kind](), int(nodes)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print (see the module docstring)."""
    parser = argparse.ArgumentParser(description="CPU a Tactego level-5 move costs, side by side.")
    parser.add_argument("--positions", type=int, default=40, help="positions to search (default 40)")
    parser.add_argument("--seed", type=int, default=60000, help="the first capture-first game's setup seed")
    parser.add_argument("--player", action="append", default=[], help="KIND:NODES (search, playout or hybrid), repeatable")
    parser.add_argument("--seconds", type=float, default=0.0, help="also: nodes the playout chooser reaches in S s")
    args = parser.parse_args(argv)
    try:
        players = [player(spec) for spec in args.player or ["search:3000", "playout:2500"]]
    except ValueError as error:
        parser.error(str(error))
    if args.positions < 1 or args.seconds < 0:
        parser.error("--positions must be positive and --seconds not negative")
    views = positions(args.positions, args.seed)
    spent = {label: 0.0 for label, _, _ in players}
    for index, view in enumerate(views):
        for label, bot, nodes in players:
            started = time.process_time()
            bot.choose(view, Budget(nodes=nodes), random.Random(index))
            spent[label] += time.process_time() - started
    first = spent[players[0][0]]
    for label, _, nodes in players:
        per_move = spent[label] / len(views)
        print(f"{label}: {1000 * per_move:.1f} ms CPU a move over {len(views)} positions, "
              f"{spent[label] / first:.2f}x the first; about {nodes / per_move:,.0f} nodes a CPU second")
    if args.seconds:
        bot, reached = PlayoutChooser(5), []
        for index, view in enumerate(views):
            bot.choose(view, Budget(seconds=args.seconds), random.Random(index))
            reached.append(bot.last_nodes)
        print(f"playout: {statistics.mean(reached):.0f} nodes (median {statistics.median(reached):.0f}) "
              f"in {args.seconds} s of wall clock a move, {len(views)} positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
