"""``parlour serve --bus/--node`` refuses what it cannot use with one clear line, never a traceback (real processes)."""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests.pgserver import PostgresServer, run_sql

from ..e2e.harness import ROOT, othello_after_d3, start_server
from .redis_server import RedisServer
from ..e2e.test_postgres_e2e import SERVER_CONNECTIONS_SQL
from ..e2e.test_startup_e2e import SERVE, serve_fails


def test_a_node_name_without_a_bus_is_refused() -> None:
    done = subprocess.run([*SERVE, "--no-db", "--node", "a"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--node names this node in a cluster: it needs --bus redis://HOST:PORT" in done.stderr


def test_a_bus_that_is_not_a_redis_url_is_refused() -> None:
    done = subprocess.run([*SERVE, "--no-db", "--bus", "localhost:6379"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--bus takes a Redis URL (redis://HOST:PORT), not 'localhost:6379'" in done.stderr


def test_a_redis_that_does_not_answer_is_one_line_and_status_1(postgres_url: str) -> None:
    line = serve_fails("--db", postgres_url, "--bus", "redis://127.0.0.1:1", "--node", "a", "--log-level", "WARNING")  # (a new database is an INFO line)
    assert "cannot join the cluster: cannot reach Redis at redis://127.0.0.1:1" in line


@pytest.mark.parametrize("storage", [("--no-db",), ("--db", "parlour.sqlite3"), ()])
def test_a_bus_without_a_postgresql_database_is_refused(storage: tuple[str, ...]) -> None:
    done = subprocess.run([*SERVE, *storage, "--bus", "redis://127.0.0.1:1"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--bus needs --db postgresql://USER@HOST:PORT/DB: the nodes of a cluster share one PostgreSQL database" in done.stderr


def test_a_lease_out_of_range_is_refused(postgres_url: str) -> None:
    done = subprocess.run(
        [*SERVE, "--db", postgres_url, "--bus", "redis://127.0.0.1:1", "--lease-s", "0.1"], cwd=ROOT, capture_output=True, text=True, timeout=30
    )  # fmt: skip
    assert done.returncode == 2 and "--lease-s must be 1 to 600 seconds, not 0.1" in done.stderr, done.stderr


def test_a_second_server_on_one_postgresql_database_is_refused_in_one_line(postgres_url: str) -> None:
    first, _ = start_server("--db", postgres_url)
    try:
        line = serve_fails("--db", postgres_url)
    finally:
        first.kill()
    assert "another Parlour server runs on postgresql://parlour@127.0.0.1:" in line and "one server per database" in line


def test_a_node_name_runs_once_and_no_lone_server_joins_a_clusters_database(redis_server: RedisServer, postgres_url: str) -> None:
    node, _ = start_server("--db", postgres_url, "--bus", redis_server.url, "--node", "a")
    try:
        twin = serve_fails("--db", postgres_url, "--bus", redis_server.url, "--node", "a")
        alone = serve_fails("--db", postgres_url)
    finally:
        node.kill()
    assert "node 'a' already runs on postgresql://" in twin and "give every node of a cluster its own --node name" in twin
    assert "another Parlour server runs on postgresql://" in alone


def test_a_port_in_use_is_still_one_line_without_a_bus() -> None:
    """The cluster's refusal is caught after the listening one, so a port in use is not a traceback."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        line = serve_fails("--no-db", "--port", str(held.getsockname()[1]))
    assert "cannot listen on 127.0.0.1:" in line and "address already in use" in line


def test_a_released_database_lock_is_free_at_once_for_a_server_started_again(postgres_url: str) -> None:
    from server.storage.pg_lock import PostgresLock
    from tests.pgserver import run_sql

    for _ in range(20):  # closing the lock's connection alone frees it only once PostgreSQL's backend has seen the close
        lock = PostgresLock.acquire(postgres_url)
        lock.release()
        assert run_sql(postgres_url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == [(0,)]
        PostgresLock.acquire(postgres_url, "a").release()


def test_a_node_on_the_same_machine_as_postgresql_uses_its_unix_socket_for_every_connection(
    redis_server: RedisServer, postgres_server: PostgresServer
) -> None:
    """The leases, the node's lock, the writer and the reader all follow ``--db``'s unix socket; a fenced move is stored."""
    socket_url = postgres_server.create_database(unix_socket=True)
    node, port = start_server("--db", socket_url, "--bus", redis_server.url, "--node", "a")
    ann, bob = othello_after_d3(f"127.0.0.1:{port}")
    try:
        over_tcp = postgres_server.url(socket_url.split("/")[3].split("?")[0])
        assert run_sql(over_tcp, "SELECT ply, move FROM moves") == [(1, "d3")]
        assert run_sql(over_tcp, "SELECT table_id, node FROM table_leases") == [(1, "a")]
        [(socket_connections, tcp_connections)] = run_sql(over_tcp, SERVER_CONNECTIONS_SQL)
    finally:
        ann.kill()
        bob.kill()
        node.kill()
    assert tcp_connections == 0
    assert socket_connections >= 4  # the writer, the reader, the node's lock and the leases' connection
