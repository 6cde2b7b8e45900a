"""Does a thinking computer slow the server down? A game's move round trip alone and beside busy computer seats.

Starts one real Parlour server in its own process (``--bot-seconds`` 1: the
strongest level thinks a second a move) and, in this process, plays Othello
games of seeded random legal moves between two clients (as
``benchmarks/roundtrip.py`` does, but paced: a pause of ``--gap-ms`` after
each move, as a well-behaved game), measuring each move's round trip (write
to ``ok``). Phases of ``--seconds`` alternate in one run:

- **alone**: only that game;
- **bots**: the same while ``--bot-tables`` computer-against-computer Othello
  tables at level 5 play (one seat of each thinks at any time, so four
  tables keep four computer seats thinking at once), watched by one client.

Prints p50 and p99 of each phase and the ratio of the p99s (the issue's
target: at most 1.5x). The computers think in worker processes at the
lowest priority (``nice`` 19, ``SCHED_IDLE``), one per core; a ratio near 1
says the event loop keeps its CPU.

Usage::

    python benchmarks/bots_latency.py                 # about a minute
    python benchmarks/bots_latency.py --seconds 4 --rounds 1
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))

import games  # noqa: E402
from client import Client  # noqa: E402
from protocol import messages as m  # noqa: E402
from roundtrip import ONE_ADDRESS, UNTHROTTLED, ServerProcess, close_table, skip_forced_passes, summary  # noqa: E402


class ComputerTables:
    """Computer-against-computer tables kept playing (a finished one is replaced) by one watching client."""

    def __init__(self, client: Client, count: int, level: int) -> None:
        self.client = client
        self.count = count
        self.level = level
        self.moves = 0
        self.live: set[int] = set()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the tables and wait until each has seen a computer move (the workers run)."""
        for _ in range(self.count):
            await self._open()
        self._task = asyncio.create_task(self._follow())
        while self.moves < self.count:
            await asyncio.sleep(0.05)

    async def _open(self) -> None:
        seats = [m.ComputerSeat(seat=0, level=self.level), m.ComputerSeat(seat=1, level=self.level)]
        joined = await self.client.request(m.CreateTable, game="othello", seat=None, computer=seats)
        assert isinstance(joined, m.TableJoined), joined
        self.live.add(joined.table.id)

    async def _follow(self) -> None:
        async for event in self.client.events():
            if isinstance(event, m.Moved):
                self.moves += 1
            elif isinstance(event, m.GameOver) and event.table in self.live:
                self.live.discard(event.table)
                await self.client.leave_table(event.table)
                await self._open()

    async def stop(self) -> None:
        """Leave every table (the computers play on for nobody until the server stops)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def measure(host: str, port: int, seconds: float, gap_s: float, seed: int) -> list[float]:
    """The move round trips (write to ``ok``, in seconds) of a pair of clients playing for ``seconds``, a move every ``gap_s``."""
    rng = random.Random(seed)
    othello = games.get("othello")
    clients = [await Client.connect(host, port, name=f"player{seed}a"), await Client.connect(host, port, name=f"player{seed}b")]
    ok_s: list[float] = []
    end = time.perf_counter() + seconds
    try:
        while time.perf_counter() < end:
            table = (await clients[0].create_table("othello", {"size": 8}, seat=0)).table.id
            await clients[1].join_table(table, seat=1)
            state = othello.new_state({"size": 8})
            while state.outcome is None and time.perf_counter() < end:
                mover = state.to_move
                assert mover is not None
                move = rng.choice(state.legal_moves())
                start = time.perf_counter()
                await clients[mover].move(table, move, ply=state.ply)
                ok_s.append(time.perf_counter() - start)
                state = skip_forced_passes(state.play(move))
                await asyncio.sleep(gap_s)
            await close_table(clients, table, state)
    finally:
        for client in clients:
            await client.close()
    return ok_s


def p99(samples_s: list[float]) -> float:
    ordered = sorted(samples_s)
    return ordered[max(0, min(len(ordered) - 1, int(round(0.99 * len(ordered) + 0.5)) - 1))]


async def run(args: argparse.Namespace, port: int) -> None:
    host = "127.0.0.1"
    alone: list[float] = []
    beside: list[float] = []
    watcher = await Client.connect(host, port, name="watcher")
    bots = ComputerTables(watcher, args.bot_tables, level=5)
    try:
        for round_ in range(args.rounds):
            alone += await measure(host, port, args.seconds, args.gap_ms / 1000, seed=2 * round_ + 1)
            started = time.perf_counter()
            if round_ == 0:
                await bots.start()
            print(f"round {round_ + 1}: alone, {len(alone)} moves so far; {len(bots.live)} computer tables playing "
                  f"(ready in {time.perf_counter() - started:.1f} s)", flush=True)
            before = bots.moves
            beside += await measure(host, port, args.seconds, args.gap_ms / 1000, seed=2 * round_ + 2)
            print(f"round {round_ + 1}: the computers played {bots.moves - before} moves meanwhile", flush=True)
    finally:
        await bots.stop()
        await watcher.close()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\nserver 127.0.0.1:{port} (separate process), {cores} cores, --bot-seconds {args.bot_seconds:g}, "
          f"{args.bot_tables} computer-vs-computer Othello tables at level 5 ({args.bot_tables} seats thinking at once)")
    print(summary("alone: move -> ok", alone))
    print(summary("bots: move -> ok", beside))
    print(f"p99 ratio (bots / alone): {p99(beside) / p99(alone):.2f}x  (target <= 1.5x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A game's move round trip alone and while computer seats think.")
    parser.add_argument("--seconds", type=float, default=8.0, help="how long each phase plays, in seconds (default: 8)")
    parser.add_argument("--gap-ms", type=float, default=10.0, help="pause after each move, in milliseconds (default: 10)")
    parser.add_argument("--rounds", type=int, default=3, help="alone/bots pairs of phases (default: 3)")
    parser.add_argument("--bot-tables", type=int, default=4, help="computer-vs-computer tables (default: 4)")
    parser.add_argument("--bot-seconds", type=float, default=1.0, help="the strongest level's thinking time (default: 1)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.gap_ms < 0 or args.rounds < 1 or args.bot_tables < 1:
        parser.error("--seconds must be positive, --gap-ms not negative, --rounds and --bot-tables at least 1")
    options = [*UNTHROTTLED, *ONE_ADDRESS, "--bot-seconds", str(args.bot_seconds), "--max-bots", str(2 * args.bot_tables)]
    server = ServerProcess(options=options)
    port = server.start()
    try:
        asyncio.run(run(args, port))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
