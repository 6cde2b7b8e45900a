"""The per-minute limits on what players can send to others: tells, challenges, seeks.

Each kind has three budgets, refilled steadily and each a minute's worth deep:

- per sender: ``tells_per_minute`` (``challenges_per_minute``, ``seeks_per_minute``),
  keyed by the sender's name key, so reconnecting under the same name does not refill it;
- per source address (:func:`server.net.address_groups.address_group`: an IPv6 /64
  is one source): :data:`PER_ADDRESS_FACTOR` times that, shared by every session
  from there, so fresh guest sessions do not bring fresh budgets;
- per recipient, for tells and challenges from guests (names not claimed):
  :data:`PER_RECIPIENT_FACTOR` times that, shared by every guest, so no crowd
  of guests can bury one player; tells and challenges from claimed names do not count here.

Over any of them the request is refused with ``rate_limited`` and the message
says which budget and how long to wait; nothing is spent from any budget then,
nothing is delayed and the connection stays open.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

from protocol import Code
from protocol.pacing import TokenBucket

from ..net.address_groups import address_group
from ..net.limits import Limits
from ..core.names import name_key
from ..core.session import Session
from ..core.errors import RequestError

__all__ = ["SpamLimits", "Kind", "Budgets", "PER_ADDRESS_FACTOR", "PER_RECIPIENT_FACTOR"]

Kind = Literal["tells", "challenges", "seeks"]

PER_ADDRESS_FACTOR = 3
"""One source address's budget of a kind, in sender budgets (a few players behind one NAT)."""
PER_RECIPIENT_FACTOR = 3
"""One recipient's budget of tells or challenges from guests, in sender budgets."""


class Budgets:
    """A token bucket per key (a sender, an address, a recipient), ``per_minute`` deep, refilled at ``per_minute`` a minute.

    Full buckets are forgotten (a new one would be the same), at most once per refill time.
    """

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._rate = per_minute / 60.0
        self._buckets: dict[str, TokenBucket] = {}
        self._swept_at: float | None = None

    def wait_s(self, key: str, now: float) -> float:
        """Seconds until ``key`` has a token (0.0: it has one now); spends nothing."""
        bucket = self._buckets.get(key)
        tokens = bucket.tokens(now) if bucket is not None else float(self.per_minute)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self._rate

    def spend(self, key: str, now: float) -> None:
        """Spend one of ``key``'s tokens (after :meth:`wait_s` said there is one)."""
        self._sweep(now)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self._rate, self.per_minute, now)
        bucket.take(now)

    def _sweep(self, now: float) -> None:
        if self._swept_at is not None and now - self._swept_at < 60.0:
            return
        self._swept_at = now
        for key in [k for k, bucket in self._buckets.items() if bucket.tokens(now) >= self.per_minute]:
            del self._buckets[key]


class SpamLimits:
    """The tells, challenges and seeks each sender, address and recipient may still take this minute.

    Args:
        limits: returns the server's current limits (``tells_per_minute`` ...); a changed
            rate takes effect with fresh budgets.
        now: the monotonic clock, in seconds.
    """

    def __init__(self, limits: Callable[[], Limits], now: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._now = now
        self._budgets: dict[Kind, tuple[Budgets, Budgets, Budgets]] = {}

    def charge(self, kind: Kind, session: Session, recipient: Session | None = None) -> None:
        """Count one more of ``kind`` from ``session`` (to ``recipient``, for tells and challenges).

        Raises:
            RequestError: ``rate_limited``, saying which budget is spent, how many a minute it allows and how long to wait.
        """
        per_minute = getattr(self._limits(), f"{kind}_per_minute")
        budgets = self._budgets.get(kind)
        if budgets is None or budgets[0].per_minute != per_minute:
            budgets = self._budgets[kind] = (
                Budgets(per_minute),
                Budgets(per_minute * PER_ADDRESS_FACTOR),
                Budgets(per_minute * PER_RECIPIENT_FACTOR),
            )
        by_sender, by_address, by_recipient = budgets
        peer = session.peer
        charges = [
            (by_sender, name_key(session.name), f"this server allows {per_minute} {kind} a minute"),
            (by_address, address_group(peer.host if peer is not None else "?"), f"this server allows {by_address.per_minute} {kind} a minute from one address"),
        ]
        if recipient is not None and not session.claimed:
            charges.append(
                (by_recipient, name_key(recipient.name), f"{recipient.name} takes at most {by_recipient.per_minute} {kind} a minute from guests")
            )
        now = self._now()
        for budget, key, rule in charges:
            wait_s = budget.wait_s(key, now)
            if wait_s > 0:
                raise RequestError(Code.RATE_LIMITED, f"{rule}; wait {math.ceil(wait_s)} s before the next")
        for budget, key, _ in charges:
            budget.spend(key, now)
