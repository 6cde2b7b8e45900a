"""A node of a cluster takes its advisory locks again after PostgreSQL restarts (a real PostgreSQL of its own, stopped
and started): its node name runs once, and no lone server joins the cluster's database, as before the restart."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from server.app import Server, ServerConfig
from server.storage.dblock import DatabaseInUse
from server.storage.pg_lock import NODE_KEY, SERVER_KEY, PostgresLock
from tests.pgserver import running_cluster

from .redis_server import RedisServer
from .test_cluster_nodes import until

HELD = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid IN (%s, %s) "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def _held(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(HELD, (SERVER_KEY, NODE_KEY)).fetchone()
        return int(row[0]) if row else 0


async def test_a_node_takes_its_locks_again_after_postgresql_restarts(redis_server: RedisServer) -> None:
    with running_cluster() as postgres:
        url = postgres.create_database()
        node = Server(ServerConfig(host="127.0.0.1", port=0, server_name="club", db_path=url, bus=redis_server.url, node="a"))
        await node.start()
        try:
            await asyncio.to_thread(postgres.stop)
            await asyncio.to_thread(postgres.start)

            async def both_held() -> bool:
                return await asyncio.to_thread(_held, url) == 2  # the cluster's shared lock and node a's own

            await until(both_held, "node a to take its locks again", timeout_s=15.0)
            with pytest.raises(DatabaseInUse, match="node 'a' already runs"):
                PostgresLock.acquire(url, "a")
            with pytest.raises(DatabaseInUse, match="another Parlour server runs on"):
                PostgresLock.acquire(url)
        finally:
            await node.close()
