"""Request pacing both ends share: a pure token bucket.

The server slows a connection that sends faster than its announced rate
(:mod:`server.net.limits`); the client keeps to the rate the server announced in
``welcome`` so it is never slowed (:mod:`client.connection`). Sans-IO: the
caller passes the time.
"""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    """A token bucket: ``burst`` tokens, refilled at ``rate`` per second.

    Pure: the caller passes the time (seconds on a monotonic clock).

    Args:
        rate: tokens added per second (> 0).
        burst: the bucket's size, and its content at ``now``.
        now: the current time.
    """

    __slots__ = ("rate", "burst", "_tokens", "_at")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at = now

    def take(self, now: float) -> float:
        """Spend one token; return how many seconds to wait before acting (0.0: act now).

        A wait means the bucket was empty: the caller should hold the request
        back that long, which is the rate the bucket allows.
        """
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0.0 else -self._tokens / self.rate

    def tokens(self, now: float) -> float:
        """Tokens available at ``now`` (negative while requests are being held back)."""
        return min(self.burst, self._tokens + (now - self._at) * self.rate)

    def try_take(self, now: float) -> bool:
        """Spend one token if one is available at ``now``; never go into debt. Return whether one was spent."""
        if self.tokens(now) < 1.0:
            return False
        self.take(now)
        return True
