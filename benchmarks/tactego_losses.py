"""Why Tactego level 5 does not win against capture-first: every game it does not win, classified.

Plays the games of ``strength.py --game tactego --levels 5 --only greedy
--seconds 0 --nodes N --seed S`` (game ``i`` from setup seed ``S + i``, level 5
in seat ``i % 2``, the same move generators, 400 plies at most) and, for every
game level 5 does not win, prints one line: how it ended (``flag``: its last
flag taken; ``no-move``; ``draw``) at which ply and, for a flag taken, the
capturing piece's rank, whether level 5 could see that rank before the
capture (it had fought), whether that piece already stood next to the flag
before level 5's last move and whether any piece of level 5's next to it could
have beaten it then, how far level 5's strongest piece stood from it (king
moves; ``-`` when gone), whether the flag stood in level 5's back or front
setup row, and level 5's last move. Then the count of each class.

Usage::

    python benchmarks/tactego_losses.py --games 200 --nodes 3000 --seed 3000
    python benchmarks/tactego_losses.py --games 100 --nodes 3000 --seed 3000 --first 100   # games 100-199
    python benchmarks/tactego_losses.py --games 1 --first 18 --nodes 3000 --seed 9000 --before 10
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from games.bots import Budget  # noqa: E402
from games.bots.tactego import greedy_chooser, make_chooser  # noqa: E402
from games.tactego import TactegoState  # noqa: E402

MAX_PLIES = 400
"""The ply limit ``strength.py`` sets (its ``DEFAULT_MAX_PLIES``)."""


@dataclass(frozen=True)
class Verdict:
    """One game level 5 did not win: ``kind`` is ``flag``, ``no-move`` or ``draw``; ``detail`` the rest, as text."""

    index: int
    kind: str
    ply: int
    detail: str


def play(index: int, seed: int, nodes: int) -> tuple[int, list[TactegoState]]:
    """Play game ``index`` as ``strength.py`` does; return level 5's seat and every state of the game."""
    game_seed = seed + index
    seat = index % 2
    players = {seat: make_chooser(5), 1 - seat: greedy_chooser()}
    state = games.get("tactego").new_state({"max_plies": MAX_PLIES}, game_seed)
    states = [state]
    while state.outcome is None:
        mover = state.to_move
        rng = random.Random(game_seed * 100_003 + state.ply)
        state = state.play(players[mover].choose(state.view(mover), Budget(nodes=nodes), rng))
        states.append(state)
    return seat, states


def _square(state: TactegoState, name: str) -> int:
    cols = state.options["cols"]
    return (int(name[1:]) - 1) * cols + ord(name[0]) - ord("a")


def _distance(a: int, b: int, cols: int) -> int:
    return max(abs(a // cols - b // cols), abs(a % cols - b % cols))


def classify(index: int, seat: int, states: list[TactegoState]) -> Verdict | None:
    """``None`` when level 5 (in ``seat``) won, else what happened (see the module docstring)."""
    final = states[-1]
    outcome = final.outcome
    assert outcome is not None
    if outcome.winner == seat:
        return None
    if outcome.winner is None:
        return Verdict(index, "draw", final.ply, outcome.reason)
    if final.view(None)["flags"][seat] != 0:
        return Verdict(index, "no-move", final.ply, outcome.reason)
    before, ours = states[-2], states[-3]
    cols, rows = final.options["cols"], final.options["rows"]
    origin, flag = (_square(final, half) for half in final.last_move.split("-"))
    capturer = before.board[origin]
    assert capturer is not None
    neighbours = [j for j in range(rows * cols) if _distance(j, origin, cols) == 1]
    stood_there = ours.board[origin] is capturer
    beatable = any((p := ours.board[j]) is not None and p.owner == seat and not p.is_flag
                   and p.strength >= capturer.strength for j in neighbours)
    mine = [(p.strength, i) for i, p in enumerate(before.board) if p is not None and p.owner == seat and not p.is_flag]
    strongest = str(_distance(max(mine)[1], origin, cols)) if mine else "-"
    row = flag // cols if seat == 0 else rows - 1 - flag // cols
    detail = (f"by a {capturer.rank} ({'seen' if capturer.revealed and stood_there else 'unseen'} before; "
              f"{'next to the flag' if stood_there else 'arrived'} before our last move {before.last_move}, "
              f"{'beatable' if beatable else 'nothing of ours next to it could beat it'}); "
              f"our strongest {strongest} squares from it; flag in setup row {row + 1} from the back")
    return Verdict(index, "flag", final.ply, detail)


def picture(state: TactegoState, seat: int) -> str:
    """The whole board, top row first, every rank shown: ``R10*`` a seat-0 piece of rank 10 that fought, ``b5+``
    a seat-1 5 that moved; the pieces of ``seat`` (level 5's) in capitals, the other side's in lower case."""
    cols, rows = state.options["cols"], state.options["rows"]
    lines = []
    for row in range(rows - 1, -1, -1):
        cells = []
        for piece in state.board[row * cols:(row + 1) * cols]:
            if piece is None:
                cells.append(".")
                continue
            side = "rb"[piece.owner]
            cells.append((side.upper() if piece.owner == seat else side) + piece.rank
                         + ("*" if piece.revealed else "+" if piece.moved else ""))
        lines.append(f"{row + 1:>2} " + " ".join(cell.ljust(4) for cell in cells).rstrip())
    lines.append("   " + " ".join(chr(ord("a") + col).ljust(4) for col in range(cols)).rstrip())
    return "\n".join(lines)


def going_back(states: list[TactegoState], seat: int, plies: int) -> str:
    """The board ``plies`` plies before the game's end (:func:`picture`) and the moves played from there."""
    start = max(0, len(states) - 1 - plies)
    moves = " ".join(state.last_move for state in states[start + 1:])
    return f"ply {states[start].ply}, {'Red' if states[start].to_move == 0 else 'Blue'} to move:\n" \
           f"{picture(states[start], seat)}\nthen: {moves}"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Classify every game Tactego level 5 does not win against capture-first.")
    parser.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--first", type=int, default=0, help="the first game's index (default 0)")
    parser.add_argument("--nodes", type=int, default=3000, help="level 5's node budget a move (default 3000)")
    parser.add_argument("--seed", type=int, default=1, help="game i uses setup seed SEED + i (default 1)")
    parser.add_argument("--before", type=int, default=0,
                        help="after each game not won, the board this many plies before its end (default 0: none)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.nodes < 1 or args.first < 0 or args.before < 0:
        parser.error("--games and --nodes must be positive, --first and --before not negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Play, print each game not won as it ends, then the counts."""
    args = parse_args(argv)
    counts: collections.Counter[str] = collections.Counter()
    for index in range(args.first, args.first + args.games):
        seat, states = play(index, args.seed, args.nodes)
        verdict = classify(index, seat, states)
        counts["won" if verdict is None else verdict.kind] += 1
        if verdict is not None:
            print(f"game {index} (seed {args.seed + index}, level 5 {'Red' if seat == 0 else 'Blue'}): "
                  f"{verdict.kind} at ply {verdict.ply}: {verdict.detail}", flush=True)
            if args.before:
                print(going_back(states, seat, args.before), flush=True)
    print("counts: " + ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
