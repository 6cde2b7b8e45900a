"""How long does listing a lobby of 1,000 tables take on one node, and on two nodes sharing Redis?

Runs in-process servers on real sockets: one node with the local bus holding
every table; one node on Redis holding every table; two nodes on Redis
holding half each (the client on the first lists both halves: the second's
come from the first node's mirror of it). For each, one client pages
through the whole lobby (``list_tables``, 100 tables a page, following
``next``) ``--runs`` times. Prints the median and p99 wall time of a full
listing, the CPU of this process (every node) plus Redis's per listing,
and the idle CPU per second the cluster spends keeping the lobby in step
(heartbeats, snapshots). The nodes on Redis share a private PostgreSQL database,
as a cluster must (its CPU is not counted). Needs ``redis-server`` and ``postgresql`` (Debian's packages).

Usage::

    python benchmarks/cluster_lobby.py                 # 1,000 tables, 200 runs
    python benchmarks/cluster_lobby.py --tables 200 --runs 50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from server.app import Server, ServerConfig  # noqa: E402
from server.net.limits import Limits  # noqa: E402
from tests.cluster.redis_server import RedisServer  # noqa: E402
from tests.pgserver import start_for_benchmark  # noqa: E402
from tests.server.conftest import Raw  # noqa: E402

LIMITS = Limits(max_tables_per_client=1000, max_tables_per_address=1000, requests_per_s=10_000.0, request_burst=10_000)
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    """User + system CPU of process ``pid`` so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def _connect(server: Server, name: str) -> Raw:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    conn = Raw(reader, writer)
    assert (await conn.hello(name))["type"] == "welcome"
    return conn


async def _fill(server: Server, name: str, count: int) -> Raw:
    conn = await _connect(server, name)
    for _ in range(count):
        reply = await conn.request("create_table", game="nimble", seat=None)
        assert reply["type"] == "table_joined", reply
    return conn


async def _list_all(conn: Raw) -> int:
    after, seen = None, 0
    while True:
        reply = await conn.request("list_tables", limit=100, **({} if after is None else {"after": after}))
        seen += len(reply["tables"])
        after = reply["next"]
        if after is None:
            return seen


async def _measure(label: str, nodes: list[Server], tables: int, runs: int, redis_pid: int | None) -> dict[str, Any]:
    per_node = tables // len(nodes)
    holders = [await _fill(node, f"filler{i}", per_node) for i, node in enumerate(nodes)]
    lister = await _connect(nodes[0], "lister")
    deadline = time.monotonic() + 30
    while await _list_all(lister) < per_node * len(nodes):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{label}: the lobby never showed every table")
        await asyncio.sleep(0.1)
    walls, cpus = [], []
    for _ in range(runs):
        cpu0 = time.process_time() + (_cpu_s(redis_pid) if redis_pid else 0.0)
        wall0 = time.perf_counter()
        assert await _list_all(lister) == per_node * len(nodes)
        walls.append(time.perf_counter() - wall0)
        cpus.append(time.process_time() + (_cpu_s(redis_pid) if redis_pid else 0.0) - cpu0)
    idle0 = time.process_time() + (_cpu_s(redis_pid) if redis_pid else 0.0)
    await asyncio.sleep(5.0)
    idle = (time.process_time() + (_cpu_s(redis_pid) if redis_pid else 0.0) - idle0) / 5.0
    for conn in (*holders, lister):
        await conn.close()
    walls.sort()
    return {
        "label": label,
        "median_ms": statistics.median(walls) * 1000,
        "p99_ms": walls[min(len(walls) - 1, int(len(walls) * 0.99))] * 1000,
        "cpu_ms": statistics.median(cpus) * 1000,
        "idle_cpu_pct": idle * 100,
    }


async def _run(tables: int, runs: int) -> list[dict[str, Any]]:
    results = []
    single = Server(ServerConfig(host="127.0.0.1", port=0, limits=LIMITS))
    await single.start()
    results.append(await _measure("one node, local bus", [single], tables, runs, None))
    await single.close()
    with tempfile.TemporaryDirectory() as directory:
        redis = RedisServer(_redis_binary(), Path(directory))
        redis.start()
        postgres = start_for_benchmark("the nodes of a cluster share a PostgreSQL database")
        try:
            assert redis.process is not None
            for count in (1, 2):
                redis.flush()
                db = postgres.create_database()
                nodes = [
                    Server(ServerConfig(host="127.0.0.1", port=0, limits=LIMITS, db_path=db, bus=redis.url, node=f"n{i}")) for i in range(count)
                ]
                for node in nodes:
                    await node.start()
                label = "one node on Redis" if count == 1 else "two nodes on Redis (half the tables on the other)"
                results.append(await _measure(label, nodes, tables, runs, redis.process.pid))
                for node in nodes:
                    await node.close()
        finally:
            redis.stop()
            postgres.destroy()
    return results


def _redis_binary() -> str:
    import shutil

    path = shutil.which("redis-server")
    if path is None:
        raise SystemExit("redis-server is not installed (apt-get install -y redis-server)")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    results = asyncio.run(_run(args.tables, args.runs))
    base = results[0]["median_ms"]
    print(f"Listing a lobby of {args.tables} tables ({args.runs} runs; CPU: every node in this process, plus Redis)")
    print(f"{'setup':52} {'median ms':>10} {'p99 ms':>8} {'CPU ms':>7} {'× one node':>11} {'idle CPU %':>11}")
    for row in results:
        print(f"{row['label']:52} {row['median_ms']:10.2f} {row['p99_ms']:8.2f} {row['cpu_ms']:7.2f} {row['median_ms'] / base:11.2f} {row['idle_cpu_pct']:11.2f}")


if __name__ == "__main__":
    main()
