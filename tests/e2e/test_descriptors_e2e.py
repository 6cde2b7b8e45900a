"""More connections than the server's descriptor limit allows: each one is answered, none hangs, no tracebacks;
and TLS handshakes that fail give their descriptors back.

The server is a real process whose descriptor limit (soft and hard) is set
low in the child before it starts, on each event loop (``--loop``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib.util
import re
import resource
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
import trustme

from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame

from .harness import ROOT

DESCRIPTOR_LIMIT = 64
CONNECTIONS = 150
ANSWER_TIMEOUT_S = 30.0


def low_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTOR_LIMIT, DESCRIPTOR_LIMIT))

@contextlib.contextmanager
def low_limit_server(log: Path, *flags: str) -> Iterator[int]:
    """Run ``parlour serve FLAGS`` under :func:`low_descriptor_limit`, stderr to ``log``; yield its port, then stop it."""
    with log.open("w") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-m", "client.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--no-db", *flags],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True, preexec_fn=low_descriptor_limit,
        )  # fmt: skip
    try:
        assert server.stdout is not None
        yield int(re.search(r"listening on port (\d+)", server.stdout.readline())[1])  # type: ignore[index]
    finally:
        server.terminate()
        server.wait(30)


async def first_answer(port: int, name: str, held: list[asyncio.StreamWriter]) -> str:
    """Connect, say hello, and return the type (and error code) of the first frame the server sends."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    held.append(writer)  # welcomed connections stay open: they count against the limit
    writer.write(encode_frame({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": name}))
    decoder = FrameDecoder()
    while True:
        try:
            data = await reader.read(65536)
        except ConnectionResetError:
            return "reset"
        if not data:
            return "closed without an answer"
        for frame in decoder.feed(data):
            return f"{frame['type']} {frame.get('code') or ''}".strip()


async def connect_all(port: int) -> collections.Counter[str]:
    held: list[asyncio.StreamWriter] = []
    try:
        answers = await asyncio.wait_for(
            asyncio.gather(*(first_answer(port, f"p{i}", held) for i in range(CONNECTIONS))), ANSWER_TIMEOUT_S
        )
    finally:
        for writer in held:
            writer.close()
    return collections.Counter(answers)


UVLOOP = pytest.param(
    "uvloop", marks=pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed here")
)


@pytest.mark.parametrize("loop", ["asyncio", UVLOOP])
def test_connections_beyond_the_descriptor_limit_are_refused_not_ignored(tmp_path: Path, loop: str) -> None:
    log = tmp_path / "server.log"
    with low_limit_server(log, "--max-connections-per-address", "1000", "--loop", loop) as port:
        answers = asyncio.run(connect_all(port))
    text = log.read_text()
    assert set(answers) == {"welcome", "error too_many_connections"}, answers
    assert sum(answers.values()) == CONNECTIONS
    assert "Traceback" not in text, text[:3000]
    clamp = re.search(r"max_connections is 1024, but the descriptor limit of 64 \(\d+ in use\) leaves room for (\d+)", text)
    assert clamp is not None, text[:3000]
    assert answers["welcome"] <= int(clamp[1])


FAILED_HANDSHAKES = 3 * DESCRIPTOR_LIMIT


async def fail_handshake(port: int) -> None:
    """Connect to a TLS server, send bytes that are not TLS, and wait for the server to close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.0\r\n\r\n")
    try:
        await reader.read()
    except ConnectionResetError:
        pass
    writer.close()


async def handshakes_then_hello(port: int) -> str:
    """Fail many TLS handshakes, one at a time, then say hello over TLS; the first answer's type."""
    for _ in range(FAILED_HANDSHAKES):
        await asyncio.wait_for(fail_handshake(port), ANSWER_TIMEOUT_S)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, ssl=context), ANSWER_TIMEOUT_S)
    try:
        writer.write(encode_frame({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "after"}))
        decoder = FrameDecoder()
        while True:
            data = await asyncio.wait_for(reader.read(65536), ANSWER_TIMEOUT_S)
            if not data:
                return "closed without an answer"
            for frame in decoder.feed(data):
                return f"{frame['type']} {frame.get('code') or ''}".strip()
    finally:
        writer.close()


@pytest.mark.parametrize("loop", ["asyncio", UVLOOP])
def test_failed_tls_handshakes_give_their_descriptors_back(tmp_path: Path, loop: str) -> None:
    """Three times the descriptor limit in failed handshakes, then a TLS client that says hello and leaves at once
    (which made asyncio's TLS transport raise AttributeError in the connection's task, a traceback in the log)."""
    issued = trustme.CA().issue_cert("127.0.0.1")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    log = tmp_path / "server.log"
    with low_limit_server(log, "--tls-cert", str(cert), "--tls-key", str(key), "--loop", loop) as port:
        answer = asyncio.run(handshakes_then_hello(port))
    text = log.read_text()
    assert answer == "welcome", text[:3000]
    assert "Traceback" not in text, text[:3000]
