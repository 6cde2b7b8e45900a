"""The floor: the cheapest server that still speaks Parlour's framing and answers every request.

``benchmarks/compare.py`` divides Parlour's CPU per move by this server's CPU
per request. It is a plain :class:`asyncio.Protocol` over TCP and speaks the
framing of ``protocol/framing.py`` (a 4-byte big-endian length, then one
MessagePack map); to every request it writes ``{"type": "ok", "id": <id>}``,
the reply ``benchmarks/loadgen.py`` waits for. It does no more than that
needs, and less than ``benchmarks/echo_server.py`` (the project's first echo,
kept for comparison as ``compare.py --floor echo``):

- a frame that arrives alone in one read (every request of the play
  scenario: one outstanding request per connection) is decoded straight
  from the bytes read: no copy into a buffer and out again; only a partial or
  several frames go through the buffer;
- the reply is not encoded: replies to ids 0 to :data:`CACHED_IDS` - 1 are
  encoded once, at start-up, and looked up by id (other ids are encoded);
- nothing else is looked at but the id, except for the two group requests
  the fan-out and join scenarios send (``watch_table``, ``broadcast``, as in
  ``echo_server.py``), recognised by one dict lookup per request.

It still decodes each map with ``msgpack.unpackb``: the id is a MessagePack
integer in a map whose key order the protocol does not fix, so reading it
any cheaper would no longer be speaking the framing.

``--loop uvloop`` runs it on uvloop (Parlour's default loop when uvloop is
installed), ``--loop asyncio`` on asyncio's own; ``compare.py`` runs the floor
and Parlour on the same loop.

Usage::

    python benchmarks/floor_echo.py --port 0 --loop uvloop   # prints "listening on port N"

Like ``echo_server.py`` it accepts (and ignores) the launch flags of
``benchmarks/roundtrip.py``'s ``ServerProcess``, raises its open-file limit to
the hard limit, and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import sys
from typing import Any, Callable

import msgpack

from echo_server import MAX_FRAME_BYTES, broadcast, encode, raise_open_files_limit, serve

_HEADER = struct.Struct(">I")
_unpack_header = _HEADER.unpack_from
_unpackb = msgpack.unpackb

CACHED_IDS = 1 << 16
"""Replies to ids below this are encoded once, at start-up (about 1 MB); others are encoded per request."""

_REPLIES = [encode({"type": "ok", "id": request_id}) for request_id in range(CACHED_IDS)]
_GROUP_REQUESTS = frozenset(("watch_table", "broadcast"))


def reply_to(request_id: Any) -> bytes:
    """The ``ok`` frame answering ``request_id`` (pre-encoded for ints in ``range(CACHED_IDS)``)."""
    if type(request_id) is int and 0 <= request_id < CACHED_IDS:
        return _REPLIES[request_id]
    return encode({"type": "ok", "id": request_id})


class FloorProtocol(asyncio.Protocol):
    """One connection: answers each request map with ``ok`` (see the module docstring).

    Args:
        groups: the server's receivers, group id -> transports; shared by every connection.
    """

    def __init__(self, groups: dict[Any, list[asyncio.Transport]]) -> None:
        self._groups = groups
        self._buffer = bytearray()
        self._transport: Any = None
        self._joined: list[Any] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        for group in self._joined:
            receivers = self._groups.get(group, [])
            if self._transport in receivers:
                receivers.remove(self._transport)
        self._transport = None

    def data_received(self, data: bytes) -> None:
        if not self._buffer and len(data) >= 4:
            (length,) = _unpack_header(data)
            if len(data) == 4 + length and length <= MAX_FRAME_BYTES:
                self._answer(data[4:])
                return
        self._buffer += data
        self._drain()

    def _drain(self) -> None:
        buffer = self._buffer
        while len(buffer) >= 4:
            (length,) = _unpack_header(buffer)
            if length > MAX_FRAME_BYTES:
                self._transport.close()
                return
            end = 4 + length
            if len(buffer) < end:
                return
            body = bytes(buffer[4:end])
            del buffer[:end]
            if not self._answer(body):
                return

    def _answer(self, body: bytes) -> bool:
        """Answer one request body; ``False`` (and the connection closed) when it is not a map."""
        try:
            request = _unpackb(body)
        except Exception:  # noqa: BLE001 - any undecodable body ends the connection, as in Parlour
            request = None
        if type(request) is not dict:
            self._transport.close()
            return False
        if request.get("type") in _GROUP_REQUESTS:
            self._group(request)
        self._transport.write(reply_to(request.get("id")))
        return True

    def _group(self, request: dict[str, Any]) -> None:
        if request["type"] == "watch_table":
            self._groups.setdefault(request.get("table"), []).append(self._transport)
            self._joined.append(request.get("table"))
            return
        broadcast(self._groups, request)


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop factory for ``--loop name`` (``None``: asyncio's own).

    Raises:
        SystemExit: ``uvloop`` was asked for but is not installed.
    """
    if name == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        raise SystemExit("floor_echo: --loop uvloop: uvloop is not installed (pip install uvloop)") from None
    return uvloop.new_event_loop  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The cheapest asyncio + MessagePack server answering every request with ok.")
    parser.add_argument("command", nargs="?", choices=["serve"], help="ignored (ServerProcess's launch form)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: 0, a free one)")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio", help="the event loop (default: asyncio)")
    for ignored in ("--name", "--log-level"):
        parser.add_argument(ignored, help="ignored (ServerProcess's launch form)")
    for ignored in ("--no-db", "--no-advertise"):
        parser.add_argument(ignored, action="store_true", help="ignored (ServerProcess's launch form)")
    args = parser.parse_args(argv)
    raise_open_files_limit()
    with asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
        runner.run(serve(args.host, args.port, FloorProtocol, "floor echo"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
