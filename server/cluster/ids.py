"""Table ids unique across a cluster: each node takes blocks of ids from one Redis counter."""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from protocol.messages import MAX_ID

from ..play.authority import Authority
from .keys import TABLE_IDS

__all__ = ["TableIds", "BLOCK", "REBASE"]

log = logging.getLogger(__name__)

BLOCK = 1000
"""Table ids a node takes at once; the next block is fetched when half of one is used."""
REBASE = 1_000_000
"""How far past the highest id a node knows the counter is moved after Redis lost it (a restart without persistence)."""

RAISE_SCRIPT = """
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if now < floor then redis.call('SET', KEYS[1], floor) end
return 0
"""
"""The Lua script that raises a Redis counter (KEYS[1]) to at least ARGV[1], never lowers it (table and social ids)."""
_RAISE = RAISE_SCRIPT


class TableIds:
    """Feeds ``authority.next_table_id`` from blocks of the cluster's counter.

    Args:
        redis: the client.
        authority: its ``next_table_id`` is set here; its ``table_id_taken`` hook calls :meth:`taken`.
    """

    def __init__(self, redis: aioredis.Redis, authority: Authority) -> None:
        self._redis = redis
        self._authority = authority
        self._end = 0  # the block in use is [.., _end)
        self._next_block: int | None = None
        self._fetching: asyncio.Task[None] | None = None
        self._raise = redis.register_script(_RAISE)
        authority.table_id_taken = self.taken

    async def start(self, known_highest: int) -> None:
        """Take the first block, above every id this node knows (``known_highest``).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        await self._raise(keys=[TABLE_IDS], args=[known_highest])
        start = await self._take()
        self._authority.next_table_id, self._end = start, start + BLOCK

    async def rebase(self, known_highest: int) -> None:
        """Move the counter well past ``known_highest`` (Redis restarted and lost it), so no block handed out again overlaps an old one."""
        await self._raise(keys=[TABLE_IDS], args=[max(known_highest, self._end) + REBASE])

    async def refill(self) -> None:
        """Fetch a block now if this node ran out of ids (a fetch failed while Redis was away)."""
        if self._authority.next_table_id > MAX_ID and self._fetching is None:
            await self._fetch()

    async def _take(self) -> int:
        end = int(await self._redis.incrby(TABLE_IDS, BLOCK))
        return end - BLOCK + 1

    def taken(self) -> None:
        """``next_table_id`` moved on: fetch the next block at half way; move into it at the end of this one."""
        authority = self._authority
        if self._end - authority.next_table_id <= BLOCK // 2 and self._next_block is None and self._fetching is None:
            self._fetching = asyncio.get_running_loop().create_task(self._fetch())
        if authority.next_table_id >= self._end:
            if self._next_block is None:
                log.error("no block of table ids could be fetched from Redis: new tables are refused until one is")
                authority.next_table_id = MAX_ID + 1  # issuable() refuses it with internal_error
                if self._fetching is None:
                    self._fetching = asyncio.get_running_loop().create_task(self._fetch())
                return
            authority.next_table_id, self._end, self._next_block = self._next_block, self._next_block + BLOCK, None

    async def _fetch(self) -> None:
        try:
            start = await self._take()
        except (RedisError, OSError) as exc:
            log.warning("cannot fetch a block of table ids: %s", exc)
            return
        finally:
            self._fetching = None
        if self._authority.next_table_id > MAX_ID:  # ran out meanwhile
            self._authority.next_table_id, self._end = start, start + BLOCK
        else:
            self._next_block = start
