"""A :class:`server.bus.bus.Bus` across nodes, through Redis pub/sub.

Every node keeps its own subscribers exactly as :class:`server.bus.local.LocalBus`
does and delivers its own events to them at once; each event also goes to
Redis, to the channels of its topic, and the other nodes deliver it to their
subscribers of that topic.

Channels (:func:`channel`): a topic's events for everyone go to
``parlour:<topic>:all``; a per-view event goes, one frame per view, to
``parlour:<topic>:0``, ``…:1`` and ``…:s`` (spectators). A node subscribes in
Redis only to the channels of the views its own subscribers have, so the
frame of seat 0 (a Tactego setup, the legal moves) never reaches a node that
has no connection seated there: hidden information never crosses to a node
whose connections may not see it.

Redis pub/sub delivers at most once (a message published while a node is
cut off is gone). So every message carries its publisher's node and a
sequence number per channel: a receiver that sees a number jump (a *gap*)
tells its ``on_gap`` listeners, who fetch a snapshot (the lobby reloads the
publisher's tables; a table relay would ask the authority for the table).
A per-channel number rather than the table's ply: chat, offers and clock
pushes do not advance the ply, and losing one is a gap as well.

When Redis goes away the bus keeps delivering locally, drops what it cannot
publish (the receivers see the gap later), reconnects with a growing pause,
subscribes again and tells its ``on_connected`` listeners, who republish
what other nodes must know (:mod:`server.cluster`).

Two connections of redis-py's lower-level API (``redis.asyncio.Connection``,
hiredis's parser and command packer) carry the events, as a relayed move
costs three of them: a *publisher*, told ``CLIENT REPLY OFF``, to which
each loop turn's messages go as one write of ``PUBLISH`` commands with no
reply to read, written by a callback at the end of the turn (or at once,
:meth:`RedisBus.publish_remote_now`), not by a task woken for it; and a
*receiver*, subscribed to the channels this node
needs, whose messages are handled as they arrive, in the read's own
callback (:class:`server.bus.redis_inbox.RedisInbox`; changed
subscriptions are sent on it by a task of their own). The client for keys
(:attr:`RedisBus.redis`) is redis-py's usual one.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Iterable, Mapping

import hiredis
import msgpack
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from protocol import Message

from ..core.turn_flush import TurnFlush
from .bus import Subscriber, View
from .local import LocalBus
from .redis_inbox import RedisInbox

__all__ = ["RedisBus", "channel", "GapListener", "RemoteListener", "BusUnavailable"]

log = logging.getLogger(__name__)

PREFIX = "parlour:"
RECONNECT_FIRST_S = 0.05
"""The first pause before reconnecting to Redis, in seconds; it doubles up to :data:`RECONNECT_MOST_S`."""
RECONNECT_MOST_S = 1.0
_pack = hiredis.pack_command
_REPLY_OFF = _pack(("CLIENT", "REPLY", "OFF"))
CLOSE_TIMEOUT_S = 2.0
"""How long :meth:`RedisBus.close` waits for the last messages to be published, and then for its tasks to end, in seconds."""
MAX_OUTBOX = 100_000
"""Messages waiting to be published at most; more are dropped (receivers see a gap)."""
MAX_UNSENT_BYTES = 64 * 1024 * 1024
"""Bytes written to the publisher that Redis has not taken yet, at most; a turn's messages beyond are dropped (receivers see a gap)."""

GapListener = Callable[[str, View, str], None]
"""``listener(topic, view, origin)``: messages of ``topic`` (``view``; ``"all"`` as ``None`` too) from node ``origin`` were lost."""
RemoteListener = Callable[[str, str, int, bytes], None]
"""``listener(topic, origin, number, frame)``: an event of ``topic`` for everyone came from node ``origin``, with its number on the channel."""


class BusUnavailable(Exception):
    """Redis cannot be reached (at start, or while reconnecting)."""


def _suffix(view: View) -> str:
    return "s" if view is None else str(view)


def channel(topic: str, view: View | str = "all") -> str:
    """The Redis channel of ``topic``'s events for everyone (``view="all"``) or for one view (a seat, ``None``: spectators)."""
    return f"{PREFIX}{topic}:{view if view == 'all' else _suffix(view)}"  # type: ignore[arg-type]


def _parse(name: str) -> tuple[str, View | str]:
    """The topic and view of a channel named by :func:`channel`."""
    topic, _, suffix = name[len(PREFIX) :].rpartition(":")
    if suffix == "all":
        return topic, "all"
    return topic, None if suffix == "s" else int(suffix)


def _every_topic(topic: str) -> bool:
    return True


class RedisBus(LocalBus):
    """A :class:`server.bus.bus.Bus` whose events reach the subscribers of every node sharing one Redis.

    Args:
        url: ``redis://HOST:PORT`` (any URL redis-py accepts).
        node: this node's name, unique in the cluster (messages carry it).
        crosses: which topics' events go to Redis (default: all); the others stay on this node.
            A cluster keeps table topics local: their frames reach other nodes' players
            through the relay (:mod:`server.cluster.relay`), each to the node of its connection.

    Use ``await bus.start()`` (raises :class:`BusUnavailable` when Redis cannot be
    reached), then ``await bus.close()``.

    Attributes:
        node: this node's name.
        redis: the client for keys (the cluster's registry); shares the URL.
        connected: whether the bus is connected to Redis now.
        on_gap: called when messages from another node were lost.
        on_remote: called with every ``all`` event from another node (before its local delivery).
        on_connected: awaited after every (re)connection, once the channels are subscribed again.
        dropped: messages not published because Redis was away.
    """


    def __init__(self, url: str, node: str, crosses: Callable[[str], bool] | None = None) -> None:
        super().__init__()
        self._crosses = crosses if crosses is not None else _every_topic
        self.url = url
        self.node = node
        self.redis: aioredis.Redis = aioredis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        # The two connections below: RESP2 (plain lists); no timeout on a read or a write (redis-py's default of 5 s
        # would end a quiet receiver, and costs a task per write); a Redis that hangs is noticed by the keys' client.
        self._connections = aioredis.ConnectionPool.from_url(url, socket_connect_timeout=2, socket_timeout=None, socket_keepalive=True, protocol=2)
        self._publisher: aioredis.Connection | None = None
        self._receiver: aioredis.Connection | None = None
        self._inbox: RedisInbox | None = None  # reads the receiver
        self.connected = False
        self.on_gap: list[GapListener] = []
        self.on_remote: list[RemoteListener] = []
        self.on_connected: list[Callable[[], Awaitable[None]]] = []
        self.dropped = 0
        self._channels: dict[str, set[str]] = {}  # topic -> the Redis channels its local subscribers need
        self._wanted: set[str] = set()
        self._subscribed: set[str] = set()  # asked of Redis on the receiver
        self.confirmed: set[str] = set()
        """The channels Redis confirmed this node subscribes to (events published after that reach it)."""
        self._seq: dict[str, int] = {}  # channel -> the last number this node published on it
        self._last: dict[tuple[str, str], int] = {}  # (channel, origin) -> the last number received
        self._outbox: list[bytes] = []  # packed PUBLISH commands waiting for the end of the turn
        self._turn = TurnFlush(self.flush)  # the outbox goes at the end of the turn
        self._resubscribe = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False

    # --- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to Redis and start publishing and receiving.

        Raises:
            BusUnavailable: Redis does not answer at ``url``.
        """
        try:
            await self.redis.ping()
            await self._open()
        except (RedisError, OSError) as exc:
            await self._disconnect()
            raise BusUnavailable(f"cannot reach Redis at {self.url}: {exc}") from None
        self.connected = True
        self._tasks = [
            asyncio.create_task(self._receive_loop()),
            asyncio.create_task(self._subscription_loop()),
        ]

    async def close(self) -> None:
        """Publish what waits to be published, stop publishing and receiving, and close the connections to Redis."""
        self._closing = True
        self.flush()
        publisher = self._publisher
        writer = getattr(publisher, "_writer", None) if publisher is not None else None
        if writer is not None:
            try:
                await asyncio.wait_for(writer.drain(), CLOSE_TIMEOUT_S)
            except asyncio.TimeoutError:
                log.info("could not publish the last messages within %g s", CLOSE_TIMEOUT_S)
            except (RedisError, OSError):
                pass  # Redis is gone: what is left is lost, as a gap
        for task in self._tasks:
            task.cancel()
        # A cancellation can be lost: redis-py writes under asyncio.wait_for, which on Python 3.11 returns the
        # result when the write ends as the cancellation comes. The loops also end on seeing _closing, and
        # a read in progress ends when its connection closes.
        await self._disconnect()
        running: set[asyncio.Task[None]] = set()
        if self._tasks:
            _, running = await asyncio.wait(self._tasks, timeout=CLOSE_TIMEOUT_S)
        if running:
            log.warning("%d Redis bus tasks did not stop within %g s; left behind", len(running), CLOSE_TIMEOUT_S)
        await self.redis.aclose()
        await self._connections.disconnect()

    async def _open(self) -> None:
        """Connect the publisher (replies off) and the receiver (subscribed to this node's channels)."""
        publisher = self._publisher = self._connections.make_connection()
        await publisher.connect()
        await publisher.send_packed_command(_REPLY_OFF, check_health=False)
        receiver = self._receiver = self._connections.make_connection()
        await receiver.connect()
        self._inbox = RedisInbox.take_over(receiver, self._reply)  # read in the transport's callback from now on
        self.confirmed = set()
        self._subscribed = set()
        await receiver.send_packed_command(_pack(("SUBSCRIBE", f"{PREFIX}__node__:{self.node}")), check_health=False)  # a channel of its own: the connection is always a subscriber
        await self._apply_subscriptions(receiver)

    async def _disconnect(self) -> None:
        for connection in (self._publisher, self._receiver):
            if connection is not None:
                try:
                    await connection.disconnect(nowait=True)
                except (RedisError, OSError):
                    pass
        self._publisher = self._receiver = None

    # --- subscriptions ------------------------------------------------------------

    def subscribe(self, topic: str, subscriber: Subscriber, view: View = None) -> None:
        super().subscribe(topic, subscriber, view)
        self._sync(topic)

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        super().unsubscribe(topic, subscriber)
        self._sync(topic)

    def _sync(self, topic: str) -> None:
        """Make the Redis channels of ``topic`` those its local subscribers' views need (none for a topic that stays here)."""
        views = self._groups.get(topic)
        needed = set() if not views or not self._crosses(topic) else {channel(topic), *(channel(topic, view) for view in views)}
        if needed == self._channels.get(topic, set()):
            return
        if needed:
            self._channels[topic] = needed
        else:
            self._channels.pop(topic, None)
        self._wanted = set().union(*self._channels.values()) if self._channels else set()
        self._resubscribe.set()

    def channels(self) -> set[str]:
        """The Redis channels this node needs now (its subscribers' topics and views)."""
        return set(self._wanted)

    async def _apply_subscriptions(self, receiver: aioredis.Connection) -> None:
        wanted = set(self._wanted)
        new, gone = wanted - self._subscribed, self._subscribed - wanted
        self._subscribed = wanted  # before the writes: a change meanwhile is applied by the next round
        commands = ([_pack(("SUBSCRIBE", *sorted(new)))] if new else []) + ([_pack(("UNSUBSCRIBE", *sorted(gone)))] if gone else [])
        if commands:
            if not receiver.is_connected:
                raise RedisConnectionError("not connected")  # never reconnected here: the receive loop does it
            await receiver.send_packed_command(b"".join(commands), check_health=False)

    async def _subscription_loop(self) -> None:
        while not self._closing:
            await self._resubscribe.wait()
            self._resubscribe.clear()
            receiver = self._receiver
            if not self.connected or receiver is None:
                continue  # reconnecting subscribes to every wanted channel
            try:
                await self._apply_subscriptions(receiver)
            except (RedisError, OSError):
                self._subscribed = set()  # the receiver sees the connection go and reconnects

    # --- publishing ---------------------------------------------------------------

    def publish(self, topic: str, frame: bytes, message: Message | None = None, *, skip: Subscriber | None = None) -> None:
        super().publish(topic, frame, message, skip=skip)
        if self._crosses(topic):
            self._send(channel(topic), frame)

    def publish_views(self, topic: str, frames: Mapping[View, tuple[bytes, Message]]) -> None:
        super().publish_views(topic, frames)
        if self._crosses(topic):
            for view, (frame, _) in frames.items():
                self._send(channel(topic, view), frame)

    def published(self, topic: str) -> int:
        """The number of the last event of ``topic`` (for everyone) this node published."""
        return self._seq.get(channel(topic), 0)

    def publish_remote(self, topic: str, frame: bytes) -> None:
        """Publish ``frame`` to ``topic``'s subscribers on the other nodes only (with this turn's messages)."""
        self._send(channel(topic), frame)

    def publish_remote_now(self, messages: Iterable[tuple[str, bytes]]) -> None:
        """Publish each ``(topic, frame)`` to the topic's subscribers on the other nodes only, written now with any
        messages waiting for the end of the turn (the caller is the end of its turn: no callback is scheduled for them)."""
        def write() -> None:
            for topic, frame in messages:
                self._send(channel(topic), frame)

        self._turn.held(write)

    def _send(self, name: str, frame: bytes) -> None:
        seq = self._seq[name] = self._seq.get(name, 0) + 1  # counted even when dropped: receivers see the gap
        if not self.connected or len(self._outbox) >= MAX_OUTBOX:
            self.dropped += 1
            return
        if not self._turn.due:
            self._turn.schedule()
        self._outbox.append(_pack(("PUBLISH", name, msgpack.packb((self.node, seq, frame)))))

    def flush(self) -> None:
        """Write the messages waiting to be published to the publisher now, in one write (no reply comes).

        Nothing waits here for Redis to take them: the connection's transport
        buffers what the socket does not take at once. Messages that cannot be
        written (not connected, or more than :data:`MAX_UNSENT_BYTES` not taken
        yet) are dropped and counted in :attr:`dropped`; receivers see the gap.
        """
        self._turn.due = False
        batch = self._outbox
        if not batch:
            return
        self._outbox = []
        publisher = self._publisher
        writer: asyncio.StreamWriter | None = getattr(publisher, "_writer", None) if publisher is not None else None  # redis-py's stream
        transport = writer.transport if writer is not None else None
        if transport is None or transport.is_closing() or not publisher.is_connected:  # type: ignore[union-attr]
            self.dropped += len(batch)
            log.warning("cannot publish %d messages to Redis: not connected", len(batch))
            return
        if transport.get_write_buffer_size() > MAX_UNSENT_BYTES:
            self.dropped += len(batch)
            log.warning("cannot publish %d messages to Redis: %d bytes written before are not taken yet", len(batch), transport.get_write_buffer_size())
            return
        transport.write(batch[0] if len(batch) == 1 else b"".join(batch))

    # --- receiving ----------------------------------------------------------------

    async def _receive_loop(self) -> None:
        """Reconnect whenever the receiver's connection is lost (its messages are handled by :class:`RedisInbox`)."""
        while not self._closing:
            inbox = self._inbox
            exc: BaseException | None = RedisConnectionError("not connected")
            if inbox is not None:
                exc = await inbox.lost
            if self._closing:
                return
            log.warning("lost Redis at %s: %s; reconnecting", self.url, exc or "the connection was closed")
            await self._reconnect()

    def _reply(self, reply: list[bytes]) -> None:
        """One push of the receiver: a message, or Redis confirming a (un)subscription."""
        kind = reply[0]
        if kind == b"message":
            self._received(reply[1].decode(), reply[2])
        elif kind == b"subscribe":
            self.confirmed.add(reply[1].decode())
        elif kind == b"unsubscribe":
            self.confirmed.discard(reply[1].decode())

    async def _reconnect(self) -> None:
        self.connected = False
        await self._disconnect()
        pause = RECONNECT_FIRST_S
        while True:
            await asyncio.sleep(pause)
            try:
                await self.redis.ping()
                await self._open()
            except (RedisError, OSError):
                await self._disconnect()
                pause = min(pause * 2, RECONNECT_MOST_S)
                continue
            if self._closing:  # closed meanwhile, its cancellation lost (see close())
                await self._disconnect()
                return
            break
        self.connected = True
        self._resubscribe.set()  # what changed while reconnecting
        log.info("reconnected to Redis at %s", self.url)
        for listener in list(self.on_connected):
            try:
                await listener()
            except (RedisError, OSError) as exc:
                log.warning("republishing after reconnecting failed: %s", exc)

    def _received(self, name: str, data: bytes) -> None:
        try:
            origin, seq, frame = msgpack.unpackb(data)
            topic, view = _parse(name)
        except (ValueError, TypeError, msgpack.UnpackException) as exc:
            log.warning("ignored a malformed message on %s: %s", name, exc)
            return
        if origin == self.node:
            return  # delivered locally when it was published
        key = (name, origin)
        last = self._last.get(key)
        self._last[key] = seq
        if last is not None and seq != last + 1:
            for gap_listener in list(self.on_gap):
                gap_listener(topic, None if view == "all" else view, origin)  # type: ignore[arg-type]
        if view == "all":
            for remote_listener in list(self.on_remote):
                remote_listener(topic, origin, seq, frame)
            LocalBus.publish(self, topic, frame)
        else:
            LocalBus.publish_views(self, topic, {view: (frame, None)})  # type: ignore[dict-item]
