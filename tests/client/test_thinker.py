"""The bot's worker process: moves chosen off the event loop, a dead worker replaced."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal

import games
from client.thinker import ProcessThinker


async def test_a_killed_worker_is_replaced_and_the_move_still_comes() -> None:
    thinker = ProcessThinker("nimble")
    try:
        await thinker.ready()
        workers = multiprocessing.active_children()
        assert workers, "the worker runs in a process of its own"
        for worker in workers:
            os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
        view = games.get("nimble").new_state({"board": [0, 0, 3, 3]}).view(0)
        move = await asyncio.wait_for(thinker.choose(5, view, 0.05, seed=1), 20)
        assert move in view["legal_moves"]
        assert {worker.pid for worker in multiprocessing.active_children()}.isdisjoint(worker.pid for worker in workers)
    finally:
        thinker.close()


async def test_the_worker_loads_its_game_s_data_before_the_first_move() -> None:
    import games.bots

    thinker = ProcessThinker("othello")
    try:
        await thinker.ready()
        assert await asyncio.wrap_future(thinker._pool.submit(games.bots.warmed)) == ("othello",)
    finally:
        thinker.close()
