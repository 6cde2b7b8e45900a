"""Fixtures of the cluster tests: one real ``redis-server`` for the session, emptied before each test."""

from __future__ import annotations

from typing import AsyncIterator, Iterator

import pytest

from .redis_server import RedisServer, find_redis_server
from .test_cluster_identity import SharedNodes


@pytest.fixture(scope="session")
def redis_server_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private ``redis-server`` on an ephemeral port, started once and stopped at the end."""
    server = RedisServer(find_redis_server(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_server(redis_server_session: RedisServer) -> Iterator[RedisServer]:
    """The session's ``redis-server``, empty, running (a test that kills it gets it started again)."""
    if redis_server_session.process is None or redis_server_session.process.poll() is not None:
        redis_server_session.start()
    redis_server_session.flush()
    yield redis_server_session
    if redis_server_session.process is None or redis_server_session.process.poll() is not None:
        redis_server_session.start()


@pytest.fixture
async def two(postgres_url: str, redis_server: RedisServer) -> AsyncIterator[SharedNodes]:
    """Nodes ``a`` and ``b`` sharing the test's PostgreSQL database and Redis, closed after the test."""
    nodes = SharedNodes(postgres_url, redis_server.url)
    for name in ("a", "b"):
        await nodes.start(name)
    yield nodes
    await nodes.close()
