"""Redis writes a node makes in the background, finished before its Redis client closes.

A node frees names and gives counts back in Redis without making the request
that caused it wait. Such a task must not outlive the client it writes with,
and its error must be read as soon as it ends: an error nobody reads is
logged when the task is garbage-collected, from inside whatever code the
collector interrupted (under CPython 3.11, that can break an ``ast.parse``
it interrupted: gh-106905).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Coroutine

__all__ = ["CLOSE_WAIT_S", "Background"]

CLOSE_WAIT_S = 2.0
"""How long a closing node waits for its background writes, in seconds."""


class Background:
    """The background writes of one part of a node.

    Args:
        log: where a write's unexpected error goes (one warning each).
        what: what the writes do, for that warning (e.g. ``"freeing a name key in Redis"``).
    """

    def __init__(self, log: logging.Logger, what: str) -> None:
        self._log = log
        self._what = what
        self._pending: set[asyncio.Task[None]] = set()

    def run(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task of the running loop; its error, if any, is logged when it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._pending.add(task)
        task.add_done_callback(self._finished)

    async def close(self) -> None:
        """Wait (at most :data:`CLOSE_WAIT_S`) for the writes under way: the node's Redis client closes next."""
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=CLOSE_WAIT_S)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self._log.warning("%s failed: %r", self._what, exc)
