"""Running a coroutine's first step at once, and a task only for what must wait (server/eager.py)."""

from __future__ import annotations

import asyncio

import pytest

from server.eager import run_eagerly


async def test_a_coroutine_that_never_waits_finishes_at_once_without_a_task() -> None:
    done: list[str] = []

    async def answer() -> None:
        done.append("answered")

    assert run_eagerly(answer()) is None
    assert done == ["answered"], "the coroutine ran before run_eagerly returned"


async def test_a_coroutine_that_waits_goes_on_in_a_task_from_where_it_stopped() -> None:
    steps: list[str] = []
    gate: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def wait_then_finish() -> None:
        steps.append("before")
        steps.append(f"got {await gate}")
        await asyncio.sleep(0)
        steps.append("after")

    task = run_eagerly(wait_then_finish())
    assert task is not None and steps == ["before"]
    gate.set_result(7)
    await task
    assert steps == ["before", "got 7", "after"]


async def test_an_error_of_the_first_step_reaches_the_caller() -> None:
    async def broken() -> None:
        raise ValueError("bad request")

    with pytest.raises(ValueError, match="bad request"):
        run_eagerly(broken())


async def test_cancelling_the_task_cancels_the_coroutine_at_its_wait() -> None:
    cleaned: list[str] = []
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def waits_forever() -> None:
        try:
            await never
        except asyncio.CancelledError:
            cleaned.append("cancelled")
            raise

    task = run_eagerly(waits_forever())
    assert task is not None
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["cancelled"] and never.cancelled()
