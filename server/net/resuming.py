"""A coroutine begun outside any task, handed to a task from where it stopped (see :meth:`server.net.connection.Connections.serve_now`)."""

from __future__ import annotations

import asyncio
import collections.abc
from typing import Any, Coroutine

__all__ = ["Resumed"]


class Resumed(collections.abc.Coroutine):  # type: ignore[type-arg]
    """A coroutine that began outside any task and suspended, to become a task's coroutine from where it stopped.

    :meth:`server.net.connection.Connections.serve_now` drives a connection's handling with
    ``send(None)`` in the transport's callback. When the handling suspends, it
    has yielded what it waits on -- a future, or ``None`` for a bare yield
    (``asyncio.sleep(0)``) -- and nothing watches that yet. A task made of this
    object gets that same value from its first step, so it waits on the future
    (or gives the loop a turn) exactly as if it had run the coroutine from the
    start; every later send and throw goes through to the coroutine. A task
    cancelled before its first step cancels the future too, as a task
    cancelled while waiting on it does.

    Args:
        coroutine: the suspended coroutine.
        waiting_on: what its last ``send`` returned.
    """

    __slots__ = ("_coroutine", "_waiting_on")

    _STARTED = object()

    def __init__(self, coroutine: Coroutine[Any, Any, Any], waiting_on: Any) -> None:
        self._coroutine = coroutine
        self._waiting_on = waiting_on

    def send(self, value: Any) -> Any:
        waiting_on = self._waiting_on
        if waiting_on is Resumed._STARTED:
            return self._coroutine.send(value)
        self._waiting_on = Resumed._STARTED
        return waiting_on

    def throw(self, exc: Any, *args: Any) -> Any:
        waiting_on, self._waiting_on = self._waiting_on, Resumed._STARTED
        if asyncio.isfuture(waiting_on) and isinstance(exc, asyncio.CancelledError):
            waiting_on.cancel()
        return self._coroutine.throw(exc, *args)

    def close(self) -> None:
        self._coroutine.close()

    def __await__(self) -> Any:
        raise TypeError("a Resumed coroutine is run by a task, never awaited")
