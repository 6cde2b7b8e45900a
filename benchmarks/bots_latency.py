"""Does a thinking computer slow the server down? A game's move round trip alone and beside busy computer seats.

Starts one real Parlour server in its own process (``--bot-seconds`` 1: the
strongest level thinks a second a move) and, in this process, plays Othello
games of seeded random legal moves between two clients (as
``benchmarks/roundtrip.py`` does, but paced: a pause of ``--gap-ms`` after
each move, as a well-behaved game), measuring each move's round trip (write
to ``ok``). Phases of ``--seconds`` alternate in one run:

- **alone**: only that game;
- **bots**: the same while ``--bot-tables`` clients play Othello against the
  computer at level 5, each answering the computer's move at once, so four
  tables keep four computer seats thinking nearly all the time; the games are
  resigned when the phase ends, so the next **alone** phase is alone.

A third client pings the server every ``--ping-ms`` throughout both phases
(issue 22's target: pings answered in under 100 ms while five computers
think: ``--bot-tables 5``), and the feeding clients time each computer move
from their own move's ``ok`` to the computer's ``moved`` (its budget, plus
any wait for a free worker: with fewer workers than tables the moves queue).

Prints p50 and p99 of each phase and the ratio of the p99s (the issue's
target: at most 1.5x), the pings' p50, p99 and maximum per phase, and the
computers' move times. The computers think in worker processes at the
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
from client import Client, ServerError  # noqa: E402
from protocol import messages as m  # noqa: E402
from roundtrip import ONE_ADDRESS, UNTHROTTLED, ServerProcess, close_table, skip_forced_passes, summary  # noqa: E402


class ComputerOpponents:
    """``count`` clients each playing Othello against the computer at ``level``, answering at once.

    A client moves the moment the computer has moved (and opens a new table
    when a game ends), so each keeps one computer seat thinking nearly all
    the time; :meth:`stop` resigns every game, so the computers stop too.
    """

    def __init__(self, host: str, port: int, count: int, level: int, seed: int) -> None:
        self.host, self.port = host, port
        self.count = count
        self.level = level
        self.moves = 0  # the computers' moves seen
        self.move_s: list[float] = []  # each computer move: our move's ok to its moved, in seconds
        self._rng = random.Random(seed)
        self._clients: list[Client] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._tables: dict[Client, int] = {}  # each client's current table
        self._round = 0

    async def start(self) -> None:
        """Start the games and wait until each computer has moved once (the workers run)."""
        self._round += 1
        before = self.moves
        for index in range(self.count):
            client = await Client.connect(self.host, self.port, name=f"feeder{self._round}x{index}")
            self._clients.append(client)
            self._tasks.append(asyncio.create_task(self._play(client)))
        while self.moves < before + self.count:
            for task in self._tasks:
                if task.done():
                    task.result()  # a game that failed: say why
            await asyncio.sleep(0.05)

    async def _play(self, client: Client) -> None:
        while True:
            joined = await client.request(
                m.CreateTable, game="othello", options={"size": 8}, seat=0, computer=[m.ComputerSeat(seat=1, level=self.level)]
            )
            assert isinstance(joined, m.TableJoined), joined
            self._tables[client] = joined.table.id
            view = joined.view
            answered = None
            while True:
                if view.get("to_move") == 0 and view.get("legal_moves"):
                    await client.move(joined.table.id, self._rng.choice(view["legal_moves"]))
                    answered = time.perf_counter()
                event = await client.next_event((m.Moved, m.GameOver), timeout_s=60)
                if isinstance(event, m.GameOver):
                    break
                assert isinstance(event, m.Moved)
                if event.seat == 1:
                    self.moves += 1
                    if answered is not None:
                        self.move_s.append(time.perf_counter() - answered)
                    answered = None
                view = event.view
            await client.leave_table(joined.table.id)

    async def stop(self) -> None:
        """Resign every game, then give the moves still being thought out time to end."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for client in self._clients:
            table = self._tables.get(client)
            if table is not None:
                try:
                    await client.resign(table)
                except ServerError:  # that game was over already
                    pass
            await client.close()
        self._clients.clear()
        self._tasks.clear()
        self._tables.clear()
        await asyncio.sleep(1.5)


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


async def ping_until(host: str, port: int, done: asyncio.Event, every_s: float, name: str) -> list[float]:
    """Ping the server every ``every_s`` until ``done`` is set; return each ping's round trip in seconds."""
    client = await Client.connect(host, port, name=name)
    round_trips: list[float] = []
    try:
        while not done.is_set():
            sent = time.perf_counter()
            await client.ping()
            round_trips.append(time.perf_counter() - sent)
            try:
                await asyncio.wait_for(done.wait(), every_s)
            except asyncio.TimeoutError:
                pass
    finally:
        await client.close()
    return round_trips


async def measure_with_pings(host: str, port: int, seconds: float, gap_s: float, seed: int, ping_s: float
                             ) -> tuple[list[float], list[float]]:
    """:func:`measure` with a pinging client beside it: (move round trips, ping round trips), in seconds."""
    done = asyncio.Event()
    pinging = asyncio.create_task(ping_until(host, port, done, ping_s, f"pinger{seed}"))
    try:
        moves = await measure(host, port, seconds, gap_s, seed)
    finally:
        done.set()
    return moves, await pinging


def ping_summary(label: str, samples_s: list[float]) -> str:
    """p50, p99 and the longest of ``samples_s``, in milliseconds."""
    return f"{summary(label, samples_s)}  max={max(samples_s) * 1000:7.3f} ms"


def p99(samples_s: list[float]) -> float:
    ordered = sorted(samples_s)
    return ordered[max(0, min(len(ordered) - 1, int(round(0.99 * len(ordered) + 0.5)) - 1))]


async def run(args: argparse.Namespace, port: int) -> None:
    host = "127.0.0.1"
    alone: list[float] = []
    beside: list[float] = []
    pings_alone: list[float] = []
    pings_beside: list[float] = []
    bots = ComputerOpponents(host, port, args.bot_tables, level=5, seed=7)
    for round_ in range(args.rounds):
        moves, pings = await measure_with_pings(host, port, args.seconds, args.gap_ms / 1000, 2 * round_ + 1, args.ping_ms / 1000)
        alone += moves
        pings_alone += pings
        started = time.perf_counter()
        await bots.start()
        before = bots.moves
        print(f"round {round_ + 1}: {args.bot_tables} computers thinking (ready in {time.perf_counter() - started:.1f} s)", flush=True)
        try:
            moves, pings = await measure_with_pings(host, port, args.seconds, args.gap_ms / 1000, 2 * round_ + 2,
                                                    args.ping_ms / 1000)
            beside += moves
            pings_beside += pings
        finally:
            moved = bots.moves - before
            await bots.stop()
        print(f"round {round_ + 1}: the computers played {moved} moves meanwhile", flush=True)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"\nserver 127.0.0.1:{port} (separate process), {cores} cores, --bot-seconds {args.bot_seconds:g}, "
          f"{args.bot_tables} computer seats at level 5 thinking at once beside the measured game")
    print(summary("alone: move -> ok", alone))
    print(summary("bots: move -> ok", beside))
    print(f"p99 ratio (bots / alone): {p99(beside) / p99(alone):.2f}x  (target <= 1.5x)")
    print(ping_summary("alone: ping", pings_alone))
    print(ping_summary("bots: ping", pings_beside))
    print(f"pings over 100 ms beside the computers: {sum(t > 0.1 for t in pings_beside)} of {len(pings_beside)}")
    if bots.move_s:
        print(summary("computer move", bots.move_s) + f"  max={max(bots.move_s):.3f} s  "
              f"(budget {args.bot_seconds:g} s; {args.bot_tables} tables share the workers)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A game's move round trip alone and while computer seats think.")
    parser.add_argument("--seconds", type=float, default=8.0, help="how long each phase plays, in seconds (default: 8)")
    parser.add_argument("--gap-ms", type=float, default=10.0, help="pause after each move, in milliseconds (default: 10)")
    parser.add_argument("--rounds", type=int, default=3, help="alone/bots pairs of phases (default: 3)")
    parser.add_argument("--bot-tables", type=int, default=4, help="computer seats thinking at once, one per table (default: 4)")
    parser.add_argument("--ping-ms", type=float, default=50.0, help="pause between two pings of the pinging client (default: 50)")
    parser.add_argument("--bot-seconds", type=float, default=1.0, help="the strongest level's thinking time (default: 1)")
    parser.add_argument("--bot-workers", type=int, help="the server's worker processes (default: the server's, one per core)")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.gap_ms < 0 or args.rounds < 1 or args.bot_tables < 1 or args.ping_ms <= 0:
        parser.error("--seconds and --ping-ms must be positive, --gap-ms not negative, --rounds and --bot-tables at least 1")
    options = [*UNTHROTTLED, *ONE_ADDRESS, "--bot-seconds", str(args.bot_seconds), "--max-bots", str(args.bot_tables)]
    if args.bot_workers is not None:
        options += ["--bot-workers", str(args.bot_workers)]
    server = ServerProcess(options=options)
    port = server.start()
    try:
        asyncio.run(run(args, port))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
