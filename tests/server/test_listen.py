"""The server's own listening sockets and accept loop: bind errors, serve_forever, close."""

from __future__ import annotations

import asyncio
import socket

import pytest

from server.app import Server, ServerConfig

from .conftest import TIMEOUT_S


def config(port: int = 0, host: str = "127.0.0.1") -> ServerConfig:
    return ServerConfig(host=host, port=port, server_name="test")


async def test_a_taken_port_is_refused_naming_the_address(server: Server) -> None:
    second = Server(config(server.port))
    with pytest.raises(OSError, match=rf"error while attempting to bind on address \('127\.0\.0\.1', {server.port}\): address already in use"):
        await second.start()


async def test_close_ends_serve_forever_and_stops_listening() -> None:
    server = Server(config())
    await server.start()
    serving = asyncio.create_task(server.serve_forever())
    port = server.port
    conn = await asyncio.open_connection("127.0.0.1", port)
    conn[1].close()
    await server.close()
    await asyncio.wait_for(serving, TIMEOUT_S)
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)


async def test_cancelling_serve_forever_stops_accepting() -> None:
    server = Server(config())
    await server.start()
    try:
        port = server.port
        serving = asyncio.create_task(server.serve_forever())
        await asyncio.sleep(0.01)
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        assert server.sockets == []
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", port)
    finally:
        await server.close()


async def test_a_server_on_every_interface_answers_on_loopback() -> None:
    server = Server(config(host=""))
    await server.start()
    try:
        families = {socket.AF_INET6 if ":" in host else socket.AF_INET for host, _ in server.sockets}
        assert socket.AF_INET in families, server.sockets
        port = next(port for host, port in server.sockets if ":" not in host)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
    finally:
        await server.close()
