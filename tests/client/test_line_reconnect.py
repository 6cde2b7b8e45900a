"""The line client while the server is away: its clocks read as paused, under the shared retry policy."""

from __future__ import annotations

import asyncio
from pathlib import Path

from client import Client
from client.cli import ConnectSettings, _reconnector
from client.reconnect import GIVE_UP_S, give_up_after_s
from client.terminal import TerminalClient
from client.tokens import TokenStore
from protocol import messages as m
from server.app import Server, ServerConfig


async def test_the_clocks_stand_still_while_the_server_is_away(tmp_path: Path) -> None:
    server = Server(ServerConfig(host="127.0.0.1", port=0, grace_s=60.0))
    await server.start()
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    said: list[str] = []
    shell = TerminalClient(ann, said.append, reconnect=_reconnector("127.0.0.1", server.port, "ann", TokenStore(tmp_path / "t.json"), ConnectSettings()))
    following = asyncio.create_task(shell.follow_events())
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        state = await shell.session.create("othello", time_control="5+0")
        await bob.join_table(state.id)
        await shell.session.move(state.id, "d3")
        reply = await bob.next_event(m.Moved, timeout_s=10)
        await bob.move(state.id, reply.view["legal_moves"][0])
        async with asyncio.timeout(10):
            while (state := shell.session.tables[state.id]).clock is None or state.clock.get("running") != 0 or len(state.moves) < 2:
                await asyncio.sleep(0.01)
        assert "paused" not in shell.view.clock_text(state)
        await server.close()  # the server goes away
        async with asyncio.timeout(10):
            while shell.session.offline_since is None:
                await asyncio.sleep(0.01)
        first = shell.view.clock_text(shell.session.tables[state.id])
        await asyncio.sleep(1.1)
        assert shell.view.clock_text(shell.session.tables[state.id]) == first and first.endswith("(paused: connection lost)"), first
        assert give_up_after_s(ann.welcome.grace_s if ann.welcome else None) >= GIVE_UP_S == 300.0
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await bob.close()
        await shell.client.close()
        await server.close()


def test_doctests() -> None:
    import doctest

    import client.reconnect

    assert doctest.testmod(client.reconnect).failed == 0
