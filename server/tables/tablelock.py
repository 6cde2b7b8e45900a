"""One state-changing action at a time per table: :class:`TableLock`, a cheaper ``asyncio.Lock``."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

__all__ = ["TableLock"]


class TableLock:
    """A table's lock: ``async with table.lock:`` around every action that changes the table, persistence included.

    The same promise as ``asyncio.Lock``: one holder at a time; waiters get
    it in the order they came (first in, first out), the lock passing straight
    from the holder to the first waiter; a holder that raises or is cancelled
    releases it; a waiter cancelled after it was handed the lock, before it
    ran, gives it on. Taking and releasing a free lock is two plain method
    calls that return a future already done (awaiting one runs no Python
    code), about half the instructions of ``asyncio.Lock``'s five calls,
    three of them coroutines: it is on every move's path.
    """

    __slots__ = ("_held", "_waiters", "_done")

    def __init__(self) -> None:
        self._held = False
        self._waiters: collections.deque[asyncio.Future[None]] | None = None  # made at the first wait
        self._done: asyncio.Future[None] | None = None  # made at the first take (of a free lock), on the running loop

    def locked(self) -> bool:
        """Whether an action holds the lock."""
        return self._held

    def __aenter__(self) -> Any:
        if self._held:
            return self._wait()
        self._held = True  # free means nobody waits either: a release hands the lock to the first waiter
        done = self._done
        return done if done is not None else self._make_done()

    def __aexit__(self, exc_type: object, exc: object, traceback: object) -> Any:
        if self._waiters:
            self._release()
        else:
            self._held = False
        return self._done  # done, with the result None: an exception raised inside goes on

    def _make_done(self) -> asyncio.Future[None]:
        done = self._done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def _wait(self) -> None:
        """Wait until the lock is handed over; a cancelled waiter that was handed it gives it on."""
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = collections.deque()
        waiter = asyncio.get_running_loop().create_future()
        waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed the lock, but cancelled before it ran: the next one gets it
            else:
                waiters.remove(waiter)
            raise

    def _release(self) -> None:
        """Hand the lock to the first waiter still waiting, or free it."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the lock stays held, now by that waiter
                return
        self._held = False
