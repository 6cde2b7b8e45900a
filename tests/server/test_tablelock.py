"""The table lock keeps asyncio.Lock's promise: one holder, first come first served, released on errors and cancellation."""

from __future__ import annotations

import asyncio

import pytest

from server.tables.tablelock import TableLock


async def hold(lock: TableLock, name: str, order: list[str], release: asyncio.Event | None = None) -> None:
    async with lock:
        order.append(name)
        if release is not None:
            await release.wait()


async def test_waiters_take_the_lock_one_at_a_time_in_the_order_they_came() -> None:
    lock, order, release = TableLock(), list[str](), asyncio.Event()
    first = asyncio.create_task(hold(lock, "first", order, release))
    await asyncio.sleep(0)
    waiters = [asyncio.create_task(hold(lock, name, order)) for name in ("second", "third", "fourth")]
    await asyncio.sleep(0)
    assert order == ["first"] and lock.locked()
    release.set()
    await asyncio.wait_for(asyncio.gather(first, *waiters), 1.0)
    assert order == ["first", "second", "third", "fourth"] and not lock.locked()


async def test_a_holder_that_raises_releases_the_lock() -> None:
    lock = TableLock()
    with pytest.raises(ValueError):
        async with lock:
            raise ValueError("the rules refused the move")
    assert not lock.locked()
    async with lock:
        assert lock.locked()


async def test_a_cancelled_waiter_leaves_the_queue_and_the_next_one_gets_the_lock() -> None:
    lock, order, release = TableLock(), list[str](), asyncio.Event()
    first = asyncio.create_task(hold(lock, "first", order, release))
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(hold(lock, "cancelled", order))
    last = asyncio.create_task(hold(lock, "last", order))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    release.set()
    await asyncio.wait_for(asyncio.gather(first, last), 1.0)
    assert order == ["first", "last"] and not lock.locked()


async def test_a_waiter_cancelled_after_it_was_handed_the_lock_gives_it_on() -> None:
    lock, order = TableLock(), list[str]()
    async with lock:
        handed = asyncio.create_task(hold(lock, "handed", order))
        last = asyncio.create_task(hold(lock, "last", order))
        await asyncio.sleep(0)
    handed.cancel()  # the release handed it the lock; it is cancelled before it runs
    await asyncio.gather(handed, return_exceptions=True)
    await asyncio.wait_for(last, 1.0)
    assert order == ["last"] and not lock.locked()
