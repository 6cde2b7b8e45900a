"""The Redis bus between two nodes, on a real redis-server: delivery, views kept apart, gaps, a Redis restart."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, AsyncIterator, Callable

import hiredis
import msgpack
import pytest
import redis.asyncio as aioredis

from protocol import Message
from protocol.framing import HEADER_BYTES, decode_body
from protocol.messages import Pong
from server.bus.bus import LOBBY, table_topic
from server.bus.redis import BusUnavailable, RedisBus, channel
from server.cluster.players import node_topic
from server.cluster.relay import RelayHost
from server.cluster.relay_batch import FRAMES, REQUEST, Mail, read_batch
from server.net.peer import Peer

from .redis_server import RedisServer

TIMEOUT_S = 5.0


class Inbox:
    """A bus subscriber that keeps the frames it gets (a connection's stand-in)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        self.frames.append(frame)


async def until(check: Callable[[], Any], what: str) -> None:
    for _ in range(int(TIMEOUT_S / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
async def nodes(redis_server: RedisServer) -> AsyncIterator[tuple[RedisBus, RedisBus]]:
    a, b = RedisBus(redis_server.url, "a"), RedisBus(redis_server.url, "b")
    await a.start()
    await b.start()
    yield a, b
    await a.close()
    await b.close()


async def subscribed(bus: RedisBus, redis_url: str) -> None:
    """Wait until Redis confirmed every channel ``bus`` needs (events published from then on reach it)."""
    await until(lambda: bus.channels() <= bus.confirmed, "the bus to be subscribed")


async def test_an_event_published_on_one_node_reaches_the_subscribers_of_another(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, b = nodes
    here, there = Inbox(), Inbox()
    a.subscribe(LOBBY, here)
    b.subscribe(LOBBY, there)
    await subscribed(b, redis_server.url)
    a.publish(LOBBY, b"frame-1")
    assert here.frames == [b"frame-1"]  # delivered on its own node at once, not again from Redis
    await until(lambda: there.frames == [b"frame-1"], "node b to get the event")
    await asyncio.sleep(0.1)
    assert here.frames == [b"frame-1"]


async def test_a_node_receives_only_the_views_its_own_subscribers_have(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, b = nodes
    topic = table_topic(7)
    seat0 = Inbox()
    b.subscribe(topic, seat0, 0)
    await subscribed(b, redis_server.url)
    assert b.channels() == {channel(topic), channel(topic, 0)}
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        counts = dict(await client.pubsub_numsub(channel(topic, 1), channel(topic, None)))
        assert counts == {channel(topic, 1).encode(): 0, channel(topic, None).encode(): 0}  # nobody on b listens there
        a.publish_views(topic, {0: (b"seat-0-secret", None), 1: (b"seat-1-secret", None), None: (b"spectators", None)})  # type: ignore[dict-item]
        a.publish(topic, b"chat")
        await until(lambda: len(seat0.frames) == 2, "seat 0's frames on node b")
        assert seat0.frames == [b"seat-0-secret", b"chat"]
    finally:
        await client.aclose()
    b.unsubscribe(topic, seat0)
    assert b.channels() == set()


async def test_a_jump_in_a_publishers_numbers_is_reported_as_a_gap(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, b = nodes
    gaps: list[tuple[str, Any, str]] = []
    b.on_gap.append(lambda topic, view, origin: gaps.append((topic, view, origin)))
    inbox = Inbox()
    b.subscribe(LOBBY, inbox)
    await subscribed(b, redis_server.url)
    a.publish(LOBBY, b"one")
    a.publish(LOBBY, b"two")
    await until(lambda: len(inbox.frames) == 2, "two frames")
    assert gaps == []
    client = aioredis.Redis.from_url(redis_server.url)
    try:  # number 3 was lost on the way: 4 arrives
        await client.publish(channel(LOBBY), msgpack.packb(("a", 4, b"four")))
    finally:
        await client.aclose()
    await until(lambda: len(inbox.frames) == 3, "the frame after the gap")
    assert gaps == [(LOBBY, None, "a")]


async def test_the_bus_reconnects_after_redis_is_killed_and_restarted(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, b = nodes
    reconnected: list[str] = []

    async def again() -> None:
        reconnected.append("b")

    b.on_connected.append(again)
    gaps: list[str] = []
    b.on_gap.append(lambda topic, view, origin: gaps.append(origin))
    inbox = Inbox()
    b.subscribe(LOBBY, inbox)
    await subscribed(b, redis_server.url)
    a.publish(LOBBY, b"before")
    await until(lambda: inbox.frames == [b"before"], "the frame before the restart")
    redis_server.restart()
    a.publish(LOBBY, b"lost")  # published while Redis was away (or to a Redis nobody listens to yet): at most once
    await until(lambda: reconnected == ["b"] and a.connected, "both nodes to reconnect")
    await subscribed(b, redis_server.url)
    a.publish(LOBBY, b"after")
    await until(lambda: inbox.frames[-1:] == [b"after"], "the frame after the restart")
    assert gaps == ["a"]  # the lost one is noticed, so the lobby reloads a's snapshot


async def test_an_unreachable_redis_is_a_clear_error_at_start(redis_server: RedisServer) -> None:
    bus = RedisBus("redis://127.0.0.1:1", "a")
    with pytest.raises(BusUnavailable, match="cannot reach Redis at redis://127.0.0.1:1"):
        await bus.start()
    await bus.close()


async def test_a_topic_that_stays_on_its_node_is_not_subscribed_in_redis(redis_server: RedisServer) -> None:
    bus = RedisBus(redis_server.url, "a", crosses=lambda topic: topic != table_topic(7))
    await bus.start()
    try:
        bus.subscribe(table_topic(7), Inbox(), 0)
        bus.subscribe(LOBBY, Inbox())
        await subscribed(bus, redis_server.url)
        client = aioredis.Redis.from_url(redis_server.url)
        try:
            in_redis = {bytes(name).decode() for name in await client.pubsub_channels("parlour:*")}
        finally:
            await client.aclose()
        assert bus.channels() == {channel(LOBBY), channel(LOBBY, None)} <= in_redis
        assert not any(name.startswith(f"parlour:{table_topic(7)}:") for name in in_redis)
    finally:
        await bus.close()


class Faulty(Inbox):
    """A subscriber whose first delivery raises (a bug in it)."""

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        super().send_frame(frame, message)
        if len(self.frames) == 1:
            raise KeyError("a subscriber's bug")


async def test_a_subscriber_that_raises_does_not_stop_the_node_receiving(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, b = nodes
    faulty = Faulty()
    b.subscribe(LOBBY, faulty)
    await subscribed(b, redis_server.url)
    a.publish(LOBBY, b"one")
    await until(lambda: faulty.frames == [b"one"], "the first frame")
    a.publish(LOBBY, b"two")
    await until(lambda: faulty.frames == [b"one", b"two"], "the frame after the failed delivery")


class TaskInbox:
    """A bus subscriber that notes, for each frame, the task it was delivered in (``None``: in a plain callback)."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[Any] | None] = []

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        self.tasks.append(asyncio.current_task())


async def test_a_message_from_redis_is_handled_in_the_read_callback_not_in_a_task(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, b = nodes
    there = TaskInbox()
    b.subscribe(LOBBY, there)
    await subscribed(b, redis_server.url)
    for number in range(3):
        a.publish(LOBBY, b"frame-%d" % number)
    await until(lambda: len(there.tasks) == 3, "node b to get the events")
    assert there.tasks == [None, None, None]  # main woke its receiving task for each message


def _read_redis(sock: socket.socket, parser: hiredis.Reader) -> Any:
    """The next reply Redis sent on the blocking socket ``sock`` (``socket.timeout`` if none comes in time)."""
    while (reply := parser.gets()) is False:
        data = sock.recv(65536)
        assert data, "Redis closed the connection"
        parser.feed(data)
    return reply


async def test_what_a_turn_puts_in_the_mail_is_written_to_redis_by_the_end_of_that_turn(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, _ = nodes
    parser = hiredis.Reader()
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=TIMEOUT_S) as sock:  # a plain subscriber: no event loop
        sock.sendall(hiredis.pack_command(("SUBSCRIBE", channel(node_topic("b")))))
        assert _read_redis(sock, parser)[0] == b"subscribe"
        Mail.of(a).put("b", REQUEST, 7, b"\x81\xa4type\xa4ping")
        await asyncio.sleep(0)  # this turn ends: the callbacks it scheduled run, and nothing after them
        sock.settimeout(1.0)  # the loop is blocked meanwhile: only what that turn wrote can arrive
        kind, name, data = _read_redis(sock, parser)  # main left it to a task woken for a later turn
    assert (kind, name) == (b"message", channel(node_topic("b")).encode())
    origin, _, batch = msgpack.unpackb(data)
    assert origin == "a" and read_batch(batch)[1] == [(REQUEST, 7, b"\x81\xa4type\xa4ping")]


async def test_a_reply_written_to_a_link_reaches_redis_by_the_end_of_the_turn_after_it(nodes: tuple[RedisBus, RedisBus], redis_server: RedisServer) -> None:
    a, _ = nodes

    def answer(peer: Peer, request: Any) -> None:
        peer.send(Pong(id=request.id))  # as the pipeline answers a ping: the frame waits for the end of the turn

    host = RelayHost(a, answer, lambda peer: None, lambda token: None, lambda session: None)
    host.open("b", 7, "ann", False, False)
    parser = hiredis.Reader()
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=TIMEOUT_S) as sock:
        sock.sendall(hiredis.pack_command(("SUBSCRIBE", channel(node_topic("b")))))
        assert _read_redis(sock, parser)[0] == b"subscribe"
        host.request("b", 7, b"\x82\xa4type\xa4ping\xa2id\x05")
        await asyncio.sleep(0)  # the turn ends: the links' frames are flushed, and published with them
        sock.settimeout(1.0)  # the loop is blocked meanwhile; main needed two turns more (the batch's flush, the publishing task)
        kind, _, data = _read_redis(sock, parser)
    assert kind == b"message"
    _, _, batch = msgpack.unpackb(data)
    ((record, link, frames),) = read_batch(batch)[1]
    assert (record, link) == (FRAMES, 7) and decode_body(frames[HEADER_BYTES:]) == {"type": "pong", "id": 5}
