"""Requests handled at once in the transport's callback, and those that wait and go on in a task, over real sockets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from protocol import encode_frame
from server.app import Server
from server.net.connection import PUMP_TASK_NAME, Waiting
from server.net.resuming import Resumed

from ..conftest import ConfiguredServer
from .conftest import Raw, RawFactory
from .test_hot_path import seated_pair
from .test_lean_connections import peer_named, protocol_of


async def replies(connection: Raw, count: int) -> list[tuple[int, str]]:
    """The next ``count`` replies (frames with an ``id``) as ``(id, type)``, pushes skipped."""
    found: list[tuple[int, str]] = []
    while len(found) < count:
        frame = await connection.recv()
        if "id" in frame:
            found.append((frame["id"], frame["type"]))
    return found


async def test_requests_after_one_that_waits_in_the_same_chunk_are_answered_after_it_in_order(
    configured_server: ConfiguredServer, tmp_path: Path
) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    ann = Raw(reader, writer)
    try:
        await ann.hello("ann")
        await ann.sync()
        inbox = protocol_of(peer_named(server, "ann"))
        chunk = b"".join(
            encode_frame(frame)
            for frame in (
                {"type": "ping", "id": 1},
                {"type": "create_table", "id": 2, "game": "othello", "options": {"size": 6}},  # waits for its commit
                {"type": "ping", "id": 3},
                {"type": "ping", "id": 4},
            )
        )
        inbox.data_received(chunk)  # as if the socket delivered the four requests in one read
        assert inbox._task is not None, "the commit did not wait: the rest of the chunk needs no task"
        inbox.data_received(encode_frame({"type": "ping", "id": 5}))  # arrives while the commit is under way
        assert await replies(ann, 5) == [(1, "pong"), (2, "table_joined"), (3, "pong"), (4, "pong"), (5, "pong")]
        assert inbox._task is None, "the task did not end once the chunks were handled"
        assert (await ann.request("ping"))["type"] == "pong", "the connection is not served at once again"
    finally:
        await ann.close()


async def test_a_durable_move_waits_for_its_commit_without_a_task(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))
    opened: list[Raw] = []

    async def factory() -> Raw:
        opened.append(Raw(*await asyncio.open_connection("127.0.0.1", server.port)))
        return opened[-1]

    try:
        ann, bob, table_id, move = await seated_pair(factory)
        inbox = protocol_of(peer_named(server, "ann"))
        inbox.data_received(encode_frame({"type": "move", "id": 9, "table": table_id, "move": move}))
        assert isinstance(inbox._task, Waiting), "the move did not wait on its commit's future"
        assert not [task for task in asyncio.all_tasks() if task.get_name() == PUMP_TASK_NAME], "a task was made for the wait"
        assert await replies(ann, 1) == [(9, "ok")]
        assert inbox._task is None, "the handling did not end once the move was answered"
        assert server.tables[table_id].moves == [move]
    finally:
        for connection in opened:
            await connection.close()


async def test_a_request_waiting_for_a_busy_table_when_its_task_is_cancelled_leaves_the_table_free_and_ends_the_connection(
    server: Server, raw: RawFactory
) -> None:
    ann, bob, table_id, move = await seated_pair(raw)
    table = server.tables[table_id]
    inbox = protocol_of(peer_named(server, "ann"))
    async with table.lock:  # another action at the table is under way
        inbox.data_received(encode_frame({"type": "move", "id": 9, "table": table_id, "move": move}))
        waiting = inbox._task
        assert isinstance(waiting, Waiting), "a move at a busy table did not wait on the lock's future"
        task = waiting.into_task()
        task.cancel()  # as Connections.close() does, here before the task's first step
        assert await ann.expect_closed() == [], "the cancelled move was answered"
        await ann.close()
    await asyncio.wait_for(asyncio.shield(task), 2.0)
    assert not task.cancelled(), "the connection's task did not end the connection"
    assert table.moves == [], "a move cancelled while it waited for the table was played"
    assert (await bob.request("move", table=table_id, move=move))["code"] == "not_your_turn", "the table stayed busy"


async def test_a_resumed_coroutine_gets_what_it_waited_for_as_if_a_task_had_run_it_from_the_start() -> None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    steps: list[Any] = []

    async def handling() -> str:
        steps.append(await future)
        await asyncio.sleep(0)  # a bare yield after the first one
        return "done"

    coroutine = handling()
    waiting_on = coroutine.send(None)
    assert waiting_on is future
    task = loop.create_task(Resumed(coroutine, waiting_on))
    await asyncio.sleep(0)
    assert not task.done(), "the task did not wait for the future the coroutine had yielded"
    future.set_result("committed")
    assert await task == "done" and steps == ["committed"]


async def test_a_resumed_coroutine_cancelled_before_its_first_step_cancels_what_it_waited_for() -> None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    cleaned_up: list[str] = []

    async def handling() -> None:
        try:
            await future
        finally:
            cleaned_up.append("finally")

    coroutine = handling()
    task = loop.create_task(Resumed(coroutine, coroutine.send(None)))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert future.cancelled(), "the future outlived the task that waited for it"
    assert cleaned_up == ["finally"], "the coroutine never saw the cancellation"
