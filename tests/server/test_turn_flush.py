"""server.core.turn_flush: one flush at the end of the loop turn, however often it is asked for."""

from __future__ import annotations

import asyncio

from server.core.turn_flush import TurnFlush


class _Writer:
    """A batching writer as the Redis bus and the relay's mail are: items queued, written in one flush."""

    def __init__(self) -> None:
        self.queued: list[int] = []
        self.writes: list[list[int]] = []
        self.turn = TurnFlush(self.flush)

    def put(self, item: int) -> None:
        if not self.turn.due:
            self.turn.schedule()
        self.queued.append(item)

    def flush(self) -> None:
        self.turn.due = False
        if self.queued:
            self.writes.append(self.queued)
            self.queued = []


async def test_what_a_turn_queues_is_written_once_at_its_end() -> None:
    writer = _Writer()
    for item in range(3):
        writer.put(item)
    assert writer.writes == [] and writer.turn.due
    await asyncio.sleep(0)
    assert writer.writes == [[0, 1, 2]] and not writer.turn.due
    writer.put(3)
    await asyncio.sleep(0)
    assert writer.writes == [[0, 1, 2], [3]]


async def test_held_writing_schedules_nothing_and_is_written_at_once() -> None:
    loop = asyncio.get_running_loop()
    writer = _Writer()
    scheduled = len(loop._ready)  # type: ignore[attr-defined]
    writer.turn.held(lambda: [writer.put(item) for item in range(4)])
    assert writer.writes == [[0, 1, 2, 3]] and not writer.turn.due
    assert len(loop._ready) == scheduled  # type: ignore[attr-defined]  # no callback left for a later turn


async def test_held_writing_after_a_scheduled_flush_takes_the_turns_items_and_the_scheduled_flush_finds_none() -> None:
    writer = _Writer()
    writer.put(0)
    writer.turn.held(lambda: writer.put(1))
    assert writer.writes == [[0, 1]]
    await asyncio.sleep(0)
    assert writer.writes == [[0, 1]]  # the flush scheduled by put(0) ran and wrote nothing
