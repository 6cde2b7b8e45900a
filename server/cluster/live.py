"""What every other live node of a cluster keeps in Redis: one hash per node, read in one round trip."""

from __future__ import annotations

import asyncio
from typing import Callable

import redis.asyncio as aioredis

from .keys import NODES, node_key

__all__ = ["live_hashes"]


async def live_hashes(redis: aioredis.Redis, own: str, key_of: Callable[[str], str]) -> list[tuple[str, dict[bytes, bytes]]]:
    """The hash ``key_of(node)`` of every node but ``own`` whose heartbeat (:func:`server.cluster.keys.node_key`) stands, by node name.

    A node gone without leaving (its heartbeat expired) is left out: what it
    kept went with it.

    Raises:
        RedisError, OSError: Redis cannot be reached.
    """
    await asyncio.sleep(0)  # a bare yield: a request's handling becomes a task (redis-py's timeouts need one; server.net.resuming.Resumed)
    nodes = sorted(node for node in (bytes(member).decode() for member in await redis.smembers(NODES)) if node != own)
    if not nodes:
        return []
    pipe = redis.pipeline(transaction=False)
    for node in nodes:
        pipe.exists(node_key(node))
        pipe.hgetall(key_of(node))
    replies = await pipe.execute()
    return [(node, fields) for node, alive, fields in zip(nodes, replies[::2], replies[1::2]) if alive]
