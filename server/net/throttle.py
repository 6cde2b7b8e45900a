"""One connection's request rate: the throttle that slows, then drops, a flooder."""

from __future__ import annotations

import time

from .limits import Limits, TokenBucket

__all__ = ["Throttle"]


class Throttle:
    """One connection's request rate: a token bucket that slows, then gives up on, a flooder.

    The first request never waits (a burst is at least 1), so the throttle
    is made for the second (see :meth:`server.net.connection.PeerProtocol.throttle`), with the
    first request's token already spent: full but for one token at ``now``.
    That is never more lenient than a bucket made at the first request: at
    most one token stricter, for at most ``1 / requests_per_s`` seconds.

    Args:
        limits: the rate, burst and flood timeout.
        now: when the second request came (``time.monotonic()`` seconds).
    """

    __slots__ = ("_limits", "_bucket", "_since")

    def __init__(self, limits: Limits, now: float) -> None:
        self._limits = limits
        self._bucket = TokenBucket(limits.requests_per_s, limits.request_burst, now)
        self._bucket.take(now)  # the first request's
        self._since: float | None = None

    def take(self, now: float | None = None) -> float | None:
        """Spend a token for the next request: ``0.0`` to handle it now, else the seconds to hold it back first,
        or ``None`` once flooding has lasted too long (the connection is to be dropped).

        ``now``: ``time.monotonic()`` when the request came, if the caller has it.
        Not a coroutine, so that a request within the rate costs no await.
        """
        if now is None:
            now = time.monotonic()
        bucket = self._bucket
        # TokenBucket.take(now), written out: every request of every connection passes here.
        tokens = bucket._tokens + (now - bucket._at) * bucket.rate
        bucket._tokens = tokens = (tokens if tokens < bucket.burst else bucket.burst) - 1.0
        bucket._at = now
        return self.verdict(now, tokens)

    def verdict(self, now: float, tokens: float) -> float | None:
        """What :meth:`take` returns, the token spent at ``now`` leaving ``tokens`` in the bucket (negative: owed).

        :meth:`server.net.connection.Connections._serve_frame` spends the token itself (a call fewer on every
        request) and asks this only when the bucket is in debt or a flood was under way (``_since`` set).
        """
        bucket = self._bucket
        wait_s = 0.0 if tokens >= 0.0 else -tokens / bucket.rate
        if wait_s <= 0.0:
            if self._since is not None and bucket.tokens(now) >= bucket.burst / 2:
                self._since = None  # well below the rate for a while: the flood, if any, is over
            return 0.0
        self._since = self._since if self._since is not None else now
        if now - self._since > self._limits.flood_timeout_s:
            return None
        return wait_s

    def reason(self) -> str:
        """Why the connection is being closed."""
        limits = self._limits
        return f"more than {limits.requests_per_s:g} requests per second for over {limits.flood_timeout_s:g} s"
