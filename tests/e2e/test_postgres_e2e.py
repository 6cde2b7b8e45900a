"""A real ``parlour serve --db postgresql://...`` whose PostgreSQL server stops mid-game: moves are refused with
``storage_unavailable`` and change nothing; once PostgreSQL is back, play goes on where it was.

A server that cannot use its PostgreSQL database says why in one line.
(SIGKILL of the server and a restart on PostgreSQL: ``test_restart_e2e.py``, run on both engines.)
"""

from __future__ import annotations

import time
from typing import Iterator

import pytest

from server.storage.pg_lock import SERVER_KEY
from tests.pgserver import PostgresServer, free_port, run_sql, running_cluster

from .harness import assert_no_traceback_nor_error, othello_after_d3, refused_until_fixed, start_server
from .test_startup_e2e import serve_fails


@pytest.fixture
def stoppable_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own: it is stopped mid-test."""
    with running_cluster() as cluster:
        yield cluster


def test_postgresql_stopped_mid_game_refuses_moves_clearly_and_play_resumes_when_it_returns(stoppable_postgres: PostgresServer) -> None:
    url = stoppable_postgres.create_database()
    server, port = start_server("--db", url, "--grace", "60", "--abort-after", "0")
    address = f"127.0.0.1:{port}"
    ann, bob = othello_after_d3(address, options="tc=5+0", bob_args=("--keep-going",))
    try:
        stoppable_postgres.stop()
        refused_until_fixed(
            server, address, ann, bob, code="storage_unavailable", logged=".*: the database cannot be reached: ",
            fix=lambda: _start_until_the_server_holds_its_lock(stoppable_postgres, url),
            text=r"The server cannot save moves right now \(its database cannot be reached\); nothing was changed\. Try again later\.",
        )  # fmt: skip
    finally:
        ann.kill()
        bob.kill()
        server.kill()
    assert_no_traceback_nor_error(server, ann, bob)


def _start_until_the_server_holds_its_lock(postgres: PostgresServer, url: str, timeout_s: float = 30.0) -> None:
    """Start ``postgres`` again, then wait until the server has taken its database's lock again (it checks each
    second, ``pg_lock.CHECK_S``: until then it refuses changes as while PostgreSQL was down)."""
    postgres.start()
    deadline = time.monotonic() + timeout_s
    held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = %s AND objid = 0 AND granted"
    while run_sql(url, held, (SERVER_KEY,)) != [(1,)]:
        assert time.monotonic() < deadline, "the server did not take its lock again after PostgreSQL came back"
        time.sleep(0.1)


def test_an_unreachable_postgresql_is_refused_in_one_line_without_the_password(postgres_server: PostgresServer) -> None:
    unused = free_port()
    line = serve_fails("--db", f"postgresql://ann:hunter2@127.0.0.1:{unused}/parlour")
    assert f"cannot use the database postgresql://ann@127.0.0.1:{unused}/parlour: cannot connect to" in line
    assert "hunter2" not in line


def test_a_database_of_another_program_is_refused_in_one_line(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    run_sql(url, "CREATE TABLE invoices (id INTEGER)")
    assert "holds some other program's tables (invoices), not a Parlour database" in serve_fails("--db", url)


SERVER_CONNECTIONS_SQL = """
SELECT count(*) FILTER (WHERE client_addr IS NULL), count(*) FILTER (WHERE client_addr IS NOT NULL)
FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
"""
"""How many other connections to the database come over the unix socket (no client address), how many over TCP."""


def test_a_server_on_the_same_machine_reaches_postgresql_over_its_unix_socket(postgres_server: PostgresServer) -> None:
    """``--db 'postgresql://USER@/DB?host=SOCKETDIR&port=PORT'``: every connection of the server goes over the socket."""
    socket_url = postgres_server.create_database(unix_socket=True)
    database = socket_url.split("/")[3].split("?")[0]
    server, port = start_server("--db", socket_url)
    ann, bob = othello_after_d3(f"127.0.0.1:{port}")
    try:
        over_tcp = postgres_server.url(database)
        assert run_sql(over_tcp, "SELECT ply, move FROM moves") == [(1, "d3")]
        [(socket_connections, tcp_connections)] = run_sql(over_tcp, SERVER_CONNECTIONS_SQL)
        where = f"postgresql://parlour@/{database}?host={postgres_server.directory}&port={postgres_server.port}"
        assert server.expect(r"games kept in ([^;\s]+)")[1] == where
    finally:
        ann.kill()
        bob.kill()
        server.kill()
    assert tcp_connections == 0
    assert socket_connections >= 3  # the writer, the reader and the database lock's connection
    assert_no_traceback_nor_error(server, ann, bob)
