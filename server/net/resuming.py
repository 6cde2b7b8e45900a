"""A connection's handling begun outside any task, resumed where it stopped: by the future it waits on
(:class:`Waiting`), or by a task (:class:`Resumed`); see :meth:`server.net.connection.Connections.serve_now`."""

from __future__ import annotations

import asyncio
import collections.abc
from typing import Any, Coroutine, Protocol

__all__ = ["PUMP_TASK_NAME", "Pumps", "Resumed", "Waiting"]

PUMP_TASK_NAME = "parlour-requests"
"""The name of every task that handles a connection's requests: a task given no name formats
one of its own ("Task-123"), several thousand instructions per request."""


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


class Pumps(Protocol):
    """What :class:`Waiting` needs of the connection layer (:class:`server.net.connection.Connections`)."""

    _pumps: set[Any]

    def _suspended(self, inbox: Any, serving: Coroutine[Any, Any, None], waiting_on: Any) -> None: ...

    def _running_loop(self) -> asyncio.AbstractEventLoop: ...


class Waiting:
    """A connection's handling that began outside any task and waits on a future, resumed by that future's done callback.

    Most handling that must wait waits on one future at a time (a commit, a
    table's lock); a task for it would cost a task's making and registration,
    one loop callback for its first step and one more method call per step.
    When the future is done, :meth:`resume` sends into the coroutine from the
    future's own callback (awaiting the future then returns its result or
    raises its exception in the coroutine, as in a task), until the
    coroutine ends or waits on something else: another plain future is
    waited on the same way; anything else (a bare yield asks for a task)
    hands the coroutine to a task (:meth:`server.net.connection.Connections._suspended`).

    Args:
        connections: the connection layer (its ``_pumps`` holds this while it waits).
        inbox: the connection whose handling this is (a :class:`server.net.connection.PeerProtocol`:
            its ``_task`` is this while it waits).
        coroutine: the suspended handling.
        future: what it waits on.
    """

    __slots__ = ("_connections", "_inbox", "_coroutine", "_future")

    def __init__(self, connections: "Pumps", inbox: Any, coroutine: Coroutine[Any, Any, None], future: asyncio.Future[Any]) -> None:
        self._connections = connections
        self._inbox = inbox
        self._coroutine = coroutine
        self._future = future

    def resume(self, future: asyncio.Future[Any]) -> None:
        """Go on with the handling: ``future`` is done (a done callback)."""
        try:
            waiting_on = self._coroutine.send(None)
        except StopIteration:
            return  # the handling's end took this from the inbox and the pumps (Connections._serve)
        connections = self._connections
        connections._pumps.discard(self)
        connections._suspended(self._inbox, self._coroutine, waiting_on)

    def into_task(self) -> asyncio.Task[None]:
        """Make the handling a task's coroutine, still waiting on its future (to cancel it, or to await its end)."""
        future = self._future
        future.remove_done_callback(self.resume)
        connections = self._connections
        connections._pumps.discard(self)
        task = connections._running_loop().create_task(Resumed(self._coroutine, future), name=PUMP_TASK_NAME)
        self._inbox._task = task
        connections._pumps.add(task)
        return task
