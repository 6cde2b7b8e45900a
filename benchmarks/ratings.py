"""What ratings cost: a Glicko-2 update, reading a rating, finger, leaderboard pages, and the lobby's TableInfo bytes.

Usage: ``python benchmarks/ratings.py [--players N]``. Fills a fresh SQLite
file (in a temporary directory) with N players rated in two families of one
game, as a server would have stored them, and times the server's own reads
(:class:`server.ratings.ratings.Ratings`). Prints one line per measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol import messages as m  # noqa: E402
from server.ratings.glicko2 import Rating as Glicko, rate_game  # noqa: E402
from server.ratings.ratings import Ratings  # noqa: E402
from server.storage.sqlite import SQLiteStore  # noqa: E402
from server.tables.table import Table  # noqa: E402


def per_call(action: Callable[[int], Any], count: int) -> float:
    """Seconds per call of ``action(i)`` over ``count`` calls."""
    start = time.perf_counter()
    for i in range(count):
        action(i)
    return (time.perf_counter() - start) / count


def table_info_bytes() -> tuple[int, int, int]:
    """MessagePack bytes of a lobby TableInfo: without the ``ratings`` key, unrated, rated with two players."""
    table = Table.create(1, "othello", {}, None)
    wire = msgspec.to_builtins(table.lobby_info(), enc_hook=m.wire_enc_hook)
    unrated = len(msgspec.msgpack.encode(wire))
    del wire["ratings"]
    without = len(msgspec.msgpack.encode(wire))
    table.rated, table.seat_names = True, ["ann", "bob"]
    table.seat_ratings = [m.SeatRating(rating=1662, provisional=True), m.SeatRating(rating=1500)]
    rated = len(msgspec.msgpack.encode(msgspec.to_builtins(table.lobby_info(), enc_hook=m.wire_enc_hook)))
    return without, unrated, rated


async def fill(store: SQLiteStore, players: int, rng: random.Random) -> None:
    now = time.time()
    rows = [
        (
            "INSERT INTO ratings VALUES (?, ?, 'othello', ?, ?, ?, 0.06, 10, 5, 0, 5, ?)",
            (f"p{i}", f"P{i}", family, rng.gauss(1500, 200), rng.uniform(45, 200), now - rng.uniform(0, 1e7)),
        )
        for i in range(players)
        for family in ("blitz", "rapid")
    ]
    await store.write(*rows)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000, help="players rated in two families each (default 10000)")
    args = parser.parse_args()
    rng = random.Random(1)
    without, unrated, rated = table_info_bytes()
    print(f"lobby TableInfo: {without} bytes without the ratings key, {unrated} unrated, {rated} rated with two players")
    print(f"glicko2.rate_game: {per_call(lambda i: rate_game(Glicko(1500 + i % 300, 80), Glicko(1600, 120), 1.0), 20_000) * 1e6:.1f} us")
    with tempfile.TemporaryDirectory() as directory:
        store = SQLiteStore.open(os.path.join(directory, "ratings.sqlite3"), synchronous="OFF")
        await store.start()
        await fill(store, args.players, rng)
        ratings = Ratings(store)
        rows = 2 * args.players
        print(f"Ratings.get, first read (SQLite): {per_call(lambda i: ratings.get(f'p{i}', 'othello', 'blitz'), 1000) * 1e6:.1f} us")
        print(f"Ratings.get, cached: {per_call(lambda i: ratings.get(f'p{i}', 'othello', 'blitz'), 1000) * 1e6:.1f} us")
        print(f"Ratings.finger: {per_call(lambda i: ratings.finger(f'p{i}', 'x'), 1000) * 1e6:.0f} us")
        for family in ("blitz", None):
            seconds = per_call(lambda i: ratings.leaderboard("othello", family, 21, (i % 50) * 20), 50)
            print(f"Ratings.leaderboard family={family}, {rows} ratings: {seconds * 1e3:.2f} ms per page of 20 (pages 1 to 50)")
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
