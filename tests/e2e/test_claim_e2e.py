"""A real ``parlour play`` process claims its name on first connect and says so once, in one line."""

from __future__ import annotations

import asyncio
import json

import pytest

from server.app import Server

from .harness import DATA_HOME, Process

pytestmark = pytest.mark.slow


async def test_play_claims_its_name_and_keeps_the_secret(server: Server) -> None:
    player = Process("play", f"127.0.0.1:{server.port}", "--name", "zoe", stdin_text="quit\n")
    try:
        claimed = await asyncio.to_thread(player.expect, r"^Claimed the name zoe on this server; your secret is in (.+); ")
        await asyncio.to_thread(player.expect, r"^Connected to .* as zoe\.")
        assert await asyncio.to_thread(player.finish) == 0
    finally:
        player.kill()
    assert claimed[1].startswith(DATA_HOME)
    with open(claimed[1], encoding="utf-8") as file:
        assert f"@{server.server_id} zoe" in json.load(file)  # kept by the server's stable id
    assert server.accounts.is_claimed("zoe")
    assert not any("Traceback" in line for line in player.lines)
