"""What a watching browser costs the server, against a terminal spectator (issue 23).

Starts ``parlour serve --no-db --http`` in a child process (connection limits
lifted) and, from this process, two players and the watchers:

- ``cpu``: ``--moves`` Nimble moves are played at one table three times: with
  nobody watching, with ``--watchers`` terminal spectators (plain TCP
  connections that said ``hello`` and ``watch_table`` and read every byte),
  and with as many browsers (WebSockets on ``/ws/table/ID``, each reading
  every message). The server's CPU time over each run (every thread's, from
  ``/proc/<pid>/task/*/schedstat``) less the unwatched run's, divided by moves
  and watchers, is the cost of one move to one watcher; the ratio browser /
  spectator is the figure issue 23 asks to keep at or under 1.5.
- ``memory``: ``--idle`` idle browsers connect to a table, and the server's
  resident memory (``VmRSS``) before and after, per browser; then as many
  idle terminal spectators, the same way.

Each run waits until every watcher has received the last move before the
window closes. Linux only (``/proc``). Usage::

    python benchmarks/web_watchers.py
    python benchmarks/web_watchers.py --watchers 300 --moves 600 --idle 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from client.connection import Client  # noqa: E402
from protocol import FrameDecoder, encode_frame  # noqa: E402

LIFTED = [
    "--max-connections", "100000", "--max-connections-per-address", "100000",
    "--connections-per-address-per-s", "100000", "--connection-burst", "100000",
    "--requests-per-s", "100000", "--request-burst", "100000", "--max-tables-per-address", "100000",
]  # fmt: skip


def cpu_ns(pid: int) -> int:
    """Nanoseconds every thread of ``pid`` has spent on a CPU."""
    return sum(int(stat.read_text().split()[0]) for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"))


def rss_bytes(pid: int) -> int:
    """The resident memory of ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class ServerProcess:
    """``parlour serve --no-db --http 127.0.0.1:0`` on an ephemeral port, limits lifted."""

    def __init__(self) -> None:
        command = [sys.executable, "-m", "client.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--no-db",
                   "--no-advertise", "--http", "127.0.0.1:0", *LIFTED]  # fmt: skip
        self.popen = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.popen.stdout is not None
        self.port = self.http = 0
        for line in self.popen.stdout:
            if match := re.search(r"listening on port (\d+)", line):
                self.port = int(match[1])
            if match := re.search(r"http://127\.0\.0\.1:(\d+)/", line):
                self.http = int(match[1])
                break
        if not (self.port and self.http):
            raise RuntimeError("the server did not start")

    def stop(self) -> None:
        self.popen.terminate()
        self.popen.wait(10)


class Spectator:
    """A terminal spectator on a raw connection: says hello, watches a table, counts ``moved`` frames."""

    def __init__(self) -> None:
        self.moved = 0
        self.seen = asyncio.Event()
        self.target = 0

    async def open(self, port: int, name: str, table: int) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(encode_frame({"type": "hello", "id": 1, "version": 2, "name": name}))
        self.writer.write(encode_frame({"type": "watch_table", "id": 2, "table": table}))
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        decoder = FrameDecoder(max_frame_bytes=1 << 20)
        while data := await self.reader.read(65536):
            for frame in decoder.feed(data):
                if frame.get("type") == "moved":
                    self.moved += 1
                    if self.moved >= self.target:
                        self.seen.set()

    async def close(self) -> None:
        self.writer.close()
        self.task.cancel()


class Browser:
    """A browser's WebSocket on a table's feed, counting ``moved`` messages."""

    def __init__(self, http: aiohttp.ClientSession) -> None:
        self.http = http
        self.moved = 0
        self.seen = asyncio.Event()
        self.target = 0

    async def open(self, port: int, name: str, table: int) -> None:
        self.ws = await self.http.ws_connect(f"http://127.0.0.1:{port}/ws/table/{table}", max_msg_size=1 << 22)
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            self.moved += message.data.count('"type":"moved"')
            if self.moved >= self.target:
                self.seen.set()

    async def close(self) -> None:
        await self.ws.close()
        self.task.cancel()


async def played(server: ServerProcess, moves: int, watchers: list[Any], run: int) -> float:
    """Server CPU seconds for ``moves`` moves at a new table watched by ``watchers`` (not yet open)."""
    ann = await Client.connect("127.0.0.1", server.port, name=f"ann{run}")
    bob = await Client.connect("127.0.0.1", server.port, name=f"bob{run}")
    pawns = -(-moves // 60) + 1
    table = (await ann.create_table("nimble", {"board": [0] + [pawns] * 60})).table.id
    await bob.join_table(table)
    for i, watcher in enumerate(watchers):
        await watcher.open(server.http if isinstance(watcher, Browser) else server.port, f"w{run}x{i}", table)
        watcher.target = moves
    await asyncio.sleep(0.5)
    start = cpu_ns(server.popen.pid)
    players = (ann, bob)
    for ply in range(moves):
        square = 61 - ply % 60
        await players[ply % 2].move(table, f"{square}-1")
    await asyncio.gather(*(watcher.seen.wait() for watcher in watchers))
    spent = (cpu_ns(server.popen.pid) - start) / 1e9
    for watcher in watchers:
        await watcher.close()
    await ann.close()
    await bob.close()
    return spent


async def idle_memory(server: ServerProcess, count: int, kind: str, http: aiohttp.ClientSession) -> float:
    """Resident bytes per idle watcher of ``kind`` (``"browser"`` or ``"spectator"``)."""
    owner = await Client.connect("127.0.0.1", server.port, name=f"owner-{kind}")
    table = (await owner.create_table("othello")).table.id
    await asyncio.sleep(0.5)
    before = rss_bytes(server.popen.pid)
    watchers: list[Any] = [Browser(http) if kind == "browser" else Spectator() for _ in range(count)]
    for i, watcher in enumerate(watchers):
        await watcher.open(server.http if kind == "browser" else server.port, f"idle-{kind}{i}", table)
    await asyncio.sleep(1.0)
    after = rss_bytes(server.popen.pid)
    for watcher in watchers:
        await watcher.close()
    await owner.close()
    await asyncio.sleep(0.5)
    return (after - before) / count


async def main(args: argparse.Namespace) -> dict[str, Any]:
    server = ServerProcess()
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            rounds: list[dict[str, float]] = []
            for run in range(args.rounds):
                base = await played(server, args.moves, [], run * 3)
                spectators = await played(server, args.moves, [Spectator() for _ in range(args.watchers)], run * 3 + 1)
                browsers = await played(server, args.moves, [Browser(http) for _ in range(args.watchers)], run * 3 + 2)
                per = args.moves * args.watchers
                rounds.append({
                    "spectator_us": (spectators - base) / per * 1e6,
                    "browser_us": (browsers - base) / per * 1e6,
                    "unwatched_us_per_move": base / args.moves * 1e6,
                })  # fmt: skip
            spectator = statistics.median(r["spectator_us"] for r in rounds)
            browser = statistics.median(r["browser_us"] for r in rounds)
            result = {
                "moves": args.moves,
                "watchers": args.watchers,
                "rounds": rounds,
                "cpu_us_per_move_per_spectator": round(spectator, 2),
                "cpu_us_per_move_per_browser": round(browser, 2),
                "browser_over_spectator": round(browser / spectator, 2),
            }
            if args.idle:
                result["idle"] = args.idle
                result["rss_bytes_per_idle_browser"] = round(await idle_memory(server, args.idle, "browser", http))
                result["rss_bytes_per_idle_spectator"] = round(await idle_memory(server, args.idle, "spectator", http))
            return result
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=200, help="watchers per watched run (default 200)")
    parser.add_argument("--moves", type=int, default=300, help="moves per run (default 300)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three runs; medians are reported (default 3)")
    parser.add_argument("--idle", type=int, default=500, help="idle watchers for the memory figure, 0: none (default 500)")
    started = time.monotonic()
    print(json.dumps(asyncio.run(main(parser.parse_args())), indent=2))
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
