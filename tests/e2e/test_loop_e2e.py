"""``--loop asyncio|uvloop|auto``: a real ``parlour serve`` on each event loop plays a game; a missing uvloop is one clear line.

uvloop is optional (``pip install 'parlour[uvloop]'``); the tests that need it
are skipped, with the reason, where it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from .harness import Process, assert_finished_with, player_scripts, read_record, read_record_headers, start_server

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None
needs_uvloop = pytest.mark.skipif(not HAVE_UVLOOP, reason="uvloop is not installed here (pip install 'parlour[uvloop]')")

WITHOUT_UVLOOP = (sys.executable, "-c", "import sys; sys.modules['uvloop'] = None; from client.cli import main; main()")
"""The checkout's ``parlour`` in an interpreter where ``import uvloop`` fails, as where it is not installed."""


def _play_hexapawn(port: int) -> None:
    """Two ``parlour play`` clients play the recorded hexapawn game (11 moves) to its end on the server at ``port``."""
    options = json.loads(read_record_headers("hexapawn.txt")["options"])
    first, second = player_scripts("hexapawn", options, read_record("hexapawn.txt"))
    address = f"127.0.0.1:{port}"
    ann = Process("play", address, "--name", "ann", stdin_text="new hexapawn size=4\n")
    bob = None
    try:
        table = ann.expect(r"Created table (\d+)")[1]
        ann.send("\n".join(["wait start", *first, "wait end", "quit", ""]))
        bob = Process("play", address, "--name", "bob", stdin_text="\n".join([f"join {table}", *second, "wait end", "quit", ""]))
        assert_finished_with((ann, bob), r"^Result: White wins")
    finally:
        ann.kill()
        if bob is not None:
            bob.kill()


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("asyncio", "asyncio"),
        pytest.param("uvloop", "uvloop", marks=needs_uvloop),
        ("auto", "uvloop" if HAVE_UVLOOP else "asyncio"),
    ],
)
def test_a_server_on_each_loop_plays_a_game(choice: str, expected: str) -> None:
    server, port = start_server("--loop", choice)
    try:
        server.expect(rf"listening on port {port} \(.*; {expected} event loop\)\.$")
        _play_hexapawn(port)
        assert server.popen.poll() is None, "the server is still running"
    finally:
        server.kill()


def test_auto_falls_back_to_asyncio_without_uvloop() -> None:
    server, port = start_server("--loop", "auto", program=WITHOUT_UVLOOP)
    try:
        server.expect(rf"listening on port {port} \(.*; asyncio event loop\)\.$")
        _play_hexapawn(port)
    finally:
        server.kill()


@pytest.mark.parametrize("command", [["serve", "--no-db"], ["host", "--name", "ann"]], ids=["serve", "host"])
def test_asking_for_uvloop_without_it_is_one_clear_line(command: list[str]) -> None:
    process = Process(*command, "--host", "127.0.0.1", "--port", "0", "--loop", "uvloop", program=WITHOUT_UVLOOP)
    try:
        assert process.finish(timeout_s=30) == 2
        errors = [line for line in process.lines if "error:" in line]
        assert errors == [
            f"parlour {command[0]}: error: --loop uvloop: uvloop is not installed; install it with"
            " pip install 'parlour[uvloop]' (it does not run on Windows), or use --loop asyncio"
        ], process.lines
        assert not any("Traceback" in line for line in process.lines), process.lines
        assert not any("listening" in line or "Hosting" in line for line in process.lines), process.lines
    finally:
        process.kill()


@needs_uvloop
def test_host_on_uvloop_hosts_and_connects_its_own_terminal() -> None:
    host = Process("host", "--name", "ann", "--host", "127.0.0.1", "--port", "0", "--loop", "uvloop", stdin_text="list\nquit\n")
    try:
        host.expect(r"^Hosting \(games kept in .*; uvloop event loop\)\.$")
        host.expect(r"^Connected to .* as ann\.")
        assert host.finish(timeout_s=15) == 0
    finally:
        host.kill()

