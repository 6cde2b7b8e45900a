"""A stored table that cannot be restored is set aside; every other table comes back and is playable.

A real database (an SQLite file, then a PostgreSQL database) is damaged through
a separate connection between two real server starts: a move the engine refuses, and options that
are not JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import time

import pytest

from client import Client
from protocol import messages as m
from server import archive_cli
from server.app import Server, ServerConfig

from tests.pgserver import run_sql

from .conftest import TIMEOUT_S


def config(db: str) -> ServerConfig:
    return ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=str(db))


async def play_three_tables(db: str) -> dict[str, str]:
    """Tables 1 to 3, each othello with d3 played (table 3 also c3); return each player's token by name."""
    server = Server(config(db))
    await server.start()
    clients: list[Client] = []
    try:
        for table_id in (1, 2, 3):
            black = await Client.connect("127.0.0.1", server.port, name=f"black{table_id}")
            white = await Client.connect("127.0.0.1", server.port, name=f"white{table_id}")
            clients += [black, white]
            assert (await black.create_table("othello", seat=0)).table.id == table_id
            await white.join_table(table_id)
            await black.move(table_id, "d3")
        await white.move(3, "c3")
        return {client.name: client.token for client in clients}
    finally:
        await server.close()
        for client in clients:
            await client.close()


def damage(db: str) -> None:
    run_sql(db, "UPDATE moves SET move = 'z9' WHERE table_id = 1 AND ply = 1")
    run_sql(db, "UPDATE tables SET options = '{not json' WHERE id = 2")


async def test_damaged_tables_are_set_aside_and_the_others_play_on(any_db: str, caplog: pytest.LogCaptureFixture) -> None:
    db = any_db
    tokens = await play_three_tables(db)
    damage(db)

    caplog.set_level(logging.WARNING, logger="server.app")
    server = Server(config(db))
    await server.start()
    try:
        assert sorted(server.tables) == [3]
        errors = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]
        assert any(message.startswith("table 1 cannot be restored and is set aside") and "z9" in message for message in errors), errors
        assert any(message.startswith("table 2 cannot be restored and is set aside") and "JSONDecodeError" in message for message in errors), errors

        black = await Client.connect("127.0.0.1", server.port, name="black3", token=tokens["black3"])
        white = await Client.connect("127.0.0.1", server.port, name="white3", token=tokens["white3"])
        try:
            assert [table.id for table in await black.list_tables()] == [3]
            resumed = await black.next_event(m.Resumed, timeout_s=TIMEOUT_S)
            assert resumed.moves == ["d3", "c3"]
            await black.move(3, "c4")
            moved = await white.next_event(m.Moved, timeout_s=TIMEOUT_S)
            assert (moved.move, moved.ply) == ("c4", 3)
            assert await black.list_archive() == [], "a table set aside is not in the archive"
            with pytest.raises(Exception, match="no finished game 1"):
                await black.get_record(1)
            fresh = await black.create_table("othello", seat=0)
            assert fresh.table.id == 4, "the ids of tables set aside are not given out again"
        finally:
            await black.close()
            await white.close()
    finally:
        await server.close()

    rows = dict(run_sql(db, "SELECT id, outcome FROM tables WHERE id IN (1, 2)"))
    kept = run_sql(db, "SELECT move FROM moves WHERE table_id = 1")
    [(options,)] = run_sql(db, "SELECT options FROM tables WHERE id = 2")
    for table_id in (1, 2):
        set_aside = json.loads(rows[table_id])["set_aside"]
        assert set_aside["status"] == "playing" and set_aside["reason"]
    assert kept == [("z9",)] and options == "{not json", "the rows are kept as they were"

    out, err = io.StringIO(), io.StringIO()
    assert archive_cli.run(argparse.Namespace(db=db, export=2, limit=50, offset=0), out, err) == 1
    assert err.getvalue().startswith("Cannot read the archive: table 2: its stored values cannot be read back (JSONDecodeError")
    assert archive_cli.run(argparse.Namespace(db=db, export=1, limit=50, offset=0), out, err) == 0, "its data can be exported"

    caplog.clear()
    again = Server(config(db))
    await again.start()
    try:
        assert sorted(again.tables) == [3, 4]
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "tables set aside are not tried again"
    finally:
        await again.close()


async def test_a_move_whose_table_is_gone_takes_down_no_start_and_no_other_table(any_db: str, caplog: pytest.LogCaptureFixture) -> None:
    """PostgreSQL's moves keep no foreign key (schema step 12): a moves row without its table is ignored, never loaded."""
    db = any_db
    tokens = await play_three_tables(db)
    run_sql(db, "INSERT INTO moves (table_id, ply, seat, move, forced, at) VALUES (9, 1, 0, 'd3', 0, 1.0), (9, 2, 1, 'z9', 0, 2.0)")

    caplog.set_level(logging.WARNING, logger="server.app")
    server = Server(config(db))
    await server.start()
    try:
        assert sorted(server.tables) == [1, 2, 3]
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "nothing is set aside"
        black = await Client.connect("127.0.0.1", server.port, name="black3", token=tokens["black3"])
        white = await Client.connect("127.0.0.1", server.port, name="white3", token=tokens["white3"])
        try:
            assert (await black.next_event(m.Resumed, timeout_s=TIMEOUT_S)).moves == ["d3", "c3"]
            await black.move(3, "c4")
            assert (await white.next_event(m.Moved, timeout_s=TIMEOUT_S)).ply == 3
            assert await black.list_archive() == []
            with pytest.raises(Exception, match="no finished game 9"):
                await black.get_record(9)
        finally:
            await black.close()
            await white.close()
    finally:
        await server.close()
    assert run_sql(db, "SELECT count(*) FROM moves WHERE table_id = 9") == [(2,)], "the row is left as it was"


async def test_a_timed_game_resumes_with_the_clocks_of_its_last_move(any_db: str) -> None:
    db = any_db
    server = Server(config(db))
    await server.start()
    black = await Client.connect("127.0.0.1", server.port, name="black")
    white = await Client.connect("127.0.0.1", server.port, name="white")
    try:
        table = (await black.create_table("othello", seat=0, time_control="1+2")).table.id
        await white.join_table(table)
        await black.move(table, "d3")
        for client in (black, white):
            await client.next_event(m.Moved, timeout_s=TIMEOUT_S)
        await white.move(table, "c3")
        moved = await black.next_event(m.Moved, timeout_s=TIMEOUT_S)
    finally:
        await server.close()
        await black.close()
        await white.close()
    assert moved.clock["running"] == 0
    assert run_sql(db, "SELECT clocks FROM tables") == [(None,)], "a move updated the table row"
    [stored] = run_sql(db, "SELECT seat, clock_ms, other_ms, running FROM moves WHERE ply = 2")
    assert stored[0] == 1 and stored[3] == 0 and stored[1] == moved.clock["remaining_ms"][1]

    server = Server(config(db))
    await server.start()
    try:
        clock = server.tables[table].clock
        assert clock is not None and clock.running == 0
        remaining = clock.snapshot(time.monotonic())["remaining_ms"]
        assert remaining[1] == stored[1], "the waiting seat's time is the stored one"
        assert stored[2] - 5_000 < remaining[0] <= stored[2], "the running seat resumes with its stored time"
    finally:
        await server.close()
