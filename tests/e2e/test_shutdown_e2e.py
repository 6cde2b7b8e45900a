"""Stopping a real server process: connected terminal clients are told."""

from __future__ import annotations

from .harness import Process, start_server


def test_sigterm_stops_the_server_and_tells_connected_clients() -> None:
    server, port = start_server()
    client = Process("play", f"127.0.0.1:{port}", "--name", "ann", stdin_text="new othello\n")
    try:
        client.expect(r"Created table 1")
        server.popen.terminate()
        assert server.popen.wait(15) == 0
        client.expect(r"The server is shutting down")
        assert client.finish(timeout_s=15) == 0
        server.finish()
        assert any("stopping: telling 1 connected clients" in line for line in server.lines)
    finally:
        client.kill()
        server.kill()
