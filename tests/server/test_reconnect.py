"""Resuming a session with its token: seats held through a grace period, then forfeited.

A token lasts as long as its session, so neither a lost ``welcome``, nor a
server dying after a resume, nor a failed database write can strand a player.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from client import Client, ServerError
from client.connection import ConnectionLost
from client.cli import ConnectSettings, _connect, _reconnector
from client.terminal import TerminalClient
from client.tokens import TokenStore
from protocol import PROTOCOL_VERSION
from protocol import messages as m
from server.app import Server, ServerConfig

from ..conftest import GRACE_S, ConfiguredServer
from .conftest import TIMEOUT_S, Raw, RawFactory, refused


async def _start_game(connect) -> tuple[Client, Client, Client, int]:
    ann, bob, cat = await connect("ann"), await connect("bob"), await connect("cat")
    table = (await ann.create_table("othello")).table.id
    await cat.watch_table(table)
    await bob.join_table(table)
    await ann.move(table, "d3")
    return ann, bob, cat, table


async def test_resume_within_grace_keeps_seat_view_and_name(connect, server: Server) -> None:
    server.config = type(server.config)(**{**_fields(server.config), "grace_s": 5.0})
    ann, bob, cat, table = await _start_game(connect)
    token = bob.token
    await bob.close()
    away = await ann.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)
    assert away.name == "bob" and away.forfeit_in_s == 5.0
    await refused(connect("bob"), "name_taken")  # the name stays reserved for its owner

    back = await Client.connect("127.0.0.1", server.port, name="BOB", token=token)
    try:
        assert back.welcome is not None and back.welcome.resumed and back.name == "bob"
        assert back.token == token, "the token is the session's for its whole life"
        resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert resumed.table.id == table and resumed.seat == 1 and resumed.moves == ["d3"]
        assert resumed.view["legal_moves"], "bob is to move and sees his moves"
        for client in (ann, cat):
            returned = await client.next_event(m.PlayerBack, timeout_s=TIMEOUT_S)
            assert (returned.table, returned.seat, returned.name) == (table, 1, "bob")
        await back.move(table, resumed.view["legal_moves"][0])
        moved = await ann.next_event(m.Moved, timeout_s=TIMEOUT_S)
        assert moved.seat == 1
        await asyncio.sleep(GRACE_S * 2)
        assert server.tables[table].status == "playing", "no forfeit after a resume"
    finally:
        await back.close()


async def test_a_token_resumes_again_and_again(connect, server: Server) -> None:
    server.config = type(server.config)(**{**_fields(server.config), "grace_s": 5.0})
    ann = await connect("ann")
    table = (await ann.create_table("othello")).table.id  # a held seat keeps the session alive while away
    token = ann.token
    await ann.close()
    for _ in range(3):
        back = await Client.connect("127.0.0.1", server.port, name="ann", token=token)
        try:
            assert back.welcome is not None and back.welcome.resumed and back.token == token
            resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
            assert (resumed.table.id, resumed.seat) == (table, 0)
        finally:
            await back.close()


async def test_unknown_token_is_refused(server: Server) -> None:
    with pytest.raises(ServerError) as raised:
        await Client.connect("127.0.0.1", server.port, name="ann", token="not-a-token")
    assert raised.value.code == "bad_token"


async def test_resume_replaces_a_half_open_connection(connect, server: Server) -> None:
    server.config = type(server.config)(**{**_fields(server.config), "grace_s": 5.0})
    ann, bob, _cat, table = await _start_game(connect)
    thief_or_owner = await Client.connect("127.0.0.1", server.port, name="bob", token=bob.token)
    try:
        error = await bob.next_event(m.Error, timeout_s=TIMEOUT_S)
        assert error.code == "signed_in_elsewhere" and "another connection took over this session" in error.message
        await asyncio.wait_for(bob.closed.wait(), TIMEOUT_S)
        resumed = await thief_or_owner.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert resumed.seat == 1 and resumed.table.id == table
    finally:
        await thief_or_owner.close()


@pytest.mark.parametrize("leaver", ["ann", "bob"], ids=["the_side_that_moved", "the_side_yet_to_move"])
async def test_abandoned_before_both_sides_moved_is_aborted_not_forfeited(connect, leaver: str) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.move(table, "d3")
    gone, stays = (ann, bob) if leaver == "ann" else (bob, ann)
    await gone.close()
    over = await stays.next_event(m.GameOver, timeout_s=TIMEOUT_S)
    seat = "Black" if leaver == "ann" else "White"
    assert over.outcome == {"winner": None, "reason": f"{seat} abandoned the game before both sides had moved", "score": None, "aborted": True}


async def test_a_lost_welcome_does_not_strand_the_player(connect, raw: RawFactory, server: Server) -> None:
    """A resume whose connection drops before its welcome is read leaves the token working."""
    server.config = type(server.config)(**{**_fields(server.config), "grace_s": 5.0})
    ann, bob, _cat, table = await _start_game(connect)
    token = bob.token
    await bob.close()
    await ann.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)
    lost = await raw()
    await lost.send(type="hello", id=1, version=PROTOCOL_VERSION, name="bob", token=token)
    await lost.close()  # gone before the welcome could be read
    await ann.next_event(m.PlayerBack, timeout_s=TIMEOUT_S)  # the server resumed the session...
    await ann.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)  # ...then saw that connection go
    third = await raw()
    welcome = await _resume(third, "bob", token)
    assert (welcome["type"], welcome["resumed"], welcome["token"]) == ("welcome", True, token), welcome
    resumed = await third.recv()
    assert resumed["type"] == "resumed" and (resumed["table"]["id"], resumed["seat"], resumed["moves"]) == (table, 1, ["d3"])
    reply = await third.request("move", table=table, move=resumed["view"]["legal_moves"][0], ply=1)
    assert reply["type"] == "ok", reply
    await ann.next_event(m.PlayerBack, timeout_s=TIMEOUT_S)
    moved = await ann.next_event(m.Moved, timeout_s=TIMEOUT_S)
    assert (moved.seat, moved.ply) == (1, 2), "the game goes on"


async def test_a_resume_then_drop_then_restart_still_resumes_with_the_token(any_db: str) -> None:
    """The server may die right after handling a resume: the token it handed out before still works after a restart."""
    config = ServerConfig(host="127.0.0.1", port=0, db_path=any_db, grace_s=5.0)
    first = Server(config)
    await first.start()
    try:
        ann = await Client.connect("127.0.0.1", first.port, name="ann")
        bob = await Client.connect("127.0.0.1", first.port, name="bob")
        table = (await ann.create_table("othello")).table.id
        await bob.join_table(table)
        await ann.move(table, "d3")
        token = bob.token
        await bob.close()
        await ann.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)
        reader, writer = await asyncio.open_connection("127.0.0.1", first.port)
        lost = Raw(reader, writer)
        await lost.send(type="hello", id=1, version=PROTOCOL_VERSION, name="bob", token=token)
        await ann.next_event(m.PlayerBack, timeout_s=TIMEOUT_S)  # the resume was handled (and anything it wrote, committed)
        await lost.close()
        await ann.close()
    finally:
        await first.close()
    second = Server(config)
    await second.start()
    try:
        back = await Client.connect("127.0.0.1", second.port, name="bob", token=token)
        resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert (resumed.table.id, resumed.seat, resumed.moves) == (table, 1, ["d3"])
        await back.move(table, resumed.view["legal_moves"][0])
        await back.close()
    finally:
        await second.close()


# --- failed commits ---------------------------------------------------------------------------


def _refuse_writes(db: Path, *targets: str) -> None:
    """Make every write of ``targets`` ("INSERT ON sessions", ...) fail inside SQLite, from another connection."""
    with sqlite3.connect(db) as other:
        for index, target in enumerate(targets):
            other.execute(f"CREATE TRIGGER refuse{index} BEFORE {target} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
    other.close()


def _allow_writes(db: Path) -> None:
    with sqlite3.connect(db) as other:
        for (name,) in other.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'refuse%'").fetchall():
            other.execute(f"DROP TRIGGER {name}")
    other.close()


def _resume(conn: Raw, name: str, token: str) -> Awaitable[dict[str, Any]]:
    """Say ``hello`` with a resume token; the reply (``welcome`` or ``error``)."""
    return conn.request("hello", version=PROTOCOL_VERSION, name=name, token=token)


async def test_a_hello_whose_commit_fails_leaves_the_name_free(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    server = await configured_server(db_path=str(db))
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    conn = Raw(reader, writer)
    try:
        _refuse_writes(db, "INSERT ON sessions")
        failed = await conn.hello("ann")
        assert (failed["type"], failed["code"], failed["id"]) == ("error", "internal_error", 1), failed
        assert "could not be saved" in failed["message"] and "ann" in failed["message"], failed
        _allow_writes(db)
        again = await conn.hello("ann")  # the same connection may simply try again
        assert (again["type"], again["name"]) == ("welcome", "ann"), again
        other = Raw(*await asyncio.open_connection("127.0.0.1", server.port))
        try:
            assert (await other.hello("ann"))["code"] == "name_taken"  # now it is ann's, for real
        finally:
            await other.close()
    finally:
        await conn.close()


async def test_a_name_being_saved_cannot_be_claimed_meanwhile(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    server = await configured_server(db_path=str(db))
    assert server.store is not None
    conns = [Raw(*await asyncio.open_connection("127.0.0.1", server.port)) for _ in range(3)]
    first, second, third = conns
    try:
        _refuse_writes(db, "INSERT ON sessions")
        store = server.store
        store._writer_gate.acquire()  # the writer stops before its next commit
        try:
            ahead = asyncio.ensure_future(store.delete_session("no-such-token"))
            await asyncio.sleep(0)
            await _until(lambda: store._queue.qsize() == 0)  # the writer holds that write, waiting at the gate
            await first.send(type="hello", id=1, version=PROTOCOL_VERSION, name="ann")
            await _until(lambda: store._queue.qsize() == 1)  # the first hello's commit is queued behind it
            refused_meanwhile = await second.hello("ANN")
            assert refused_meanwhile["code"] == "name_taken", refused_meanwhile
        finally:
            store._writer_gate.release()
        await ahead
        assert (await first.reply(1))["code"] == "internal_error"
        _allow_writes(db)
        assert (await third.hello("ann"))["type"] == "welcome", "the failed claim let go of the name"
    finally:
        for conn in conns:
            await conn.close()


async def test_a_resume_needs_no_write_and_keeps_the_token(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    server = await configured_server(db_path=str(db), grace_s=5.0)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    table = (await ann.create_table("othello")).table.id
    token = ann.token
    await ann.close()
    _refuse_writes(db, "INSERT ON sessions", "UPDATE ON sessions", "DELETE ON sessions", "UPDATE ON tables")
    conn = Raw(*await asyncio.open_connection("127.0.0.1", server.port))
    try:
        welcome = await _resume(conn, "ann", token)
        assert (welcome["type"], welcome["token"]) == ("welcome", token), welcome
        assert (await conn.recv())["table"]["id"] == table
    finally:
        await conn.close()
    _allow_writes(db)
    back = await Client.connect("127.0.0.1", server.port, name="ann", token=token)
    try:
        resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert (resumed.table.id, resumed.seat) == (table, 0)
    finally:
        await back.close()


# --- the client library --------------------------------------------------------------------------


async def test_the_cli_client_keeps_its_token_and_takes_a_new_one_when_the_session_expired(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("client.reconnect.RETRY_DELAYS_S", (0.01,))
    server.config = type(server.config)(**{**_fields(server.config), "grace_s": 5.0})
    tokens, settings = TokenStore(tmp_path / "tokens.json"), ConnectSettings()
    ann = await _connect("127.0.0.1", server.port, "ann", tokens, settings)
    token = ann.token
    table = (await ann.create_table("othello")).table.id
    await ann.close()
    said: list[str] = []
    again = await _reconnector("127.0.0.1", server.port, "ann", tokens, settings)(token, said.append)
    assert again is not None and again.welcome is not None and again.welcome.resumed, said
    assert again.token == token and tokens.get("127.0.0.1", server.port, "ann") == token
    await again.leave_table(table)
    await again.close()  # holding nothing, the session is forgotten: the token is dead
    await _until(lambda: not server.sessions)
    fresh = await _connect("127.0.0.1", server.port, "ann", tokens, settings)
    try:
        assert fresh.welcome is not None and not fresh.welcome.resumed and fresh.token != token
        assert tokens.get("127.0.0.1", server.port, "ann") == fresh.token, "the new session's token is remembered"
    finally:
        await fresh.close()


async def test_a_terminal_whose_session_was_taken_over_does_not_take_it_back(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens live on, so a taken-over client that reconnected would kick the other out, and so on forever."""
    monkeypatch.setattr("client.reconnect.RETRY_DELAYS_S", (0.01,))
    tokens, settings = TokenStore(tmp_path / "tokens.json"), ConnectSettings()
    first = await _connect("127.0.0.1", server.port, "ann", tokens, settings)
    table = (await first.create_table("othello")).table.id
    said: list[str] = []
    shell = TerminalClient(first, said.append, reconnect=_reconnector("127.0.0.1", server.port, "ann", tokens, settings))
    following = asyncio.create_task(shell.follow_events())
    second = await _connect("127.0.0.1", server.port, "ann", tokens, settings)  # the same player, at another terminal
    try:
        assert second.welcome is not None and second.welcome.resumed
        await asyncio.wait_for(shell.finished.wait(), TIMEOUT_S)
        assert first.superseded and not any(line.startswith("Reconnected") for line in said), said
        assert said[-1] == "Disconnected: signed in elsewhere: another connection took over this session", said
        assert (await second.next_event(m.Resumed, timeout_s=TIMEOUT_S)).table.id == table
        await second.ping()
        assert not second.closed.is_set(), "the new connection keeps the session"
    finally:
        await second.close()
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)


async def _until(condition: Callable[[], bool], timeout_s: float = TIMEOUT_S) -> None:
    """Wait (polling every millisecond) until ``condition()`` is true."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.001)


def _fields(config: object) -> dict[str, object]:
    return {name: getattr(config, name) for name in config.__slots__}  # type: ignore[attr-defined]


async def test_a_request_on_a_connection_that_just_broke_fails_as_connection_lost(server: Server) -> None:
    """The socket is gone but the client has not noticed yet: the request fails with ``ConnectionLost``, no raw socket error."""
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    ann._writer.transport.abort()  # the connection breaks under the client (as after a freeze: reset by the server)
    await asyncio.sleep(0)  # the transport reports the loss; the client's reader has not run yet
    assert not ann.closed.is_set()
    with pytest.raises(ConnectionLost):
        await ann.ping()
    await ann.close()
