"""One connected client, as the server sees it: identity, liveness and outgoing bytes.

Writes never block the caller. Frames produced during one turn of the event
loop (the reply to a batch of requests and every push they cause, or the
pushes of one timer) are collected and handed to the transport as one write
at the end of that turn, so a move costs its mover one ``send()``, not one per
frame. The transport sends what the socket takes now and buffers the rest. A peer whose buffer
grows past its limit is not reading, and is disconnected rather than allowed
to slow anyone else's broadcast or to hold the server's memory. No frame
larger than clients must accept (:data:`protocol.MAX_SERVER_FRAME_BYTES`) is
ever written: an ``internal_error`` goes in its place.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Any, Iterable

from protocol import Code, Message, ServerConnection, encode_message
from protocol.codec import ENCODER
from protocol.framing import _HEADER, HEADER_BYTES, MAX_SERVER_FRAME_BYTES
from protocol.messages import Error, Ok

log = logging.getLogger(__name__)

_encode = ENCODER.encode
_pack_header = _HEADER.pack

SOCKET_BUFFER_BYTES = 64 * 1024
"""Kernel send and receive buffer of each accepted socket: fixed, so the kernel
cannot hide megabytes for a client that does not read, or that floods."""

DEFAULT_SEND_BUFFER_BYTES = 512 * 1024
"""How many bytes may wait for a slow reader before it is dropped."""

FLUSH_BYTES = 64 * 1024
"""Frames waiting for the end of the turn are written at once when they add up to this many bytes."""

CLOSE_LINGER_S = 2.0
"""After :meth:`Peer.close`, how long buffered frames may take to leave before the socket is aborted."""


class Peer:
    """A connection's server-side state.

    Attributes:
        address: ``"host:port"`` of the remote end, for logs.
        host: the remote IP address (what connection limits count by).
        session: the :class:`server.core.session.Session` it speaks for, once ``hello`` succeeded.
        connected_at, last_received, last_sent: ``time.monotonic()`` seconds of
            the connection's start (``None`` once ``hello`` succeeded: only the
            handshake deadline needs it), of the last bytes read from it (or of the
            moment the server was ready to read again), and of the last frame sent to it.
        partial_since: when the incomplete frame now buffered began, or ``None``.
        reading: whether the server is waiting for this peer's bytes (timeouts
            only run then, never while the server itself is busy with its requests).
        closed: no more frames will be sent.

    Args:
        transport: the connection's stream transport.
        protocol: the connection's sans-IO protocol state.
        send_buffer_bytes: outgoing bytes a slow reader may have waiting before it is
            dropped; only for a peer without an ``outbox`` (a shared outbox holds its server's limit).
        outbox: flushes every peer's pending frames at the end of the loop turn,
            with one scheduled callback for all of them (shared by all peers of a
            server; a peer without one gets its own).
    """

    __slots__ = (
        "_peername", "connected_at", "last_received", "last_sent", "partial_since", "reading", "protocol",
        "session", "closed", "transport", "_input_ended", "_lost", "_waiters",
        "_outbox", "_pending", "_pending_bytes",
    )  # fmt: skip

    def __init__(
        self,
        transport: asyncio.Transport,
        protocol: ServerConnection,
        *,
        send_buffer_bytes: int = DEFAULT_SEND_BUFFER_BYTES,
        outbox: "Outbox | None" = None,
    ) -> None:
        self._peername = transport.get_extra_info("peername")  # the transport's own tuple: nothing new to keep
        self.connected_at: float | None
        self.connected_at = self.last_received = self.last_sent = time.monotonic()
        self.partial_since: float | None = None
        self.reading = False
        self.protocol = protocol
        self.session: Any = None  # the Session this connection speaks for, after hello
        self.closed = False
        self.transport = transport
        self._input_ended = self._lost = False  # the client sent EOF (or the connection is lost); the socket is closed
        # [end of input, socket closed]: made only when someone waits for either (closing connections)
        self._waiters: list[asyncio.Future[None] | None] | None = None
        self._outbox = outbox if outbox is not None else Outbox(send_buffer_bytes)
        # Frames waiting for this turn's single write: None while none wait, the frame itself while one
        # waits (the usual case: no list to make), the two joined in one bytes when a second comes by the
        # fan-out's usual path (a mover's ok and moved), else a list. A peer is in its outbox's list of
        # peers to flush once for each time its first frame came.
        self._pending: bytes | list[bytes] | None = None
        self._pending_bytes = 0
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
                sock.setsockopt(socket.SOL_SOCKET, option, SOCKET_BUFFER_BYTES)

    @property
    def host(self) -> str:
        """The remote IP address (what connection limits count by)."""
        peername = self._peername
        return str(peername[0]) if peername else "?"

    @property
    def address(self) -> str:
        """``"host:port"`` of the remote end, for logs (made when asked: an idle connection keeps no text of it)."""
        peername = self._peername
        return f"{peername[0]}:{peername[1]}" if peername else "?"

    @property
    def input_ended(self) -> bool:
        """Whether the client sent EOF or the connection is lost: no more bytes will come."""
        return self._input_ended

    @property
    def gone(self) -> bool:
        """Closed by us, or the connection is closing (the client went away): nothing more to do for it."""
        return self.closed or self.transport.is_closing()

    def send(self, message: Message) -> None:
        """Send ``message`` to this peer; drop the peer if it stopped reading."""
        if self.closed:
            return
        if message.__class__ is Ok:  # a move's reply: its frame kept by id (ok_frame)
            request_id = message.id  # type: ignore[attr-defined]
            frame = _OK_FRAMES[request_id] if type(request_id) is int and 0 <= request_id < OK_FRAMES_KEPT else None
            if frame is None:
                frame = ok_frame(request_id)
        else:
            body = _encode(message)  # encode_message(), written out: this sends every reply
            frame = _pack_header(len(body)) + body
        size = len(frame)
        outbox = self._outbox
        if self._pending is None and size < outbox.flush_bytes and size - HEADER_BYTES <= MAX_SERVER_FRAME_BYTES:
            # send_frame()'s usual case, written out: the first frame of this turn (a reply), and not a big one.
            self._pending = frame
            self._pending_bytes = size
            if outbox._peers:
                outbox._peers.append(self)
            else:
                outbox.add(self)
        else:
            self.send_frame(frame, message)

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        """Send an already encoded frame (shared by a broadcast); ``message``, if given, is what it encodes.

        A frame whose body is above :data:`MAX_SERVER_FRAME_BYTES` is never
        sent: it is logged, and a small ``internal_error`` (with the request's
        ``id`` when ``message`` is a reply) goes instead.
        """
        if self.closed:
            return  # a transport that is closing drops the frame at the flush, still in this turn
        size = len(frame)
        if size - HEADER_BYTES > MAX_SERVER_FRAME_BYTES:
            frame = self._too_large(frame, message)
            size = len(frame)
        outbox = self._outbox
        pending = self._pending
        if pending is None:
            self._pending = frame
            pending_bytes = self._pending_bytes = size
            if outbox._peers:
                outbox._peers.append(self)  # Outbox.add(), written out: once per peer and turn, for every receiver
            else:
                outbox.add(self)
        else:
            if type(pending) is bytes:
                self._pending = [pending, frame]
            else:
                pending.append(frame)  # type: ignore[union-attr]
            pending_bytes = self._pending_bytes = self._pending_bytes + size
        if pending_bytes >= outbox.flush_bytes:
            self.flush()  # a big burst goes to the socket now, so only what the reader leaves unread counts against it

    def flush(self, now: float | None = None) -> None:
        """Hand every frame sent since the last flush to the transport in one write; drop the peer if it stopped reading.

        ``now`` is ``time.monotonic()`` if the caller has it (the time of :attr:`last_sent`).
        """
        pending = self._pending
        if pending is None:
            return
        data = pending if type(pending) is bytes else b"".join(pending)
        self._pending = None
        self._pending_bytes = 0
        transport = self.transport
        if transport.is_closing():
            return
        self.last_sent = time.monotonic() if now is None else now
        transport.write(data)  # a reader whose backlog passes the limit is dropped from within (:meth:`not_reading`)

    def watch_backlog(self) -> None:
        """Have the transport call :meth:`not_reading` (through its protocol's ``pause_writing``) once more
        than the outbox's ``send_buffer_bytes`` wait to be sent: no check after every write."""
        self.transport.set_write_buffer_limits(high=self._outbox.send_buffer_bytes)

    def not_reading(self) -> None:
        """The client left more than ``send_buffer_bytes`` unread: drop it rather than hold its frames."""
        if self.closed and self.transport.is_closing():
            return  # dropped already
        log.warning("%s (%s) is not reading; disconnecting", self.address, self._who())
        self.abort()

    def _too_large(self, frame: bytes, message: Message | None) -> bytes:
        """The ``internal_error`` frame that replaces an oversize ``frame``."""
        size = len(frame) - HEADER_BYTES
        kind = f"{message.__struct_config__.tag} message" if message is not None else "message"
        log.error("not sending %s (%s) a %s of %d bytes: above the %d bytes clients must accept", self.address, self._who(), kind, size, MAX_SERVER_FRAME_BYTES)
        error = Error(
            id=getattr(message, "id", None),
            code=Code.INTERNAL_ERROR,
            message=f"the server's {kind} was too large to send ({size} bytes, above the limit of {MAX_SERVER_FRAME_BYTES}); it was dropped",
        )
        return encode_message(error)

    def close(self, linger_s: float = CLOSE_LINGER_S) -> None:
        """Send what is buffered, then close; the socket is gone at the latest ``linger_s`` seconds later.

        On plain TCP this is a half-close: our side ends after the last frame
        while the caller reads and discards what the peer still sends
        (:meth:`discard_input`). Closing a socket with unread input would
        reset the connection, and the reset can destroy the frames just
        sent, such as the error that says why.
        """
        if self.closed:
            return
        self.flush()
        self.closed = True
        self.protocol.close()
        transport = self.transport
        try:
            if transport.can_write_eof() and not transport.is_closing():
                transport.write_eof()
            else:
                transport.close()
        except OSError:  # the peer is already gone
            self.abort()
            return
        asyncio.get_running_loop().call_later(linger_s, self._finish)

    async def discard_input(self, timeout_s: float = CLOSE_LINGER_S) -> None:
        """After :meth:`close`: drop the peer's bytes until it closes too (at most ``timeout_s``), then close.

        The connection's protocol drops what arrives once the peer is closed;
        reading is resumed in case it was paused.
        """
        if not self.transport.is_closing():
            self.transport.resume_reading()
        if not self._input_ended:
            try:
                await asyncio.wait_for(asyncio.shield(self._waiter(_INPUT_ENDED)), timeout_s)
            except (TimeoutError, ConnectionError, OSError):
                pass
        self._finish()

    def input_done(self) -> None:
        """The client sent EOF or the connection was lost: it sends nothing more."""
        self._input_ended = True
        self._wake(_INPUT_ENDED)

    def connection_lost(self) -> None:
        """The socket is closed."""
        self.input_done()
        self._lost = True
        self._wake(_LOST)

    def _finish(self) -> None:
        transport = self.transport
        try:
            unsent = transport.get_write_buffer_size()
        except AttributeError:  # asyncio's TLS transport, once closed twice, has nothing left to ask (Python 3.11)
            unsent = 0
        if unsent:
            log.info("%s (%s) did not take its last frames; aborting", self.address, self._who())
            self.abort()
        else:
            transport.close()

    def abort(self) -> None:
        """Close at once, dropping anything buffered."""
        self._pending = None
        self._pending_bytes = 0
        self.closed = True
        self.protocol.close()
        self.transport.abort()

    async def wait_closed(self, timeout_s: float = CLOSE_LINGER_S) -> None:
        """Wait until the socket is closed (at most ``timeout_s`` seconds, then abort it)."""
        if self._lost:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._waiter(_LOST)), timeout_s)
        except (asyncio.TimeoutError, ConnectionError, OSError):
            self.abort()

    def _waiter(self, which: int) -> asyncio.Future[None]:
        """The future that :meth:`_wake` completes for ``which`` (:data:`_INPUT_ENDED` or :data:`_LOST`), made on first use."""
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = [None, None]
        waiter = waiters[which]
        if waiter is None:
            waiter = waiters[which] = asyncio.get_running_loop().create_future()
        return waiter

    def _wake(self, which: int) -> None:
        if self._waiters is not None:
            waiter = self._waiters[which]
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def _who(self) -> str:
        return self.session.name if self.session is not None else "?"

    def __repr__(self) -> str:
        return f"<Peer {self._who()} {self.address}>"


OK_FRAMES_KEPT = 4096
"""Request ids whose ``ok`` frame is kept once made (:func:`ok_frame`): about 50 bytes each, 200 KiB at most."""

_OK_FRAMES: list[bytes | None] = [None] * OK_FRAMES_KEPT


def ok_frame(request_id: int) -> bytes:
    """The frame of ``Ok(id=request_id)``: the same bytes every time, so kept for ids below :data:`OK_FRAMES_KEPT`.

    Raises:
        OverflowError: ``request_id`` is negative or too large for MessagePack (the protocol's ids are not).
    """
    frame = encode_message(Ok(id=request_id))
    if type(request_id) is int and 0 <= request_id < OK_FRAMES_KEPT:
        _OK_FRAMES[request_id] = frame
    return frame


def deliver(peers: Iterable[Peer | None], frame: bytes, message: Message | None = None) -> None:
    """Send the encoded ``frame`` (of ``message``) to each of ``peers`` (``None``: skipped), in order.

    The same as :meth:`Peer.send_frame` on each, in one loop: a broadcast
    costs each receiver little more than the one write of its bytes at the
    end of the turn.
    """
    size = len(frame)
    if size - HEADER_BYTES > MAX_SERVER_FRAME_BYTES:
        for peer in peers:
            if peer is not None:
                peer.send_frame(frame, message)  # which sends an internal_error instead
        return
    for peer in peers:
        if peer is None:
            continue
        outbox = peer._outbox
        pending = peer._pending
        if pending is None and size < outbox.flush_bytes and not peer.closed:
            # Peer.send_frame's usual case, written out: the first frame of this turn, and not a big one.
            peer._pending = frame
            peer._pending_bytes = size
            if outbox._peers:
                outbox._peers.append(peer)
            else:
                outbox.add(peer)
        elif type(pending) is bytes and peer._pending_bytes + size < outbox.flush_bytes and not peer.closed:
            # The second frame, written out too: a mover's moved after its ok, joined to it (no list to make or join).
            peer._pending = pending + frame
            peer._pending_bytes += size
        else:
            peer.send_frame(frame, message)


_INPUT_ENDED = 0
"""Index of the waiter for the end of the client's input in ``Peer._waiters``."""
_LOST = 1
"""Index of the waiter for the socket's close."""


class Outbox:
    """The peers with frames waiting for the end of this loop turn, flushed by one scheduled callback.

    A broadcast to N spectators schedules one callback, not N: each peer
    joins the list with the first frame it has waiting (:meth:`add`; again
    only if it was flushed early within the turn), and :meth:`flush` writes
    every one of them. It also holds what its peers share: how many bytes a
    slow reader may have waiting before it is dropped.

    Args:
        send_buffer_bytes: that limit, in bytes.
    """

    __slots__ = ("_peers", "send_buffer_bytes", "flush_bytes", "_loop")

    def __init__(self, send_buffer_bytes: int = DEFAULT_SEND_BUFFER_BYTES) -> None:
        self._peers: list[Peer] = []
        self.send_buffer_bytes = send_buffer_bytes
        # A peer's frames are written before the end of the turn once they add up to this many bytes
        # (FLUSH_BYTES, or half the limit: only what the reader leaves unread counts against it).
        self.flush_bytes = min(FLUSH_BYTES, (send_buffer_bytes + 1) // 2)
        self._loop: asyncio.AbstractEventLoop | None = None  # looked up once: get_running_loop() costs a getpid() call

    def add(self, peer: Peer) -> None:
        """Flush ``peer`` at the end of this turn (schedules the flush if ``peer`` is the first)."""
        if not self._peers:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self.flush)
        self._peers.append(peer)

    def flush(self) -> None:
        """Write every listed peer's pending frames, one write per peer."""
        peers, self._peers = self._peers, []
        now = time.monotonic()
        for peer in peers:
            # Peer.flush(now), written out: this runs for every receiver of every broadcast.
            pending = peer._pending
            if pending is None:
                continue  # flushed already (a requester's replies leave at the end of its batch)
            peer._pending = None
            transport = peer.transport
            if transport.is_closing():
                continue
            peer.last_sent = now
            try:
                transport.write(pending if type(pending) is bytes else b"".join(pending))
            except Exception:  # one broken transport must not keep the others' frames back
                log.exception("flushing %s failed", peer.address)
                peer.abort()
