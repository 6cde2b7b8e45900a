"""A computer seat survives a SIGKILL of a real server process and moves again after the restart."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from ..server.conftest import Raw
from ..server.test_computer import play_to_the_end, until
from .harness import start_server

WINNING_FOR_THE_FIRST = {"board": [0, 0, 3, 2]}
"""Nimble heaps 2, 2, 2, 3, 3: nim-sum 2, so the first player (the computer) wins with perfect play."""


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started (its computer-player workers and their helper), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that still run (a zombie waiting for its reaper counts as gone)."""
    running = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state != "Z":
            running.append(pid)
    return running


def wait_until_gone(pids: list[int], timeout_s: float) -> bool:
    """Whether every one of ``pids`` has ended within ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while alive(pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


async def connect(port: int, name: str, token: str | None = None) -> tuple[Raw, dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    conn = Raw(reader, writer)
    hello = {"token": token} if token is not None else {}
    welcome = await conn.request("hello", version=2, name=name, **hello)
    assert welcome["type"] == "welcome", welcome
    return conn, welcome


def test_a_computer_to_move_when_the_server_is_killed_moves_after_the_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "parlour.sqlite3")
    options = ("--db", db, "--grace", "60", "--bot-seconds", "0.05", "--bot-workers", "1")
    server, port = start_server(*options)
    stopped: list[int] = []
    try:

        async def before_the_kill() -> tuple[str, int]:
            ann, welcome = await connect(port, "ann")
            joined = await ann.request("create_table", game="nimble", options=WINNING_FOR_THE_FIRST, seat=1, computer=[{"seat": 0, "level": 5}])
            table = joined["table"]["id"]
            first = await until(ann, "moved", timeout_s=30)
            assert first["seat"] == 0
            stopped.extend(children_of(server.popen.pid))
            for pid in stopped:  # the worker cannot answer: the computer is still to move when the server dies
                os.kill(pid, signal.SIGSTOP)
            reply = await ann.request("move", table=table, move=first["view"]["legal_moves"][-1])
            assert reply["type"] == "ok", reply
            await ann.close()
            return welcome["token"], table

        token, table = asyncio.run(before_the_kill())
        server.popen.kill()  # SIGKILL: only what was committed survives
        server.popen.wait(10)
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        assert wait_until_gone(stopped, timeout_s=10), f"worker processes outlived the killed server: {alive(stopped)}"
        server, _ = start_server(*options, port=port)
        server.expect(r"restored 1 unfinished tables")

        async def after_the_restart() -> dict:
            ann, welcome = await connect(port, "ann", token)
            assert welcome["resumed"] is True
            resumed = await until(ann, "resumed")
            info = resumed["table"]
            assert info["id"] == table and info["seats"] == ["Computer 5", "ann"] and info["computer"] == [5, None]
            assert resumed["moves"] and len(resumed["moves"]) == 2 and resumed["view"]["to_move"] == 0
            moved = await until(ann, "moved", timeout_s=30)  # nobody else acts: the computer thinks again by itself
            assert moved["seat"] == 0 and moved["ply"] == 3
            outcome, _ = await play_to_the_end(ann, table, 1, moved["view"])
            await ann.close()
            return outcome

        assert asyncio.run(after_the_restart())["winner"] == 0
        server.popen.send_signal(signal.SIGTERM)
        assert server.finish() == 0
        assert not any("Traceback" in line for line in server.lines), "\n".join(server.lines)
    finally:
        server.kill()
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
