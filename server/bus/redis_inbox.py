"""The bus's receiving connection to Redis, read as an asyncio protocol: each push is handled in the read's own callback.

redis-py reads a subscribed connection through a stream reader: every
message from Redis wakes a task (a future's callback, one more loop turn)
and passes through several coroutines before it is handled. A relayed move
crosses this connection twice (its request on the table's node, its frames on
the player's), so :class:`RedisInbox` takes the connection over once redis-py
has connected it (its handshake done: ``AUTH``, ``SELECT`` and the rest, as the
URL asks) and parses what arrives with hiredis right in the transport's
``data_received``, handing each push to the bus at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

import hiredis
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["RedisInbox"]

log = logging.getLogger(__name__)


class RedisInbox(asyncio.Protocol):
    """Reads a subscribed Redis connection: each push (a list such as ``[b"message", channel, data]``) goes to ``handle``.

    Use :meth:`take_over`. A push that ``handle`` raises on is logged and the
    rest are handled; bytes that are not RESP end the connection.

    Attributes:
        lost: done once the connection is gone (its result: the error, or ``None``).
    """

    def __init__(self, handle: Callable[[Any], None]) -> None:
        self._handle = handle
        self._parser = hiredis.Reader()
        self._transport: asyncio.BaseTransport | None = None
        self.lost: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()

    @classmethod
    def take_over(cls, connection: aioredis.Connection, handle: Callable[[Any], None]) -> "RedisInbox":
        """Read ``connection`` with a new inbox from now on.

        ``connection`` must be connected, with no reply pending (nothing asked
        of it since its handshake); commands are still sent through it.

        Raises:
            redis.exceptions.ConnectionError: ``connection`` is not connected.
        """
        writer: asyncio.StreamWriter | None = getattr(connection, "_writer", None)  # redis-py's stream over the socket
        if writer is None or writer.transport.is_closing():
            raise RedisConnectionError("not connected")
        inbox = cls(handle)
        transport = writer.transport
        transport.set_protocol(inbox)
        inbox.connection_made(transport)
        return inbox

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        parser = self._parser
        parser.feed(data)
        handle = self._handle
        while True:
            try:
                reply = parser.gets()
            except hiredis.ProtocolError as exc:
                log.warning("Redis sent what is not RESP (%s); dropping the connection", exc)
                if self._transport is not None:
                    self._transport.abort()  # type: ignore[attr-defined]
                return
            if reply is False:
                return
            try:
                handle(reply)
            except Exception:  # a subscriber's bug: logged, and the receiver goes on for every other
                log.exception("delivering a message from Redis failed")

    def eof_received(self) -> bool:
        return False  # Redis closed its end: the transport closes, connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(exc)
