"""Move round-trip benchmark: how long a move takes to be accepted and seen.

Starts a real Parlour server in its own process (``python -m client.cli serve
--host 127.0.0.1 --port 0``), so the clients below do not share an event loop
with it, and plays Othello games of seeded random legal moves between pairs of
clients. For every move it measures, from the moment the request is written:

- ``ok``: until the mover's ``ok`` reply arrives;
- ``moved``: until the opponent receives the ``moved`` push.

Usage::

    python benchmarks/roundtrip.py                 # 2000 moves, one pair of clients
    python benchmarks/roundtrip.py --moves 5000 --games 4

``--moves`` is the total number of moves measured, shared among ``--games``
pairs of clients playing at once; each pair opens a new table whenever its
game ends. Prints the count, p50, p99 and mean in milliseconds, and the moves
per second over the whole run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from client import Client  # noqa: E402
from protocol import messages as m  # noqa: E402

_PORT_LINE = re.compile(r"listening on port (\d+)")

UNTHROTTLED = ["--requests-per-s", "1000000", "--request-burst", "1000000"]
"""Server flags that lift the per-connection request rate limit: these
benchmarks' clients move as fast as the server answers, far above what the
default limit (50 requests/s) allows one connection."""

ONE_ADDRESS = ["--connections-per-address-per-s", "1000000", "--connection-burst", "1000000", "--max-tables-per-address", "1000000"]
"""Server flags that lift the per-address limits on connection attempts and
tables: every benchmark client connects from 127.0.0.1, where a real server's
players would come from many addresses."""


class ServerProcess:
    """``parlour serve`` on 127.0.0.1 with a free port, in a child process.

    Args:
        launcher: how to start the ``parlour`` command (default ``python -m client.cli``).
        storage: the storage arguments (default ``--no-db``).
        options: more ``parlour serve`` flags (e.g. :data:`UNTHROTTLED`); default none.
        tree: the source tree it runs from (default this one; another checkout to compare against).
    """

    def __init__(
        self, launcher: list[str] | None = None, storage: list[str] | None = None, options: list[str] | None = None,
        tree: Path = ROOT,
    ) -> None:  # fmt: skip
        self.launcher = launcher or ["-m", "client.cli"]
        self.storage = storage or ["--no-db"]
        self.options = options or []
        self.tree = tree
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self, timeout_s: float = 20.0) -> int:
        """Start the server; return the port it reported.

        Raises:
            RuntimeError: it did not report its port within ``timeout_s`` seconds (it is stopped).
        """
        command = [
            sys.executable, *self.launcher, "serve", *self.storage,
            "--host", "127.0.0.1", "--port", "0", "--name", "bench", "--log-level", "WARNING", "--no-advertise",
            *self.options,
        ]  # fmt: skip
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if self.tree != ROOT:
            env["PYTHONPATH"] = str(self.tree)  # its packages, not this tree's installed ones
        self.proc = subprocess.Popen(command, cwd=self.tree, env=env, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            match = _PORT_LINE.search(line)
            if match:
                self.port = int(match[1])
                return self.port
        self.stop()
        raise RuntimeError("the server did not report its port")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # SIGTERM: the server closes its connections and exits
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Arrivals:
    """Reads a client's pushes and records when each ``moved`` arrives."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._waiting: dict[tuple[int, int], asyncio.Future[float]] = {}
        self._task = asyncio.create_task(self._run())

    def expect(self, table: int, ply: int) -> asyncio.Future[float]:
        """A future set to the arrival time of the ``moved`` of ``ply`` at ``table``."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting[(table, ply)] = future
        return future

    async def _run(self) -> None:
        async for event in self._client.events():
            if isinstance(event, m.Moved):
                arrived = time.perf_counter()
                future = self._waiting.pop((event.table, event.ply), None)
                if future is not None and not future.done():
                    future.set_result(arrived)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("connection closed"))

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def skip_forced_passes(state: games.State) -> games.State:
    """The state after the forced passes the server plays by itself (none: ``state``)."""
    while state.outcome is None and state.legal_moves() == ["pass"]:
        state = state.play("pass")
    return state


async def close_table(clients: list[Client], table: int, state: games.State) -> None:
    """End a benchmark game: resign it if it is still running, then both players leave."""
    if state.outcome is None:
        await clients[0].resign(table)
    for client in clients:
        await client.leave_table(table)


async def play_pair(
    host: str, port: int, index: int, moves: int, size: int, seed: int, ok_s: list[float], moved_s: list[float]
) -> int:
    """Play ``moves`` moves between two new clients; return the number of games started."""
    rng = random.Random(seed * 1_000_003 + index)
    othello = games.get("othello")
    clients = [
        await Client.connect(host, port, name=f"bench{index}a"),
        await Client.connect(host, port, name=f"bench{index}b"),
    ]
    arrivals = [Arrivals(client) for client in clients]
    played = tables = 0
    try:
        while played < moves:
            table = (await clients[0].create_table("othello", {"size": size}, seat=0)).table.id
            await clients[1].join_table(table, seat=1)
            tables += 1
            state = othello.new_state({"size": size})
            while state.outcome is None and played < moves:
                mover = state.to_move
                assert mover is not None
                move = rng.choice(state.legal_moves())  # never "pass": the server plays those
                after = state.play(move)
                seen = arrivals[1 - mover].expect(table, after.ply)
                start = time.perf_counter()
                await clients[mover].move(table, move, ply=state.ply)
                ok_s.append(time.perf_counter() - start)
                moved_s.append(await asyncio.wait_for(seen, 10) - start)
                played += 1
                state = after
                state = skip_forced_passes(state)
            await close_table(clients, table, state)
    finally:
        for arrival in arrivals:
            await arrival.stop()
        for client in clients:
            await client.close()
    return tables


def summary(label: str, samples_s: list[float]) -> str:
    ordered = sorted(samples_s)
    count = len(ordered)

    def rank(p: float) -> float:  # nearest-rank percentile
        return ordered[max(0, min(count - 1, int(round(p / 100 * count + 0.5)) - 1))]

    ms = 1000.0
    return (
        f"{label:<22} count={count:<6d} p50={rank(50) * ms:7.3f} ms  p99={rank(99) * ms:7.3f} ms  "
        f"mean={statistics.fmean(ordered) * ms:7.3f} ms"
    )


async def run(args: argparse.Namespace, host: str, port: int) -> None:
    ok_s: list[float] = []
    moved_s: list[float] = []
    shares = [args.moves // args.games + (1 if i < args.moves % args.games else 0) for i in range(args.games)]
    start = time.perf_counter()
    tables = await asyncio.gather(
        *(play_pair(host, port, i, share, args.size, args.seed, ok_s, moved_s) for i, share in enumerate(shares) if share)
    )
    elapsed = time.perf_counter() - start
    print(f"server 127.0.0.1:{port} (separate process); {args.games} pair(s) of clients, "
          f"othello {args.size}x{args.size}, seed {args.seed}, {sum(tables)} table(s)")
    print(summary("move -> ok", ok_s))
    print(summary("move -> opponent moved", moved_s))
    print(f"{'throughput':<22} {len(ok_s) / elapsed:,.0f} moves/s ({len(ok_s)} moves in {elapsed:.2f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure Parlour's move round-trip time against a real server.")
    parser.add_argument("--moves", type=int, default=2000, help="moves to measure in total (default: 2000)")
    parser.add_argument("--games", type=int, default=1, help="pairs of clients playing at once (default: 1)")
    parser.add_argument("--size", type=int, default=8, help="Othello board size (default: 8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random moves (default: 1)")
    parser.add_argument("--connect", metavar="HOST:PORT", help="use a running server instead of starting one")
    args = parser.parse_args(argv)
    if args.moves < 1 or args.games < 1:
        parser.error("--moves and --games must be at least 1")
    if args.connect:
        host, _, port_text = args.connect.rpartition(":")
        asyncio.run(run(args, host or "127.0.0.1", int(port_text)))
        return 0
    server = ServerProcess(options=UNTHROTTLED + ONE_ADDRESS)
    port = server.start()
    try:
        asyncio.run(run(args, "127.0.0.1", port))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
