"""One server per PostgreSQL database after PostgreSQL restarts: the server takes its advisory lock again, or, if another
took it meanwhile, refuses every change and says so (a real PostgreSQL of this module's own, stopped and started)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator

import psycopg
import pytest

from server.app import Server, ServerConfig
from server.storage.dblock import DatabaseInUse
from server.storage.pg_lock import SERVER_KEY
from tests.pgserver import PostgresServer, running_cluster

from .conftest import Raw

TIMEOUT_S = 15.0

ADVISORY = (
    "SELECT pid, granted FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = %s AND objid = 0 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this module's own, which its tests stop and start again."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
async def lone(own_postgres: PostgresServer) -> AsyncIterator[tuple[Server, str]]:
    """A server alone on a fresh database of :func:`own_postgres`, and the database's URL."""
    url = own_postgres.create_database()
    server = Server(ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=url))
    await server.start()
    yield server, url
    await server.close()


async def until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    for _ in range(int(TIMEOUT_S / 0.05)):
        result = await check()
        if result:
            return result
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _server_locks(url: str) -> list[tuple[int, bool]]:
    """``(pid, granted)`` of each session holding or waiting for the database's lock."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [(int(pid), bool(granted)) for pid, granted in conn.execute(ADVISORY, (SERVER_KEY,)).fetchall()]


async def _held(url: str) -> bool:
    return any(granted for _pid, granted in await asyncio.to_thread(_server_locks, url))


async def _player(server: Server, name: str) -> Raw:
    conn = Raw(*await asyncio.open_connection("127.0.0.1", server.port))
    assert (await conn.hello(name))["type"] == "welcome"
    return conn


async def test_a_lone_server_takes_its_lock_again_after_postgresql_restarts(lone: tuple[Server, str], own_postgres: PostgresServer) -> None:
    server, url = lone
    await asyncio.to_thread(own_postgres.stop)
    await asyncio.to_thread(own_postgres.start)
    await until(lambda: _held(url), "the server to take its lock again")
    second = Server(ServerConfig(host="127.0.0.1", port=0, server_name="second", db_path=url))
    with pytest.raises(DatabaseInUse, match="another Parlour server runs on"):
        await second.start()  # refused, as before the restart
    ann = await _player(server, "ann")
    created = await until(lambda: _created(ann), "the server to save a new table again")
    assert created["type"] == "table_joined", created
    await ann.close()


async def _created(conn: Raw) -> dict[str, Any] | None:
    reply = await conn.request("create_table", game="othello", options={"size": 6})
    return reply if reply["type"] == "table_joined" else None


def _take_the_lock(url: str, taken: list[psycopg.Connection[Any]]) -> None:
    """As another server would: wait for the database's lock, then keep it (the connection goes to ``taken``)."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("SELECT pg_advisory_lock(%s, 0)", (SERVER_KEY,))
    taken.append(conn)


async def test_a_server_whose_lock_another_took_meanwhile_refuses_every_change_and_says_so(
    lone: tuple[Server, str], caplog: pytest.LogCaptureFixture
) -> None:
    server, url = lone
    ann, bob = await _player(server, "ann"), await _player(server, "bob")
    table = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    move = next(push for push in await ann.sync() if push["type"] == "game_started")["view"]["legal_moves"][0]
    holder = [pid for pid, granted in await asyncio.to_thread(_server_locks, url) if granted]
    assert len(holder) == 1, holder
    taken: list[psycopg.Connection[Any]] = []
    waiting = asyncio.ensure_future(asyncio.to_thread(_take_the_lock, url, taken))
    try:
        await until(lambda: _someone_waits(url), "the other server to wait for the lock")
        with caplog.at_level(logging.WARNING), psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (holder[0],))  # as a restart ends it; the waiter gets the lock
            await waiting
            await until(lambda: _said(caplog, "another process took this server's lock"), "the server to log that it lost its lock")
        refused = await ann.request("move", table=table, move=move)
        assert refused["type"] == "error" and refused["code"] == "storage_unavailable", refused
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM moves WHERE table_id = %s", (table,)).fetchone() == (0,)
    finally:
        waiting.cancel()
        for conn in taken:
            conn.close()
    await ann.close()
    await bob.close()


async def _someone_waits(url: str) -> bool:
    return any(not granted for _pid, granted in await asyncio.to_thread(_server_locks, url))


async def _said(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in record.getMessage() and record.levelno == logging.ERROR for record in caplog.records)


async def test_while_postgresql_is_down_a_change_refused_by_the_lock_says_the_database_cannot_be_reached(
    lone: tuple[Server, str], own_postgres: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    server, url = lone
    ann = await _player(server, "ann")
    await asyncio.to_thread(own_postgres.stop)
    try:
        with caplog.at_level(logging.WARNING):
            await until(lambda: _said_warning(caplog, "taking the lock again"), "the lock's check to see its connection end")
            await asyncio.sleep(1.5)  # at least one more check, which finds PostgreSQL still down
            refused = await ann.request("create_table", game="othello", options={"size": 6})
        assert refused["type"] == "error" and refused["code"] == "storage_unavailable", refused
        saved = [record.getMessage() for record in caplog.records if "cannot save" in record.getMessage()]
        assert saved and all(": the database cannot be reached: " in line for line in saved), saved
        assert any("the server's lock is not taken again yet" in line for line in saved), saved
    finally:
        await asyncio.to_thread(own_postgres.start)
    await until(lambda: _held(url), "the server to take its lock again")
    await ann.close()


async def _said_warning(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)
