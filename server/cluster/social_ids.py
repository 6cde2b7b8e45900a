"""Challenge and seek ids unique across a cluster: each node takes blocks of them from one Redis counter.

A player's challenges may be held by several nodes and every node lists every
node's seeks, so an id must name one challenge or seek in the whole cluster.
"""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from protocol.messages import MAX_ID

from .ids import BLOCK, RAISE_SCRIPT as _RAISE, REBASE
from .keys import SOCIAL_IDS

__all__ = ["IdBlocks"]

log = logging.getLogger(__name__)

class IdBlocks:
    """Hands out ids from blocks of :data:`server.cluster.ids.BLOCK` taken from the counter ``key``.

    Args:
        redis: the client.
        key: the counter's Redis key.
    """

    def __init__(self, redis: aioredis.Redis, key: str = SOCIAL_IDS) -> None:
        self._redis = redis
        self._key = key
        self._next = MAX_ID + 1  # none yet: :func:`server.core.ids.issuable` refuses it
        self._end = MAX_ID + 1
        self._spare: int | None = None
        self._fetching: asyncio.Task[None] | None = None
        self._raise = redis.register_script(_RAISE)

    async def start(self) -> None:
        """Take the first block.

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        self._next = await self._take()
        self._end = self._next + BLOCK

    async def rebase(self) -> None:
        """Move the counter well past every id handed out (Redis restarted and lost it).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        given = self._end if self._end <= MAX_ID else 0  # no block yet: nothing given to stay clear of
        await self._raise(keys=[self._key], args=[given + REBASE])

    def next(self) -> int:
        """The next id; above :data:`protocol.messages.MAX_ID` while no block could be fetched (the request is refused)."""
        if self._next >= self._end and self._spare is not None:
            self._next, self._end, self._spare = self._spare, self._spare + BLOCK, None
        if self._next >= self._end:
            self._fetch_soon()
            return MAX_ID + 1
        value = self._next
        self._next += 1
        if self._end - self._next <= BLOCK // 2 and self._spare is None:
            self._fetch_soon()
        return value

    def _fetch_soon(self) -> None:
        if self._fetching is None:
            self._fetching = asyncio.get_running_loop().create_task(self._fetch())

    async def _take(self) -> int:
        end = int(await self._redis.incrby(self._key, BLOCK))
        return end - BLOCK + 1

    async def _fetch(self) -> None:
        try:
            self._spare = await self._take()
        except (RedisError, OSError) as exc:
            log.warning("cannot fetch a block of challenge and seek ids: %s", exc)
        finally:
            self._fetching = None
