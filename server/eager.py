"""Run a coroutine at once, and give it a task only if it has to wait.

Most requests are answered without waiting for anything (no database, a free
table lock): creating an :class:`asyncio.Task` for each would cost a task
object, a scheduled first step and a turn of the event loop before the
reply. :func:`run_eagerly` runs the coroutine's first step in the caller's
own stack (what Python 3.12's ``asyncio.eager_task_factory`` does); only when
it awaits something that is not ready does the rest continue in a task.

The coroutine must not need :func:`asyncio.current_task` before its first
wait (``asyncio.timeout`` does): during the first step there is none.
"""

from __future__ import annotations

import asyncio
from typing import Any, Coroutine, Generator

__all__ = ["run_eagerly"]


def run_eagerly(coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Run ``coroutine`` until it finishes or first waits; return ``None`` if it finished, else the task that goes on.

    An exception the first step raises propagates to the caller, as a
    function call's would.
    """
    try:
        waiting_for = coroutine.send(None)
    except StopIteration:
        return None
    return asyncio.get_running_loop().create_task(_go_on(coroutine, waiting_for))


async def _go_on(coroutine: Coroutine[Any, Any, None], waiting_for: Any) -> None:
    await _Continued(coroutine, waiting_for)


class _Continued:
    """An awaitable that hands the task what ``coroutine`` already waits for, then drives it to its end.

    Cancelling the task throws ``CancelledError`` into ``coroutine`` at its
    current wait, exactly as if the task had run it from the start.
    """

    __slots__ = ("_coroutine", "_waiting_for")

    def __init__(self, coroutine: Coroutine[Any, Any, None], waiting_for: Any) -> None:
        self._coroutine = coroutine
        self._waiting_for = waiting_for

    def __await__(self) -> Generator[Any, Any, None]:
        coroutine, waiting_for = self._coroutine, self._waiting_for
        while True:
            try:
                sent = yield waiting_for
            except GeneratorExit:  # the task is being destroyed unfinished: so is the coroutine
                coroutine.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - whatever the task throws (cancellation) goes on into the coroutine
                try:
                    waiting_for = coroutine.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    waiting_for = coroutine.send(sent)
                except StopIteration:
                    return
