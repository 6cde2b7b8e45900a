"""Shared fixtures: a real server on 127.0.0.1 with an ephemeral port, and real clients."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable, Iterator

import pytest

from client import Client
from server.app import Server, ServerConfig

if TYPE_CHECKING:
    from tests.pgserver import PostgresServer

# No test multicasts on a real network: mDNS (advertising and browsing, in this
# process and every process it starts) stays on loopback unless a test, such
# as the network-namespace one, sets its own interfaces.
os.environ["PARLOUR_MDNS_INTERFACES"] = "127.0.0.1"


def _share_child_bytecode() -> str | None:
    """Let the Python processes the tests start share one bytecode cache; return its directory if made here.

    With ``PYTHONDONTWRITEBYTECODE`` set, each of the suite's hundreds of child
    interpreters (``parlour`` servers and clients, bot workers, pytest-xdist
    workers) would compile the checkout's modules afresh, about 0.25 s of CPU
    each. Instead they read and write the cache in a temporary directory of
    this run (``PYTHONPYCACHEPREFIX``), never in the checkout; it is removed at
    the end by the process that made it (xdist workers inherit it).
    """
    if "PYTHONDONTWRITEBYTECODE" not in os.environ or "PYTHONPYCACHEPREFIX" in os.environ:
        return None
    directory = tempfile.mkdtemp(prefix="parlour-tests-pycache-")
    os.environ["PYTHONPYCACHEPREFIX"] = directory
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    return directory


_CHILD_BYTECODE = _share_child_bytecode()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _CHILD_BYTECODE is not None:
        shutil.rmtree(_CHILD_BYTECODE, ignore_errors=True)

Connect = Callable[..., Awaitable[Client]]
ConfiguredServer = Callable[..., Awaitable[Server]]

GRACE_S = 0.3
"""How long the test server holds a disconnected player's seat."""


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    """A running in-process server listening on 127.0.0.1 (port chosen by the OS)."""
    srv = Server(ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=GRACE_S))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()


@pytest.fixture
async def configured_server() -> AsyncIterator[ConfiguredServer]:
    """Factory: ``await configured_server(limits=..., password=...)`` runs a server on 127.0.0.1
    with those :class:`ServerConfig` fields (an ephemeral port; the test grace period otherwise)."""
    started: list[Server] = []

    async def factory(**config: object) -> Server:
        server = Server(ServerConfig(**{"host": "127.0.0.1", "port": 0, "server_name": "test", "grace_s": GRACE_S, **config}))  # type: ignore[arg-type]
        await server.start()
        started.append(server)
        return server

    yield factory
    for server in started:
        await server.close()


@pytest.fixture
async def connect(server: Server) -> AsyncIterator[Connect]:
    """Factory: ``await connect("ann")`` returns a client that has said hello and watches the lobby
    (``watch_lobby=False`` for one that does not)."""
    clients: list[Client] = []

    async def factory(name: str, **kwargs: object) -> Client:
        kwargs.setdefault("watch_lobby", True)  # these tests follow the lobby as every client once did
        client = await Client.connect("127.0.0.1", server.port, name=name, **kwargs)  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield factory
    for client in clients:
        await client.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator["PostgresServer"]:
    """A private PostgreSQL server for this test session (:mod:`tests.pgserver`), stopped and deleted at the end.

    Without PostgreSQL's programs: a failure saying how to install them when ``CI`` is set, else a skip with that message.
    """
    from tests.pgserver import running_cluster

    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_server: "PostgresServer") -> str:
    """The URL of a fresh, empty database on :func:`postgres_server`."""
    return postgres_server.create_database()


@pytest.fixture(params=["sqlite", "postgres"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ``--db`` for each engine in turn: a fresh SQLite file, then a fresh PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "parlour.sqlite3")
