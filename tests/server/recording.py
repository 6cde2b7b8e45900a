"""A raw connection that keeps every frame it read, and what those frames say about a table's game.

Shared by the failover tests (``tests/cluster/test_failover_e2e.py``) and
``benchmarks/failover.py``: players whose table may move to another node
find their view, their turn and the ``resumed`` frame in what they read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .conftest import TIMEOUT_S, Raw

__all__ = ["Recorder", "latest_view", "offered", "resumed"]


class Recorder(Raw):
    """A :class:`Raw` connection that keeps every frame it read, replies and pushes alike, in :attr:`seen`.

    Args:
        reader, writer: the open connection.
        timeout_s: how long :meth:`recv` waits for a frame unless told otherwise, in seconds.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout_s: float = TIMEOUT_S) -> None:
        super().__init__(reader, writer)
        self.seen: list[dict[str, Any]] = []
        self.timeout_s = timeout_s

    async def recv(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Return the next frame the server sent, and keep it in :attr:`seen`.

        Raises:
            TimeoutError: none came within ``timeout_s`` (default :attr:`timeout_s`).
            EOFError: the server closed the connection.
        """
        frame = await super().recv(self.timeout_s if timeout_s is None else timeout_s)
        self.seen.append(frame)
        return frame


def latest_view(player: Recorder, table: int, ply: int) -> dict[str, Any] | None:
    """The view ``player`` was last sent of ``table`` after ``ply`` plies (``moved``, ``game_started``, ``resumed`` or ``table_joined``), if any."""
    for frame in reversed(player.seen):
        kind = frame.get("type")
        if kind == "moved" and frame["table"] == table and frame["ply"] == ply:
            return frame["view"]  # type: ignore[no-any-return]
        if kind == "game_started" and frame["table"] == table and ply == 0:
            return frame["view"]  # type: ignore[no-any-return]
        if kind in ("resumed", "table_joined") and frame["table"]["id"] == table and len(frame["moves"]) == ply:
            return frame["view"]  # type: ignore[no-any-return]
    return None


async def offered(players: list[Recorder], table: int, ply: int) -> tuple[Recorder, str] | None:
    """The first of ``players`` offered ply ``ply + 1`` of ``table``, and the first legal move it was offered; ``None`` if nobody was yet.

    Each player reads what the server sent so far first (:meth:`Raw.sync`).
    """
    for player in players:
        await player.sync()
        view = latest_view(player, table, ply)
        if view is not None and view.get("legal_moves"):
            return player, view["legal_moves"][0]
    return None


def resumed(player: Recorder, table: int) -> dict[str, Any] | None:
    """The ``resumed`` frame ``player`` was sent of ``table`` (the table came back whole, from another node), if any."""
    return next((frame for frame in player.seen if frame.get("type") == "resumed" and frame["table"]["id"] == table), None)
