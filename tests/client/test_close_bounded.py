"""The client library's ``close()`` against a server that stopped reading: it ends, it does not wait for ever.

Closing a socket normally waits until what was written is delivered. A
server that stopped reading (hung, throttling, or hostile) would hold a
client's ``close()`` -- and a front end's exit, or a test's teardown --
for ever; after :data:`client.connection.CLOSE_TIMEOUT_S` the client
aborts the connection instead.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import pytest

from client import Client
from client.connection import CLOSE_TIMEOUT_S
from protocol import PROTOCOL_VERSION, FrameDecoder, encode_message
from protocol import messages as m

TIMEOUT_S = 5.0
UNREAD_BYTES = 64 * 1024 * 1024
"""More than loopback's socket buffers can hold on both sides (`tcp_rmem` and `tcp_wmem` at most 32 + 4 MiB by default), so the client's transport keeps the rest."""


async def _deaf_peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stop: asyncio.Event) -> None:
    """Say ``welcome`` to the ``hello``, then never read again (until the test ends)."""
    decoder = FrameDecoder()
    while data := await reader.read(65536):
        hello = next(iter(decoder.feed(data)), None)
        if hello is not None:
            writer.write(encode_message(m.Welcome(id=hello["id"], protocol=PROTOCOL_VERSION, server="deaf", version="0",
                                                  name=hello["name"], token="tok", games=[])))
            break
    await stop.wait()
    writer.transport.abort()


@pytest.fixture
async def deaf_port() -> AsyncIterator[int]:
    stop = asyncio.Event()
    listener = await asyncio.start_server(lambda r, w: _deaf_peer(r, w, stop), "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        stop.set()
        listener.close()
        await listener.wait_closed()


async def test_close_ends_while_the_server_does_not_read_what_was_sent(deaf_port: int) -> None:
    client = await Client.connect("127.0.0.1", deaf_port, name="ann", timeout_s=TIMEOUT_S)
    with pytest.raises(asyncio.TimeoutError):  # the send cannot finish: the peer reads nothing
        await asyncio.wait_for(client.send_raw(b"\0" * UNREAD_BYTES), 0.5)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.wait_for(client.close(), CLOSE_TIMEOUT_S + TIMEOUT_S)
    assert loop.time() - started >= CLOSE_TIMEOUT_S * 0.9  # it did wait for the bytes to leave, a while
    assert client.closed.is_set()
