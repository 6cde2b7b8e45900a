"""A table carries a seed only where its setup is drawn from one: on the wire (create, lobby) and in the database.

Othello, Hexapawn, Morris and Ming Mang have no chance in their setup, nor has a
Nimble table with a ``board``: their tables have no seed, drawn or given.
Nimble's random setup and Tactego keep theirs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from client import Client

NO_CHANCE = [("othello", {}, None), ("hexapawn", {}, None), ("morris", {}, None), ("mingmang", {}, None),
             ("nimble", {"board": [0, 2, 1]}, None), ("othello", {"size": 6}, "given")]  # fmt: skip
WITH_CHANCE = [("nimble", {}, None), ("tactego", {"hidden": False}, None), ("nimble", {}, "given")]


async def test_only_a_setup_with_chance_has_a_seed_on_the_wire_and_in_storage(configured_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    server = await configured_server(db_path=str(db))
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    created = {}
    for game, options, seed in NO_CHANCE + WITH_CHANCE:
        joined = await ann.create_table(game, options, seed=seed)  # waiting for a second player
        created[joined.table.id] = (game, options, seed, joined.table.seed)
    listed = {table.id: table.seed for table in await ann.list_tables()}
    await ann.close()
    await server.close()
    with sqlite3.connect(db) as connection:
        stored = dict(connection.execute("SELECT id, seed FROM tables").fetchall())
    for table, (game, options, given, sent) in created.items():
        if (game, options, given) in NO_CHANCE:
            assert sent is None and listed[table] is None and stored[table] is None, (game, options, given)
        else:
            assert sent is not None and listed[table] == sent and stored[table] == str(sent), (game, options, given)
            assert given is None or sent == given
