"""Half-open connections between real processes: a frozen peer is noticed by heartbeats and idle timeouts.

SIGSTOP freezes a process with its sockets open: the kernel still answers
TCP, but no application byte comes. Only the heartbeat and idle timeout can
tell such a peer from a quiet one, on either side.
"""

from __future__ import annotations

import asyncio
import signal

from client import Client
from protocol import messages as m

from .harness import Process, start_server

LIVENESS = ("--heartbeat", "0.2", "--idle-timeout", "1")


async def test_a_frozen_server_is_noticed_by_the_client_library() -> None:
    server, port = start_server(*LIVENESS)
    try:
        ann = await Client.connect("127.0.0.1", port, name="ann")
        assert ann.welcome is not None and ann.welcome.idle_timeout_s == 1.0
        await asyncio.sleep(1.5)  # longer than the idle timeout: heartbeats and pings kept it open
        assert not ann.closed.is_set()
        server.popen.send_signal(signal.SIGSTOP)
        try:
            await asyncio.wait_for(ann.closed.wait(), 10)
            assert ann.close_reason == "the server sent nothing for 1 s"
        finally:
            server.popen.send_signal(signal.SIGCONT)
    finally:
        server.kill()


async def test_a_frozen_player_is_dropped_its_seat_held_and_it_resumes_when_thawed() -> None:
    server, port = start_server(*LIVENESS, "--grace", "60")
    bob = None
    try:
        ann = await Client.connect("127.0.0.1", port, name="ann")
        table = (await ann.create_table("nimble")).table.id
        bob = Process("play", f"127.0.0.1:{port}", "--name", "bob", stdin_text=f"join {table}\n")
        await ann.next_event(m.GameStarted, timeout_s=30)
        bob.popen.send_signal(signal.SIGSTOP)
        away = await ann.next_event(m.PlayerAway, timeout_s=10)  # the server's idle timeout, not a TCP error
        assert away.name == "bob" and away.table == table
        server.expect(r"closing .*\(timeout\): nothing received for 1 s")
        bob.popen.send_signal(signal.SIGCONT)
        back = await ann.next_event(m.PlayerBack, timeout_s=30)  # bob's client reconnected by itself
        assert back.name == "bob"
        bob.expect(r"Reconnected; your seats and tables are back\.")
        await ann.close()
    finally:
        if bob is not None:
            bob.popen.send_signal(signal.SIGCONT)
            bob.kill()
        server.kill()
