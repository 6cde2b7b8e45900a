"""A browser's WebSocket as a bus subscriber: the spectator's frames, as JSON, bounded.

A :class:`Watcher` is subscribed to a topic of the server's bus
(:mod:`server.bus`) with the spectator's view (``None``) and never another,
so a browser receives exactly what a terminal spectator receives. The bus
hands it the encoded MessagePack frames every spectator shares;
:class:`Translator` turns each into JSON text once, however many browsers
watch (they all get the same ``bytes`` object). Frames collected during one
turn of the event loop leave as one WebSocket text message: a JSON array of
messages. A browser whose unsent backlog grows past :data:`WATCHER_BACKLOG_BYTES`
is not reading: it is dropped, as a slow game client is (:mod:`server.peer`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

import msgspec
from aiohttp import web

from protocol import Message
from protocol.framing import HEADER_BYTES
from protocol.messages import wire_enc_hook

__all__ = ["Translator", "Watcher", "WATCHER_BACKLOG_BYTES"]

log = logging.getLogger(__name__)

WATCHER_BACKLOG_BYTES = 512 * 1024
"""How many bytes of JSON may wait for a browser before it is dropped (the game port's send buffer)."""

_json_encode = msgspec.json.Encoder(enc_hook=wire_enc_hook).encode
_msgpack_decode = msgspec.msgpack.Decoder().decode


class Translator:
    """Turns a bus frame (4-byte length, MessagePack body) into JSON text, remembering the last one.

    Every spectator of a table gets the same ``bytes`` object for an event, so
    one remembered frame makes the translation once per event, not once per browser.
    """

    __slots__ = ("_frame", "_text")

    def __init__(self) -> None:
        self._frame: bytes | None = None
        self._text = ""

    def text_of(self, frame: bytes) -> str:
        """The JSON text of ``frame``'s message (a map with its ``type``)."""
        if frame is self._frame:
            return self._text
        text = _json_encode(_msgpack_decode(memoryview(frame)[HEADER_BYTES:])).decode()
        self._frame, self._text = frame, text
        return text


def json_text(value: Any) -> str:
    """``value`` (a message, or maps, lists and scalars) as compact JSON text."""
    return _json_encode(value).decode()


class Watcher:
    """One browser's WebSocket, fed as a spectator.

    Args:
        socket: the prepared WebSocket response.
        translator: the server's shared :class:`Translator`.
        abort: closes the browser's connection at once (its transport's ``abort``), for a browser that is dropped.
        backlog_bytes: unsent bytes past which the browser is dropped.

    Attributes:
        closed: nothing more will be sent (dropped, or the socket closed).
    """

    __slots__ = ("_socket", "_translator", "_abort", "_backlog_bytes", "_queue", "_queued_bytes", "_wake", "_ending", "closed", "__weakref__")

    def __init__(
        self, socket: web.WebSocketResponse, translator: Translator, abort: Callable[[], None], backlog_bytes: int = WATCHER_BACKLOG_BYTES
    ) -> None:
        self._socket = socket
        self._translator = translator
        self._abort = abort
        self._backlog_bytes = backlog_bytes
        self._queue: list[str] = []
        self._queued_bytes = 0
        self._wake = asyncio.Event()
        self._ending = False
        self.closed = False

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        """Queue the JSON of the encoded ``frame`` (the bus's call); drop the browser if its backlog is too long."""
        if not self.closed:
            self.send_text(self._translator.text_of(frame))

    def send_text(self, text: str) -> None:
        """Queue one message already as JSON text."""
        if self.closed:
            return
        self._queue.append(text)
        self._queued_bytes += len(text)
        if self._queued_bytes > self._backlog_bytes:
            log.warning("dropping a browser that does not read (%d bytes waiting)", self._queued_bytes)
            self.close()
            self._abort()  # its pump may be waiting for a drain that never comes
        else:
            self._wake.set()

    def end(self) -> None:
        """Send what is queued, then close (a feed that has nothing more to say)."""
        self._ending = True
        self._wake.set()

    def close(self) -> None:
        """Send nothing more; the pump ends and closes the socket."""
        self.closed = True
        self._queue = []
        self._wake.set()

    async def pump(self) -> None:
        """Send what is queued, one JSON array per wake-up, until :meth:`close`; then close the socket."""
        socket, wake = self._socket, self._wake
        try:
            while True:
                await wake.wait()
                wake.clear()
                if self.closed:
                    break
                batch, self._queue, self._queued_bytes = self._queue, [], 0
                if batch:
                    await socket.send_str("[" + ",".join(batch) + "]")
                if self._ending:
                    break
        except (ConnectionError, RuntimeError) as exc:  # the browser went away while we wrote
            log.debug("a browser's socket failed: %s", exc)
        finally:
            self.closed = True
            await socket.close()
