"""Worker processes that think for the computer players, off the event loop.

A :class:`WorkerPool` runs :func:`games.bots.choose_move` in a
``concurrent.futures.ProcessPoolExecutor`` started with the ``spawn``
context (never ``fork`` from a process running an event loop and threads).
It is created on first use, its workers run at the lowest priority
(``nice`` 19 and, on Linux, ``SCHED_IDLE``) so the event loop keeps the CPU
it needs, and it has one worker per core but one (:func:`default_workers`).
A pool whose worker died (``BrokenProcessPool``) is replaced and the move
asked again once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import os
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Mapping

from protocol.orphans import exit_when_orphaned

__all__ = ["WorkerPool", "ThinkingFailed", "WORKER_NICENESS", "default_workers"]

log = logging.getLogger(__name__)

WORKER_NICENESS = 19
"""How much lower than the server's the workers' scheduling priority is (``os.nice``)."""

SLACK_S = 10.0
"""How much longer than its budget a move may take (a worker starting, a loaded machine) before it is given up."""


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
    """Runs first in each worker: lower its priority, end with the server, and load the choosers' package.

    Besides ``nice``, on Linux the worker asks for the ``SCHED_IDLE`` policy:
    it then runs only on CPU time no ordinary process wants, so a waking
    event loop preempts it at once.
    """
    try:
        os.nice(WORKER_NICENESS)
    except OSError:  # not allowed here: the worker still works, at the same priority
        pass
    if hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass
    exit_when_orphaned(parent_pid)  # a server killed outright leaves no worker behind
    import games.bots  # noqa: F401  (imported once per worker, not per move)


def _choose(game: str, level: int, view: Mapping[str, Any], seconds: float, seed: int) -> str:
    from games.bots import choose_move

    return choose_move(game, level, view, seconds, seed)


class WorkerPool:
    """The worker processes of one server.

    Args:
        workers: how many processes (default: :func:`default_workers`).
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False

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
        for attempt in (1, 2):
            pool = self._ensure()
            try:
                future = pool.submit(_choose, game, level, dict(view), seconds, seed)
                if asyncio.current_task() is None:
                    await asyncio.sleep(0)  # a request handled outside a task (server.net.connection): wait_for needs one from Python 3.12
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
