"""Rate limits of claimed names: guessing a secret or password, and claiming.

A proof (a secret or password in ``hello``, ``set_password`` or
``change_secret``) is counted *before* it is hashed, as a reservation, so
guesses sent at once cannot all slip past a limit while the first ones are
still being hashed; a proof that turns out right gives its reservation back,
so only wrong ones stay counted. Addresses are counted by their group
(:func:`server.net.address_groups.address_group`: an IPv6 /64 is one source).

Per address: at most ``per_address`` proofs within ``address_window_s``, then
every proof from there is refused (without hashing) until the oldest is that
old. Per name: once ``per_name`` proofs of one name stand within
``name_window_s``, the name is *locked*, but only against the sources that
guessed at it within the window: a source that has not (its owner, come back
from another machine) may still try, and only then counts. So nobody can
shut an owner out of their name by guessing at it, and while locked a name
takes at most one more guess per fresh source per window.

Claims count against their address the same way, so that one address cannot
fill the database with names or keep the hashing threads busy.

A node of a cluster counts each proof and claim in windows the nodes share too
(:class:`SharedLimits`, :mod:`server.cluster.limits`), so the budgets are the
cluster's, not one per node.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ..net.address_groups import address_group

__all__ = ["SlidingWindow", "NameWindow", "AccountLimits", "LimitReached", "Reservation", "SharedLimits", "SharedProof", "wait_message"]

TRACKED_KEYS = 10_000
"""The most addresses (or names) one window remembers; the least recently counted are forgotten first."""
SOURCES_PER_NAME = 100
"""The most proofs one name's window remembers beyond its limit (fresh sources while it is locked)."""


class LimitReached(Exception):
    """A proof or claim refused by a limit; the message says which and how many seconds to wait."""


class _Window:
    """Timed events per key within a sliding window: what :class:`SlidingWindow` and :class:`NameWindow` share.

    An event is a time (seconds on ``clock``) or a tuple whose first item is
    one; each key keeps at most ``most + extra`` of them, and at most
    :data:`TRACKED_KEYS` keys are kept (the least recently counted go first).

    Raises:
        ValueError: ``most`` below 1 or a window that is not positive.
    """

    extra = 0
    """Events a key keeps beyond ``most``."""

    def __init__(self, most: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if most < 1 or window_s <= 0:
            raise ValueError(f"a window needs at least one event and a positive length, not {most} in {window_s} s")
        self.most = most
        self.window_s = window_s
        self._clock = clock
        self._events: OrderedDict[str, deque[Any]] = OrderedDict()

    @staticmethod
    def _at(event: Any) -> float:
        return event

    def _add(self, key: str, event: Any) -> None:
        """Count ``event`` for ``key``, remembering ``key`` as the most recently counted."""
        events = self._events.get(key)
        if events is None:
            events = self._events[key] = deque(maxlen=self.most + self.extra)
            while len(self._events) > TRACKED_KEYS:
                self._events.popitem(last=False)
        self._events.move_to_end(key)
        events.append(event)

    def _take_back(self, key: str, event: Any) -> None:
        """Remove ``event`` of ``key``, if it is still there."""
        events = self._events.get(key)
        if events is not None and event in events:
            events.remove(event)
            if not events:
                del self._events[key]

    def _recent(self, key: str) -> deque[Any]:
        """``key``'s events within the window (older ones dropped; empty when it has none)."""
        events = self._events.get(key)
        if events is None:
            return deque()
        oldest = self._clock() - self.window_s
        while events and self._at(events[0]) <= oldest:
            events.popleft()
        if not events:
            del self._events[key]
        return events


class SlidingWindow(_Window):
    """Events per key (an address, a name) within a sliding window of time.

    Args:
        most: events allowed within ``window_s``.
        window_s: the window's length, in seconds.
        clock: the time source, in seconds (``time.monotonic``).

    Raises:
        ValueError: ``most`` below 1 or a window that is not positive.
    """

    def wait_s(self, key: str) -> float:
        """Seconds until ``key`` may have another event (0: now)."""
        events = self._recent(key)
        if len(events) < self.most:
            return 0.0
        return max(0.0, events[0] + self.window_s - self._clock())

    def count(self, key: str) -> int:
        """Count an event for ``key``; return its events within the window, this one included."""
        self.reserve(key)
        return len(self._events[key])

    def reserve(self, key: str) -> float:
        """Count an event for ``key`` now; return its time, to :meth:`refund` it by."""
        self._recent(key)
        at = self._clock()
        self._add(key, at)
        return at

    def refund(self, key: str, at: float) -> None:
        """Take back the event of ``key`` counted at ``at`` (by :meth:`reserve`), if it is still there."""
        self._take_back(key, at)

    def recent(self, key: str) -> int:
        """How many events ``key`` has within the window."""
        return len(self._recent(key))


class NameWindow(_Window):
    """Proofs per name within a sliding window, each with the source it came from.

    Args:
        most: proofs of one name within ``window_s`` after which the name is locked against their sources.
        window_s: the window's length, in seconds.
        clock: the time source, in seconds.
    """

    extra = SOURCES_PER_NAME

    @staticmethod
    def _at(event: tuple[float, str]) -> float:
        return event[0]

    def locked_s(self, name: str) -> float:
        """Seconds until ``name`` has fewer than ``most`` proofs within the window (0: not locked)."""
        events = self._recent(name)
        if len(events) < self.most:
            return 0.0
        return max(0.0, events[len(events) - self.most][0] + self.window_s - self._clock())

    def refusal_s(self, name: str, source: str) -> float:
        """Seconds ``source`` must wait to try ``name`` (0: now): the lock's, if ``source`` is one of its guessers."""
        locked_s = self.locked_s(name)
        if locked_s and any(by == source for _, by in self._recent(name)):
            return locked_s
        return 0.0

    def reserve(self, name: str, source: str) -> float:
        """Count a proof of ``name`` from ``source`` now; return its time, to :meth:`refund` it by."""
        at = self._clock()
        self._add(name, (at, source))
        return at

    def refund(self, name: str, source: str, at: float) -> None:
        """Take back the proof counted at ``at``, if it is still there."""
        self._take_back(name, (at, source))

    def recent(self, name: str) -> int:
        """How many proofs of ``name`` stand within the window."""
        return len(self._recent(name))


class SharedProof(Protocol):
    """A proof counted in the windows the nodes of a cluster share."""

    def release(self) -> None:
        """Give it back (it was right), without waiting."""


class SharedLimits(Protocol):
    """Windows of proofs and claims shared by the nodes of a cluster, of the sizes a node's :class:`AccountLimits` has."""

    async def reserve_proof(self, limits: "AccountLimits", address: str, name_key: str) -> SharedProof | None:
        """Count a proof; ``None`` when the shared windows cannot be reached (the node's own rule).

        Raises:
            LimitReached: the cluster's budget of the address's group is used, or the name is locked against it.
        """

    async def claim_refusal(self, limits: "AccountLimits", address: str) -> str | None:
        """Why ``address`` may not claim now in the cluster, or ``None`` (counted, or the shared windows cannot be reached)."""


@dataclass(slots=True)
class Reservation:
    """A proof counted before its hash: :meth:`release` it if the proof was right."""

    limits: "AccountLimits"
    source: str
    name_key: str
    address_at: float
    name_at: float
    shared: SharedProof | None = None
    """The same proof counted in the cluster's windows, if it was."""

    def release(self) -> None:
        """Give the proof back to both windows (it was right, so it was no guess), the cluster's too."""
        self.limits.addresses.refund(self.source, self.address_at)
        self.limits.names.refund(self.name_key, self.source, self.name_at)
        if self.shared is not None:
            self.shared.release()


class AccountLimits:
    """The windows of proofs (per address group, per name) and of claims (per address group).

    Args:
        per_address: wrong secrets or passwords allowed from one address within ``address_window_s``.
        per_name: wrong secrets or passwords of one name within ``name_window_s`` before it is locked
            against the sources that sent them.
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
        self.names = NameWindow(per_name, name_window_s, clock)
        self.claims = SlidingWindow(claims_per_address, claim_window_s, clock)

    def reserve_proof(self, address: str, name_key: str) -> Reservation:
        """Count a proof of ``name_key`` from ``address`` before it is hashed.

        Raises:
            LimitReached: the address's group has used its proofs, or the name is locked against it.
        """
        source = address_group(address)
        wait_s = self.addresses.wait_s(source)
        if wait_s > 0:
            raise LimitReached(wait_message("proof", wait_s))
        wait_s = self.names.refusal_s(name_key, source)
        if wait_s > 0:
            raise LimitReached(wait_message("name", wait_s))
        return Reservation(self, source, name_key, self.addresses.reserve(source), self.names.reserve(name_key, source))

    def counts(self, address: str, name_key: str) -> tuple[int, int]:
        """The proofs standing within the windows of ``address``'s group and of ``name_key``."""
        return self.addresses.recent(address_group(address)), self.names.recent(name_key)

    def locked_s(self, name_key: str) -> float:
        """Seconds until ``name_key`` is no longer locked by wrong proofs (0: it is not)."""
        return self.names.locked_s(name_key)

    def claim_refusal(self, address: str) -> str | None:
        """Why ``address`` may not claim a name now (with the seconds to wait), or ``None``; else counts the claim."""
        source = address_group(address)
        wait_s = self.claims.wait_s(source)
        if wait_s > 0:
            return wait_message("claim", wait_s)
        self.claims.count(source)
        return None


_WAIT_MESSAGES = {
    "proof": "too many wrong secrets or passwords from your address: try again in {} s",
    "name": "too many wrong secrets or passwords for this name, yours among them: try again in {} s",
    "claim": "too many names claimed from your address: try again in {} s",
}


def wait_message(kind: str, wait_s: float) -> str:
    """What a player refused by a limit is told: ``kind`` is ``proof`` (the address's proofs), ``name`` (the name is
    locked against the address) or ``claim`` (the address's claims); ``wait_s`` the seconds to wait, rounded up."""
    return _WAIT_MESSAGES[kind].format(max(1, int(wait_s + 0.999)))
