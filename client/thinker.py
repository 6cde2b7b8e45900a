"""Thinking off the event loop: a front end's move chooser in a worker process.

:class:`ProcessThinker` runs :func:`games.bots.choose_move` in one worker
process, so the event loop of ``parlour bot`` keeps answering heartbeats,
offers and pushes while a move is being thought out.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import signal
from typing import Any, Mapping

from games.bots import choose_move, warm_up
from protocol.orphans import exit_when_orphaned

__all__ = ["ProcessThinker"]


def _set_up_worker(parent_pid: int) -> None:
    """Leave SIGINT and SIGTERM to the parent (it shuts the worker down in order), and end with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    exit_when_orphaned(parent_pid)


def _warm_up(game: str) -> None:
    """Import the game's chooser and load its data (Othello's tables and book) before the first move's budget."""
    warm_up((game,))


class ProcessThinker:
    """Chooses moves in a worker process, off the event loop.

    One worker: a bot thinks about one move at a time. The worker is started
    with ``spawn`` (no copy of the bot's event loop or sockets), ignores
    SIGINT and SIGTERM (the bot stops it) and exits by itself if the bot is
    killed outright. A worker that dies is replaced once per move.
    """

    def __init__(self, game: str) -> None:
        self._game = game
        self._pool = self._start()

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_set_up_worker,
            initargs=(os.getpid(),),
        )
        self._warmed_up = pool.submit(_warm_up, self._game)  # loads the chooser while the bot connects
        return pool

    async def ready(self) -> None:
        """Wait until the worker has started and imported the game's chooser."""
        await asyncio.wrap_future(self._warmed_up)

    async def choose(self, level: int, view: Mapping[str, Any], seconds: float, seed: int) -> str:
        """One of ``view["legal_moves"]``, chosen by ``level``'s chooser within about ``seconds``.

        Raises:
            concurrent.futures.process.BrokenProcessPool: the worker died twice.
        """
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            try:
                return await loop.run_in_executor(self._pool, choose_move, self._game, level, dict(view), seconds, seed)
            except concurrent.futures.process.BrokenProcessPool:
                if attempt == 2:
                    raise
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._start()
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the worker: moves not yet begun are dropped, one being thought about is let finish (within its budget).

        Waiting for the worker lets the executor's own thread end before the
        interpreter does; shut down without waiting, CPython 3.11's exit hook
        could write to the thread's already closed wake-up pipe and print a
        traceback as the bot exits.
        """
        self._pool.shutdown(wait=True, cancel_futures=True)
