"""Helpers shared by the server tests: raw frame-speaking connections and refusals."""

from __future__ import annotations

import asyncio
import collections
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from client.connection import ServerError
from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame
from server.app import Server

TIMEOUT_S = 5.0


class Raw:
    """A plain asyncio connection that speaks frames directly."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = FrameDecoder(max_frame_bytes=1 << 22)
        self.inbox: collections.deque[dict[str, Any]] = collections.deque()
        self.ids = iter(range(1, 1 << 30))

    async def send(self, **message: Any) -> None:
        await self.send_bytes(encode_frame(message))

    async def send_bytes(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def recv(self, timeout_s: float = TIMEOUT_S) -> dict[str, Any]:
        """Return the next frame the server sent (reply or push)."""
        while not self.inbox:
            data = await asyncio.wait_for(self.reader.read(65536), timeout_s)
            if not data:
                raise EOFError("the server closed the connection")
            self.inbox.extend(self.decoder.feed(data))
        return self.inbox.popleft()

    async def reply(self, request_id: int | None) -> dict[str, Any]:
        """Return the next frame carrying ``id`` ``request_id``, skipping pushes."""
        while True:
            frame = await self.recv()
            if "id" in frame and frame["id"] == request_id:
                return frame

    async def request(self, type: str, **fields: Any) -> dict[str, Any]:
        request_id = next(self.ids)
        await self.send(type=type, id=request_id, **fields)
        return await self.reply(request_id)

    async def hello(self, name: str, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
        """Say hello; return the reply (``welcome`` or ``error``)."""
        return await self.request("hello", version=version, name=name)

    async def sync(self) -> list[dict[str, Any]]:
        """Ping and return every push that came before the pong."""
        request_id = next(self.ids)
        await self.send(type="ping", id=request_id)
        pushes = []
        while (frame := await self.recv())["type"] != "pong":
            pushes.append(frame)
        assert frame["id"] == request_id
        return pushes

    async def expect_closed(self, timeout_s: float = TIMEOUT_S) -> list[dict[str, Any]]:
        """Read until the server closes; return whatever frames came first."""
        frames = list(self.inbox)
        self.inbox.clear()
        while True:
            try:
                data = await asyncio.wait_for(self.reader.read(65536), timeout_s)
            except ConnectionResetError:
                return frames
            if not data:
                return frames
            frames.extend(self.decoder.feed(data))

    async def close(self) -> None:
        """Close; abort after ``TIMEOUT_S`` if what was written cannot leave (a server that stopped reading us)."""
        self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), TIMEOUT_S)
        except asyncio.TimeoutError:
            self.writer.transport.abort()
        except (ConnectionError, OSError):
            pass


RawFactory = Callable[[], Awaitable[Raw]]


@pytest.fixture
async def raw(server: Server) -> AsyncIterator[RawFactory]:
    """Factory: ``await raw()`` opens a plain connection to the server (no hello)."""
    opened: list[Raw] = []

    async def factory() -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        conn = Raw(reader, writer)
        opened.append(conn)
        return conn

    yield factory
    for conn in opened:
        await conn.close()



async def refused(awaitable: Awaitable[Any], code: str) -> ServerError:
    """Await ``awaitable``, expecting the server to refuse it with ``code``."""
    with pytest.raises(ServerError) as info:
        await awaitable
    assert info.value.code == code, info.value
    return info.value
