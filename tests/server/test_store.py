"""Tests of the SQLite store, on real database files: schema, migrations, group commit,
durability across SIGKILL of a real process, and the ``parlour games`` command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import queue
import random
import select
import signal
import logging
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, AsyncIterator

import psycopg
import pytest

import games
from games.record import format_record, parse_record, replay
from server import archive_cli
from server.storage import schema as schema_module
from server.storage.opening import open_store
from server.storage.rows import MoveRow, StoredTable, TableRow, iso_utc
from server.storage.schema import APPLICATION_ID, Migration, SCHEMA_VERSION, is_disk_full
from server.storage.sqlite import SQLiteStore, default_db_path
from server.storage.statements import append_move_sql, takeback_clocks_sql, truncate_moves_sql, update_table_sql
from server.storage.store import SchemaError, Store, StoreError

REPO = Path(__file__).resolve().parents[2]
T0 = 1_714_564_800.0  # 2024-05-01T12:00:00Z


def table_row(table_id: int = 1, **fields: object) -> TableRow:
    values: dict[str, object] = dict(id=table_id, game="othello", options={"size": 8}, seed=None, created=T0)
    values.update(fields)
    return TableRow(**values)  # type: ignore[arg-type]


def move_row(ply: int, move: str = "d3", **fields: object) -> MoveRow:
    values: dict[str, object] = dict(ply=ply, seat=(ply - 1) % 2, move=move, at=T0 + ply)
    values.update(fields)
    return MoveRow(**values)  # type: ignore[arg-type]


def pragma(path: Path, name: str) -> object:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        connection.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "parlour.sqlite3"


ENGINES = ("sqlite", "postgres")
"""The store tests run on both engines; those of SQLite's own behaviour (its file, pragmas, writer thread) on SQLite alone."""


def location(store: Any) -> str:
    """What ``--db`` would say for ``store``: its file or its URL."""
    return str(getattr(store, "url", None) or store.path)


@pytest.fixture(params=ENGINES)
async def store(request: pytest.FixtureRequest, db: Path) -> AsyncIterator[Store]:
    opened = open_store(request.getfixturevalue("postgres_url") if request.param == "postgres" else str(db))
    await opened.start()
    try:
        yield opened
    finally:
        await opened.close()


def close(store: Store) -> None:
    store.close_sync()


@pytest.fixture
async def sqlite_store(db: Path) -> AsyncIterator[SQLiteStore]:
    """For the tests of SQLite's own behaviour: its file, pragmas, writer thread."""
    opened = SQLiteStore.open(db)
    await opened.start()
    try:
        yield opened
    finally:
        await opened.close()


@contextlib.asynccontextmanager
async def holding_the_writer(store: Any) -> AsyncIterator[None]:
    """Hold the store's writer (SQLite's thread, PostgreSQL's task) so that the writes made meanwhile pile up into one group."""
    gate = store._writer_gate
    if isinstance(gate, asyncio.Lock):
        async with gate:
            yield
    else:
        with gate:
            yield


def count_rows(store: Any, sql: str, params: tuple[Any, ...] = ()) -> int:
    """``SELECT count(*) ...`` on a connection of its own (a second client of the database), for either engine."""
    if isinstance(store, SQLiteStore):
        connection = sqlite3.connect(store.path)
        try:
            return int(connection.execute(sql, params).fetchone()[0])
        finally:
            connection.close()
    with psycopg.connect(store.url) as connection:
        return int(connection.execute(sql.replace("?", "%s"), params).fetchone()[0])  # type: ignore[index]


async def reopen(store: Store) -> Store:
    await store.close()
    again = open_store(location(store))
    await again.start()
    return again


# --- create, append, finish, reload ---------------------------------------------------------


async def test_create_append_finish_reload(store: Store) -> None:
    row = table_row(1, time_control="5+3", seat_names=("ann", None), seat_tokens=("tok-a", None))
    await store.create_table(row)
    await store.update_table(1, seat_names=("ann", "bob"), seat_tokens=("tok-a", "tok-b"), status="playing", started=T0 + 1)
    moves = [move_row(1, "d3", clock_ms=299_000), move_row(2, "c5", clock_ms=298_500), move_row(3, "pass", forced=True)]
    for move in moves:
        await store.append_move(1, move)
    await store.update_table(1, clocks={"remaining_ms": [299_000, 298_500], "running": 0})

    store = await reopen(store)
    try:
        [unfinished] = store.unfinished_tables()
        assert unfinished.id == 1 and unfinished.moves == tuple(moves)
        assert unfinished.row == TableRow(
            id=1,
            game="othello",
            options={"size": 8},
            seed=None,
            created=T0,
            time_control="5+3",
            seat_names=("ann", "bob"),
            seat_tokens=("tok-a", "tok-b"),
            status="playing",
            started=T0 + 1,
            clocks={"remaining_ms": [299_000, 298_500], "running": 0},
        )
        assert store.archive() == []

        outcome = {"winner": 1, "reason": "Black resignation", "score": None}
        await store.update_table(1, status="over", outcome=outcome, finished=T0 + 60, clocks=None)
        store = await reopen(store)
        assert store.unfinished_tables() == []
        loaded = store.load(1)
        assert loaded is not None and loaded.moves == tuple(moves)
        assert loaded.row.status == "over" and loaded.row.outcome == outcome and loaded.row.clocks is None
        [entry] = store.archive()
        assert (entry.id, entry.game, entry.players, entry.result, entry.plies, entry.finished) == (
            1, "othello", ("ann", "bob"), outcome, 3, T0 + 60,
        )  # fmt: skip
        assert store.load(2) is None
    finally:
        await store.close()


@pytest.mark.parametrize("seed", [None, 0, -7, 2**80, "2**80", "", "club night", "42"])
async def test_seeds_keep_their_type(store: Store, seed: str | int | None) -> None:
    await store.create_table(table_row(5, game="tactego", options={"setup": (1, 2)}, seed=seed))
    loaded = store.load(5)
    assert loaded is not None
    assert loaded.row.seed == seed and type(loaded.row.seed) is type(seed)
    assert loaded.row.options == {"setup": [1, 2]} == table_row(options={"setup": (1, 2)}).options


async def test_unfinished_tables_bring_their_own_moves_in_ply_order(store: Store) -> None:
    for table_id in (3, 1, 2):
        await store.create_table(table_row(table_id, status="playing"))
    plies = [(table_id, ply) for table_id in (1, 2, 3) for ply in range(1, 6)]
    random.Random(1).shuffle(plies)
    await asyncio.gather(*(store.append_move(t, move_row(p, f"m{t}{p}")) for t, p in plies))
    await store.update_table(2, status="over")
    tables = store.unfinished_tables()
    assert [t.id for t in tables] == [1, 3]
    for table in tables:
        assert [m.move for m in table.moves] == [f"m{table.id}{p}" for p in range(1, 6)]


async def test_sessions(store: Store) -> None:
    assert store.sessions() == {}
    await store.save_session("tok-a", "ann")
    await store.save_session("tok-b", "bob")
    await store.save_session("tok-a", "anne")
    await store.delete_session("tok-b")
    await store.delete_session("tok-unknown")
    store = await reopen(store)
    try:
        assert store.sessions() == {"tok-a": "anne"}
    finally:
        await store.close()


async def test_archive_is_newest_first_and_pages(store: Store) -> None:
    finished = {1: T0 + 30, 2: T0 + 10, 3: T0 + 20, 4: None}
    for table_id, when in finished.items():
        await store.create_table(table_row(table_id))
        status = "over" if when is not None else "playing"
        await store.update_table(table_id, status=status, finished=when)
    for ply in range(1, 4):
        await store.append_move(3, move_row(ply))
    assert [e.id for e in store.archive()] == [1, 3, 2]
    assert [e.id for e in store.archive(limit=2)] == [1, 3]
    assert [e.id for e in store.archive(limit=2, offset=2)] == [2]
    assert store.archive(offset=3) == []
    assert [e.plies for e in store.archive()] == [0, 3, 0]
    with pytest.raises(ValueError):
        store.archive(limit=-1)


async def test_next_table_id(store: Store) -> None:
    assert store.next_table_id() == 1
    await store.create_table(table_row(7))
    await store.create_table(table_row(3))
    assert store.next_table_id() == 8


async def test_truncate_moves_and_delete_table(store: Store) -> None:
    await store.create_table(table_row(1, status="playing"))
    for ply in range(1, 6):
        await store.append_move(1, move_row(ply))
    await store.truncate_moves(1, after_ply=3)
    loaded = store.load(1)
    assert loaded is not None and [m.ply for m in loaded.moves] == [1, 2, 3]
    await store.append_move(1, move_row(4, "e6"))
    await store.delete_table(1)
    assert store.load(1) is None
    assert count_rows(store, "SELECT count(*) FROM moves") == 0


async def test_bad_fields_are_refused_before_anything_is_queued(store: Store) -> None:
    with pytest.raises(TypeError, match="unknown fields colour"):
        await store.update_table(1, colour="red")
    with pytest.raises(TypeError, match="at least one field"):
        await store.update_table(1)
    with pytest.raises(ValueError, match="status must be one of"):
        await store.update_table(1, status="paused")
    with pytest.raises(ValueError, match="seat_names must be two"):
        await store.update_table(1, seat_names=("ann",))
    with pytest.raises(TypeError, match="a statement must be"):
        await store.write("DELETE FROM tables")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        table_row(status="paused")
    with pytest.raises(ValueError):
        move_row(0)
    with pytest.raises(ValueError):
        move_row(1, seat=2)
    assert store.commits == 0


async def test_a_failed_write_raises_store_error(store: Store) -> None:
    await store.create_table(table_row(1))
    with pytest.raises(StoreError, match="UNIQUE constraint failed|violates unique constraint") as info:
        await store.create_table(table_row(1))
    assert isinstance(info.value.__cause__, (sqlite3.IntegrityError, psycopg.errors.UniqueViolation))
    if isinstance(store, SQLiteStore):
        with pytest.raises(StoreError, match="FOREIGN KEY"):
            await store.append_move(99, move_row(1))
    else:  # PostgreSQL's moves keep no foreign key (schema step 12): the row is kept, and never read without its table
        await store.append_move(99, move_row(1))
        assert store.load(99) is None and [(table.id, table.moves) for table in store.unfinished_tables()] == [(1, ())]


async def test_one_write_is_atomic(store: Store) -> None:
    await store.create_table(table_row(1))
    with pytest.raises(StoreError):
        await store.write(
            append_move_sql(1, move_row(1)),
            update_table_sql(1, status="over"),
            append_move_sql(1, move_row(1)),  # the same ply again: fails the whole write
        )
    loaded = store.load(1)
    assert loaded is not None and loaded.moves == () and loaded.row.status == "waiting"


# --- the writer's life cycle ------------------------------------------------------------------


async def test_writes_need_a_started_open_store(db: Path) -> None:
    store = SQLiteStore.open(db)
    with pytest.raises(StoreError, match="not started"):
        await store.save_session("t", "ann")
    await store.start()
    await store.start()  # idempotent
    await store.save_session("t", "ann")
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        await store.save_session("t", "bob")
    with pytest.raises(StoreError, match="closed"):
        store.sessions()
    with pytest.raises(StoreError, match="closed"):
        await store.start()


async def test_close_commits_every_queued_write(db: Path) -> None:
    store = SQLiteStore.open(db)
    await store.start()
    await store.create_table(table_row(1))
    writes = [asyncio.create_task(store.append_move(1, move_row(ply))) for ply in range(1, 101)]
    await asyncio.sleep(0)  # every task has queued its write
    await store.close()
    await asyncio.gather(*writes)
    connection = sqlite3.connect(db)
    assert connection.execute("SELECT count(*) FROM moves").fetchone()[0] == 100
    connection.close()


async def test_async_with(db: Path) -> None:
    async with SQLiteStore.open(db) as store:
        await store.save_session("t", "ann")
    async with SQLiteStore.open(db) as again:
        assert again.sessions() == {"t": "ann"}


async def test_a_cancelled_caller_does_not_withdraw_its_write(store: Store) -> None:
    await store.create_table(table_row(1))
    async with holding_the_writer(store):
        task = asyncio.create_task(store.append_move(1, move_row(1)))
        await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0)
    await store.save_session("t", "ann")  # queued after it: done means the move is done
    loaded = store.load(1)
    assert task.cancelled() and loaded is not None and len(loaded.moves) == 1


async def test_the_clocks_are_those_of_the_last_move_row_or_else_the_table_row(store: Store) -> None:
    await store.create_table(table_row(1, time_control="5+3", clocks={"remaining_ms": [300_000, 300_000], "running": 0}))
    await store.write(
        append_move_sql(1, move_row(1, clock_ms=299_000, other_ms=300_000, running=1)),
        append_move_sql(1, move_row(2, clock_ms=298_500, other_ms=299_000, running=0)),  # seat 1 moved
    )
    store = await reopen(store)
    try:
        loaded = store.load(1)
        assert loaded is not None and loaded.clocks == {"remaining_ms": [299_000, 298_500], "running": 0}
        assert loaded.row.clocks == {"remaining_ms": [300_000, 300_000], "running": 0}, "a move does not update the table row"
        await store.write(truncate_moves_sql(1, 1), takeback_clocks_sql(1, 1, {"remaining_ms": [297_000, 298_000], "running": 1}))
        loaded = store.load(1)
        assert loaded is not None and [m.ply for m in loaded.moves] == [1]
        assert loaded.clocks == {"remaining_ms": [297_000, 298_000], "running": 1}
        await store.write(truncate_moves_sql(1, 0), takeback_clocks_sql(1, 0, {"remaining_ms": [296_000, 298_000], "running": 0}))
        loaded = store.load(1)
        assert loaded is not None and loaded.moves == () and loaded.clocks == {"remaining_ms": [296_000, 298_000], "running": 0}
        await store.append_move(1, move_row(1))  # a move without clocks (a file from before schema 7)
        [unfinished] = store.unfinished_tables()
        assert unfinished.clocks == {"remaining_ms": [296_000, 298_000], "running": 0}
    finally:
        await store.close()


# --- group commit ------------------------------------------------------------------------------


async def test_group_commit_groups_concurrent_writes(store: Store) -> None:
    await store.create_table(table_row(1))
    before = store.commits
    await asyncio.gather(*(store.append_move(1, move_row(ply)) for ply in range(1, 201)))
    transactions = store.commits - before
    assert store.writes - 1 == 200
    assert 1 <= transactions <= 20, f"200 concurrent writes took {transactions} transactions"


async def test_writes_queued_together_share_one_transaction(store: Store) -> None:
    await store.create_table(table_row(1))
    before = store.commits
    async with holding_the_writer(store):  # every write piles up
        writes = asyncio.gather(*(store.append_move(1, move_row(ply)) for ply in range(1, 51)))
        await asyncio.sleep(0.05)
    await writes
    assert store.commits - before == 1


async def test_a_group_of_moves_of_several_tables_is_stored_in_order(store: Store) -> None:
    for table_id in (1, 2, 3):
        await store.create_table(table_row(table_id))
    timed = [move_row(ply, clock_ms=1_000 - ply, other_ms=2_000, running=ply % 2) for ply in range(1, 4)]
    before = store.commits
    async with holding_the_writer(store):  # every write piles up
        writes = asyncio.gather(
            *(store.append_move(1, move_row(ply)) for ply in range(1, 21)),  # more rows than one multi-row INSERT takes
            *(store.append_move(2, move) for move in timed),
            store.save_session("t", "ann"),
            store.append_move(3, move_row(1, forced=True)),
        )
        await asyncio.sleep(0.05)
    await writes
    assert store.commits - before == 1
    loaded = [store.load(table_id) for table_id in (1, 2, 3)]
    assert loaded[0] is not None and loaded[0].moves == tuple(move_row(ply) for ply in range(1, 21))
    assert loaded[1] is not None and loaded[1].moves == tuple(timed)
    assert loaded[2] is not None and loaded[2].moves == (move_row(1, forced=True),)
    assert store.sessions() == {"t": "ann"}


async def test_a_group_commit_wakes_the_event_loop_once(sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store = sqlite_store
    await store.create_table(table_row(1))
    loop = asyncio.get_running_loop()
    wakeups = []
    original = loop.call_soon_threadsafe

    def counting(callback: Any, *args: Any, **kwargs: Any) -> Any:
        wakeups.append(callback)
        return original(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counting)
    async with holding_the_writer(store):  # every write piles up
        writes = asyncio.gather(*(store.append_move(1, move_row(ply)) for ply in range(1, 51)))
        await asyncio.sleep(0.05)
    await writes
    assert len(wakeups) == 1, f"50 writes of one commit woke the loop {len(wakeups)} times"


async def _writes_in_one_turn(store: Store, count: int, first_ply: int) -> None:
    await asyncio.gather(*(store.append_move(1, move_row(ply)) for ply in range(first_ply, first_ply + count)))


class _CountedHandOvers(queue.SimpleQueue):  # type: ignore[type-arg]
    """The writer's queue, counting what the event loop hands over (each a possible wake-up of the writer)."""

    def __init__(self) -> None:
        self.hand_overs = 0

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        self.hand_overs += 1
        super().put(item, block, timeout)


async def test_while_tables_commit_together_the_writes_of_one_turn_are_handed_over_at_once(db: Path) -> None:
    store = SQLiteStore.open(db, commit_delay_s=0)
    store._queue = counted = _CountedHandOvers()
    async with store:
        await store.create_table(table_row(1))
        before = counted.hand_overs
        await store.append_move(1, move_row(1))
        assert counted.hand_overs - before == 1, "a lone write waited for the end of its turn"
        for first in (2, 12, 22, 32):
            await _writes_in_one_turn(store, 10, first)  # ten tables at once
        before = counted.hand_overs
        await _writes_in_one_turn(store, 50, 42)
        assert counted.hand_overs - before == 1, f"50 writes of one turn woke the writer {counted.hand_overs - before} times"
        assert store.writes == 92


async def test_a_lone_writer_never_waits_for_company(any_db: str) -> None:
    async with open_store(any_db, commit_delay_s=5.0) as store:
        await store.create_table(table_row(1))
        started = time.monotonic()
        for ply in range(1, 6):
            await store.append_move(1, move_row(ply))  # one game: every commit carries one write
        assert time.monotonic() - started < 2.5, "a write with no other table writing waited for the commit delay"
        assert store.commits == 6


async def test_while_tables_write_together_the_writer_waits_for_as_many_writes(any_db: str) -> None:
    async with open_store(any_db, commit_delay_s=5.0) as store:
        await store.create_table(table_row(1))
        for first in (1, 11, 21, 31):
            await _writes_in_one_turn(store, 10, first)  # ten tables at once: each turn's ten writes, one commit
        before = store.commits
        started = time.monotonic()
        early = asyncio.ensure_future(_writes_in_one_turn(store, 3, 41))
        await asyncio.sleep(0.2)  # the other tables' moves arrive a little later
        await _writes_in_one_turn(store, 5, 44)
        await early
        assert store.commits - before == 1, "the writes that came within the commit delay were not committed together"
        assert time.monotonic() - started < 2.5, "the writer waited on after it held as many writes as usual"
        loaded = store.load(1)
        assert loaded is not None and len(loaded.moves) == 48


async def test_the_commit_delay_is_bounded_and_close_does_not_wait_for_it(any_db: str) -> None:
    async with open_store(any_db, commit_delay_s=0.3) as store:
        await store.create_table(table_row(1))
        for first in (1, 11, 21, 31):
            await _writes_in_one_turn(store, 10, first)
        started = time.monotonic()
        await store.append_move(1, move_row(41))  # nobody else comes: committed once the delay is over
        waited = time.monotonic() - started
        assert 0.25 <= waited < 2.5, f"a write waited {waited:.3f} s with a commit delay of 0.3 s"
    async with open_store(any_db, commit_delay_s=60.0) as store:
        for first in (51, 61, 71, 81):
            await _writes_in_one_turn(store, 10, first)
        write = asyncio.ensure_future(store.append_move(1, move_row(91)))
        await asyncio.sleep(0.05)  # the writer holds it, waiting for company
        started = time.monotonic()
        await store.close()
        assert time.monotonic() - started < 2.5 and write.done() and write.exception() is None
    with pytest.raises(ValueError, match="commit_delay_s"):
        open_store(any_db, commit_delay_s=-1)


async def test_every_acknowledged_write_is_visible_to_another_connection(store: Store) -> None:
    await store.create_table(table_row(1))

    async def append(ply: int) -> None:
        await store.append_move(1, move_row(ply))
        found = count_rows(store, "SELECT count(*) FROM moves WHERE table_id = 1 AND ply = ?", (ply,))
        assert found == 1, f"ply {ply} was acknowledged before it was committed"

    await asyncio.gather(*(append(ply) for ply in range(1, 101)))


async def test_one_bad_write_does_not_fail_the_others_in_its_group(store: Store) -> None:
    await store.create_table(table_row(1))
    await store.append_move(1, move_row(1))
    before = store.commits
    async with holding_the_writer(store):
        results = asyncio.gather(
            store.append_move(1, move_row(2)),
            store.append_move(1, move_row(1, "again")),  # ply 1 exists: this write fails
            store.append_move(1, move_row(3)),
            store.save_session("t", "ann"),
            return_exceptions=True,
        )
        await asyncio.sleep(0.05)
    outcome = await results
    assert outcome[0] is None and outcome[2] is None and outcome[3] is None
    assert isinstance(outcome[1], StoreError) and ("UNIQUE" in str(outcome[1]) or "unique constraint" in str(outcome[1]))
    loaded = store.load(1)
    assert loaded is not None and [(m.ply, m.move) for m in loaded.moves] == [(1, "d3"), (2, "d3"), (3, "d3")]
    assert store.sessions() == {"t": "ann"}
    assert store.commits - before == 1  # the group failed, then the three good writes together


async def test_several_bad_writes_in_a_group_fail_alone(store: Store) -> None:
    await store.create_table(table_row(1))
    async with holding_the_writer(store):
        results = asyncio.gather(
            *(store.append_move(1, move_row(ply % 5 + 1, f"m{ply}")) for ply in range(10)), return_exceptions=True
        )
        await asyncio.sleep(0.05)
    outcome = await results
    assert [result is None for result in outcome] == [True] * 5 + [False] * 5
    loaded = store.load(1)
    assert loaded is not None and [m.move for m in loaded.moves] == ["m0", "m1", "m2", "m3", "m4"]


async def test_a_locked_file_fails_the_whole_group(db: Path) -> None:
    async with SQLiteStore.open(db, busy_timeout_s=0.05) as store:
        blocker = sqlite3.connect(db, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        async with holding_the_writer(store):
            results = asyncio.gather(*(store.save_session(f"t{i}", "ann") for i in range(3)), return_exceptions=True)
            await asyncio.sleep(0.05)
        outcome = await results
        assert all(isinstance(error, StoreError) and "locked" in str(error) for error in outcome)
        assert len({id(error) for error in outcome}) == 3, "each waiter raises its own exception"
        assert all(isinstance(error.__cause__, sqlite3.OperationalError) for error in outcome)
        assert store.commits == 0
        blocker.execute("ROLLBACK")
        blocker.close()
        await store.save_session("t", "ann")
        assert store.sessions() == {"t": "ann"}


async def test_a_full_database_fails_only_the_writes_that_need_room(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    await store.save_session("first", "ann")
    async with holding_the_writer(store):
        pages = store._writer.execute("PRAGMA page_count").fetchone()[0]
        store._writer.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL once a new page is needed
        results = asyncio.gather(
            store.save_session("big1", "x" * 20_000), store.save_session("big2", "y" * 20_000), store.save_session("small", "bob"),
            return_exceptions=True,
        )  # fmt: skip
        await asyncio.sleep(0.05)
    big1, big2, small = await results
    assert isinstance(big1, StoreError) and isinstance(big2, StoreError) and big1 is not big2
    assert is_disk_full(big1) and is_disk_full(big2) and "database or disk is full" in str(big1)
    assert small is None and store.sessions() == {"first": "ann", "small": "bob"}
    assert not is_disk_full(StoreError("the write failed")) and not is_disk_full(sqlite3.OperationalError("database is locked"))


# --- the file: WAL, version, refusals, migrations ------------------------------------------------


async def test_wal_and_schema_version_are_set(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    await store.save_session("t", "ann")
    assert pragma(store.path, "journal_mode") == "wal"
    assert pragma(store.path, "user_version") == SCHEMA_VERSION == 13
    assert pragma(store.path, "application_id") == APPLICATION_ID
    assert store.synchronous == "FULL"
    assert store._writer.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store._writer.execute("PRAGMA foreign_keys").fetchone()[0] == 1


async def test_synchronous_is_configurable(db: Path) -> None:
    async with SQLiteStore.open(db, synchronous="normal") as store:
        assert store.synchronous == "NORMAL"
        assert store._writer.execute("PRAGMA synchronous").fetchone()[0] == 1
    with pytest.raises(ValueError, match="synchronous must be one of"):
        SQLiteStore.open(db, synchronous="sometimes")


def test_the_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "parlour.sqlite3"
    close(SQLiteStore.open(path))
    assert path.exists()


def test_default_db_path() -> None:
    path = default_db_path()
    assert path.name == "parlour.sqlite3" and "parlour" in str(path.parent).lower()


def test_an_empty_file_is_a_new_database(db: Path) -> None:
    db.write_bytes(b"")
    store = SQLiteStore.open(db)
    assert pragma(db, "user_version") == SCHEMA_VERSION and store.sessions() == {}
    close(store)


def test_a_newer_schema_is_refused_untouched(db: Path) -> None:
    close(SQLiteStore.open(db))
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    before = db.read_bytes()
    with pytest.raises(SchemaError) as info:
        SQLiteStore.open(db)
    assert str(info.value) == (
        f"database schema version 99 is newer than this Parlour supports ({SCHEMA_VERSION}); upgrade Parlour"
    )
    assert db.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_refused_untouched(db: Path) -> None:
    garbage = bytes(random.Random(4).randrange(256) for _ in range(4096))
    db.write_bytes(garbage)
    with pytest.raises(SchemaError, match="is not a Parlour database: it is not an SQLite file"):
        SQLiteStore.open(db)
    assert db.read_bytes() == garbage
    assert not Path(f"{db}-wal").exists()


def test_another_programs_database_is_refused(db: Path) -> None:
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE recipes (name TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(SchemaError, match=r"some other program .*tables: recipes\), not a Parlour one"):
        SQLiteStore.open(db)
    assert pragma(db, "user_version") == 0 and pragma(db, "journal_mode") == "delete"


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory, not a database file"):
        SQLiteStore.open(tmp_path)


async def test_a_timed_game_from_before_schema_7_keeps_its_table_row_clocks_until_its_next_move(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(schema_module, "MIGRATIONS", schema_module.MIGRATIONS[:6])
        async with SQLiteStore.open(db) as old:  # as a schema-6 server left it: clocks in the table row only
            await old.create_table(table_row(1, time_control="5+3", status="playing"))
            await old.write(
                ("INSERT INTO moves (table_id, ply, seat, move, forced, at, clock_ms) VALUES (1, 1, 0, 'd3', 0, ?, NULL)", (T0,)),
                update_table_sql(1, clocks={"remaining_ms": [299_000, 300_000], "running": 1}),
            )
    assert pragma(db, "user_version") == 6
    async with SQLiteStore.open(db) as store:
        assert pragma(db, "user_version") == SCHEMA_VERSION
        [table] = store.unfinished_tables()
        assert table.clocks == {"remaining_ms": [299_000, 300_000], "running": 1}
        await store.write(append_move_sql(1, move_row(2, clock_ms=297_000, other_ms=299_000, running=0)))
        loaded = store.load(1)
        assert loaded is not None and loaded.clocks == {"remaining_ms": [299_000, 297_000], "running": 0}


async def test_the_server_id_is_made_once_per_file_and_kept(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with SQLiteStore.open(db) as store:
        first = store.server_id()
    async with SQLiteStore.open(db) as store:
        assert store.server_id() == first  # the same file: the same server
    async with SQLiteStore.open(tmp_path / "other.sqlite3") as other:
        assert other.server_id() != first  # another file: another server
    assert len(first) == 32 and int(first, 16) >= 0
    older = tmp_path / "older.sqlite3"
    with monkeypatch.context() as patch:
        patch.setattr(schema_module, "MIGRATIONS", schema_module.MIGRATIONS[:7])
        async with SQLiteStore.open(older) as old:
            await old.save_session("t", "ann")
    async with SQLiteStore.open(older) as upgraded:  # a file from before schema 8 gets its id when upgraded, once
        made = upgraded.server_id()
        assert upgraded.sessions() == {"t": "ann"}
    async with SQLiteStore.open(older) as again:
        assert again.server_id() == made != first


NEXT = Migration(
    SCHEMA_VERSION + 1,
    "a note on every table",
    ("ALTER TABLE tables ADD COLUMN note TEXT", "UPDATE tables SET note = 'from version 1'"),
)


async def test_migration_from_an_older_version(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with SQLiteStore.open(db) as old:  # a database of the current version, written by "the older build"
        await old.create_table(table_row(1))
        await old.append_move(1, move_row(1))
    assert pragma(db, "user_version") == SCHEMA_VERSION
    monkeypatch.setattr(schema_module, "MIGRATIONS", (*schema_module.MIGRATIONS, NEXT))
    new = SQLiteStore.open(db)
    assert pragma(db, "user_version") == NEXT.version
    loaded = new.load(1)
    await new.close()
    assert loaded is not None and len(loaded.moves) == 1
    connection = sqlite3.connect(db)
    assert connection.execute("SELECT note FROM tables").fetchall() == [("from version 1",)]
    connection.close()
    await SQLiteStore.open(db).close()  # opening again changes nothing
    assert pragma(db, "user_version") == NEXT.version


async def test_a_version_1_file_gains_seed_chosen(db: Path) -> None:
    """A file written by the first schema (its own statements, a table stored the old way) opens and upgrades."""
    connection = sqlite3.connect(db, isolation_level=None)
    for statement in schema_module.MIGRATIONS[0].statements:
        connection.execute(statement)
    connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    connection.execute("PRAGMA user_version = 1")
    connection.execute(
        "INSERT INTO tables (id, game, options, seed, seed_is_int, seat0_name, seat0_token, status, created) "
        "VALUES (1, 'tactego', '{\"hidden\":true}', 'abc', 0, 'ann', 'tok', 'waiting', ?)",
        (T0,),
    )
    connection.close()
    async with SQLiteStore.open(db) as store:
        assert pragma(db, "user_version") == SCHEMA_VERSION
        loaded = store.load(1)
        assert loaded is not None
        assert loaded.row == table_row(1, game="tactego", options={"hidden": True}, seed="abc", seat_names=("ann", None), seat_tokens=("tok", None))
        assert loaded.row.seed_chosen is False
        await store.create_table(table_row(2, game="tactego", seed="chosen", seed_chosen=True))
        await store.update_table(1, seed=42)
    async with SQLiteStore.open(db) as store:
        assert store.load(2).row.seed_chosen is True  # type: ignore[union-attr]
        assert store.load(1).row.seed == 42  # type: ignore[union-attr]


async def test_a_version_2_file_gains_computer_seats_and_hints(db: Path) -> None:
    """A table stored before schema 3 has no computer seat and no hints; new rows keep theirs."""
    connection = sqlite3.connect(db, isolation_level=None)
    for migration in schema_module.MIGRATIONS[:2]:
        for statement in migration.statements:
            connection.execute(statement)
    connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    connection.execute("PRAGMA user_version = 2")
    connection.execute(
        "INSERT INTO tables (id, game, options, seed, seed_is_int, seat0_name, seat0_token, status, created) "
        "VALUES (1, 'nimble', '{}', 'abc', 0, 'ann', 'tok', 'waiting', ?)",
        (T0,),
    )
    connection.close()
    async with SQLiteStore.open(db) as store:
        assert pragma(db, "user_version") == SCHEMA_VERSION
        loaded = store.load(1)
        assert loaded is not None and loaded.row.computer is None and loaded.row.hints is False
        await store.create_table(table_row(2, seat_names=("ann", "Computer 4"), seat_tokens=("tok", None), computer=(None, 4), hints=True))
    async with SQLiteStore.open(db) as store:
        again = store.load(2)
        assert again is not None and again.row.computer == (None, 4) and again.row.hints is True


def test_computer_levels_must_be_a_pair() -> None:
    with pytest.raises(ValueError, match="computer must be two levels"):
        table_row(1, computer=(4,))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="computer must be two levels"):
        table_row(1, computer=("4", None))  # type: ignore[arg-type]


def test_migrations_run_in_order_from_version_0(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sqlite3.connect(db).close()  # an empty SQLite file with user_version 0
    monkeypatch.setattr(schema_module, "MIGRATIONS", (NEXT, *schema_module.MIGRATIONS))  # order given wrongly
    close(SQLiteStore.open(db))
    assert pragma(db, "user_version") == NEXT.version


def test_a_failed_migration_leaves_the_file_at_its_version(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    close(SQLiteStore.open(db))
    broken = Migration(SCHEMA_VERSION + 1, "a broken step", ("ALTER TABLE tables ADD COLUMN note TEXT", "THIS IS NOT SQL"))
    monkeypatch.setattr(schema_module, "MIGRATIONS", (*schema_module.MIGRATIONS, broken))
    with pytest.raises(SchemaError, match=rf"upgrading .* to schema version {SCHEMA_VERSION + 1} \(a broken step\) failed"):
        SQLiteStore.open(db)
    assert pragma(db, "user_version") == SCHEMA_VERSION
    connection = sqlite3.connect(db)
    columns = [row[1] for row in connection.execute("PRAGMA table_info(tables)")]
    connection.close()
    assert "note" not in columns


def test_a_gap_in_the_migrations_is_refused(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    close(SQLiteStore.open(db))
    skipping = Migration(SCHEMA_VERSION + 2, "skips a version", ("SELECT 1",))
    monkeypatch.setattr(schema_module, "MIGRATIONS", (*schema_module.MIGRATIONS, skipping))
    with pytest.raises(SchemaError, match=f"no step leads from it to {skipping.version}"):
        SQLiteStore.open(db)
    assert pragma(db, "user_version") == SCHEMA_VERSION


# --- records -------------------------------------------------------------------------------------


async def test_a_stored_othello_game_exports_and_replays(store: Store) -> None:
    rng = random.Random(11)
    state = games.get("othello").new_state({"size": 8})
    await store.create_table(table_row(1, options=dict(state.options), seat_names=("ann", "bob"), status="playing", started=T0))
    ply_time = T0
    while state.outcome is None:
        legal = state.legal_moves()
        seat = state.to_move
        state = state.play(rng.choice(legal))
        ply_time += 1.25
        assert seat is not None and state.last_move is not None
        await store.append_move(1, MoveRow(state.ply, seat, state.last_move, ply_time, forced=legal == ["pass"]))
    await store.update_table(1, status="over", outcome=state.outcome.to_dict(), finished=ply_time)
    table = store.load(1)
    assert table is not None
    record = store.to_record(table)
    assert record.players == ("ann", "bob") and record.started_at == "2024-05-01T12:00:00.000Z"
    assert record.moves[0].at == "2024-05-01T12:00:01.250Z"
    states = replay(parse_record(format_record(record)))
    assert states[-1].view(None) == state.view(None)


def test_iso_utc() -> None:
    assert iso_utc(T0) == "2024-05-01T12:00:00.000Z"
    assert iso_utc(T0 + 0.0625) == "2024-05-01T12:00:00.062Z"


# --- durability across SIGKILL of a real process ---------------------------------------------------

CHILD = textwrap.dedent(
    """
    import asyncio, sys, time
    from server.storage.rows import MoveRow, TableRow
    from server.storage.sqlite import SQLiteStore

    async def play(store, table_id):
        ply = 0
        while True:
            ply += 1
            await store.append_move(table_id, MoveRow(ply, (ply - 1) % 2, "d3", time.time()))
            print(f"{table_id} {ply}", flush=True)

    async def main(path):
        store = SQLiteStore.open(path)
        await store.start()
        for table_id in (1, 2, 3, 4):
            await store.create_table(TableRow(table_id, "othello", {}, None, time.time(), status="playing"))
        await asyncio.gather(*(play(store, table_id) for table_id in (1, 2, 3, 4)))

    asyncio.run(main(sys.argv[1]))
    """
)


def read_lines_until(process: subprocess.Popen[bytes], count: int, timeout_s: float) -> list[str]:
    assert process.stdout is not None
    fd = process.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout_s
    while data.count(b"\n") < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"the child printed {data.decode().count(chr(10))} lines in {timeout_s}s")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"the child ended early: {process.stderr.read() if process.stderr else b''!r}")
            data += chunk
    return data.decode().splitlines(keepends=True)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_every_acknowledged_move_survives_sigkill(db: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db)], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        lines = read_lines_until(process, 400, timeout_s=60)
    finally:
        process.send_signal(signal.SIGKILL)
        rest, _ = process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL
    printed = "".join(lines) + rest.decode()
    whole_lines = printed.split("\n")[:-1]  # the kill may cut the last line short
    acknowledged = [tuple(map(int, line.split())) for line in whole_lines]
    assert len(acknowledged) >= 400

    store = SQLiteStore.open(db)
    tables = store.unfinished_tables()
    close(store)
    stored = {(table.id, move.ply) for table in tables for move in table.moves}
    missing = [ack for ack in acknowledged if ack not in stored]
    assert not missing, f"{len(missing)} acknowledged plies lost, e.g. {missing[:5]}"
    assert len(stored) >= len(acknowledged)
    for table in tables:
        assert [m.ply for m in table.moves] == list(range(1, len(table.moves) + 1))


# --- parlour games --------------------------------------------------------------------------------


def games_args(db: Path | str | None, **overrides: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="parlour")
    archive_cli.add_parser(parser.add_subparsers(dest="command"))
    argv = ["games"] + (["--db", str(db)] if db is not None else [])
    args = parser.parse_args(argv)
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


async def finished_games(db: Path | str) -> None:
    async with open_store(str(db)) as store:
        await store.create_table(table_row(1, seat_names=("ann", "bob"), status="playing", started=T0))
        await store.append_move(1, move_row(1, "d3"))
        await store.append_move(1, move_row(2, "c5"))
        await store.update_table(
            1, status="over", finished=T0 + 90, outcome={"winner": 1, "reason": "more discs", "score": [22, 42]}
        )
        await store.create_table(table_row(2, seat_names=("cy", "di"), status="over", finished=T0 + 3600))
        await store.update_table(2, outcome={"winner": None, "reason": "the ply limit", "score": None})
        await store.create_table(table_row(3, seat_names=("ed", None)))


async def test_games_lists_the_archive(any_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    await finished_games(any_db)
    assert archive_cli.run(games_args(any_db)) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "ID  GAME     PLAYERS     RESULT                              PLIES  FINISHED (UTC)",
        " 2  othello  cy vs di    draw: the ply limit                     0  2024-05-01 13:00",
        " 1  othello  ann vs bob  bob (White) won: more discs, 22-42      2  2024-05-01 12:01",
    ]


async def test_games_pages(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    await finished_games(db)
    assert archive_cli.run(games_args(db, limit=1)) == 0
    out = capsys.readouterr().out
    assert " 2  othello" in out and "ann vs bob" not in out and "(more may follow: --offset 1)" in out
    assert archive_cli.run(games_args(db, offset=5)) == 0
    assert "No finished games" in capsys.readouterr().out


async def test_games_exports_a_record(any_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    await finished_games(any_db)
    assert archive_cli.run(games_args(any_db, export=1)) == 0
    out = capsys.readouterr().out
    assert out == (
        "Game: othello\n"
        'Options: {"size":8}\n'
        "Player-0: ann\n"
        "Player-1: bob\n"
        'Result: {"winner":1,"reason":"more discs","score":[22,42]}\n'
        "Started: 2024-05-01T12:00:00.000Z\n"
        "Finished: 2024-05-01T12:01:30.000Z\n"
        "\n"
        "1. d3 at=2024-05-01T12:00:01.000Z\n"
        "2. c5 at=2024-05-01T12:00:02.000Z\n"
    )
    assert len(replay(parse_record(out))) == 3
    assert archive_cli.run(games_args(any_db, export=3)) == 0  # a game still waiting exports too
    assert "Player-0: ed" in capsys.readouterr().out


async def test_games_errors(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert archive_cli.run(games_args(db)) == 0
    assert "No games yet" in capsys.readouterr().err
    assert not db.exists()  # listing never creates a database
    assert archive_cli.run(games_args(db, export=1)) == 1
    await finished_games(db)
    assert archive_cli.run(games_args(db, export=9)) == 1
    assert "There is no game 9" in capsys.readouterr().err
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"x" * 1000)
    assert archive_cli.run(games_args(garbage)) == 1
    assert "not an SQLite file" in capsys.readouterr().err


def test_games_defaults_to_the_user_data_dir() -> None:
    args = games_args(None)
    assert args.db is None and args.export is None and args.limit == 50 and args.offset == 0
    assert args.run is archive_cli.run


def test_games_refuses_a_negative_limit() -> None:
    parser = argparse.ArgumentParser(prog="parlour")
    archive_cli.add_parser(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit):
        parser.parse_args(["games", "--limit", "-1"])


def test_describe_result() -> None:
    describe = archive_cli.describe_result
    assert describe("othello", ("ann", "bob"), None) == "-"
    assert describe("othello", ("ann", None), {"winner": 0, "reason": "White resignation"}) == "ann (Black) won: White resignation"
    assert describe("othello", (None, None), {"winner": 1, "reason": "", "score": [1, 2]}) == "White won: 1-2"
    assert describe("chess", ("a", "b"), {"winner": 0, "reason": "mate"}) == "a (seat 0) won: mate"


def test_stored_table_id() -> None:
    assert StoredTable(table_row(4)).id == 4


async def test_an_upgrade_is_logged_in_one_line_naming_both_versions(
    db: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(schema_module, "MIGRATIONS", schema_module.MIGRATIONS[:5])
        await SQLiteStore.open(db).close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="server.storage.schema"):
        await SQLiteStore.open(db).close()
        await SQLiteStore.open(db).close()  # nothing to do: nothing said
    schema = [record.getMessage() for record in caplog.records if "schema" in record.getMessage()]
    assert schema == [
        f"{db}: schema upgraded from version 5 to {SCHEMA_VERSION} ("
        + "; ".join(step.doc for step in schema_module.MIGRATIONS[5:])
        + ")"
    ]
