"""What only the PostgreSQL store does, on a real PostgreSQL server (:mod:`tests.pgserver`): its schema and refusals,
writes while the server is stopped and after it returns, ``parlour db copy``, and the SQL it rewrites.

The behaviour both stores share is tested on both engines in ``test_store.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

from server import archive_cli
from server.players.mutes import stored_mutes
from server.ratings.casual import CasualResult, casual_sql
from server.storage.schema import MIGRATIONS, Migration
from server.storage.sqlite import SQLiteStore
from server.storage.statements import append_ply_sql, delete_table_sql
from server.storage.store import NeedsUpgrade, SchemaError, StoreError
from server.storage import copy as db_copy
from server.storage import postgres as pg_module
from server.storage.common import StorageUnavailable
from server.storage.dialect import pg_params, to_postgres
from server.storage.pg_schema import PG_MIGRATIONS
from server.storage.postgres import PostgresStore, redact
from tests.pgserver import PostgresServer, run_sql, running_cluster

from .test_store import finished_games, games_args, move_row, table_row


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this module's own, which its tests stop and start again."""
    with running_cluster() as cluster:
        yield cluster


# --- the schema --------------------------------------------------------------------------------


def test_both_engines_end_at_the_same_schema_version() -> None:
    assert PG_MIGRATIONS[-1].version == MIGRATIONS[-1].version


async def test_a_new_database_gets_the_schema_once(postgres_url: str) -> None:
    PostgresStore.open(postgres_url).close_sync()
    PostgresStore.open(postgres_url).close_sync()  # opening again changes nothing
    assert run_sql(postgres_url, "SELECT version, application_id FROM parlour_schema") == [(PG_MIGRATIONS[-1].version, 0x50524C52)]
    [(server_id,)] = run_sql(postgres_url, "SELECT server_id FROM server_identity")
    assert isinstance(server_id, str) and len(server_id) == 32 and int(server_id, 16) >= 0
    assert PostgresStore.open_read_only(postgres_url).server_id() == server_id


def test_another_programs_database_is_refused_untouched(postgres_url: str) -> None:
    run_sql(postgres_url, "CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(SchemaError, match=r"some other program's tables \(invoices\)"):
        PostgresStore.open(postgres_url)
    assert run_sql(postgres_url, "SELECT to_regclass('parlour_schema')") == [(None,)]


def test_a_newer_schema_is_refused(postgres_url: str) -> None:
    PostgresStore.open(postgres_url).close_sync()
    run_sql(postgres_url, "UPDATE parlour_schema SET version = 99")
    with pytest.raises(SchemaError, match="schema version 99 is newer than this Parlour supports"):
        PostgresStore.open(postgres_url)


def test_an_older_schema_is_upgraded_by_a_server_and_refused_read_only(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    PostgresStore.open(postgres_url).close_sync()
    newest = PG_MIGRATIONS[-1].version
    later = Migration(newest + 1, "a test column", ("ALTER TABLE sessions ADD COLUMN note TEXT",))
    monkeypatch.setattr(pg_module, "PG_MIGRATIONS", (*PG_MIGRATIONS, later))
    with pytest.raises(NeedsUpgrade, match=f"has schema version {newest} and must be upgraded to version {newest + 1}"):
        PostgresStore.open_read_only(postgres_url)
    PostgresStore.open(postgres_url).close_sync()
    assert run_sql(postgres_url, "SELECT version FROM parlour_schema") == [(newest + 1,)]
    assert run_sql(postgres_url, "SELECT count(*) FROM information_schema.columns WHERE column_name = 'note'") == [(1,)]


def _up_to(version: int) -> tuple[Migration, ...]:
    """The PostgreSQL schema steps up to ``version``: a database as that version of Parlour left it."""
    return tuple(step for step in PG_MIGRATIONS if step.version <= version)


MOVES_FOREIGN_KEYS = "SELECT count(*) FROM pg_constraint WHERE conrelid = 'moves'::regclass AND contype = 'f'"


async def test_step_12_drops_the_foreign_key_of_moves_and_a_deleted_tables_moves_still_go(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:  # a database of schema version 11, with moves
        patch.setattr(pg_module, "PG_MIGRATIONS", _up_to(11))
        async with PostgresStore.open(postgres_url) as store:
            for table_id in (1, 2):
                await store.create_table(table_row(table_id, status="playing"))
                await store.append_move(table_id, move_row(1))
    assert run_sql(postgres_url, MOVES_FOREIGN_KEYS) == [(1,)]
    with monkeypatch.context() as patch:
        patch.setattr(pg_module, "PG_MIGRATIONS", _up_to(12))
        PostgresStore.open(postgres_url).close_sync()
    assert run_sql(postgres_url, "SELECT version FROM parlour_schema") == [(12,)]
    assert run_sql(postgres_url, MOVES_FOREIGN_KEYS) == [(0,)]
    async with PostgresStore.open(postgres_url) as store:
        await store.append_move(1, move_row(2))
        await store.write(delete_table_sql(1))
        assert run_sql(postgres_url, "SELECT table_id, ply FROM moves ORDER BY table_id, ply") == [(2, 1)], "the trigger deleted table 1's moves"
        with pytest.raises(StoreError, match="violates unique constraint"):
            await store.append_move(2, move_row(1))  # the primary key of moves is kept
        loaded = store.load(2)
        assert loaded is not None and [move.ply for move in loaded.moves] == [1]


def test_an_unreachable_server_is_a_clear_error_and_the_password_is_not_shown() -> None:
    url = "postgresql://ann:hunter2@127.0.0.1:1/parlour"
    with pytest.raises(StoreError, match=r"cannot connect to postgresql://ann@127.0.0.1:1/parlour") as info:
        PostgresStore.open(url)
    assert "hunter2" not in str(info.value) and redact(url) == "postgresql://ann@127.0.0.1:1/parlour"


def test_a_unix_socket_url_is_shown_as_the_socket_it_names_and_without_its_password() -> None:
    assert redact("postgresql://ann:hunter2@/parlour?host=/run/postgresql&port=5433") == "postgresql://ann@/parlour?host=/run/postgresql&port=5433"
    assert redact("postgresql://ann:hunter2@%2Frun%2Fpostgresql/parlour") == "postgresql://ann@/parlour?host=/run/postgresql"
    assert redact("postgresql:///parlour") == "postgresql:///parlour"  # libpq's default socket
    with pytest.raises(StoreError, match=r"cannot connect to postgresql://ann@/parlour\?host=/nonexistent&port=5433: ") as info:
        PostgresStore.open("postgresql://ann:hunter2@/parlour?host=/nonexistent&port=5433")
    assert "hunter2" not in str(info.value)


# --- the server stopped, then back ------------------------------------------------------------


async def test_writes_fail_as_unavailable_while_the_server_is_stopped_and_succeed_once_it_is_back(own_postgres: PostgresServer) -> None:
    url = own_postgres.create_database()
    async with PostgresStore.open(url) as store:
        await store.create_table(table_row(1, status="playing"))
        await store.append_move(1, move_row(1))
        own_postgres.stop()
        try:
            results = await asyncio.gather(store.append_move(1, move_row(2)), store.save_session("t", "ann"), return_exceptions=True)
            assert all(isinstance(error, StorageUnavailable) for error in results), results
            assert results[0] is not results[1], "each waiter raises its own exception"
            with pytest.raises(StorageUnavailable, match="cannot connect"):
                await store.append_move(1, move_row(2))
            with pytest.raises(StorageUnavailable):
                store.sessions()
        finally:
            own_postgres.start()
        await store.append_move(1, move_row(2))  # the writer connects again
        loaded = store.load(1)  # so does the reader
        assert loaded is not None and [m.ply for m in loaded.moves] == [1, 2]
        assert store.sessions() == {}, "nothing of the refused writes was kept"


async def test_a_restart_between_two_writes_costs_no_write(own_postgres: PostgresServer) -> None:
    url = own_postgres.create_database()
    async with PostgresStore.open(url) as store:
        await store.save_session("a", "ann")
        own_postgres.stop()
        own_postgres.start()
        await store.save_session("b", "bob")  # the old connection was ended by the shutdown: a new one, the same write
        assert store.sessions() == {"a": "ann", "b": "bob"}


# --- SQL rewritten for PostgreSQL ----------------------------------------------------------------


def test_the_rewrites() -> None:
    assert to_postgres("INSERT OR IGNORE INTO mutes (owner_key, muted_key) VALUES (?, ?)") == (
        "INSERT INTO mutes (owner_key, muted_key) VALUES (%s, %s) ON CONFLICT DO NOTHING"
    )
    assert to_postgres("SELECT x FROM t WHERE name LIKE 'a%' AND max(? - updated, 0) > ?") == (
        "SELECT x FROM t WHERE name LIKE 'a%%' AND greatest(%s - updated, 0) > %s"
    )
    assert pg_params((True, False, 1, 0.5, None, "t")) == (1, 0, 1, 0.5, None, "t")


async def test_mutes_and_casual_counts_written_twice(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        mute = ("INSERT OR IGNORE INTO mutes (owner_key, muted_key) VALUES (?, ?)", ("ann", "bob"))
        await store.write(mute)
        await store.write(mute)  # already muted: nothing to do, no error
        assert store.read(stored_mutes) == [("ann", "bob")]
        await store.write(*casual_sql([CasualResult("ann", "othello", 1.0)]))
        await store.write(*casual_sql([CasualResult("ann", "othello", 0.5)]))
        assert run_sql(postgres_url, "SELECT games, wins, draws, losses FROM casual_games") == [(2, 1, 1, 0)]


# --- parlour db copy ---------------------------------------------------------------------------


async def a_full_sqlite_database(path: Path) -> None:
    """An SQLite database with a row in every table ``parlour db copy`` copies."""
    await finished_games(path)
    async with SQLiteStore.open(path) as store:
        await store.append_move(3, move_row(1, clock_ms=1_000, other_ms=2_000, running=1))
        await store.save_session("tok", "ann")
        await store.write(
            ("INSERT INTO accounts (name_key, name, secret_hash, password_hash, created) VALUES (?, ?, ?, ?, ?)", ("ann", "Ann", "s", None, 1.5)),
            ("INSERT INTO ratings VALUES (?, ?, 'othello', 'blitz', 1600.5, 80, 0.06, 3, 2, 0, 1, 9.5)", ("ann", "Ann")),
            ("INSERT INTO rating_changes VALUES (1, 0, 'ann', 'Ann', 'othello', 'blitz', 1, 1500, 1600.5, 90, 80, 0.06, 0.06, 9.5)", ()),
            ("INSERT INTO mutes VALUES ('ann', 'bob')", ()),
            ("INSERT INTO chat VALUES (3, 1, 'ed', 'hello, %s?', 2.5)", ()),
            *casual_sql([CasualResult("ann", "othello", 0.0)]),
        )


def everything(db: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every copied table, in a stable order, read through a connection of its own."""
    rows = {}
    for name, columns in db_copy.COPIED_TABLES.items():
        rows[name] = sorted(tuple(row) for row in run_sql(db, f"SELECT {', '.join(columns)} FROM {name}"))
    rows["server_identity"] = run_sql(db, "SELECT server_id FROM server_identity")
    return rows


async def test_db_copy_copies_every_row_and_the_server_id(tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "parlour.sqlite3"
    await a_full_sqlite_database(source)
    assert archive_cli.run(games_args(source)) == 0
    listed_from_sqlite = capsys.readouterr().out
    parser = argparse.ArgumentParser(prog="parlour")
    db_copy.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["db", "copy", str(source), postgres_url])
    assert args.run(args) == 0
    assert "Copied" in capsys.readouterr().out
    copied, original = everything(postgres_url), everything(str(source))
    assert all(copied[name] for name in copied), "every table has a row to compare"
    assert copied == original
    assert archive_cli.run(games_args(postgres_url)) == 0
    assert capsys.readouterr().out == listed_from_sqlite
    async with PostgresStore.open(postgres_url) as store:  # a server can carry on from the copy
        [waiting] = store.unfinished_tables()
        assert waiting.id == 3 and waiting.clocks == {"remaining_ms": [1_000, 2_000], "running": 1}
        assert store.next_table_id() == 4


async def test_db_copy_refusals(tmp_path: Path, postgres_url: str) -> None:
    source = tmp_path / "parlour.sqlite3"
    await a_full_sqlite_database(source)
    err = io.StringIO()
    assert db_copy.run(argparse.Namespace(source=str(tmp_path / "none.sqlite3"), target=postgres_url), err=err) == 1
    assert "the source must be an SQLite database file" in err.getvalue()
    assert db_copy.run(argparse.Namespace(source=str(source), target=str(tmp_path / "b.sqlite3")), err=err) == 1
    assert "the target must be a PostgreSQL URL" in err.getvalue()
    db_copy.copy_database(str(source), postgres_url)
    with pytest.raises(db_copy.CopyError, match="holds Parlour data already"):
        db_copy.copy_database(str(source), postgres_url)


async def test_a_failed_copy_keeps_nothing(tmp_path: Path, postgres_url: str) -> None:
    source = tmp_path / "parlour.sqlite3"
    await a_full_sqlite_database(source)
    with psycopg.connect(postgres_url, autocommit=True) as connection:  # the target will refuse the last table's rows
        PostgresStore.open(postgres_url).close_sync()
        connection.execute("ALTER TABLE chat ADD CONSTRAINT no_hello CHECK (text NOT LIKE 'hello%%')")
    with pytest.raises(StoreError, match="nothing was kept"):
        db_copy.copy_database(str(source), postgres_url)
    assert run_sql(postgres_url, "SELECT count(*) FROM tables") == [(0,)]


async def test_a_parameter_postgresql_cannot_take_fails_its_write_alone(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        results = await asyncio.gather(
            store.write(("INSERT INTO sessions (token, name, created) VALUES (?, ?, ?)", ("a", object(), 1.0))),
            store.save_session("b", "bob"),
            return_exceptions=True,
        )
        assert isinstance(results[0], StoreError) and "cannot adapt" in str(results[0]) and results[1] is None
        await store.save_session("c", "cy")  # the writer lives on
        assert store.sessions() == {"b": "bob", "c": "cy"}


MOVES_CHECKS = "SELECT count(*) FROM pg_constraint WHERE conrelid = 'moves'::regclass AND contype = 'c'"


async def test_step_13_drops_the_check_on_seat_of_moves_and_keeps_their_other_rules(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:  # a database of schema version 12, with a move
        patch.setattr(pg_module, "PG_MIGRATIONS", _up_to(12))
        async with PostgresStore.open(postgres_url) as store:
            await store.create_table(table_row(1, status="playing"))
            await store.append_move(1, move_row(1))
    assert run_sql(postgres_url, MOVES_CHECKS) == [(1,)]
    async with PostgresStore.open(postgres_url) as store:
        assert run_sql(postgres_url, "SELECT version FROM parlour_schema") == [(13,)]
        assert run_sql(postgres_url, MOVES_CHECKS) == [(0,)]
        await store.append_move(1, move_row(2))
        with pytest.raises(StoreError, match="violates unique constraint"):
            await store.append_move(1, move_row(2))  # the primary key of moves is kept
        with pytest.raises(StoreError, match="violates not-null constraint"):
            await store.write(("INSERT INTO moves (table_id, ply, seat, move, at) VALUES (?, ?, ?, ?, ?)", (1, 3, None, "d3", 1.0)))
        loaded = store.load(1)
        assert loaded is not None and [(move.ply, move.seat) for move in loaded.moves] == [(1, move_row(1).seat), (2, move_row(2).seat)]


# --- the moves' short way (server.storage.pg_moves) ----------------------------------------------


async def _prepared_on_writer(store: PostgresStore) -> set[str]:
    assert store._writer is not None
    cursor = await store._writer.execute("SELECT name FROM pg_prepared_statements")
    return {row[0] for row in await cursor.fetchall()}


async def test_a_move_commit_is_a_prepared_statement_from_its_first_use_and_groups_take_multi_row_ones(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        await store.create_table(table_row(1, status="playing"))
        await store.create_table(table_row(2, status="playing"))
        await store.append_move(1, move_row(1))
        assert "parlour_moves_0_1" in await _prepared_on_writer(store)  # psycopg's own would wait for a fifth use
        async with store._writer_gate:  # the writer is busy: the next three moves pile up into one group
            moves = [asyncio.ensure_future(store.append_move(table, move_row(ply))) for table, ply in ((2, 1), (1, 2), (2, 2))]
            await asyncio.sleep(0.05)
        await asyncio.gather(*moves)
        assert "parlour_moves_0_3" in await _prepared_on_writer(store)
        assert store.commits == 4  # two tables, the first move, then one commit of three moves
        assert [m.ply for m in store.load(1).moves] == [1, 2] and [m.ply for m in store.load(2).moves] == [1, 2]  # type: ignore[union-attr]


async def test_a_move_whose_parameter_its_column_cannot_take_fails_alone_and_names_it(postgres_url: str) -> None:
    """Move parameters go in PostgreSQL's binary form, typed by their columns: a text where a bigint belongs is refused by
    the server before it is sent (as text PostgreSQL would have read ``'1'`` as 1), and its group's other moves go."""
    async with PostgresStore.open(postgres_url) as store:
        await store.create_table(table_row(1, status="playing"))
        await store.create_table(table_row(2, status="playing"))
        for statement in (append_ply_sql("1", 1, 0, "d3", 1.5), append_ply_sql(1, 1, 0, "d3", 1.5, clock_ms=2**63)):  # type: ignore[arg-type]
            with pytest.raises(StoreError, match=r"the write failed: a move's parameter \$[17] cannot be (str '1'|int 9223372036854775808)"):
                await store.write(statement)
        async with store._writer_gate:  # one group: the bad move among good ones
            writes = [
                asyncio.ensure_future(store.write(statement))
                for statement in (append_ply_sql(1, 1, 0, "d3", 1.5), append_ply_sql(2, "x", 0, "d3", 1.5), append_ply_sql(2, 1, 1, "e6", 2.5))  # type: ignore[arg-type]
            ]
            await asyncio.sleep(0.05)
        results = await asyncio.gather(*writes, return_exceptions=True)
        assert results[0] is None and results[2] is None, results
        # found again statement by statement, where PostgreSQL's own reading of the text refuses it
        assert isinstance(results[1], StoreError) and "bigint" in str(results[1]) and "$2" in str(results[1]), results[1]
        assert run_sql(postgres_url, "SELECT table_id, ply, seat, move, at FROM moves ORDER BY table_id") == [(1, 1, 0, "d3", 1.5), (2, 1, 1, "e6", 2.5)]


async def test_moves_go_exactly_in_binary_and_a_timed_moves_missing_clocks_as_null(postgres_url: str) -> None:
    at = 1764400000.123456789  # every bit of a double, which binary keeps as it is
    async with PostgresStore.open(postgres_url) as store:
        await store.create_table(table_row(1, status="playing"))
        await store.append_move(1, move_row(1, "é5", at=at, forced=True))
        await store.append_move(1, move_row(2, at=at + 1, clock_ms=59_000, other_ms=2**40, running=None))
        await store.append_move(1, move_row(3, at=-0.0, clock_ms=None, other_ms=1, running=1))
        assert run_sql(postgres_url, "SELECT ply, seat, move, forced, at, clock_ms, other_ms, running FROM moves ORDER BY ply") == [
            (1, 0, "é5", 1, at, None, None, None),
            (2, 1, "d3", 0, at + 1, 59_000, 2**40, None),
            (3, 0, "d3", 0, -0.0, None, 1, 1),
        ]
        loaded = store.load(1)
        assert loaded is not None and [(m.move, m.at, m.forced, m.clock_ms) for m in loaded.moves] == [("é5", at, True, None), ("d3", at + 1, False, 59_000), ("d3", -0.0, False, None)]


async def test_a_duplicate_ply_in_a_group_of_moves_fails_only_its_own_write(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        await store.create_table(table_row(1, status="playing"))
        await store.create_table(table_row(2, status="playing"))
        await store.append_move(1, move_row(1))
        async with store._writer_gate:
            moves = [asyncio.ensure_future(store.append_move(table, move_row(ply))) for table, ply in ((2, 1), (1, 1), (1, 2))]
            await asyncio.sleep(0.05)
        results = await asyncio.gather(*moves, return_exceptions=True)
        assert results[0] is None and results[2] is None, results
        assert isinstance(results[1], StoreError) and "duplicate key" in str(results[1]), results[1]
        assert [m.ply for m in store.load(1).moves] == [1, 2] and [m.ply for m in store.load(2).moves] == [1]  # type: ignore[union-attr]


async def test_a_restart_between_two_moves_costs_no_move(own_postgres: PostgresServer) -> None:
    url = own_postgres.create_database()
    async with PostgresStore.open(url) as store:
        await store.create_table(table_row(1, status="playing"))
        await store.append_move(1, move_row(1))
        own_postgres.stop()
        own_postgres.start()
        await store.append_move(1, move_row(2))  # a new connection, where the statement is prepared again
        assert [m.ply for m in store.load(1).moves] == [1, 2]  # type: ignore[union-attr]


# --- grouping (server.storage.pacing) -------------------------------------------------------------


async def test_two_cohorts_of_tables_merge_into_one_commit_a_cycle(postgres_url: str) -> None:
    """Ten games whose moves come back as soon as their commit returns, the second five starting while the first
    five's commit is on its way: without pacing they take turns, five moves a commit, for ever."""
    async with PostgresStore.open(postgres_url, commit_delay_s=0.05) as store:
        for table in range(1, 11):
            await store.create_table(table_row(table, status="playing"))

        async def play(table: int) -> None:
            for ply in range(1, 31):
                await store.append_move(table, move_row(ply))

        before_commits, before_writes = store.commits, store.writes
        first = [asyncio.ensure_future(play(table)) for table in range(1, 6)]
        while len(store._pending) < 5:  # the first five moves are made ...
            await asyncio.sleep(0)
        while store._pending:  # ... and taken by the writer: their commit is on its way
            await asyncio.sleep(0)
        second = [asyncio.ensure_future(play(table)) for table in range(6, 11)]
        await asyncio.gather(*first, *second)
        writes, commits = store.writes - before_writes, store.commits - before_commits
        assert writes == 300 and writes / commits >= 8, f"{commits} commits of 300 moves"
        assert all(len(store.load(table).moves) == 30 for table in range(1, 11))  # type: ignore[union-attr]



def test_connect_then_closes_its_connection_when_the_setup_fails_and_keeps_it_when_it_succeeds(postgres_url: str) -> None:
    seen: list[psycopg.Connection] = []

    def refuses(connection: psycopg.Connection) -> None:
        seen.append(connection)
        raise SchemaError("not ours")

    with pytest.raises(SchemaError, match="not ours"):
        pg_module.connect_then(postgres_url, refuses)
    assert seen and seen[0].closed
    kept = pg_module.connect_then(postgres_url, lambda connection: connection.execute("SELECT 1"))
    try:
        assert not kept.closed and kept.execute("SELECT 2").fetchone() == (2,)
    finally:
        kept.close()


async def test_a_writer_connection_ended_while_idle_costs_no_write(own_postgres: PostgresServer) -> None:
    url = own_postgres.create_database()
    async with PostgresStore.open(url) as store:
        await store.save_session("a", "ann")  # prepared on the writer's connection: the next goes straight to execution
        others = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        run_sql(url, others)  # as a restart ends every connection: a goodbye, then the end
        await asyncio.sleep(0.5)
        await store.save_session("b", "bob")
        assert store.sessions() == {"a": "ann", "b": "bob"}


async def _until_a_backend_waits_for_a_lock(url: str, seconds: float = 30.0) -> None:
    """Return once some connection to ``url``'s database waits for a lock; ``AssertionError`` after ``seconds``."""
    waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    deadline = asyncio.get_running_loop().time() + seconds
    while run_sql(url, waiting) == [(0,)]:
        assert asyncio.get_running_loop().time() < deadline, "the writer never waited for the other transaction's row"
        await asyncio.sleep(0.02)


async def test_a_write_that_postgresql_rolls_back_as_a_deadlock_victim_is_run_again(postgres_url: str) -> None:
    mute = "INSERT INTO mutes (owner_key, muted_key) VALUES (?, ?)"
    unmute = "DELETE FROM mutes WHERE owner_key = ? AND muted_key = ?"
    async with PostgresStore.open(postgres_url) as store:
        await store.write((mute, ("ann", "bob")), (mute, ("cat", "dan")))
        other = psycopg.connect(postgres_url)  # another process's transaction, locking the same rows the other way round
        other.execute("SET deadlock_timeout = '60s'")  # only the writer's backend looks for the cycle, so it is the victim
        other.execute("DELETE FROM mutes WHERE owner_key = 'cat'")  # holds cat's row
        writing = asyncio.ensure_future(store.write((unmute, ("ann", "bob")), (unmute, ("cat", "dan"))))  # ann's, then waits for cat's
        await _until_a_backend_waits_for_a_lock(postgres_url)
        blocked = asyncio.ensure_future(asyncio.to_thread(other.execute, "DELETE FROM mutes WHERE owner_key = 'ann'"))  # waits for ann's
        await blocked  # PostgreSQL ended the writer's transaction after the writer's deadlock_timeout (1 s)
        other.commit()
        other.close()
        await writing  # run again once the other transaction is over: nothing of it was lost
        assert store.read(lambda reader: reader.execute("SELECT count(*) FROM mutes").fetchone()) == (0,)
