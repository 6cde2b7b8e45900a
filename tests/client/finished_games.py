"""A finished game on a real server, for tests of the archive's exports (line client and app)."""

from __future__ import annotations

from client import Client


async def finished(port: int, game: str, options: dict | None = None) -> int:
    """A finished ``game`` table on the server at 127.0.0.1:``port``; returns its id.

    ann (seat 0) and bob play c2 b2 at Othello (nothing at another game), then bob resigns.
    """
    ann = await Client.connect("127.0.0.1", port, name="ann")
    bob = await Client.connect("127.0.0.1", port, name="bob")
    try:
        table = (await ann.create_table(game, options or {})).table.id
        await bob.join_table(table)
        if game == "othello":
            await ann.move(table, "c2")
            await bob.move(table, "b2")
        await bob.resign(table)
    finally:
        await ann.close()
        await bob.close()
    return table
