"""One connected client, as the server sees it: identity and outgoing queue.

Writes never block the caller: frames go into a bounded queue that a writer
task drains to the socket. A peer whose queue is full is not reading, and is
disconnected rather than allowed to slow anyone else's broadcast.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from protocol import Message, ServerConnection

log = logging.getLogger(__name__)

DEFAULT_SEND_QUEUE_FRAMES = 256
"""How many outgoing frames may wait for a slow reader before it is dropped."""


class Peer:
    """A connection's server-side state.

    Attributes:
        address: ``"host:port"`` of the remote end, for logs.
        session: the :class:`server.session.Session` it speaks for, once ``hello`` succeeded.
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
        try:
            self._queue.put_nowait(self.protocol.send(message))
        except asyncio.QueueFull:
            log.warning("%s (%s) is not reading; disconnecting", self.address, self._who())
            self.abort()

    def send_frame(self, frame: bytes) -> None:
        """Queue an already encoded frame (shared by a broadcast)."""
        if self.closed:
            return
        try:
            self._queue.put_nowait(frame)
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

    def close(self) -> None:
        """Send what is queued, then close the socket."""
        if self.closed:
            return
        self.closed = True
        self.protocol.close()
        try:
            self._queue.put_nowait(None)
        except asyncio.QueueFull:
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
