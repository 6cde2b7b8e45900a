"""Fixtures for the Textual app's tests: the app against a real in-process server, driven by Pilot."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

import pytest

from client.app.app import ParlourApp
from client.app.recent import RecentServers
from client.app.server_screen import ServerStart
from client.tokens import TokenStore

SIZE = (80, 24)

START_FIELDS = frozenset(ServerStart.__dataclass_fields__)
"""The factory's keywords that go to the server screen (:class:`ServerStart`), not to the app."""


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., ParlourApp]:
    """Factory: an app whose tokens and recent servers live in ``tmp_path``, not searching the LAN."""

    def factory(**kwargs: Any) -> ParlourApp:
        starting = {field: kwargs.pop(field) for field in START_FIELDS if field in kwargs}
        starting.setdefault("discover", False)
        kwargs.setdefault("tokens", TokenStore(tmp_path / "tokens.json"))
        kwargs.setdefault("recent", RecentServers(tmp_path / "servers.json"))
        return ParlourApp(ServerStart(**starting), **kwargs)

    return factory


async def until(pilot: Any, condition: Callable[[], Any], timeout_s: float = 5.0) -> Any:
    """Let the app run until ``condition()`` is true (returning it); fail after ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not (result := condition()):
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {getattr(condition, '__name__', condition)}")
        await pilot.pause(0.02)
    return result


async def in_lobby(app: Any, pilot: Any) -> Any:
    """Wait until the app shows the main screen with its lobby built; return the main screen."""
    from client.app.tabs import MainScreen

    # is_mounted: the screen's on_mount has run, so it follows the model (a drop right after would otherwise go unseen)
    return await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen.is_mounted and app.screen.query("#tables") and app.screen)
