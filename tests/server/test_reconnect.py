"""Resuming a session with its token: seats held through a grace period, then forfeited."""

from __future__ import annotations

import asyncio

import pytest

from client import Client, ServerError
from protocol import messages as m
from server.app import Server

from ..conftest import GRACE_S
from .conftest import TIMEOUT_S, refused


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
        assert back.token != token, "the token is replaced at every resume"
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


async def test_a_used_token_is_worthless(connect, server: Server) -> None:
    server.config = type(server.config)(**{**_fields(server.config), "grace_s": 5.0})
    ann = await connect("ann")
    await ann.create_table("othello")  # a held seat keeps the session alive while away
    old = ann.token
    await ann.close()
    owner = await Client.connect("127.0.0.1", server.port, name="ann", token=old)
    try:
        with pytest.raises(ServerError) as raised:
            await Client.connect("127.0.0.1", server.port, name="ann", token=old)
        assert raised.value.code == "bad_token"
        assert not owner.closed.is_set(), "the owner's connection is untouched"
    finally:
        await owner.close()


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
        assert error.code == "bad_token" and "resumed by another connection" in error.message
        await asyncio.wait_for(bob.closed.wait(), TIMEOUT_S)
        resumed = await thief_or_owner.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert resumed.seat == 1 and resumed.table.id == table
    finally:
        await thief_or_owner.close()


async def test_abandoned_before_the_opponent_moved_is_a_draw(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.move(table, "d3")
    await ann.close()
    over = await bob.next_event(m.GameOver, timeout_s=TIMEOUT_S)
    assert over.outcome["winner"] is None and "before the opponent moved" in over.outcome["reason"]


def _fields(config: object) -> dict[str, object]:
    return {name: getattr(config, name) for name in config.__slots__}  # type: ignore[attr-defined]
