"""Reading every other live node's hash (:func:`server.cluster.live.live_hashes`) on a real redis-server."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.cluster.keys import NODES, node_key, players_key, seeks_key
from server.cluster.live import live_hashes

from .redis_server import RedisServer


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url, socket_connect_timeout=1.0)
    yield client
    await client.aclose()


async def test_the_other_live_nodes_hashes_are_read_by_node_name_and_a_gone_node_is_left_out(redis: aioredis.Redis) -> None:
    await redis.sadd(NODES, "own", "carol", "bert", "alma")
    for node in ("own", "carol", "alma"):  # bert's heartbeat expired: it went without leaving
        await redis.set(node_key(node), "run:1")
    await redis.hset(players_key("alma"), mapping={"ann": b"line-a"})
    await redis.hset(players_key("bert"), mapping={"bob": b"line-b"})
    await redis.hset(players_key("own"), mapping={"me": b"line-o"})
    await redis.hset(seeks_key("carol"), mapping={"7": b"seek"})
    assert await live_hashes(redis, "own", players_key) == [("alma", {b"ann": b"line-a"}), ("carol", {})]
    assert await live_hashes(redis, "own", seeks_key) == [("alma", {}), ("carol", {b"7": b"seek"})]
    assert await live_hashes(redis, "alma", seeks_key) == [("carol", {b"7": b"seek"}), ("own", {})]


async def test_no_other_node_reads_nothing_and_redis_away_is_an_error(redis: aioredis.Redis, redis_server: RedisServer) -> None:
    await redis.sadd(NODES, "own")
    await redis.set(node_key("own"), "run:1")
    assert await live_hashes(redis, "own", players_key) == []
    redis_server.kill()
    with pytest.raises((RedisError, OSError)):
        await live_hashes(redis, "own", players_key)
