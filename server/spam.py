"""The per-minute limits on what one player can send to others: tells, challenges, seeks.

Each session has a bucket per kind (:class:`server.limits.ActionBuckets`),
keyed by its resume token, so reconnecting does not refill it. Over the
limit the request is refused with ``rate_limited`` and the message says how
long to wait; nothing is delayed and the connection stays open.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

from protocol import Code

from .limits import ActionBuckets, Limits
from .session import Session
from .table import RequestError

__all__ = ["SpamLimits", "Kind"]

Kind = Literal["tells", "challenges", "seeks"]


class SpamLimits:
    """The tells, challenges and seeks each session may still send this minute.

    Args:
        limits: returns the server's current limits (``tells_per_minute`` ...); a changed
            rate takes effect with a fresh bucket.
        now: the monotonic clock, in seconds.
    """

    def __init__(self, limits: Callable[[], Limits], now: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._now = now
        self._buckets: dict[Kind, ActionBuckets] = {}

    def charge(self, kind: Kind, session: Session) -> None:
        """Count one more of ``kind`` against ``session``.

        Raises:
            RequestError: ``rate_limited``, saying how many per minute are allowed and how long to wait.
        """
        per_minute = getattr(self._limits(), f"{kind}_per_minute")
        buckets = self._buckets.get(kind)
        if buckets is None or buckets.burst != per_minute:
            buckets = self._buckets[kind] = ActionBuckets(per_minute)
        wait_s = buckets.wait_s(session.token, self._now())
        if wait_s > 0:
            raise RequestError(
                Code.RATE_LIMITED,
                f"this server allows {per_minute} {kind} a minute; wait {math.ceil(wait_s)} s before the next",
            )
