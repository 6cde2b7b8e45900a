"""Ids unique across a cluster (:mod:`server.cluster.ids`), on a real redis-server: one block keeper serves tables, challenges and seeks."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import pytest
import redis.asyncio as aioredis

from protocol.messages import MAX_ID
from server.cluster.ids import BLOCK, NONE_LEFT, REBASE, IdBlocks
from server.cluster.keys import SOCIAL_IDS, TABLE_IDS

from .redis_server import RedisServer
from .test_cluster_nodes import Nodes, until


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url, socket_connect_timeout=1.0)
    yield client
    await client.aclose()


async def settled(blocks: IdBlocks) -> None:
    """Wait until the background fetch ``blocks`` started (if any) is over."""
    await until(lambda: _no_fetch(blocks), "the block fetch to end")


async def _no_fetch(blocks: IdBlocks) -> bool:
    return blocks._fetching is None


async def test_two_nodes_take_disjoint_blocks_and_move_on_to_the_next_block_without_a_gap(redis: aioredis.Redis) -> None:
    arrivals: list[str] = []
    first = IdBlocks(redis, SOCIAL_IDS, "challenge and seek ids", arrived=lambda: arrivals.append("first"))
    second = IdBlocks(redis, SOCIAL_IDS, "challenge and seek ids")
    assert first.next() == NONE_LEFT  # not started: refused
    await settled(first)  # that refusal fetched a block in the background
    assert arrivals == ["first"]
    await second.start()
    handed = [first.next() for _ in range(BLOCK // 2)]
    await settled(first)  # half the block is used: the next one was fetched
    assert arrivals == ["first"] * 2
    handed += [first.next() for _ in range(BLOCK)]
    others = [second.next() for _ in range(BLOCK)]
    assert handed == list(range(1, BLOCK + 1)) + list(range(2 * BLOCK + 1, 2 * BLOCK + BLOCK // 2 + 1))
    assert others == list(range(BLOCK + 1, 2 * BLOCK + 1))
    await settled(first)
    await settled(second)


async def test_ids_refused_while_redis_is_away_come_back_after_it_restarts_past_every_id_given(
    redis: aioredis.Redis, redis_server: RedisServer
) -> None:
    blocks = IdBlocks(redis, TABLE_IDS, "table ids")
    await blocks.start(floor=41)
    assert blocks.peek() == 42
    redis_server.kill()
    handed = [blocks.next() for _ in range(BLOCK)]
    await settled(blocks)  # the fetch at half way failed
    assert handed == list(range(42, 42 + BLOCK))
    assert blocks.next() == NONE_LEFT and blocks.peek() == NONE_LEFT
    await settled(blocks)  # so did the fetch that refusal started
    redis_server.start()  # empty: the counter is lost
    await blocks.rebase(floor=7)
    await blocks.refill()
    assert blocks.next() == 42 + BLOCK + REBASE + 1


async def test_a_node_out_of_table_ids_while_redis_is_away_takes_a_new_block_once_it_is_back(
    redis_server: RedisServer, postgres_url: str
) -> None:
    nodes = Nodes(redis_server.url, postgres_url)
    try:
        server = await nodes.start("a")
        authority = server.authority
        assert server.cluster is not None
        first = authority.next_table_id
        redis_server.kill()
        for _ in range(BLOCK):
            authority._took_table_id()  # as a new table does
        await settled(server.cluster.ids.blocks)
        assert authority.next_table_id > MAX_ID  # new tables are refused
        redis_server.start()  # empty: the node moves the counter past the ids it gave, not past "none left" (MAX_ID + 1)
        await until(lambda: _below(authority.next_table_id, MAX_ID), "a new block of table ids")
        assert authority.next_table_id > first + BLOCK + REBASE
    finally:
        await nodes.close()


async def _below(value: int, limit: int) -> bool:
    await asyncio.sleep(0)
    return value <= limit
