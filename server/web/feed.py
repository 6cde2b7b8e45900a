"""A browser's WebSocket as a bus subscriber: the spectator's frames, as JSON, bounded.

A :class:`Watcher` is subscribed to a topic of the server's bus
(:mod:`server.bus`) with the spectator's view (``None``) and never another,
so a browser receives exactly what a terminal spectator receives. The bus
hands it the encoded MessagePack frames every spectator shares;
:class:`Translator` turns each into a WebSocket text message once, however
many browsers watch (they all get the same ``bytes`` object), and every
browser is written those very bytes. Each message holds a JSON array of
messages (one, from the bus). As with a game connection (:mod:`server.peer`),
what one turn of the event loop sends a browser leaves in one write at the
end of the turn (:class:`Outbox`), and a browser whose unsent backlog passes
its limit is not reading: it is dropped.

The WebSocket frames are written to the connection's transport directly
(RFC 6455, section 5.2: an unmasked final text frame), not through a
coroutine per message: aiohttp still answers pings, sends its own heartbeat
and the closing handshake, each a whole frame written at once, so frames
never interleave.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

import msgspec

from protocol import Message
from protocol.framing import HEADER_BYTES
from protocol.messages import wire_enc_hook

__all__ = ["Outbox", "Translator", "Watcher", "json_text", "text_message"]

log = logging.getLogger(__name__)

_json_encode = msgspec.json.Encoder(enc_hook=wire_enc_hook).encode
_msgpack_decode = msgspec.msgpack.Decoder().decode
_SHORT = struct.Struct(">BBH")
_LONG = struct.Struct(">BBQ")
_FIN_TEXT = 0x81


def json_text(value: Any) -> bytes:
    """``value`` (a message, or maps, lists and scalars) as compact JSON, UTF-8."""
    return _json_encode(value)


def text_message(*json_values: bytes) -> bytes:
    """One WebSocket text frame (server to client: unmasked, final) holding the JSON array of ``json_values``."""
    payload = b"[" + b",".join(json_values) + b"]"
    size = len(payload)
    if size < 126:
        header = bytes((_FIN_TEXT, size))
    elif size < 65536:
        header = _SHORT.pack(_FIN_TEXT, 126, size)
    else:
        header = _LONG.pack(_FIN_TEXT, 127, size)
    return header + payload


class Translator:
    """Turns a bus frame (4-byte length, MessagePack body) into a WebSocket message, remembering the last one.

    Every spectator of a table gets the same ``bytes`` object for an event, so
    one remembered frame makes the translation once per event, not once per browser.
    """

    __slots__ = ("_frame", "_message")

    def __init__(self) -> None:
        self._frame: bytes | None = None
        self._message = b""

    def message_of(self, frame: bytes) -> bytes:
        """The WebSocket text frame of ``frame``'s message (a JSON array holding the map, with its ``type``)."""
        if frame is self._frame:
            return self._message
        message = text_message(_json_encode(_msgpack_decode(memoryview(frame)[HEADER_BYTES:])))
        self._frame, self._message = frame, message
        return message


class Outbox:
    """Watchers with frames waiting, flushed together at the end of the loop turn (one callback for all).

    Args:
        backlog_bytes: bytes a browser may leave unsent before it is dropped.
    """

    __slots__ = ("backlog_bytes", "_watchers", "_loop")

    def __init__(self, backlog_bytes: int) -> None:
        self.backlog_bytes = backlog_bytes
        self._watchers: list[Watcher] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, watcher: "Watcher") -> None:
        """Flush ``watcher`` at the end of this turn."""
        if not self._watchers:
            if self._loop is None:
                self._loop = asyncio.get_running_loop()
            self._loop.call_soon(self.flush)
        self._watchers.append(watcher)

    def flush(self) -> None:
        """Write every waiting watcher's frames."""
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            watcher.flush()


class Watcher:
    """One browser's WebSocket, fed as a spectator.

    Args:
        transport: the upgraded connection's transport (the WebSocket's frames are written to it).
        translator: the server's shared :class:`Translator`.
        outbox: the server's shared :class:`Outbox` (its ``backlog_bytes`` is this browser's limit).

    Attributes:
        closed: nothing more will be sent (dropped, or the socket closed).
    """

    __slots__ = ("_transport", "_translator", "_outbox", "_pending", "closed", "__weakref__")

    def __init__(self, transport: asyncio.Transport, translator: Translator, outbox: Outbox) -> None:
        self._transport = transport
        self._translator = translator
        self._outbox = outbox
        self._pending: list[bytes] = []
        self.closed = False

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        """Send the encoded bus ``frame`` as JSON (the bus's call)."""
        if not self.closed:
            self.send(self._translator.message_of(frame))

    def send(self, websocket_frame: bytes) -> None:
        """Send one WebSocket frame (:func:`text_message`) at the end of this turn."""
        if self.closed:
            return
        if not self._pending:
            self._outbox.add(self)
        self._pending.append(websocket_frame)

    def flush(self) -> None:
        """Write what waits in one write; drop the browser if its backlog is past the limit."""
        pending, self._pending = self._pending, []
        transport = self._transport
        if self.closed or not pending or transport.is_closing():
            return
        transport.write(pending[0] if len(pending) == 1 else b"".join(pending))
        waiting = transport.get_write_buffer_size()
        if waiting > self._outbox.backlog_bytes:
            log.warning("dropping a browser that does not read (%d bytes waiting)", waiting)
            self.close()
            transport.abort()

    def close(self) -> None:
        """Send nothing more."""
        self.closed = True
        self._pending = []
