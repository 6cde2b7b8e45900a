"""The limits of claimed names counted cluster-wide: wrong proofs per address group and per name, claims per address group.

Each node keeps its own windows (:class:`server.players.account_limits.AccountLimits`);
a node of a cluster also counts every proof and claim in Redis, in sliding windows of
the same sizes shared by every node, so an attacker who connects to every node gets
the cluster's budget, not one per node. A window is a sorted set of its events scored
by Redis's own clock (one clock for all nodes), trimmed to the window and expiring
with it; a Lua script checks and counts in one step, so guesses sent to several nodes
at once cannot all slip past a limit. While Redis cannot be reached, the node's own
windows are the only ones (logged once per outage), as on a server alone.

Keys: ``parlour:limit:proofs:SOURCE``, ``parlour:limit:name:KEY`` (members
``SOURCE|id``: a locked name refuses only the sources that guessed at it) and
``parlour:limit:claims:SOURCE``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any, Coroutine

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from ..net.address_groups import address_group
from ..players.account_limits import SOURCES_PER_NAME, AccountLimits, LimitReached, wait_message
from .background import Background

__all__ = ["ClusterLimits", "ClusterProof"]

log = logging.getLogger(__name__)

_NOW = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "

_WINDOW = """
local function wait_ms(key, most, window, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) < most then return 0 end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now)
end
"""

_PROOF = _WINDOW + _NOW + """
local amost, awindow, nmost, nwindow, keep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[7])
local wait = wait_ms(KEYS[1], amost, awindow, now)
if wait > 0 then return {1, wait} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - nwindow)
local events = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
local n = #events / 2
if n >= nmost then
  local locked = math.max(1, tonumber(events[(n - nmost) * 2 + 2]) + nwindow - now)
  local prefix = ARGV[5] .. '|'
  for i = 1, #events, 2 do
    if string.sub(events[i], 1, #prefix) == prefix then return {2, locked} end
  end
end
redis.call('ZADD', KEYS[1], now, ARGV[6])
redis.call('PEXPIRE', KEYS[1], awindow)
redis.call('ZADD', KEYS[2], now, ARGV[5] .. '|' .. ARGV[6])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(keep + 1))
redis.call('PEXPIRE', KEYS[2], nwindow)
return {0, 0}
"""
"""KEYS: the source's proofs, the name's proofs; ARGV: per address, its window (ms), per name, its window (ms), the source,
an id, the most events a name keeps. Returns ``{0, 0}`` (counted), ``{1, ms}`` (the source must wait) or ``{2, ms}`` (the
name is locked against the source)."""

_CLAIM = _WINDOW + _NOW + """
local wait = wait_ms(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), now)
if wait > 0 then return wait end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 0
"""
"""KEYS: the source's claims; ARGV: claims allowed, the window (ms), an id. Returns 0 (counted) or the ms to wait."""


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class ClusterProof:
    """A proof counted in Redis: :meth:`release` gives it back (it was right), in the background."""

    def __init__(self, limits: "ClusterLimits", source: str, name_key: str, event: str) -> None:
        self._limits = limits
        self._keys = (f"parlour:limit:proofs:{source}", f"parlour:limit:name:{name_key}")
        self._members = (event, f"{source}|{event}")

    def release(self) -> None:
        """Take the proof back out of both windows (a failure is logged: the proof then counts until its window passes)."""
        self._limits.background(self._refund())

    async def _refund(self) -> None:
        pipe = self._limits.redis.pipeline(transaction=False)
        for key, member in zip(self._keys, self._members):
            pipe.zrem(key, member)
        await pipe.execute()


class ClusterLimits:
    """Counts a node's proofs and claims in Redis too (see the module); :class:`server.players.accounts.Accounts` calls it.

    Args:
        redis: the cluster's client.
    """

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._proof = redis.register_script(_PROOF)
        self._claim = redis.register_script(_CLAIM)
        self._away = False  # Redis could not be reached at the last count (logged once)
        self._background = Background(log, "giving a right proof back in Redis (it counts until its window passes)")

    async def reserve_proof(self, limits: AccountLimits, address: str, name_key: str) -> ClusterProof | None:
        """Count a proof of ``name_key`` from ``address`` cluster-wide, with ``limits``' window sizes.

        Returns:
            The proof, to release if it was right; ``None`` while Redis cannot be reached (the node's own windows rule).

        Raises:
            LimitReached: the address's group has used the cluster's proofs, or the name is locked against it.
        """
        source, event = address_group(address), secrets.token_hex(6)
        args = [limits.addresses.most, _ms(limits.addresses.window_s), limits.names.most, _ms(limits.names.window_s), source, event, limits.names.most + SOURCES_PER_NAME]
        found = await self._run(self._proof, [f"parlour:limit:proofs:{source}", f"parlour:limit:name:{name_key}"], args)
        if found is None:
            return None
        refused, wait_ms = int(found[0]), int(found[1])
        if refused:
            raise LimitReached(wait_message("proof" if refused == 1 else "name", wait_ms / 1000))
        return ClusterProof(self, source, name_key, event)

    async def claim_refusal(self, limits: AccountLimits, address: str) -> str | None:
        """Why ``address`` may not claim a name now, counted cluster-wide with ``limits``' window, or ``None`` (the claim is counted).

        ``None`` too while Redis cannot be reached (the node's own window rules).
        """
        source = address_group(address)
        args = [limits.claims.most, _ms(limits.claims.window_s), secrets.token_hex(6)]
        wait_ms = await self._run(self._claim, [f"parlour:limit:claims:{source}"], args)
        return wait_message("claim", int(wait_ms) / 1000) if wait_ms else None

    async def _run(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """The script's answer, or ``None`` while Redis cannot be reached."""
        await asyncio.sleep(0)  # a bare yield: redis-py's timeouts need a task (as in server.cluster.names)
        try:
            found = await script(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            if not self._away:
                log.warning("cannot count proofs and claims in Redis (%s): each node counts its own until it is back", exc)
            self._away = True
            return None
        if self._away:
            log.info("counting proofs and claims in Redis again")
            self._away = False
        return found

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task, logging (not raising) a Redis failure."""
        self._background.run(self._quietly(work))

    async def close(self) -> None:
        """Wait (at most :data:`server.cluster.background.CLOSE_WAIT_S`) for the refunds under way: the node's Redis
        client closes next."""
        await self._background.close()

    async def _quietly(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except (RedisError, OSError) as exc:
            log.info("cannot give a right proof back in Redis (it counts until its window passes): %s", exc)
