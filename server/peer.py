"""One connected client, as the server sees it: identity and outgoing queue.

Writes never block the caller: frames go into a bounded queue that a writer
task drains to the socket. A peer whose queue is full is not reading, and is
disconnected rather than allowed to slow anyone else's broadcast.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from protocol import Message, ServerConnection

log = logging.getLogger(__name__)

DEFAULT_SEND_QUEUE_FRAMES = 256
"""How many outgoing frames may wait for a slow reader before it is dropped."""

CLOSE_LINGER_S = 2.0
"""After :meth:`Peer.close`, how long queued frames may take to leave before the socket is aborted."""


class Peer:
    """A connection's server-side state.

    Attributes:
        address: ``"host:port"`` of the remote end, for logs.
        host: the remote IP address (what connection limits count by).
        session: the :class:`server.session.Session` it speaks for, once ``hello`` succeeded.
        connected_at, last_received, last_sent: ``time.monotonic()`` seconds of
            the connection's start, of the last bytes read from it (or of the
            moment the server was ready to read again), and of the last frame queued to it.
        partial_since: when the incomplete frame now buffered began, or ``None``.
        reading: whether the server is waiting for this peer's bytes (timeouts
            only run then, never while the server itself is busy with its requests).
    """

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        protocol: ServerConnection,
        *,
        send_queue_frames: int = DEFAULT_SEND_QUEUE_FRAMES,
    ) -> None:
        peername = writer.get_extra_info("peername")
        self.address = f"{peername[0]}:{peername[1]}" if peername else "?"
        self.host = str(peername[0]) if peername else "?"
        self.connected_at = self.last_received = self.last_sent = time.monotonic()
        self.partial_since: float | None = None
        self.reading = False
        self.protocol = protocol
        self.session: Any = None  # the Session this connection speaks for, after hello
        self._writer = writer
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=send_queue_frames)
        self._writer_task = asyncio.create_task(self._drain(), name=f"writer {self.address}")
        self.closed = False

    def send(self, message: Message) -> None:
        """Queue ``message`` for this peer; drop the peer if it stopped reading."""
        if self.closed:
            return
        self.send_frame(self.protocol.send(message))

    def send_frame(self, frame: bytes) -> None:
        """Queue an already encoded frame (shared by a broadcast)."""
        if self.closed:
            return
        try:
            self._queue.put_nowait(frame)
            self.last_sent = time.monotonic()
        except asyncio.QueueFull:
            log.warning("%s (%s) is not reading; disconnecting", self.address, self._who())
            self.abort()

    async def _drain(self) -> None:
        try:
            while (frame := await self._queue.get()) is not None:
                self._writer.write(frame)
                await self._writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._writer.close()

    def close(self, linger_s: float = CLOSE_LINGER_S) -> None:
        """Send what is queued, then close the socket; abort it if that takes over ``linger_s`` seconds."""
        if self.closed:
            return
        self.closed = True
        self.protocol.close()
        try:
            self._queue.put_nowait(None)
        except asyncio.QueueFull:
            self.abort()
            return
        asyncio.get_running_loop().call_later(linger_s, self._abort_if_open)

    def _abort_if_open(self) -> None:
        if not self._writer_task.done() or self._writer.transport.get_write_buffer_size():
            log.info("%s (%s) did not take its last frames; aborting", self.address, self._who())
            self.abort()

    def abort(self) -> None:
        """Close at once, dropping anything queued."""
        self.closed = True
        self.protocol.close()
        self._writer_task.cancel()
        self._writer.transport.abort()

    async def wait_closed(self, timeout_s: float = 2.0) -> None:
        """Wait until the writer has flushed and closed (at most ``timeout_s`` seconds)."""
        try:
            await asyncio.wait_for(asyncio.shield(self._writer_task), timeout_s)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self.abort()

    def _who(self) -> str:
        return self.session.name if self.session is not None else "?"

    def __repr__(self) -> str:
        return f"<Peer {self._who()} {self.address}>"
