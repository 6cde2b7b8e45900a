"""One flush at the end of the loop turn: what a batching writer (the Redis bus, the relay's mail) shares.

A writer that gathers what one loop turn sends and writes it in one go asks
its :class:`TurnFlush` each time it queues something; the first ask of a turn
schedules the flush with ``loop.call_soon``, later ones cost a flag check.
"""

from __future__ import annotations

import asyncio
from typing import Callable

__all__ = ["TurnFlush"]


class TurnFlush:
    """Calls ``flush`` once, at the end of the loop turn in which it is first asked for.

    Args:
        flush: the writer's flush; it must set :attr:`due` to false first, as
            a flush called directly also takes what a scheduled one would.

    Hot callers check :attr:`due` themselves and call :meth:`schedule` only
    when it is false (one attribute read a queued item, no call).
    """

    __slots__ = ("_flush", "_loop", "due")

    def __init__(self, flush: Callable[[], None]) -> None:
        self._flush = flush
        self._loop: asyncio.AbstractEventLoop | None = None
        self.due = False
        """A flush is scheduled, or comes when the writing in :meth:`held` ends."""

    def schedule(self) -> None:
        """Schedule the flush for the end of this turn, unless one is due already.

        Raises:
            RuntimeError: called outside a running event loop (the first time).
        """
        if self.due:
            return
        self.due = True
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        loop.call_soon(self._flush)

    def held(self, write: Callable[[], None]) -> None:
        """Call ``write``, scheduling no flush for what it queues, then flush once, now (a turn's last writer)."""
        due, self.due = self.due, True
        try:
            write()
        finally:
            self.due = due
        self._flush()
