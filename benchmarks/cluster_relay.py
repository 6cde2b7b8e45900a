"""A relayed move against a local one: server CPU per move and move round trip, two ``parlour serve`` nodes on one Redis.

Two real nodes (``parlour serve --db postgresql://... --bus ... --node a|b``) share one
private ``redis-server`` and one private PostgreSQL database (a cluster needs one:
every move is committed there, as by any node). ``--games`` pairs of players play Othello flat out
(each side plays its first legal move as soon as it is its turn; a finished
game is followed by a new one), every table held by node a:

- **local**: both players connected to node a;
- **relayed**: both players connected to node b, so every request crosses
  Redis to node a and every reply and push crosses back.

Reports, per setup, the move round trip (``move`` sent to its ``ok``) p50 and
p99 in milliseconds, and the CPU of both nodes and Redis per move in
microseconds (from ``/proc``; the load generator's own CPU and PostgreSQL's are not counted).
Needs ``redis-server`` and ``postgresql`` (Debian's packages).

Usage::

    python benchmarks/cluster_relay.py                 # 10 games, 3,000 moves per setup
    python benchmarks/cluster_relay.py --games 2 --moves 500
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame  # noqa: E402
from tests.cluster.redis_server import start_for_benchmark as start_redis  # noqa: E402
from tests.pgserver import start_for_benchmark  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
WAIT_S = 10.0
"""How long a player waits for a push before the run is abandoned, in seconds."""


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Conn:
    """A raw protocol connection whose frames a reader task queues."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ids = iter(range(1, 1 << 30))
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        decoder = FrameDecoder(max_frame_bytes=1 << 22)
        while data := await self.reader.read(65536):
            for frame in decoder.feed(data):
                self.frames.put_nowait(frame)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        request_id = next(self.ids)
        self.writer.write(encode_frame({"type": kind, "id": request_id, **fields}))
        while (frame := await asyncio.wait_for(self.frames.get(), WAIT_S)).get("id") != request_id:
            pass
        return frame

    async def push(self, table: int, *kinds: str) -> dict[str, Any]:
        while True:
            try:
                frame = await asyncio.wait_for(self.frames.get(), WAIT_S)
            except asyncio.TimeoutError:
                raise RuntimeError(f"no {'/'.join(kinds)} for table {table} within {WAIT_S} s") from None
            if frame["type"] in kinds and frame.get("table") == table:
                return frame
            if frame["type"] == "error":
                raise RuntimeError(f"the server sent {frame}")

    def close(self) -> None:
        self.task.cancel()
        self.writer.close()


async def _connect(port: int, name: str) -> Conn:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    conn = Conn(reader, writer)
    assert (await conn.request("hello", version=PROTOCOL_VERSION, name=name))["type"] == "welcome"
    return conn


async def _game(host: Conn, players: list[Conn], rtts: list[float], budget: list[int]) -> None:
    """Games between ``players`` at tables ``host`` creates on node a, until the shared move ``budget`` is spent."""
    while budget[0] > 0:
        table = (await host.request("create_table", game="othello", seat=None))["table"]["id"]
        for seat, player in enumerate(players):
            while (reply := await player.request("join_table", table=table, seat=seat))["code" if "code" in reply else "type"] == "no_such_table":
                await asyncio.sleep(0.005)  # node b hears of node a's new table from the bus within milliseconds
            assert reply["type"] == "table_joined", reply
        await host.request("leave_table", table=table)
        views = [(await player.push(table, "game_started"))["view"] for player in players]
        while budget[0] > 0:
            seat = next((s for s, view in enumerate(views) if view.get("legal_moves")), None)
            if seat is None:
                break  # over
            budget[0] -= 1
            started = time.perf_counter()
            reply = await players[seat].request("move", table=table, move=views[seat]["legal_moves"][0])
            rtts.append(time.perf_counter() - started)
            assert reply["type"] == "ok", reply
            next_views = await _after_move(players, table)
            if next_views is None:
                break
            views = next_views
        for player in players:
            await player.request("leave_table", table=table)


async def _after_move(players: list[Conn], table: int) -> list[dict[str, Any]] | None:
    """Each player's view once one of them may move (a forced pass is one more ``moved``); ``None`` once the game is over."""
    while True:
        views = []
        for player in players:
            push = await player.push(table, "moved", "game_over")
            if push["type"] == "game_over" or push["view"].get("outcome") is not None:
                return None
            views.append(push["view"])
        if any(view.get("legal_moves") for view in views):
            return views


async def _measure(label: str, host_port: int, player_port: int, games: int, moves: int, pids: list[int]) -> dict[str, Any]:
    hosts = [await _connect(host_port, f"h{label[0]}{i}") for i in range(games)]
    pairs = [[await _connect(player_port, f"p{label[0]}{i}x"), await _connect(player_port, f"p{label[0]}{i}y")] for i in range(games)]
    await asyncio.sleep(1.5)  # node b's lobby knows node a's tables within a heartbeat
    warm: list[float] = []
    await asyncio.gather(*(_game(host, pair, warm, [20]) for host, pair in zip(hosts, pairs)))
    rtts: list[float] = []
    budget = [moves]
    cpu0 = sum(_cpu_s(pid) for pid in pids)
    await asyncio.gather(*(_game(host, pair, rtts, budget) for host, pair in zip(hosts, pairs)))
    cpu = sum(_cpu_s(pid) for pid in pids) - cpu0
    for conn in (*hosts, *(c for pair in pairs for c in pair)):
        conn.close()
    rtts.sort()
    return {
        "label": label,
        "moves": len(rtts),
        "p50_ms": statistics.median(rtts) * 1000,
        "p99_ms": rtts[int(len(rtts) * 0.99)] * 1000,
        "cpu_us": cpu / len(rtts) * 1e6,
    }


def _serve(redis_url: str, db: str, node: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "client.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--db", db, "--no-advertise",
         "--bus", redis_url, "--node", node, "--requests-per-s", "100000", "--request-burst", "100000",
         "--connections-per-address-per-s", "1000", "--connection-burst", "1000", "--log-level", "WARNING"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if match := re.search(r"listening on port (\d+)", line):
            return process, int(match[1])
    raise RuntimeError(f"node {node} did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--moves", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        redis = start_redis(Path(directory))
        postgres = start_for_benchmark("the nodes of a cluster share a PostgreSQL database")
        nodes = []
        try:
            db = postgres.create_database()
            nodes = [_serve(redis.url, db, "a"), _serve(redis.url, db, "b")]
            (a, port_a), (b, port_b) = nodes
            assert redis.process is not None
            pids = [a.pid, b.pid, redis.process.pid]
            results = [
                asyncio.run(_measure("local", port_a, port_a, args.games, args.moves, pids)),
                asyncio.run(_measure("relayed", port_a, port_b, args.games, args.moves, pids)),
            ]
        finally:
            for process, _ in nodes:
                process.terminate()
                process.wait(10)
            redis.stop()
            postgres.destroy()
    local = results[0]
    print(f"Othello moves, {args.games} games at once, tables on node a (CPU: both nodes and Redis)")
    print(f"{'players on':30} {'moves':>6} {'p50 ms':>7} {'p99 ms':>7} {'CPU µs/move':>12} {'× local CPU':>12} {'× local p99':>12}")
    for row in results:
        where = "node a (local)" if row["label"] == "local" else "node b (every move relayed)"
        print(f"{where:30} {row['moves']:6} {row['p50_ms']:7.2f} {row['p99_ms']:7.2f} {row['cpu_us']:12.0f} "
              f"{row['cpu_us'] / local['cpu_us']:12.2f} {row['p99_ms'] / local['p99_ms']:12.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
