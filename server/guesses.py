"""Rate limits on guessing a claimed name's secret or password.

Each failed proof counts against the address it came from and against the
name it was for; once either has had ``most`` failures within the last
``window_s`` seconds, further tries are refused (without hashing anything)
until the oldest of those failures is ``window_s`` old.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from typing import Callable

__all__ = ["FailureWindow", "GuessLimits"]

TRACKED_KEYS = 10_000
"""The most addresses (or names) one window remembers; the least recently failed are forgotten first."""


class FailureWindow:
    """Failures per key (an address, a name) within a sliding window.

    Args:
        most: failures allowed within ``window_s``.
        window_s: the window's length, in seconds.
        clock: the time source, in seconds (``time.monotonic``).
    """

    def __init__(self, most: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if most < 1 or window_s <= 0:
            raise ValueError(f"a failure window needs at least one failure and a positive length, not {most} in {window_s} s")
        self.most = most
        self.window_s = window_s
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def wait_s(self, key: str) -> float:
        """Seconds until ``key`` may try again (0: it may try now)."""
        failures = self._recent(key)
        if failures is None or len(failures) < self.most:
            return 0.0
        return max(0.0, failures[0] + self.window_s - self._clock())

    def fail(self, key: str) -> int:
        """Count a failure for ``key``; return its failures within the window, this one included."""
        failures = self._recent(key)
        if failures is None:
            failures = self._failures[key] = deque(maxlen=self.most)
            while len(self._failures) > TRACKED_KEYS:
                self._failures.popitem(last=False)
        self._failures.move_to_end(key)
        failures.append(self._clock())
        return len(failures)

    def _recent(self, key: str) -> deque[float] | None:
        """``key``'s failures within the window (older ones dropped), or ``None`` when it has none."""
        failures = self._failures.get(key)
        if failures is None:
            return None
        oldest = self._clock() - self.window_s
        while failures and failures[0] <= oldest:
            failures.popleft()
        if not failures:
            del self._failures[key]
            return None
        return failures


class GuessLimits:
    """The per-address and per-name windows together.

    Args:
        per_address: failures allowed from one address within ``address_window_s``.
        per_name: failures allowed for one name within ``name_window_s``.
    """

    def __init__(
        self,
        per_address: int = 5,
        address_window_s: float = 60.0,
        per_name: int = 20,
        name_window_s: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.addresses = FailureWindow(per_address, address_window_s, clock)
        self.names = FailureWindow(per_name, name_window_s, clock)

    def refusal(self, address: str, name_key: str) -> str | None:
        """Why ``address`` may not try to prove ``name_key`` now (with the seconds to wait), or ``None``."""
        wait_s = self.addresses.wait_s(address)
        if wait_s > 0:
            return f"too many wrong secrets or passwords from your address: try again in {_seconds(wait_s)} s"
        wait_s = self.names.wait_s(name_key)
        if wait_s > 0:
            return f"too many wrong secrets or passwords for this name: try again in {_seconds(wait_s)} s"
        return None

    def fail(self, address: str, name_key: str) -> tuple[int, int]:
        """Count a failed proof; return the failures within the windows of the address and of the name."""
        return self.addresses.fail(address), self.names.fail(name_key)


def _seconds(wait_s: float) -> int:
    return max(1, int(wait_s + 0.999))
