"""How long does one ``who`` page take with 10,000 players online?

Builds the server's own :class:`server.players.presence.Presence` over ``--players``
sessions (each holding a seat, so counted as online while away), half of
them claimed and rated in Othello blitz in a real SQLite database (read
through :class:`server.ratings.ratings.Ratings`, in a thread, as the server does),
and times ``who`` pages sorted by name and by rating. Prints the median and
worst time per page, in milliseconds (the worst is a page that read the
ratings again; they are reused for 2 s).

Usage::

    python benchmarks/who_page.py                  # 10,000 players, 50 pages each way
    python benchmarks/who_page.py --players 1000 --pages 20
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from protocol.messages import Who  # noqa: E402
from server.core.names import name_key  # noqa: E402
from server.players.presence import Presence  # noqa: E402
from server.ratings.ratings import Ratings  # noqa: E402
from server.core.session import Session  # noqa: E402
from server.storage.sqlite import SQLiteStore  # noqa: E402
from server.social.social import best_ratings_of  # noqa: E402


async def build(players: int, directory: str) -> tuple[Presence, SQLiteStore]:
    store = SQLiteStore.open(Path(directory) / "who.sqlite3")
    await store.start()
    insert = (
        "INSERT INTO ratings (name_key, name, game, family, rating, deviation, volatility, games, wins, draws, losses, updated)"
        " VALUES (?, ?, 'othello', 'blitz', ?, 80, 0.06, 5, 3, 0, 2, ?)"
    )
    by_name: dict[str, Session] = {}
    rows = []
    for i in range(players):
        session = Session(name=f"player{i:05d}", token=f"t{i}")
        session.seats[i + 1] = 0
        if i % 2 == 0:
            session.claimed = True
            rows.append((insert, (name_key(session.name), session.name, 1000 + (i * 7919) % 1500, time.time())))
        by_name[name_key(session.name)] = session
    await store.write(*rows)
    return Presence(by_name, {}, best_ratings_of(Ratings(store))), store


async def time_pages(presence: Presence, sort: str, pages: int, game: str | None) -> list[float]:
    took = []
    for page in range(pages):
        start = time.perf_counter()
        await presence.who(Session(name="asker", token="x"), Who(id=1, sort=sort, game=game, offset=page * 50, limit=50), [])
        took.append((time.perf_counter() - start) * 1000)
    return took


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        presence, store = await build(args.players, directory)
        try:
            for sort, game in (("name", None), ("name", "othello"), ("rating", "othello"), ("rating", None)):
                took = await time_pages(presence, sort, args.pages, game)
                print(f"who sort={sort:<6} game={game or '-':<7} {args.players} players: "
                      f"median {statistics.median(took):6.1f} ms, worst {max(took):6.1f} ms per page")
        finally:
            await store.close()


if __name__ == "__main__":
    asyncio.run(main())
