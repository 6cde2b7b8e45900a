"""What claimed names cost: one scrypt hash, a claiming and a proving ``hello``, and other players' latency meanwhile.

Runs an in-process server on 127.0.0.1 (an ephemeral port, a SQLite file in
a temporary directory) and prints JSON:

- ``hash_ms``: median time of one ``server.players.passwords.hash_secret`` (n=2**14, r=8, p=1);
- ``hello_ms``: median ``hello`` round trip for a guest, a claim and a proof by secret;
- ``ping_ms_during_logins``: median and worst ``ping`` round trip of a player already
  connected, while ``--logins`` proving hellos arrive at once; beside it the same while
  as many guest hellos arrive (no hashing). scrypt runs in low-priority threads, so the
  two should be alike: the hellos' own work on the event loop, not the hashes, sets them.

Usage: ``python benchmarks/logins.py [--logins 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client import Client  # noqa: E402
from server.players.account_limits import AccountLimits  # noqa: E402
from server.app import Server, ServerConfig  # noqa: E402
from server.net.limits import Limits  # noqa: E402
from server.players.passwords import hash_secret  # noqa: E402


PING_EVERY_S = 0.025
"""The watcher's pause between pings: below the server's 50 requests a second, so the client's own pacing never delays one."""


def _ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 2)


async def _timed_hello(port: int, name: str, **options: object) -> tuple[float, Client]:
    start = time.perf_counter()
    client = await Client.connect("127.0.0.1", port, name=name, **options)  # type: ignore[arg-type]
    return time.perf_counter() - start, client


async def _pings_during(watcher: Client, hellos: list[Any]) -> list[float]:
    """Ping from ``watcher`` again and again while ``hellos`` run at once; return the round trips, in seconds."""
    burst = [asyncio.ensure_future(hello) for hello in hellos]
    pings = []
    while not all(task.done() for task in burst):
        start = time.perf_counter()
        await watcher.ping()
        pings.append(time.perf_counter() - start)
        await asyncio.sleep(PING_EVERY_S)
    for result in await asyncio.gather(*burst, return_exceptions=True):
        if isinstance(result, tuple):
            await result[1].close()
    return pings


def _summary(pings: list[float], hellos: int) -> dict[str, float]:
    return {"hellos": hellos, "pings": len(pings), "median": _ms(pings), "worst": round(max(pings) * 1000, 2)}


async def measure(logins: int) -> dict[str, object]:
    """Run the measurements; return the numbers described in the module's doc."""
    hashes = []
    for _ in range(5):
        start = time.perf_counter()
        hash_secret(secrets.token_urlsafe(32))
        hashes.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as directory:
        limits = Limits(connections_per_address_per_s=10_000, connection_burst=10_000, max_connections_per_address=1000)
        server = Server(ServerConfig(host="127.0.0.1", port=0, db_path=str(Path(directory) / "bench.db"), limits=limits))
        server.accounts.limits = AccountLimits(claims_per_address=10_000)
        await server.start()
        try:
            times: dict[str, list[float]] = {"guest": [], "claim": [], "prove": []}
            owned = {f"owner{i}": secrets.token_urlsafe(32) for i in range(max(5, logins))}
            for i, (name, secret) in enumerate(owned.items()):
                if i < 5:
                    took, client = await _timed_hello(server.port, f"guest{i}")
                    times["guest"].append(took)
                    await client.close()
                took, client = await _timed_hello(server.port, name, claim=True, secret=secret)
                times["claim"].append(took)
                await client.close()
                if i < 5:
                    took, client = await _timed_hello(server.port, name, secret=secret)
                    times["prove"].append(took)
                    await client.close()
            watcher = await Client.connect("127.0.0.1", server.port, name="watcher")
            idle = []
            for _ in range(20):
                start = time.perf_counter()
                await watcher.ping()
                idle.append(time.perf_counter() - start)
            guests = await _pings_during(watcher, [_timed_hello(server.port, f"visitor{i}") for i in range(logins)])
            pings = await _pings_during(watcher, [_timed_hello(server.port, name, secret=secret) for name, secret in list(owned.items())[:logins]])
            await watcher.close()
        finally:
            await server.close()
    return {
        "hash_ms": _ms(hashes),
        "hello_ms": {kind: _ms(values) for kind, values in times.items()},
        "idle_ping_ms": _ms(idle),
        "ping_ms_during_guest_hellos": _summary(guests, logins),
        "ping_ms_during_logins": _summary(pings, logins),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=20, help="proving hellos sent at once (default 20)")
    print(json.dumps(asyncio.run(measure(parser.parse_args().logins)), indent=1))


if __name__ == "__main__":
    main()
