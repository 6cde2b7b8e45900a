"""Rate limits of claimed names: guessing a secret or password, and claiming.

Each failed proof counts against the address it came from and against the
name it was for; once either has had ``most`` failures within the last
``window_s`` seconds, further tries are refused (without hashing anything)
until the oldest of those failures is ``window_s`` old. Claims count against
their address the same way, so that one address cannot fill the database
with names or keep the hashing threads busy.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from typing import Callable

__all__ = ["SlidingWindow", "AccountLimits"]

TRACKED_KEYS = 10_000
"""The most addresses (or names) one window remembers; the least recently counted are forgotten first."""


class SlidingWindow:
    """Events per key (an address, a name) within a sliding window of time.

    Args:
        most: events allowed within ``window_s``.
        window_s: the window's length, in seconds.
        clock: the time source, in seconds (``time.monotonic``).

    Raises:
        ValueError: ``most`` below 1 or a window that is not positive.
    """

    def __init__(self, most: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if most < 1 or window_s <= 0:
            raise ValueError(f"a window needs at least one event and a positive length, not {most} in {window_s} s")
        self.most = most
        self.window_s = window_s
        self._clock = clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()

    def wait_s(self, key: str) -> float:
        """Seconds until ``key`` may have another event (0: now)."""
        events = self._recent(key)
        if events is None or len(events) < self.most:
            return 0.0
        return max(0.0, events[0] + self.window_s - self._clock())

    def count(self, key: str) -> int:
        """Count an event for ``key``; return its events within the window, this one included."""
        events = self._recent(key)
        if events is None:
            events = self._events[key] = deque(maxlen=self.most)
            while len(self._events) > TRACKED_KEYS:
                self._events.popitem(last=False)
        self._events.move_to_end(key)
        events.append(self._clock())
        return len(events)

    def _recent(self, key: str) -> deque[float] | None:
        """``key``'s events within the window (older ones dropped), or ``None`` when it has none."""
        events = self._events.get(key)
        if events is None:
            return None
        oldest = self._clock() - self.window_s
        while events and events[0] <= oldest:
            events.popleft()
        if not events:
            del self._events[key]
            return None
        return events


class AccountLimits:
    """The windows of wrong proofs (per address, per name) and of claims (per address).

    Args:
        per_address: wrong secrets or passwords allowed from one address within ``address_window_s``.
        per_name: wrong secrets or passwords allowed for one name within ``name_window_s``.
        claims_per_address: names one address may claim within ``claim_window_s``.
    """

    def __init__(
        self,
        per_address: int = 5,
        address_window_s: float = 60.0,
        per_name: int = 20,
        name_window_s: float = 600.0,
        claims_per_address: int = 20,
        claim_window_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.addresses = SlidingWindow(per_address, address_window_s, clock)
        self.names = SlidingWindow(per_name, name_window_s, clock)
        self.claims = SlidingWindow(claims_per_address, claim_window_s, clock)

    def proof_refusal(self, address: str, name_key: str) -> str | None:
        """Why ``address`` may not try to prove ``name_key`` now (with the seconds to wait), or ``None``."""
        wait_s = self.addresses.wait_s(address)
        if wait_s > 0:
            return f"too many wrong secrets or passwords from your address: try again in {_seconds(wait_s)} s"
        wait_s = self.names.wait_s(name_key)
        if wait_s > 0:
            return f"too many wrong secrets or passwords for this name: try again in {_seconds(wait_s)} s"
        return None

    def failed(self, address: str, name_key: str) -> tuple[int, int]:
        """Count a wrong proof; return the failures within the windows of the address and of the name."""
        return self.addresses.count(address), self.names.count(name_key)

    def claim_refusal(self, address: str) -> str | None:
        """Why ``address`` may not claim a name now (with the seconds to wait), or ``None``; else counts the claim."""
        wait_s = self.claims.wait_s(address)
        if wait_s > 0:
            return f"too many names claimed from your address: try again in {_seconds(wait_s)} s"
        self.claims.count(address)
        return None


def _seconds(wait_s: float) -> int:
    return max(1, int(wait_s + 0.999))
