"""A link's relayed requests on the authority, answered one after another, each without a task of its own.

A front relays a player's requests in the order the player sent them, and
the authority must answer them in that order: a request waits until the
link's earlier one is answered. Most requests are answered at once; a move
waits for its commit. Answering a waiting one in a task costs a task's
making, a loop callback for its first step and another for its end, and
``asyncio.ensure_future``'s ``getpid`` system call -- a relayed move paid all
of that, a local one none (:meth:`server.net.connection.Connections.serve_now`).
So, as the connection layer does, the handling coroutine is run here with
``send``, and resumed from the done callback of the plain future it waits on
(a commit, a table's lock); anything else it waits on (a bare yield asks for
a task) makes it a task's coroutine from where it stopped
(:class:`server.net.resuming.Resumed`). When it ends, the next request of
the link, if one came meanwhile, is answered.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any, Awaitable, Callable, Coroutine

from ..net.resuming import PUMP_TASK_NAME, Resumed

__all__ = ["InTurn", "Start"]

log = logging.getLogger(__name__)

Start = Callable[..., Awaitable[None] | None]
"""Begins answering one request: returns ``None`` when it is answered already, else the coroutine that answers it."""


class InTurn:
    """Each key's jobs (a link's requests) run one after another: a job begins once the key's previous one ended.

    A job is a :data:`Start` and its arguments; the coroutine it returns is run
    without a task while it waits on plain futures. A job that raises is
    logged and counts as ended (the pipeline answers its own errors; this is a bug).
    """

    def __init__(self) -> None:
        self._queued: dict[Any, collections.deque[tuple[Start, tuple[Any, ...]]]] = {}  # key of a job running -> the jobs after it
        self._loop: asyncio.AbstractEventLoop | None = None

    def busy(self, key: Any) -> bool:
        """Whether a job of ``key`` is running (waiting on something)."""
        return key in self._queued

    def run(self, key: Any, start: Start, *args: Any) -> None:
        """Run ``start(*args)`` now if no job of ``key`` is running, else once the jobs of ``key`` before it have ended."""
        queued = self._queued.get(key)
        if queued is not None:
            queued.append((start, args))
            return
        self._run(key, start, args)

    def _run(self, key: Any, start: Start, args: tuple[Any, ...]) -> None:
        """Run jobs of ``key`` from ``start(*args)`` on, until one waits or none is left."""
        while True:
            try:
                answering = start(*args)
            except Exception:  # noqa: BLE001 - logged; the bus's receiver must go on
                log.exception("a relayed request failed")
                answering = None
            if answering is not None and self._step(key, answering):  # type: ignore[arg-type]
                return  # it waits: resumed later, and the queue goes on from there
            job = self._next(key)
            if job is None:
                return
            start, args = job

    def _step(self, key: Any, coroutine: Coroutine[Any, Any, None]) -> bool:
        """Go on with ``coroutine`` until it ends (``False``) or waits (``True``: it is resumed when what it waits on is done)."""
        try:
            waiting_on = coroutine.send(None)
        except StopIteration:
            return False
        except Exception:  # noqa: BLE001 - as in _run
            log.exception("a relayed request failed")
            return False
        if key not in self._queued:
            self._queued[key] = collections.deque()
        if waiting_on.__class__ is asyncio.Future:
            waiting_on.add_done_callback(lambda _done: self._resume(key, coroutine))
        else:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            task = loop.create_task(Resumed(coroutine, waiting_on), name=PUMP_TASK_NAME)
            task.add_done_callback(lambda done: self._ended(key, done))
        return True

    def _resume(self, key: Any, coroutine: Coroutine[Any, Any, None]) -> None:
        if not self._step(key, coroutine):
            self._after(key)

    def _ended(self, key: Any, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("a relayed request failed", exc_info=task.exception())
        self._after(key)

    def _after(self, key: Any) -> None:
        """The running job of ``key`` ended: run the next, if any."""
        job = self._next(key)
        if job is not None:
            self._run(key, *job)

    def _next(self, key: Any) -> tuple[Start, tuple[Any, ...]] | None:
        """The next job of ``key``, taken from its queue; ``None`` (and ``key`` idle) when none waits."""
        queued = self._queued.get(key)
        if queued:
            return queued.popleft()
        self._queued.pop(key, None)
        return None
