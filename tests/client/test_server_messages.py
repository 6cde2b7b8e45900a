"""The client library against a scripted peer on 127.0.0.1: what it makes of odd server messages.

A newer server may send message types this client does not know; those are
skipped. A ``type`` that is not even text (a list, a map) is no known type
either: it is skipped too, never a crash of the client's reader.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import pytest

from client import Client
from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame, encode_message
from protocol import messages as m

TIMEOUT_S = 5.0

ODD_FRAMES = [
    {"type": [1, 2]},
    {"type": {"a": 1}},
    {"type": None, "id": 1},
    {"type": 3},
    {"type": "teleported", "table": 1},
    {"id": 1},
]


async def _scripted_peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer every request: odd frames first, then the real reply (``welcome`` to hello, ``pong`` to ping)."""
    decoder = FrameDecoder()
    while data := await reader.read(65536):
        for request in decoder.feed(data):
            writer.write(b"".join(encode_frame(frame) for frame in ODD_FRAMES))
            if request["type"] == "hello":
                reply: m.Message = m.Welcome(id=request["id"], protocol=PROTOCOL_VERSION, server="scripted", version="0",
                                             name=request["name"], token="tok", games=[])
            else:
                reply = m.Pong(id=request["id"])
            writer.write(encode_message(reply))
    writer.close()


@pytest.fixture
async def scripted_port() -> AsyncIterator[int]:
    listener = await asyncio.start_server(_scripted_peer, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()
        await listener.wait_closed()


async def test_frames_whose_type_is_not_known_text_are_skipped(scripted_port: int) -> None:
    client = await Client.connect("127.0.0.1", scripted_port, name="ann", timeout_s=TIMEOUT_S)
    try:
        assert client.welcome is not None and client.welcome.server == "scripted"
        await asyncio.wait_for(client.ping(), TIMEOUT_S)
        assert not client.closed.is_set(), client.close_reason
    finally:
        await client.close()
