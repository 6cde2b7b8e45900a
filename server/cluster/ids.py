"""Ids unique across a cluster: each node takes blocks of them from one Redis counter per kind.

Table ids come from :data:`server.cluster.keys.TABLE_IDS` (:class:`TableIds`);
challenge and seek ids from :data:`server.cluster.keys.SOCIAL_IDS` (a player's
challenges may be held by several nodes and every node lists every node's
seeks, so an id must name one challenge or seek in the whole cluster).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from protocol.messages import MAX_ID

from ..play.authority import Authority
from .keys import TABLE_IDS

__all__ = ["IdBlocks", "TableIds", "BLOCK", "REBASE", "RAISE_SCRIPT"]

log = logging.getLogger(__name__)

BLOCK = 1000
"""Ids a node takes at once; the next block is fetched when half of one is used."""
REBASE = 1_000_000
"""How far past the highest id a node knows a counter is moved after Redis lost it (a restart without persistence)."""
NONE_LEFT = MAX_ID + 1
"""What :meth:`IdBlocks.next` and :meth:`IdBlocks.peek` say while no block is at hand: :func:`server.core.ids.issuable` refuses it."""

RAISE_SCRIPT = """
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if now < floor then redis.call('SET', KEYS[1], floor) end
return 0
"""
"""The Lua script that raises a Redis counter (KEYS[1]) to at least ARGV[1], never lowers it."""


class IdBlocks:
    """Hands out the ids of the counter ``key`` from blocks of :data:`BLOCK` taken from it.

    The next block is fetched in the background once half of the one in use is
    handed out; while none could be fetched (Redis away) :meth:`next` says
    :data:`NONE_LEFT` and starts another fetch.

    Args:
        redis: the client.
        key: the counter's Redis key.
        what: the ids' name in log lines (``"table ids"``).
        arrived: called after a block fetched in the background landed (``None``: nothing to tell).
    """

    def __init__(self, redis: aioredis.Redis, key: str, what: str, arrived: Callable[[], None] | None = None) -> None:
        self._redis = redis
        self._key = key
        self._what = what
        self._arrived = arrived
        self._next = NONE_LEFT  # the block in use is [_next, _end)
        self._end = NONE_LEFT
        self._spare: int | None = None  # the first id of the block fetched for after this one
        self._fetching: asyncio.Task[None] | None = None
        self._raise = redis.register_script(RAISE_SCRIPT)

    async def start(self, floor: int = 0) -> None:
        """Take the first block, above ``floor`` (the highest id this node already knows, if any).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        if floor > 0:
            await self._raise(keys=[self._key], args=[floor])
        self._next = await self._take()
        self._end = self._next + BLOCK

    async def rebase(self, floor: int = 0) -> None:
        """Move the counter :data:`REBASE` past every id handed out and ``floor`` (Redis restarted and lost it).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        given = self._end if self._end <= MAX_ID else 0  # no block yet: nothing given to stay clear of
        await self._raise(keys=[self._key], args=[max(floor, given) + REBASE])

    async def refill(self) -> None:
        """Fetch a block now if none is at hand and no fetch is under way (one failed while Redis was away).

        A fetch that fails again is logged and changes nothing.
        """
        if self.peek() > MAX_ID and self._fetching is None:
            await self._fetch()

    def peek(self) -> int:
        """The id :meth:`next` would hand out now, without handing it out; :data:`NONE_LEFT` while no block is at hand."""
        if self._next >= self._end and self._spare is not None:
            self._next, self._end, self._spare = self._spare, self._spare + BLOCK, None
        return self._next if self._next < self._end else NONE_LEFT

    def next(self) -> int:
        """Hand out the next id; :data:`NONE_LEFT` while no block could be fetched (the request is refused)."""
        value = self.peek()
        if value > MAX_ID:
            self._fetch_soon()
            return NONE_LEFT
        self._next += 1
        if self._end - self._next <= BLOCK // 2 and self._spare is None:
            if self._next >= self._end:
                log.error("no block of %s could be fetched from Redis: new ones are refused until one is", self._what)
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
            log.warning("cannot fetch a block of %s: %s", self._what, exc)
            return
        finally:
            self._fetching = None
        if self._arrived is not None:
            self._arrived()


class TableIds:
    """Feeds ``authority.next_table_id`` from :class:`IdBlocks` of the cluster's table id counter.

    Args:
        redis: the client.
        authority: its ``next_table_id`` is set here; its ``table_id_taken`` hook calls :meth:`taken`.
    """

    def __init__(self, redis: aioredis.Redis, authority: Authority) -> None:
        self._authority = authority
        self.blocks = IdBlocks(redis, TABLE_IDS, "table ids", arrived=self._show)
        authority.table_id_taken = self.taken

    async def start(self, known_highest: int) -> None:
        """Take the first block, above every id this node knows (``known_highest``).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        await self.blocks.start(known_highest)
        self._show()

    async def rebase(self, known_highest: int) -> None:
        """Move the counter well past ``known_highest`` (Redis restarted and lost it), so no block handed out again overlaps an old one.

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        await self.blocks.rebase(known_highest)

    async def refill(self) -> None:
        """Fetch a block now if this node ran out of ids (a fetch failed while Redis was away)."""
        await self.blocks.refill()

    def taken(self) -> None:
        """``next_table_id`` was given to a table: hand it out of the block, and show the authority the next one."""
        self.blocks.next()
        self._show()

    def _show(self) -> None:
        self._authority.next_table_id = self.blocks.peek()
