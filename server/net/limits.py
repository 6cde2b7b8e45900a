"""What one client may cost the server: the limits, and the token buckets behind the request and connection rates.

Every limit has a safe default and a ``parlour serve`` flag; ``docs/SECURITY.md``
lists them with the error code each one answers with. :class:`TokenBucket`
itself is :mod:`protocol.pacing`'s, which the client paces itself with too.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields

from protocol.framing import DEFAULT_MAX_FRAME_BYTES
from protocol.messages import MAX_CHAT_CHARS, MAX_NAME_CHARS
from protocol.pacing import TokenBucket

__all__ = ["ActionBuckets", "AddressBuckets", "Limits", "LimitError", "TokenBucket", "limit_range", "limit_unit"]

MOST_SECONDS = 86_400.0
"""The longest duration a limit may be set to: one day."""
MOST_RATE = 1_000_000.0
"""The highest rate (per second) a limit may be set to."""
MOST_BYTES = 1 << 30
"""The largest byte count a limit may be set to: 1 GiB."""
MOST_COUNT = 1_000_000
"""The largest count a limit may be set to."""


class LimitError(ValueError):
    """A limit was set to a value that cannot work; the message names the limit."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-connection and per-server limits; units are in the names.

    Attributes:
        max_frame_bytes: largest request frame body (``bad_frame``, connection closed).
        max_name_chars: longest player name, at most the protocol's 24 (``bad_name``).
        max_chat_chars: longest chat line, at most the protocol's 500 (``bad_message``).
        max_tables_per_client: seats plus watched tables one session may hold (``too_many_tables``).
        max_tables_per_address: tables created from one IP address whose game is not
            over, those held for departed players included (``too_many_tables``).
        max_connections: open connections in all (``too_many_connections``, closed at once).
        max_connections_per_address: open connections from one IP address (``too_many_connections``).
        connections_per_address_per_s: steady rate of new connections from one IP
            address (token bucket refill; over it: ``too_many_connections``, closed at once).
        connection_burst: new connections one IP address may open at once (bucket size).
        requests_per_s: steady request rate of one connection (token bucket refill).
        request_burst: requests a connection may send at once before it is slowed (bucket size).
        flood_timeout_s: how long a connection may be kept slowed before it is
            closed (``rate_limited``).
        heartbeat_s: the server sends ``heartbeat`` after this long without sending
            anything; clients are asked to ``ping`` as often.
        idle_timeout_s: a connection that sends nothing for this long is closed
            (``timeout``): silent or half-open.
        handshake_timeout_s: a connection must complete ``hello`` within this long (``timeout``).
        stall_timeout_s: a frame whose first bytes arrived must be complete within
            this long (``timeout``): the slowloris defence.
        send_buffer_bytes: outgoing bytes a slow reader may have waiting before it is dropped.
        max_bots: computer seats the server runs at once, at tables whose game is not
            over (``too_many_bots``); the default is 4 per core.
        tells_per_minute: private messages one session may send per minute (``rate_limited``, giving the wait).
        challenges_per_minute: challenges one session may send per minute (``rate_limited``, giving the wait).
        seeks_per_minute: seeks one session may post per minute (``rate_limited``, giving the wait).
        max_challenges_per_player: open challenges one session may have sent (``too_many_challenges``).
        max_seeks_per_player: open seeks one session may have (``too_many_seeks``).
        challenge_expiry_s: an unanswered challenge lapses after this long (``challenge_ended``, ``expired``).
    """

    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    max_name_chars: int = MAX_NAME_CHARS
    max_chat_chars: int = MAX_CHAT_CHARS
    max_tables_per_client: int = 16
    max_tables_per_address: int = 32
    max_connections: int = 1024
    max_connections_per_address: int = 32
    connections_per_address_per_s: float = 2.0
    connection_burst: int = 10
    requests_per_s: float = 50.0
    request_burst: int = 100
    flood_timeout_s: float = 10.0
    heartbeat_s: float = 15.0
    idle_timeout_s: float = 45.0
    handshake_timeout_s: float = 10.0
    stall_timeout_s: float = 10.0
    send_buffer_bytes: int = 512 * 1024
    max_bots: int = 4 * (os.cpu_count() or 1)
    tells_per_minute: int = 10
    challenges_per_minute: int = 5
    seeks_per_minute: int = 5
    max_challenges_per_player: int = 3
    max_seeks_per_player: int = 3
    challenge_expiry_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_name_chars > MAX_NAME_CHARS:
            raise LimitError(f"max_name_chars cannot exceed the protocol's {MAX_NAME_CHARS}, not {self.max_name_chars}")
        if self.max_chat_chars > MAX_CHAT_CHARS:
            raise LimitError(f"max_chat_chars cannot exceed the protocol's {MAX_CHAT_CHARS}, not {self.max_chat_chars}")
        for spec in fields(self):
            value = getattr(self, spec.name)
            if not value > 0:
                raise LimitError(f"{spec.name} must be more than 0, not {value}")
            most = limit_range(spec.name)[1]
            if not math.isfinite(value) or value > most:
                unit = limit_unit(spec.name).replace("a count", "")
                raise LimitError(f"{spec.name} must be at most {most:.15g} {unit}".rstrip() + f", not {value}")
        if self.idle_timeout_s <= self.heartbeat_s:
            raise LimitError(
                f"idle_timeout_s ({self.idle_timeout_s}) must be longer than heartbeat_s ({self.heartbeat_s}),"
                " or healthy idle clients would be dropped"
            )

    @property
    def tick_s(self) -> float:
        """How often the server checks deadlines: fine enough for the shortest timeout."""
        shortest = min(self.heartbeat_s, self.idle_timeout_s, self.handshake_timeout_s, self.stall_timeout_s)
        return min(1.0, max(0.02, shortest / 4))


def limit_unit(field_name: str) -> str:
    """The unit of a :class:`Limits` field, from its name: ``"seconds"``, ``"per second"``,
    ``"bytes"``, ``"characters"`` or ``"a count"``."""
    if field_name.endswith("_per_s"):
        return "per second"
    for suffix, unit in (("_s", "seconds"), ("_bytes", "bytes"), ("_chars", "characters")):
        if field_name.endswith(suffix):
            return unit
    return "a count"


def limit_range(field_name: str) -> tuple[float, float]:
    """The values a :class:`Limits` field may take: more than the first, at most the second.

    By unit: seconds up to :data:`MOST_SECONDS`, rates up to :data:`MOST_RATE`,
    bytes up to :data:`MOST_BYTES`, counts up to :data:`MOST_COUNT`; a name or
    chat length up to the protocol's maximum.
    """
    protocol_most = {"max_name_chars": MAX_NAME_CHARS, "max_chat_chars": MAX_CHAT_CHARS}
    if field_name in protocol_most:
        return 0, protocol_most[field_name]
    most = {"seconds": MOST_SECONDS, "per second": MOST_RATE, "bytes": MOST_BYTES, "characters": MOST_COUNT}
    return 0, most.get(limit_unit(field_name), MOST_COUNT)


class AddressBuckets:
    """A :class:`TokenBucket` per address, for actions refused (not delayed) over the rate.

    An address whose bucket has filled up again is forgotten: a new bucket
    would be the same. So the map only holds addresses active within the last
    ``2 * burst / rate`` seconds or so.

    Args:
        rate: tokens added per second to each bucket (> 0).
        burst: each bucket's size.
    """

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, TokenBucket] = {}
        self._swept_at: float | None = None

    def __len__(self) -> int:
        return len(self._buckets)

    def admit(self, address: str, now: float) -> bool:
        """Spend one of ``address``'s tokens at ``now`` (seconds, monotonic); ``False``: none left, refuse."""
        self._forget_idle(now)
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = self._buckets[address] = TokenBucket(self.rate, self.burst, now)
        return bucket.try_take(now)

    def _forget_idle(self, now: float) -> None:
        """Drop full buckets, at most once per refill time (so admitting stays cheap on average)."""
        if self._swept_at is not None and now - self._swept_at < self.burst / self.rate:
            return
        self._swept_at = now
        for address in [a for a, bucket in self._buckets.items() if bucket.tokens(now) >= self.burst]:
            del self._buckets[address]


class ActionBuckets(AddressBuckets):
    """A :class:`TokenBucket` per key (a session's token) for an action limited per minute: tells, challenges, seeks.

    Args:
        per_minute: actions one key may take in any minute once its burst is spent; also the burst.
    """

    def __init__(self, per_minute: int) -> None:
        super().__init__(per_minute / 60.0, per_minute)

    def wait_s(self, key: str, now: float) -> float:
        """Spend one of ``key``'s tokens at ``now`` (seconds, monotonic) and return 0.0, or, with none left,
        spend nothing and return how many seconds until one is there."""
        if self.admit(key, now):
            return 0.0
        return (1.0 - self._buckets[key].tokens(now)) / self.rate
