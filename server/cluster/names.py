"""Names in use, unique across the cluster: each one a Redis key set with ``NX`` and an expiry the holding node renews."""

from __future__ import annotations

import asyncio
import logging
from typing import Iterable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from protocol import Code

from ..core.errors import RequestError
from .background import Background
from .keys import name_key_of

__all__ = ["ClusterNames", "NAME_TTL_S"]

log = logging.getLogger(__name__)

NAME_TTL_S = 30
"""How long a name stays reserved after its node last renewed it, in seconds (a dead node's names free up then)."""


_RENEW = """
local taken = {}
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder == false or holder == ARGV[1] then
    redis.call('SET', key, ARGV[1], 'EX', ARGV[2])
  else
    table.insert(taken, key)
  end
end
return taken
"""
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


class ClusterNames:
    """Reserves this node's names in Redis (:meth:`server.players.sessions.Sessions` calls it when it opens and ends sessions).

    Args:
        redis: the client.
        node: this node's name (the value of its reservations).
    """

    def __init__(self, redis: aioredis.Redis, node: str) -> None:
        self._redis = redis
        self._node = node
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._background = Background(log, "freeing a name key in Redis (it expires)")

    async def reserve(self, key: str, name: str) -> None:
        """Reserve the name whose name key is ``key`` for this node.

        Raises:
            RequestError: ``name_taken`` (a session on another node holds it), ``internal_error`` (Redis cannot be reached).
        """
        await asyncio.sleep(0)  # a bare yield: a request's handling becomes a task (redis-py's timeouts need one; server.net.resuming.Resumed)
        try:
            reserved = await self._redis.set(name_key_of(key), self._node, nx=True, ex=NAME_TTL_S)
        except (RedisError, OSError) as exc:
            log.warning("cannot reserve the name %r in Redis: %s", name, exc)
            raise RequestError(Code.INTERNAL_ERROR, "the server cannot reach the cluster to reserve your name; try again in a moment") from None
        if not reserved:
            raise RequestError(Code.NAME_TAKEN, f"the name {name!r} is already in use")

    async def holder(self, key: str) -> str | None:
        """The node holding the name whose name key is ``key``, or ``None`` (``None`` too when Redis cannot be reached)."""
        await asyncio.sleep(0)  # a bare yield, as in reserve
        try:
            node = await self._redis.get(name_key_of(key))
        except (RedisError, OSError) as exc:
            log.warning("cannot read the name key %r in Redis: %s", key, exc)
            return None
        return None if node is None else bytes(node).decode()

    async def take(self, key: str) -> None:
        """Hold the name whose name key is ``key`` for this node, whoever held it (a session moved here by its token).

        Raises:
            RequestError: ``internal_error`` (Redis cannot be reached).
        """
        await asyncio.sleep(0)  # a bare yield, as in reserve
        try:
            await self._redis.set(name_key_of(key), self._node, ex=NAME_TTL_S)
        except (RedisError, OSError) as exc:
            log.warning("cannot take the name key %r in Redis: %s", key, exc)
            raise RequestError(Code.INTERNAL_ERROR, "the server cannot reach the cluster to take your session over; try again in a moment") from None

    def release(self, key: str) -> None:
        """Free the name ``key`` if this node holds it (in the background; its expiry frees it anyway)."""
        self._background.run(self._released(key))

    async def close(self) -> None:
        """Wait (at most :data:`server.cluster.background.CLOSE_WAIT_S`) for the releases under way: the node's Redis
        client closes next."""
        await self._background.close()

    async def _released(self, key: str) -> None:
        try:
            await self._release(keys=[name_key_of(key)], args=[self._node])
        except (RedisError, OSError) as exc:
            log.info("cannot free the name key %r in Redis (it expires): %s", key, exc)

    async def renew(self, keys: Iterable[str]) -> list[str]:
        """Renew (or take again, after Redis lost them) this node's names; return the keys another node holds now.

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        keys = list(keys)
        if not keys:
            return []
        taken = await self._renew(keys=[name_key_of(key) for key in keys], args=[self._node, NAME_TTL_S])
        prefix = len(name_key_of(""))
        return [bytes(key).decode()[prefix:] for key in taken]
