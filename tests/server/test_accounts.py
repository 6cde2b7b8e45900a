"""Claimed names over real sockets, with real SQLite files: claim, prove, refuse, rate-limit, survive restarts."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import pytest

from client import Client
from server.app import Server, ServerConfig
from server.guesses import GuessLimits

from .conftest import refused

Start = Callable[..., Awaitable[Server]]


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Start]:
    """Factory: ``await start(accounts=...)`` runs a server on 127.0.0.1 on ``tmp_path/parlour.db``; a second call after
    ``close()`` of the first reopens the same file (a restart)."""
    started: list[Server] = []

    async def factory(**config: object) -> Server:
        fields = {"host": "127.0.0.1", "port": 0, "server_name": "test", "db_path": str(tmp_path / "parlour.db"), **config}
        server = Server(ServerConfig(**fields))  # type: ignore[arg-type]
        await server.start()
        started.append(server)
        return server

    yield factory
    for server in started:
        await server.close()


async def hello(server: Server, name: str, **kwargs: object) -> Client:
    return await Client.connect("127.0.0.1", server.port, name=name, timeout_s=5.0, **kwargs)  # type: ignore[arg-type]


def new_secret() -> str:
    return secrets.token_urlsafe(32)


async def test_a_claimed_name_needs_its_secret(start: Start) -> None:
    server = await start()
    secret = new_secret()
    owner = await hello(server, "alice", claim=True, secret=secret)
    assert owner.welcome is not None and owner.welcome.claimed and owner.welcome.accounts == "optional"
    assert server.names["alice"].claimed
    await owner.close()

    await refused(hello(server, "Alice"), "name_claimed")
    await refused(hello(server, "alice", secret=new_secret()), "name_claimed")
    again = await hello(server, "alice", secret=secret)
    assert again.welcome is not None and again.welcome.claimed
    await again.close()


async def test_a_guest_name_is_not_claimed(start: Start) -> None:
    server = await start()
    guest = await hello(server, "bob")
    assert guest.welcome is not None and not guest.welcome.claimed
    assert not server.names["bob"].claimed
    await guest.close()
