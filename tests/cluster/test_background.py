"""server.cluster.background: a node's background Redis writes end before its client closes, their errors read at once."""

from __future__ import annotations

import asyncio
import logging

import pytest

from server.cluster.background import Background

log = logging.getLogger("tests.background")


async def test_close_waits_for_the_writes_under_way() -> None:
    done: list[str] = []

    async def write() -> None:
        await asyncio.sleep(0.05)
        done.append("written")

    background = Background(log, "a write")
    background.run(write())
    await background.close()
    assert done == ["written"]


async def test_a_failed_write_is_logged_when_it_ends_not_when_it_is_collected(caplog: pytest.LogCaptureFixture) -> None:
    async def fails() -> None:
        raise RuntimeError("the connection is gone")

    background = Background(log, "freeing a key")
    with caplog.at_level(logging.WARNING, logger="tests.background"):
        background.run(fails())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    assert [r.getMessage() for r in caplog.records] == ["freeing a key failed: RuntimeError('the connection is gone')"]
    await background.close()  # nothing left under way: returns at once
