"""What an idle connection holds, and what a broadcast schedules, over real sockets."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from protocol import encode_frame
from server.app import Server
from server.net.connection import INBOX_HIGH_BYTES, Connections, PeerProtocol
from server.net.throttle import Throttle
from server.net.limits import Limits
from server.net.peer import Peer

from .conftest import RawFactory
from .test_hot_path import seated_pair


def peer_named(server: Server, name: str) -> Peer:
    """The server-side peer of the connection that said hello as ``name``."""
    (peer,) = [peer for peer in server.peers if peer.session is not None and peer.session.name == name]
    return peer


def input_buffer(peer: Peer) -> bytearray | None:
    """The frame decoder's buffer of ``peer`` (``None``: no buffer held, or no decoder at all)."""
    decoder = peer.protocol._decoder  # type: ignore[attr-defined]
    return None if isinstance(decoder, int) else decoder._buffer  # type: ignore[no-any-return]


async def until(condition: Callable[[], bool], what: str, timeout_s: float = 2.0) -> None:
    """Wait (polling) until ``condition()`` holds; fail saying ``what`` did not happen."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"{what} within {timeout_s:g} s"
        await asyncio.sleep(0.005)


async def test_a_connection_holds_an_input_buffer_only_while_a_frame_is_incomplete(server: Server, raw: RawFactory) -> None:
    ann = await raw()
    await ann.hello("ann")
    await ann.sync()
    peer = peer_named(server, "ann")
    assert input_buffer(peer) is None, "an idle connection holds no input buffer"
    frame = encode_frame({"type": "ping", "id": 7})
    await ann.send_bytes(frame[:3])
    await until(lambda: peer.protocol.buffered_bytes == 3, "the server did not buffer the partial frame")
    assert input_buffer(peer) is not None
    await ann.send_bytes(frame[3:])
    assert (await ann.recv())["id"] == 7
    assert input_buffer(peer) is None, "the buffer goes once the frame is complete"


async def test_a_broadcast_schedules_one_flush_for_every_receiver(server: Server, raw: RawFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    ann, bob, table, move = await seated_pair(raw)
    spectators = [await raw() for _ in range(5)]
    for index, spectator in enumerate(spectators):
        await spectator.hello(f"spectator{index}")
        assert (await spectator.request("watch_table", table=table))["type"] == "table_joined"
    for connection in (ann, bob, *spectators):
        await connection.sync()
    loop = asyncio.get_running_loop()
    scheduled: list[str] = []
    call_soon = loop.call_soon

    def recording_call_soon(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Handle:
        scheduled.append(getattr(callback, "__qualname__", ""))
        return call_soon(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon", recording_call_soon)
    assert (await ann.request("move", table=table, move=move))["type"] == "ok"
    for connection in (bob, *spectators):
        assert (await connection.recv())["type"] == "moved"
    monkeypatch.undo()
    flushes = [name for name in scheduled if name.endswith(".flush")]
    assert flushes == ["Outbox.flush"], f"one flush for all {2 + len(spectators)} receivers, not one each: {flushes}"


async def test_an_idle_connection_has_no_task(server: Server, raw: RawFactory) -> None:
    before = len(asyncio.all_tasks())
    connections = [await raw() for _ in range(5)]
    for index, connection in enumerate(connections):
        await connection.hello(f"idle{index}")
        await connection.sync()
    await until(lambda: len(asyncio.all_tasks()) <= before, "greeted idle connections still hold a task each")
    pong = await connections[0].request("ping")
    assert pong["type"] == "pong", "a connection whose task ended is served again when it sends"


async def test_a_request_alone_in_its_read_is_answered_without_a_coroutine(
    server: Server, raw: RawFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann, bob, table, move = await seated_pair(raw)
    pumps: list[str] = []
    original = Connections._serve

    def counting_serve(self: Connections, inbox: PeerProtocol, *args: Any) -> Any:
        pumps.append(inbox.peer.session.name if inbox.peer.session is not None else "?")
        return original(self, inbox, *args)

    monkeypatch.setattr(Connections, "_serve", counting_serve)
    await ann.send(type="move", id=5, table=table, move=move)
    assert await ann.reply(5) == {"type": "ok", "id": 5}
    moved = await bob.recv()
    await bob.send(type="move", id=6, table=table, move=moved["view"]["legal_moves"][0])
    assert await bob.reply(6) == {"type": "ok", "id": 6}
    assert pumps == [], "a move in one read is handled in the transport's callback, without the pump's coroutine"
    await ann.send_bytes(encode_frame({"type": "ping", "id": 7})[:3])  # part of a frame: the pump keeps the rest
    await ann.send_bytes(encode_frame({"type": "ping", "id": 7})[3:])
    assert await ann.reply(7) == {"type": "pong", "id": 7}
    assert pumps and set(pumps) == {"ann"}


def protocol_of(peer: Peer) -> PeerProtocol:
    """The connection-layer protocol driving ``peer``'s transport."""
    protocol = peer.transport.get_protocol()
    assert isinstance(protocol, PeerProtocol)
    return protocol


async def test_a_greeted_idle_connection_holds_no_throttle_lists_or_session_collections(server: Server, raw: RawFactory) -> None:
    ann = await raw()
    assert (await ann.hello("ann"))["type"] == "welcome"
    peer = peer_named(server, "ann")
    inbox = protocol_of(peer)
    await until(lambda: peer.reading, "the server did not go back to reading")
    assert inbox._throttle is True, "one request (hello) made a throttle"
    assert inbox._chunks is None, "an idle connection keeps a list of received chunks"
    assert peer._pending is None, "an idle connection keeps a list of frames to send"
    assert isinstance(peer.protocol._decoder, int), "an idle connection keeps a frame decoder"
    assert peer.connected_at is None, "a greeted connection keeps the time it connected"
    session = peer.session
    assert session._tables is None, "a session that sits and watches nowhere keeps a map or set"
    assert peer.address == f"127.0.0.1:{peer.transport.get_extra_info('peername')[1]}"


async def test_the_second_request_gets_a_throttle_with_the_first_requests_token_spent(server: Server, raw: RawFactory) -> None:
    ann = await raw()
    await ann.hello("ann")
    await ann.sync()
    inbox = protocol_of(peer_named(server, "ann"))
    throttle = inbox._throttle
    assert isinstance(throttle, Throttle)
    limits = server.config.limits
    # hello took one token, the ping a second; the refill since is far below one token at 50/s within the test's time
    assert limits.request_burst - 2 <= throttle._bucket._tokens <= limits.request_burst - 1


def test_a_throttle_made_at_the_second_request_has_spent_the_first_requests_token() -> None:
    limits = Limits(requests_per_s=1.0, request_burst=2)
    throttle = Throttle(limits, 100.0)
    assert throttle._bucket.tokens(100.0) == 1.0  # the first request's token is spent
    assert throttle._bucket.tokens(100.5) == 1.5 and throttle._bucket.tokens(103.0) == 2.0


def test_a_throttle_counts_from_the_arrival_time_it_is_given() -> None:
    limits = Limits(requests_per_s=1.0, request_burst=2, flood_timeout_s=5.0)
    throttle = Throttle(limits, 100.0)  # the first request's token spent
    assert throttle.take(100.0) == 0.0, "the burst's second token"
    assert throttle.take(100.0) == pytest.approx(1.0), "the third request waits one token's refill"
    assert throttle.take(103.0) == 0.0, "refilled by the time given, not the clock's"
    assert throttle.take(103.0) == 0.0 and throttle.take(103.0) == pytest.approx(1.0)


async def test_reading_pauses_while_a_flood_of_chunks_waits_and_resumes_once_they_are_handled(server: Server, raw: RawFactory) -> None:
    ann = await raw()
    await ann.hello("ann")
    await ann.sync()
    peer = peer_named(server, "ann")
    inbox = protocol_of(peer)
    frame = encode_frame({"type": "ping", "id": 1, "pad": "x" * 60_000})
    flood = frame * (INBOX_HIGH_BYTES // len(frame) + 1)
    burst = server.config.limits.request_burst
    inbox.data_received(encode_frame({"type": "ping", "id": 2}) * (burst + 1))  # over the burst: handling waits on the throttle
    assert inbox._task is not None, "the handling did not wait"
    inbox.data_received(flood)  # as if the socket delivered it in one read while the handling waits
    assert inbox._chunks is not None and inbox._chunks.paused and not peer.transport.is_reading()
    await until(lambda: inbox._chunks is None, "the chunks were not handled")
    assert peer.transport.is_reading(), "reading stayed paused"
    assert (await ann.request("ping"))["type"] == "pong"
