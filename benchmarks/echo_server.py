"""The bare baseline: an asyncio + MessagePack server that does nothing but answer.

It speaks Parlour's framing (``protocol/framing.py``: a 4-byte big-endian
length, then one MessagePack map) over plain TCP with :class:`asyncio.Protocol`
and no checks beyond that, and answers every request map with
``{"type": "ok", "id": <id>}``. It is what a Parlour server's CPU per move and
memory per connection are compared with (``benchmarks/compare.py``): the cost
of the socket, the event loop and MessagePack alone.

Two request types do a little more, for the fan-out comparison:

- ``{"type": "watch_table", "id": I, "table": T}`` makes the connection a
  receiver of group ``T`` (answered with ``ok``);
- ``{"type": "broadcast", "id": I, "table": T, ...}`` answers ``ok`` to the
  sender, then writes one frame -- the request map itself with its ``type``
  set to ``"moved"`` and ``id`` removed, encoded once -- to every receiver of
  group ``T``.

Usage::

    python benchmarks/echo_server.py --port 0     # prints "listening on port N"

It also accepts the launch flags of ``benchmarks/roundtrip.py``'s
``ServerProcess`` (``serve``, ``--no-db``, ``--name``, ``--log-level``, ``--no-advertise``), which
it ignores, so the same launcher starts both servers. It raises its open-file
limit to the hard limit, so it can hold as many connections as the machine
allows, and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import signal
import struct
import sys
from typing import Any, Callable

import msgpack

_HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 65536
"""Largest request body accepted, in bytes (Parlour's default); a larger one closes the connection."""


def encode(payload: dict[str, Any]) -> bytes:
    """``payload`` as one frame: 4-byte big-endian length, then the MessagePack map."""
    body = msgpack.packb(payload, use_bin_type=True)
    return _HEADER.pack(len(body)) + body


class EchoProtocol(asyncio.Protocol):
    """One connection: decodes frames and answers each map (see the module docstring).

    Args:
        groups: the server's receivers, group id -> transports; shared by every connection.
    """

    def __init__(self, groups: dict[Any, list[asyncio.Transport]]) -> None:
        self._groups = groups
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._joined: list[Any] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        for group in self._joined:
            receivers = self._groups.get(group, [])
            if self._transport in receivers:
                receivers.remove(self._transport)
        self._transport = None

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        replies = []
        while len(buffer) >= 4:
            (length,) = _HEADER.unpack_from(buffer)
            if length > MAX_FRAME_BYTES:
                self._close()
                return
            end = 4 + length
            if len(buffer) < end:
                break
            try:
                request = msgpack.unpackb(bytes(buffer[4:end]), raw=False)
            except Exception:  # noqa: BLE001 - any undecodable body ends the connection, as in Parlour
                self._close()
                return
            del buffer[:end]
            if not isinstance(request, dict):
                self._close()
                return
            replies.append(self._handle(request))
        if replies and self._transport is not None:
            self._transport.write(b"".join(replies))

    def _handle(self, request: dict[str, Any]) -> bytes:
        kind = request.get("type")
        if kind == "watch_table":
            self._groups.setdefault(request.get("table"), []).append(self._transport)  # type: ignore[arg-type]
            self._joined.append(request.get("table"))
        elif kind == "broadcast":
            broadcast(self._groups, request)
        return encode({"type": "ok", "id": request.get("id")})

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()


def broadcast(groups: dict[Any, list[asyncio.Transport]], request: dict[str, Any]) -> None:
    """Write ``request`` as a ``moved`` push (without its id) to every connection that watches its table."""
    push = dict(request, type="moved")
    push.pop("id", None)
    frame = encode(push)
    for receiver in groups.get(request.get("table"), ()):
        receiver.write(frame)


def raise_open_files_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; return the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


async def serve(host: str, port: int, protocol: Callable[[dict[Any, list[asyncio.Transport]]], asyncio.Protocol] | None = None,
                label: str = "echo server") -> None:
    """Listen on ``host``:``port`` (0: a free port), print the port, serve until SIGTERM/SIGINT.

    ``protocol`` makes each connection's protocol from the table groups all connections share
    (:class:`EchoProtocol` by default); ``label`` names the server in the line giving its port.
    """
    loop = asyncio.get_running_loop()
    groups: dict[Any, list[asyncio.Transport]] = {}
    make = protocol or EchoProtocol
    server = await loop.create_server(lambda: make(groups), host, port, backlog=4096)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"{label} listening on port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Bare asyncio + MessagePack server answering every request with ok.")
    parser.add_argument("command", nargs="?", choices=["serve"], help="ignored (ServerProcess's launch form)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: 0, a free one)")
    parser.add_argument("--no-db", action="store_true", help="ignored (ServerProcess's launch form)")
    parser.add_argument("--name", help="ignored (ServerProcess's launch form)")
    parser.add_argument("--log-level", help="ignored (ServerProcess's launch form)")
    parser.add_argument("--no-advertise", action="store_true", help="ignored (ServerProcess's launch form)")
    args = parser.parse_args(argv)
    raise_open_files_limit()
    asyncio.run(serve(args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
