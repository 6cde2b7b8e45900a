"""Changes collected over one short tick and sent together (the lobby's and the seeks' deltas)."""

from __future__ import annotations

import asyncio
from typing import Callable, Generic, TypeVar

__all__ = ["TickBatch"]

K = TypeVar("K")
V = TypeVar("V")


class TickBatch(Generic[K, V]):
    """Changes by key, in the order first seen, handed to ``send`` together ``tick_s`` seconds after the first.

    Several changes to one key within a tick are one entry (the last value
    set); ``send`` gets the batch and runs in the event loop. Use from the
    event loop only.
    """

    def __init__(self, tick_s: float, send: Callable[[], None]) -> None:
        self._tick_s = tick_s
        self._send = send
        self._pending: dict[K, V] = {}
        self._timer: asyncio.TimerHandle | None = None

    def note(self, key: K, value: V) -> None:
        """Set ``key``'s change; start the tick if none is running."""
        self._pending[key] = value
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._tick_s, self._send)

    def get(self, key: K, default: V) -> V:
        """The change noted for ``key`` in this tick, or ``default``."""
        return self._pending.get(key, default)

    def take(self) -> dict[K, V]:
        """Every change noted since the last take, and stop the tick (the caller sends them now)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        taken, self._pending = self._pending, {}
        return taken

    def close(self) -> None:
        """Drop what is pending and stop the tick (the server is closing)."""
        self.take()
