"""Worker processes that think for the computer players, off the event loop.

A :class:`WorkerPool` runs :func:`games.bots.choose_move` in a
``concurrent.futures.ProcessPoolExecutor`` started with the ``spawn``
context (never ``fork`` from a process running an event loop and threads).
It is created on first use, its workers run at the lowest priority
(``nice`` 19 and, on Linux, ``SCHED_IDLE``) so the event loop keeps the CPU
it needs, and it has one worker per core but one (:func:`default_workers`).
Each worker loads every game's data (:func:`games.bots.warm_up`: Othello's
pattern tables and opening book) when it starts, not inside a move's budget.
A pool whose worker died (``BrokenProcessPool``) is replaced and the move
asked again once.

A move's budget runs from the moment it is handed to a worker: at most one
move per worker is given to the executor at a time (the others wait here,
on the event loop, outside their budget), and the worker thinks until a
deadline on the shared monotonic clock (``time.monotonic``), so the time
taken to send the view to it counts against the budget.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import os
import time
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Mapping

from protocol.orphans import exit_when_orphaned

__all__ = ["WorkerPool", "ThinkingFailed", "WORKER_NICENESS", "MIN_THINK_S", "default_workers", "seconds_left"]

log = logging.getLogger(__name__)

WORKER_NICENESS = 19
"""How much lower than the server's the workers' scheduling priority is (``os.nice``)."""

SLACK_S = 10.0
"""How much longer than its budget a move may take (a worker starting, a loaded machine) before it is given up."""


MIN_THINK_S = 0.005
"""The least a worker thinks when the move's deadline has already passed on arrival (a move is always chosen)."""


class ThinkingFailed(Exception):
    """No move came back from the workers; the message says why."""


def default_workers() -> int:
    """One worker per core this process may run on but one, which is left to the event loop (at least one worker).

    Even at the lowest priority a worker on every core slows the event loop
    (caches, a shared host): on two cores, four computers thinking through two
    workers raised a game's move round-trip p99 1.8-3.9x, through one 1.1-1.7x
    (``benchmarks/bots_latency.py``).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def _start_worker(parent_pid: int) -> None:
    """Runs first in each worker: end with the server, load every game's data, then lower the priority.

    The data (:func:`games.bots.warm_up`, about 0.1 s of CPU) is loaded at
    the ordinary priority, so that a worker starting on a busy machine is
    ready in about that time. Then, besides ``nice``, on Linux the worker asks
    for the ``SCHED_IDLE`` policy: it then runs only on CPU time no ordinary
    process wants, so a waking event loop preempts it at once.
    """
    exit_when_orphaned(parent_pid)  # a server killed outright leaves no worker behind
    import games.bots  # (imported once per worker, not per move)

    games.bots.warm_up()
    try:
        os.nice(WORKER_NICENESS)
    except OSError:  # not allowed here: the worker still works, at the same priority
        pass
    if hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass


def seconds_left(ends_at: float, now: float) -> float:
    """The thinking time of a move due at ``ends_at`` (``time.monotonic`` seconds) at ``now``: at least
    :data:`MIN_THINK_S`."""
    return max(MIN_THINK_S, ends_at - now)


def _choose(game: str, level: int, view: Mapping[str, Any], ends_at: float, seed: int) -> str:
    """The worker's job: choose until ``ends_at`` on the monotonic clock (shared by the processes of one host)."""
    from games.bots import choose_move

    return choose_move(game, level, view, seconds_left(ends_at, time.monotonic()), seed)


class WorkerPool:
    """The worker processes of one server.

    Args:
        workers: how many processes (default: :func:`default_workers`).
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False
        self._slots: asyncio.Semaphore | None = None
        self._ready: concurrent.futures.ProcessPoolExecutor | None = None  # the pool whose workers have started

    @property
    def started(self) -> bool:
        """Whether the worker processes have been started (they are, on the first move asked)."""
        return self._pool is not None

    def _ensure(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._closed:
            raise ThinkingFailed("the server is stopping")
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),))
            log.info("started %d worker processes for the computer players", self.workers)
        return self._pool

    async def _started(self, pool: concurrent.futures.ProcessPoolExecutor, seconds: float) -> None:
        """Wait until every worker of a new ``pool`` has started (and warmed up): not on a move's clock."""
        if self._ready is pool:
            return
        started = [asyncio.wrap_future(pool.submit(os.getpid)) for _ in range(self.workers)]
        await asyncio.wait_for(asyncio.gather(*started), seconds + SLACK_S)
        self._ready = pool

    def _replace(self, broken: concurrent.futures.ProcessPoolExecutor) -> None:
        """Drop a broken pool; the next move starts a new one."""
        if self._pool is broken:
            self._pool = None
            broken.shutdown(wait=False, cancel_futures=True)

    async def choose(self, game: str, level: int, view: Mapping[str, Any], seconds: float, seed: int) -> str:
        """Ask a worker for ``game``'s computer move at ``level`` in ``view``, thinking ``seconds``.

        Returns:
            The chooser's move (not checked here: the caller plays it through the rules).

        Raises:
            ThinkingFailed: the pool broke twice, the move took far longer than
                ``seconds``, the pool is closed, or the chooser raised (the
                message names its error).
        """
        if asyncio.current_task() is None:
            await asyncio.sleep(0)  # a request handled outside a task (server.net.connection): wait_for needs one from Python 3.12
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        async with self._slots:  # a free worker: the budget starts now
            return await self._choose(game, level, view, seconds, seed)

    async def _choose(self, game: str, level: int, view: Mapping[str, Any], seconds: float, seed: int) -> str:
        """:meth:`choose` once a worker is free."""
        for attempt in (1, 2):
            pool = self._ensure()
            try:
                await self._started(pool, seconds)
                future = pool.submit(_choose, game, level, dict(view), time.monotonic() + seconds, seed)
                return await asyncio.wait_for(asyncio.wrap_future(future), seconds + SLACK_S)
            except BrokenProcessPool:
                log.error("a computer-player worker process died (attempt %d of 2); starting new workers", attempt)
                self._replace(pool)
            except asyncio.TimeoutError:
                raise ThinkingFailed(f"no move after {seconds + SLACK_S:g} s") from None
            except RuntimeError as exc:  # submit after shutdown: the server is stopping
                raise ThinkingFailed(str(exc)) from None
            except Exception as exc:  # the chooser's own error, raised again here from the worker
                raise ThinkingFailed(f"{type(exc).__name__}: {exc}") from None
        raise ThinkingFailed("the worker processes died twice")

    async def close(self) -> None:
        """Stop the workers and wait for them to exit (a move being thought out is finished first, then dropped)."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
