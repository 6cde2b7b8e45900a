"""The server's stable identity (``identify``, ``welcome.server_id``) and the notice to a replaced connection."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from client import Client
from client.claims import NameClaims
from client.cli import ConnectSettings, _connect, _reconnector
from client.terminal import TerminalClient
from client.tokens import SecretStore, TokenStore
from protocol import messages as m
from server.players import passwords
from server.app import Server, ServerConfig
from server.core.names import name_key

from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, RawFactory


async def test_identify_answers_before_hello_and_the_handshake_still_works(raw: RawFactory, server: Server) -> None:
    conn = await raw()
    identity = await conn.request("identify")
    assert identity == {"type": "identity", "id": identity["id"], "server_id": server.server_id, "server": "test"}
    welcome = await conn.hello("ann")
    assert welcome["type"] == "welcome" and welcome["server_id"] == server.server_id and welcome["grace_s"] == server.config.grace_s
    again = await conn.request("identify")
    assert again["server_id"] == server.server_id, "identify works after hello too"


async def test_one_server_has_one_id_through_every_address_spelling(configured_server: ConfiguredServer) -> None:
    server = await configured_server(host="0.0.0.0")
    seen = set()
    for host in ("127.0.0.1", "localhost", "127.0.0.2"):  # 127.0.0.2 is loopback too on Linux
        client = await Client.open(host, server.port)
        try:
            identity = await client.identify()
            assert identity is not None
            seen.add(identity.server_id)
        finally:
            await client.close()
    assert seen == {server.server_id}


async def test_the_id_is_kept_in_the_database_and_one_per_process_without(tmp_path: Path) -> None:
    ids = []
    for db_path in (tmp_path / "a.sqlite3", tmp_path / "a.sqlite3", tmp_path / "b.sqlite3", None, None):
        server = Server(ServerConfig(host="127.0.0.1", port=0, db_path=str(db_path) if db_path else None))
        await server.start()
        try:
            client = await Client.connect("127.0.0.1", server.port, name="ann")
            assert client.welcome is not None and client.welcome.server_id == server.server_id
            await client.close()
            ids.append(server.server_id)
        finally:
            await server.close()
    same_file, again, other_file, no_db, another_no_db = ids
    assert same_file == again, "a restarted server on the same database is the same server"
    assert len({same_file, other_file, no_db, another_no_db}) == 4


async def test_the_replaced_connection_is_told_signed_in_elsewhere_and_closed(raw: RawFactory, server: Server) -> None:
    first = await Client.connect("127.0.0.1", server.port, name="ann")
    second = await Client.connect("127.0.0.1", server.port, name="ann", token=first.token)
    try:
        notice = await first.next_event(m.Error, timeout_s=TIMEOUT_S)
        assert (notice.code, notice.id) == ("signed_in_elsewhere", None)
        assert notice.message == "you signed in elsewhere: another connection took over this session"
        await asyncio.wait_for(first.closed.wait(), TIMEOUT_S)
        assert first.superseded and first.close_reason == "signed in elsewhere: another connection took over this session"
        await second.ping()
    finally:
        await second.close()
        await first.close()


async def test_two_line_clients_with_one_claimed_name_do_not_take_the_session_from_each_other(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second sign-in proves the claimed name: the first stops, says so, and never resumes (tokens and secrets still work)."""
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)
    monkeypatch.setattr("client.reconnect.RETRY_DELAYS_S", (0.05,))  # a client that did retry would do so at once
    secrets_here = SecretStore(tmp_path / "secrets.json")
    settings = ConnectSettings(claims=NameClaims(store=secrets_here, say=lambda _: None))
    first = await _connect("127.0.0.1", server.port, "ann", TokenStore(tmp_path / "one.json"), settings)
    assert first.welcome is not None and first.welcome.claimed
    said: list[str] = []
    shell = TerminalClient(first, said.append, reconnect=_reconnector("127.0.0.1", server.port, "ann", TokenStore(tmp_path / "one.json"), settings))
    following = asyncio.create_task(shell.follow_events())
    second = await _connect("127.0.0.1", server.port, "ann", TokenStore(tmp_path / "two.json"), settings)  # no token: by the secret
    try:
        assert second.welcome is not None and second.welcome.resumed and second.welcome.claimed
        await asyncio.wait_for(shell.finished.wait(), TIMEOUT_S)
        assert said[-1] == "Disconnected: signed in elsewhere: another connection took over this session", said
        assert not any("Reconnect" in line for line in said), said
        await asyncio.sleep(0.5)
        await second.ping()
        assert not second.closed.is_set() and server.names[name_key("ann")].connected
    finally:
        await second.close()
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
