"""The recording raw connection the failover tests and benchmark share (tests/server/recording.py), on a real server."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Awaitable, Callable

import pytest

from server.app import Server

from .recording import Recorder, latest_view, offered, resumed

Join = Callable[[str], Awaitable[Recorder]]


@pytest.fixture
async def join(server: Server) -> AsyncIterator[Join]:
    """Factory: ``await join(name)`` connects a :class:`Recorder` and says hello as ``name``."""
    opened: list[Recorder] = []

    async def factory(name: str) -> Recorder:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        player = Recorder(reader, writer)
        opened.append(player)
        assert (await player.hello(name))["type"] == "welcome"
        return player

    yield factory
    for player in opened:
        await player.close()


async def test_the_player_to_move_is_found_from_the_frames_each_player_read(join: Join) -> None:
    ann, bob = await join("ann"), await join("bob")
    table = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    mover, move = await offered([bob, ann], table, 0)  # type: ignore[misc]
    assert mover is ann and move == latest_view(ann, table, 0)["legal_moves"][0]  # type: ignore[index]
    assert latest_view(bob, table, 0) is not None and "legal_moves" not in latest_view(bob, table, 0)  # type: ignore[operator]
    assert (await ann.request("move", table=table, move=move))["type"] == "ok"
    assert await offered([ann], table, 1) is None  # bob's turn: ann is offered nothing
    mover, _ = await offered([ann, bob], table, 1)  # type: ignore[misc]
    assert mover is bob and latest_view(ann, table, 1) is not None
    assert latest_view(ann, table, 2) is None and resumed(ann, table) is None
    assert [frame["type"] for frame in ann.seen][:1] == ["welcome"]  # replies are kept too
