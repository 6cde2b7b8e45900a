"""The connection layer: the byte pump between each socket and the sans-IO protocol.

One :class:`Connections` accepts every connection, refuses those over a
limit, feeds received bytes to :class:`protocol.ServerConnection`, hands each
decoded request to the server's request handler, one at a time in order,
throttles flooders, and enforces the deadlines (hello, stalled frames,
silence) while sending heartbeats. It knows nothing of tables or sessions:
what a request means is the handler's business.

Sockets are driven by :class:`PeerProtocol`, an :class:`asyncio.Protocol`: the transport hands it each chunk
it reads. A chunk that reaches an idle connection is decoded and answered at once, in the transport's
callback, as far as its requests go without waiting; the first request that must wait (a commit, a busy table,
the throttle, another connection's turn) leaves the rest to the callback of the future it waits on
(:class:`Waiting`) or, if it waits on anything else, to a task; either also handles the chunks that arrive
meanwhile, in order, and ends once they are handled (:meth:`Connections.serve_now`). The usual chunk, one
whole frame, is handled without even a coroutine unless its request must wait
(:meth:`Connections._serve_frame`). So an idle connection holds no task, a request that never waits costs
none, and a durable move waits for its commit without one.
Every frame a connection gets during one turn of the event loop (the replies to the chunks it sent, and every
push other connections' requests caused) leaves in one write at the end of that turn
(:class:`server.net.peer.Outbox`): a turn that handles many connections writes to each once, after all of them
were handled. A connection whose unhandled input grows past :data:`INBOX_HIGH_BYTES` is paused until its task
catches up, so a flooder's bytes wait in its own socket buffer.

This module holds that pump (:class:`Connections`, :class:`PeerProtocol`); the rest of the connection layer is in its parts:
:mod:`server.net.admission` (who may connect: descriptors, limits, refusals),
:mod:`server.net.liveness` (deadlines and heartbeats), :mod:`server.net.throttle`
(a connection's request rate) and :mod:`server.net.resuming` (handling resumed
where it stopped: :class:`Waiting`, :class:`Resumed`).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any, Awaitable, Callable, Coroutine, cast

from protocol import Code, ProtocolError, ServerConnection
from protocol.messages import REQUEST_TYPES, Error, Request, Shutdown

from .admission import Admission
from .limits import AddressBuckets, Limits
from .liveness import Liveness, drop
from .peer import Outbox, Peer
from .resuming import PUMP_TASK_NAME, Resumed, Waiting
from .throttle import Throttle

__all__ = ["Connections", "send_protocol_error"]

log = logging.getLogger(__name__)

YIELD_EVERY_REQUESTS = 8
"""A connection's requests handled in a row before other connections get a turn."""

INBOX_HIGH_BYTES = 256 * 1024
"""Received bytes not yet handled above which a connection stops reading its socket."""
INBOX_LOW_BYTES = 64 * 1024
"""... and below which it reads again."""

_REQUEST_CLASSES = frozenset(REQUEST_TYPES)
"""What a decoded request is exactly an instance of: ``type(event) in`` it tells a request from a
:class:`ProtocolError` for a tenth of a failing ``isinstance`` (every request asks)."""

RequestHandler = Callable[[Peer, Request], "Awaitable[None] | None"]
"""Answers one request (it sends the reply itself): at once (returns ``None``), or by the awaitable it returns."""


class Connections(Admission, Liveness):
    """Every open connection, and the pump, limits and deadlines of each.

    Args:
        limits: what one client may cost.
        handle: ``handle(peer, request)`` answers one request (it sends the reply itself), at once
            (it returns ``None``) or when the awaitable it returns is awaited.
        disconnected: called once when a connection that was accepted ends.

    Attributes:
        peers: the open connections, as the keys of a map (values ``None``): at
            thousands of entries a dict costs about two thirds of a set.
        max_connections: open connections allowed (``limits.max_connections``,
            or fewer if the descriptor limit is lower; see :meth:`fit_to_descriptors`).
    """

    def __init__(self, limits: Limits, handle: RequestHandler, disconnected: Callable[[Peer], None]) -> None:
        self.limits = limits
        self.peers: dict[Peer, None] = {}
        self.max_connections = limits.max_connections
        self._handle_request = handle
        self._disconnected = disconnected
        self._refusal_room = self.max_connections
        self._refusing = 0  # connections being refused right now
        self._held = 0  # accepted sockets not yet closed: handshakes, refusals and open connections
        self._room = asyncio.Event()
        self._pumps: set[asyncio.Task[None] | Waiting] = set()  # handling in progress: a task, or a coroutine a future resumes
        self._loop: asyncio.AbstractEventLoop | None = None
        self._per_address: collections.Counter[str] = collections.Counter()
        self.others = 0  # open connections that are not game connections (browsers' WebSockets: server.web)
        self._attempts = AddressBuckets(limits.connections_per_address_per_s, limits.connection_burst)
        self._watchdog: asyncio.Task[None] | None = None
        self.outbox = Outbox(limits.send_buffer_bytes)

    async def close(self, reason: str) -> None:
        """Send ``shutdown`` to every connection, close them all and wait for their pumps to end."""
        if self._watchdog is not None:
            self._watchdog.cancel()
        for peer in list(self.peers):
            peer.send(Shutdown(message=reason))
            peer.close()
        await asyncio.gather(*(peer.wait_closed() for peer in list(self.peers)), return_exceptions=True)
        for pump in list(self._pumps):
            if isinstance(pump, Waiting):
                pump.into_task()  # to be cancelled and awaited as a task
        for task in list(self._pumps):
            task.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)
        for peer in list(self.peers):  # a task cancelled before it ran never released its peer
            self.release(peer)

    # --- one connection ----------------------------------------------------------------

    def protocol_factory(self) -> "PeerProtocol":
        """A protocol for one new connection (pass to ``loop.connect_accepted_socket``)."""
        return PeerProtocol(self)

    def accepted(self, inbox: "PeerProtocol") -> None:
        """Take on a connection the transport just made, or start refusing it.

        An accepted connection has no task while it is idle: what it sends is
        handled at once (:meth:`serve_now`), in a task only while the handling waits.
        """
        peer = inbox.peer
        refusal = self._refusal(peer.host)
        if refusal is not None:
            inbox.refused = True
            self._start(self._refuse(peer, refusal))
            return
        self.peers[peer] = None
        self._per_address[peer.host] += 1
        log.info("connection from %s", peer.address)
        peer.reading = True

    def serve_now(self, inbox: "PeerProtocol", data: bytes) -> None:
        """Handle ``data``, a chunk that reached the idle connection ``inbox``, right here, without a task.

        The handling (:meth:`_serve`) runs in the transport's callback until
        it ends or must wait: then the future it waits on resumes it
        (:class:`Waiting`), or a task takes it over where it stopped
        (:class:`Resumed`; see :meth:`_suspended`), and handles the chunks that
        arrive meanwhile as well. The handling removes its waiter or task from
        ``_pumps`` when it ends: a done callback would cost one more loop callback.
        """
        peer = inbox.peer
        event = peer.protocol.receive_frame(data)
        if event is None:  # not one whole frame: the general pump
            self._drive(inbox, self._serve(inbox, data))
            return
        try:
            pending = self._serve_frame(inbox, peer, event)
        except Exception as exc:  # noqa: BLE001 - ended by _serve, as an exception in its pump would be
            pending = _raise(exc)
        if pending is not None:
            self.serve_pending(inbox, pending)
        # else: handled without a coroutine at all: the usual request

    def serve_pending(self, inbox: "PeerProtocol", pending: Awaitable[None]) -> None:
        """Go on with the handling of a whole frame that :meth:`_serve_frame` returned ``pending`` for (as :meth:`serve_now`)."""
        self._drive(inbox, self._serve(inbox, b"") if pending is _ENDED else self._serve(inbox, None, pending))

    def _drive(self, inbox: "PeerProtocol", serving: Coroutine[Any, Any, None]) -> None:
        """Run ``serving`` until it ends or waits; then :meth:`_suspended` takes it over."""
        try:
            waiting_on = serving.send(None)
        except StopIteration:
            return  # handled without waiting: no task at all
        self._suspended(inbox, serving, waiting_on)

    def _serve_frame(self, inbox: "PeerProtocol", peer: Peer, event: Request | ProtocolError) -> Awaitable[None] | None:
        """Handle ``event``, all that a chunk held (one whole frame), as :meth:`_pump` would, without a coroutine.

        Returns ``None`` once it is handled and the connection is idle again;
        otherwise what :meth:`_serve` must await before it goes on: the
        request's wait (its handler's awaitable, or the throttle's hold), or
        :data:`_ENDED` when the connection ended (closed by us, or the client left).
        """
        peer.reading = False
        now = peer.last_received = time.monotonic()
        throttle = inbox._throttle
        if throttle.__class__ is not Throttle:  # not made yet (see PeerProtocol.throttle)
            throttle = inbox.throttle(now)
        if throttle is not None:
            bucket = throttle._bucket  # Throttle.take(now), written out: every request of every connection
            tokens = bucket._tokens + (now - bucket._at) * bucket.rate
            bucket._tokens = tokens = (tokens if tokens < bucket.burst else bucket.burst) - 1.0
            bucket._at = now
            # In debt, or a flood was under way: the whole verdict.
            if (tokens < 0.0 or throttle._since is not None) and (wait_s := throttle.verdict(now, tokens)) != 0.0:
                return self._held_back(peer, event, throttle, wait_s)
        if type(event) not in _REQUEST_CLASSES:  # a ProtocolError
            send_protocol_error(peer, event)
        else:
            answering = self._handle_request(peer, event)
            if answering is not None:
                return answering  # the request must wait
        if peer.closed or peer.transport.is_closing():
            return _ENDED
        peer.partial_since = None  # the chunk was one whole frame: nothing is left partial
        peer.last_received = now  # ready to read again: the silence counts from its arrival, microseconds ago
        peer.reading = True
        return None

    async def _held_back(self, peer: Peer, event: Request | ProtocolError, throttle: Throttle, wait_s: float | None) -> None:
        """Hold ``event`` back ``wait_s`` seconds (the throttle's verdict), then handle it; drop the peer if ``wait_s`` is ``None``."""
        if wait_s is None:
            drop(peer, Code.RATE_LIMITED, throttle.reason())
            return
        await asyncio.sleep(wait_s)  # the flooder's further bytes wait in its own socket buffer
        if isinstance(event, ProtocolError):
            send_protocol_error(peer, event)
            return
        answering = self._handle_request(peer, event)
        if answering is not None:
            await answering

    def _suspended(self, inbox: "PeerProtocol", serving: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        """Go on with ``serving``, which began outside a task and now waits on ``waiting_on`` (what its ``send`` returned).

        A plain future (a commit, a table lock, the throttle's sleep) resumes
        it from its own done callback (:class:`Waiting`): no task, no extra
        loop callback. Anything else -- a bare yield (``asyncio.sleep(0)``,
        which is also how code that needs a task asks for one), a task --
        makes it a task's coroutine from where it stopped (:class:`Resumed`).
        """
        if waiting_on.__class__ is asyncio.Future:
            waiting = Waiting(self, inbox, serving, waiting_on)
            inbox._task = waiting
            self._pumps.add(waiting)
            waiting_on.add_done_callback(waiting.resume)
            return
        task = self._running_loop().create_task(Resumed(serving, waiting_on), name=PUMP_TASK_NAME)
        inbox._task = task
        self._pumps.add(task)

    def end(self, inbox: "PeerProtocol") -> None:
        """Start the task that ends the idle connection ``inbox``: its input ended, or the socket closed."""
        task = inbox._task = self._running_loop().create_task(self._serve(inbox, b""), name=PUMP_TASK_NAME)
        self._pumps.add(task)

    def _start(self, coroutine: Awaitable[None]) -> asyncio.Task[None]:
        task = self._running_loop().create_task(coroutine)  # type: ignore[arg-type]
        self._pumps.add(task)
        task.add_done_callback(self._pumps.discard)
        return task

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The event loop this runs in, looked up once: ``asyncio.get_running_loop()`` costs a ``getpid`` system call."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    async def _serve(self, inbox: "PeerProtocol", data: bytes | None, pending: Awaitable[None] | None = None) -> None:
        """Handle ``data`` (``b""``: the input ended; ``None``: none), then every chunk ``inbox`` holds; when none are left,
        go idle, or end the connection if its input ended or it was closed.

        ``pending``: the rest of a request :meth:`_serve_frame` began, awaited first.
        """
        peer = inbox.peer
        try:
            try:
                if pending is not None:
                    await pending
                    if peer.closed or peer.transport.is_closing():
                        data = b""  # closed by us, or the client left: what it sent after is not worth answering
                    else:
                        peer.partial_since = None  # that request was one whole frame
                if await self._pump(inbox, peer, data):
                    return  # idle: the next chunk is handled at once again
            except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
                pass
            except Exception:
                log.exception("connection %s failed", peer.address)
            inbox.ended = True  # this handling stays the connection's last: no other one starts
            self.release(peer)
            if asyncio.current_task() is None:
                await asyncio.sleep(0)  # into a task: the waits below use asyncio.wait_for, which needs one from Python 3.12
            try:
                await peer.discard_input()
                await peer.wait_closed()
            finally:
                self.free_descriptor()
        finally:
            task = inbox._task
            if task is not None:
                inbox._task = None
                self._pumps.discard(task)

    def release(self, peer: Peer) -> None:
        """Forget an accepted connection that ended and close it (once; later calls do nothing)."""
        if peer not in self.peers:
            return
        del self.peers[peer]
        self._per_address[peer.host] -= 1
        if not self._per_address[peer.host]:
            del self._per_address[peer.host]
        self._disconnected(peer)
        peer.close()

    async def _pump(self, inbox: "PeerProtocol", peer: Peer, data: bytes | None) -> bool:
        """Handle ``data`` (if not ``None``), then every chunk ``inbox`` holds; ``True`` if the connection goes on (idle),
        ``False`` if it ended."""
        while not peer.closed:
            if data is None:
                data = inbox.next_chunk()
                if data is None:
                    peer.last_received = time.monotonic()  # ready to read again: the silence counts from now
                    peer.reading = True
                    return True
            if not data:
                return False
            peer.reading = False
            received_at = peer.last_received = time.monotonic()
            completed = False
            for count, event in enumerate(peer.protocol.receive_data(data), 1):
                completed = True
                if count % YIELD_EVERY_REQUESTS == 0:
                    await asyncio.sleep(0)  # many requests in one read: let other connections have a turn
                throttle = inbox.throttle()
                if throttle is not None:
                    wait_s = throttle.take()
                    if wait_s != 0.0:
                        if wait_s is None:
                            drop(peer, Code.RATE_LIMITED, throttle.reason())
                            return False
                        await asyncio.sleep(wait_s)  # the flooder's further bytes wait in its own socket buffer
                if isinstance(event, ProtocolError):
                    send_protocol_error(peer, event)
                else:
                    answering = self._handle_request(peer, event)
                    if answering is not None:
                        await answering  # the request must wait
                if peer.closed or peer.transport.is_closing():  # peer.gone, one call fewer per request
                    return False  # closed by us, or the client left: its other requests are not worth answering
            if not peer.protocol.buffered_bytes:
                peer.partial_since = None
            elif completed:
                peer.partial_since = time.monotonic()  # the time spent on the completed frames is not the peer's stall
            elif peer.partial_since is None:
                peer.partial_since = received_at
            data = None
        return False


_ENDED: Any = object()
"""What :meth:`Connections._serve_frame` returns when the connection ended while its request was handled."""


async def _raise(exc: Exception) -> None:
    """Raise ``exc`` where :meth:`Connections._serve` awaits it, so it ends the connection as its pump's own exceptions do."""
    raise exc


def send_protocol_error(peer: Peer, error: ProtocolError) -> None:
    """Answer a request the protocol refused with ``error``; close the connection if the error is fatal."""
    log.info("%s: %s (%s)", peer.address, error.code, error.message)
    peer.send(Error(id=error.request_id, code=error.code, message=error.message, field=error.field))
    if error.fatal:
        peer.close()


class _Chunks(list):  # type: ignore[type-arg]
    """Received chunks waiting for a connection's task (a list of bytes), with their total size and
    whether reading is paused for them; made when a chunk arrives, dropped once the last is taken."""

    __slots__ = ("size", "paused")

    def __init__(self) -> None:
        super().__init__()
        self.size = 0
        self.paused = False


class PeerProtocol(asyncio.Protocol):
    """The transport's side of one connection: hands each received chunk to the connection layer.

    An idle connection has no task, no future and no timer: a chunk that
    reaches it is handled at once (:meth:`Connections.serve_now`); only
    handling that must wait goes on in a task, which collects the chunks that
    arrive meanwhile and ends once it has handled them all. The rate throttle
    is made on the second request, so a connection that only said ``hello``
    has none.

    Attributes:
        ended: the connection is being ended: no chunk is handled any more, no other task starts.
        refused: being refused: what it sends is dropped.
    """

    __slots__ = (
        "_connections", "_chunks", "_task", "_throttle", "peer", "refused", "ended",
    )  # fmt: skip

    def __init__(self, connections: Connections) -> None:
        self._connections = connections
        self._chunks: _Chunks | None = None  # rarely more than one; no list at all while none waits
        self._task: asyncio.Task[None] | Waiting | None = None  # handling chunks or ending the connection, only while there is one
        self._throttle: Throttle | bool = False  # True: the first request was admitted, no throttle made yet
        self.refused = False
        self.ended = False
        self.peer: Peer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, transport)  # a stream transport; uvloop's do not subclass asyncio.Transport
        limits = self._connections.limits
        self.peer = Peer(transport, ServerConnection(max_frame_bytes=limits.max_frame_bytes), outbox=self._connections.outbox)
        self.peer.watch_backlog()
        self._connections.accepted(self)

    def data_received(self, data: bytes) -> None:
        peer = self.peer
        if peer.closed or self.refused:
            return  # closing: what the peer still sends is dropped
        if self._task is None:  # idle: nothing waits before this chunk
            event, connections = peer.protocol.receive_frame(data), self._connections  # Connections.serve_now(), written out
            if event is None:  # not one whole frame: the general pump
                connections._drive(self, connections._serve(self, data))
                return
            try:
                pending = connections._serve_frame(self, peer, event)
            except Exception as exc:  # noqa: BLE001 - ended by _serve, as in serve_now
                pending = _raise(exc)
            if pending is not None:
                connections.serve_pending(self, pending)
            return
        chunks = self._chunks
        if chunks is None:
            chunks = self._chunks = _Chunks()
        chunks.append(data)
        chunks.size += len(data)
        if chunks.size > INBOX_HIGH_BYTES and not chunks.paused:
            chunks.paused = True
            self.peer.transport.pause_reading()

    def eof_received(self) -> bool:
        self.peer.input_done()
        self._wake()
        transport = self.peer.transport
        if transport.is_closing():
            return False  # closed by our side already (a closed TLS transport cannot even be asked whether it is TLS)
        # Our side may still have replies to send; TLS cannot half-close.
        return transport.get_extra_info("sslcontext") is None

    def connection_lost(self, exc: Exception | None) -> None:
        self.peer.connection_lost()
        self._wake()

    def pause_writing(self) -> None:
        """More than the send buffer's limit waits for the client: it is not reading (see :meth:`Peer.not_reading`)."""
        self.peer.not_reading()

    def resume_writing(self) -> None:
        """Nothing to do: a peer that fell behind was dropped, never paused."""

    def _wake(self) -> None:
        """The input ended or the socket closed: end the connection, unless a task that will see it runs already."""
        if self._task is None and not self.refused and not self.ended:
            self._connections.end(self)

    def throttle(self, now: float | None = None) -> "Throttle | None":
        """The throttle to admit the request about to be handled (it came at ``now``, ``time.monotonic()``
        seconds, if the caller has it); ``None`` for the connection's first.

        The first request is always admitted at once (the bucket starts
        full), so nothing is kept for it but the fact; the throttle is made
        for the second request (see :class:`Throttle`).
        """
        throttle = self._throttle
        if throttle is False:
            self._throttle = True
            return None
        if throttle is True:
            throttle = self._throttle = Throttle(self._connections.limits, time.monotonic() if now is None else now)
        return throttle  # type: ignore[return-value]

    def next_chunk(self) -> bytes | None:
        """The next received chunk; ``b""`` once the client sent EOF or the connection is lost; ``None`` if none waits."""
        chunks = self._chunks
        if not chunks:
            return b"" if self.peer.input_ended else None
        data = chunks.pop(0)
        chunks.size -= len(data)
        if chunks.paused and chunks.size < INBOX_LOW_BYTES:
            chunks.paused = False
            self.peer.transport.resume_reading()
        if not chunks:
            self._chunks = None  # the size is 0 and reading is not paused: nothing to keep
        return data
