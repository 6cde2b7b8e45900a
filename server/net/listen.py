"""The listening sockets and the server's own accept loop.

The server accepts connections itself (``loop.sock_accept``) instead of
through ``loop.create_server``, so that it can stop accepting *before* its
descriptors run out: :class:`Listener` only calls ``accept()`` while
:class:`server.net.connection.Connections` has room for one more descriptor (open
connections, handshakes and refusals in progress, under the budget of
:mod:`server.net.descriptors`), and waits for one to end otherwise. Connections
beyond the budget wait in the kernel's listen queue and are answered, if only
with ``too_many_connections``, as soon as room frees up. This behaves the
same on asyncio's loop and on uvloop, where libuv's own accept loop would
close every waiting connection unanswered once ``accept()`` failed with
``EMFILE``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import ssl as ssl_module
import sys
import time
from typing import Awaitable, Callable

__all__ = ["BACKLOG", "Listener", "bind"]

log = logging.getLogger(__name__)

BACKLOG = 100
"""Connections the kernel may queue on each listening socket before the server accepts them (asyncio's default)."""

ACCEPT_BACKOFF_S = 0.1
"""How long the accept loop pauses after ``accept()`` failed for lack of descriptors or memory."""

ACCEPT_WARNING_EVERY_S = 10.0
"""At most one warning this often while ``accept()`` fails for lack of descriptors or memory."""

_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_CLIENT_GAVE_UP = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.ECONNRESET, errno.EAGAIN, errno.EWOULDBLOCK})


async def bind(host: str | None, port: int) -> list[socket.socket]:
    """Listening, non-blocking TCP sockets on every address ``host`` resolves to, as ``loop.create_server`` binds them.

    ``host`` ``""`` or ``None`` means every interface; ``port`` 0 lets the
    system pick a free port (per socket). ``SO_REUSEADDR`` is set on POSIX,
    and IPv6 sockets are IPv6-only so that an IPv4 socket can share the port.

    Raises:
        OSError: ``host`` does not resolve, or an address cannot be bound (the message names it).
    """
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host or None, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            if os.name == "posix" and sys.platform != "cygwin":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, True)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, True)
            try:
                sock.bind(address)
            except OSError as exc:
                raise OSError(exc.errno, f"error while attempting to bind on address {address!r}: {exc.strerror.lower()}") from None
            sock.listen(BACKLOG)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    if not sockets:
        raise OSError(f"{host!r} resolves to no address to listen on")
    return sockets


class Listener:
    """Accepts connections on listening sockets while there is room, and hands each to a protocol.

    ``sockets`` holds the listening sockets, and is empty once they are closed.

    Args:
        sockets: listening, non-blocking sockets (from :func:`bind`); closed by :meth:`close`.
        protocol_factory: makes the :class:`asyncio.Protocol` of one accepted connection.
        room: ``await room()`` returns once one more connection may be accepted.
        hold: called once for each accepted socket (it now holds a descriptor).
        release: called if an accepted socket never reached its protocol (a failed TLS handshake, say);
            otherwise whoever serves the protocol releases it when the connection ends.
        ssl: a server TLS context, or ``None`` for plain TCP.
        ssl_handshake_timeout_s: how long a TLS handshake may take, in seconds.
    """

    def __init__(
        self,
        sockets: list[socket.socket],
        protocol_factory: Callable[[], asyncio.Protocol],
        *,
        room: Callable[[], Awaitable[None]],
        hold: Callable[[], None],
        release: Callable[[], None],
        ssl: ssl_module.SSLContext | None = None,
        ssl_handshake_timeout_s: float | None = None,
    ) -> None:
        self.sockets = sockets
        self._protocol_factory = protocol_factory
        self._room = room
        self._hold = hold
        self._release = release
        self._tls = {"ssl": ssl, "ssl_handshake_timeout": ssl_handshake_timeout_s} if ssl is not None else {}
        self._accepting: list[asyncio.Task[None]] = []
        self._connecting: set[asyncio.Task[None]] = set()
        self._last_warning = float("-inf")
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def start(self) -> None:
        """Start one accept task per listening socket."""
        loop = asyncio.get_running_loop()
        self._accepting = [loop.create_task(self._accept(sock), name=f"accept {sock.getsockname()[:2]}") for sock in self.sockets]

    async def close(self) -> None:
        """Stop accepting, abandon the TLS handshakes in progress, and close the listening sockets. Idempotent."""
        tasks = [*self._accepting, *self._connecting]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sock in self.sockets:
            sock.close()
        self.sockets = []
        if not self.closed.done():
            self.closed.set_result(None)

    async def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._room()
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as exc:
                if exc.errno in _CLIENT_GAVE_UP:
                    continue
                self._warn(exc)
                await asyncio.sleep(ACCEPT_BACKOFF_S)
                continue
            self._hold()
            task = loop.create_task(self._connect(conn))
            self._connecting.add(task)
            task.add_done_callback(self._connecting.discard)

    async def _connect(self, conn: socket.socket) -> None:
        """Give ``conn`` its transport and protocol (after the TLS handshake, if any)."""
        try:
            await asyncio.get_running_loop().connect_accepted_socket(self._protocol_factory, conn, **self._tls)
        except BaseException as exc:
            self._release()
            if isinstance(exc, Exception):
                log.info("a connection ended before it was set up: %s", exc or type(exc).__name__)
            else:
                raise

    def _warn(self, exc: OSError) -> None:
        """Log ``accept()``'s failure in one line, at most every :data:`ACCEPT_WARNING_EVERY_S`."""
        now = time.monotonic()
        if now - self._last_warning < ACCEPT_WARNING_EVERY_S:
            return
        self._last_warning = now
        if exc.errno in _OUT_OF_RESOURCES:
            log.warning(
                "cannot accept new connections for now (%s); they wait until descriptors free up "
                "(lower --max-connections, or raise the descriptor limit: ulimit -n)",
                exc.strerror,
            )
        else:
            log.warning("accept() failed (%s); trying again shortly", exc)
