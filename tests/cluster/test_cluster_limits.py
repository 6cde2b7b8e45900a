"""The limits of claimed names are the cluster's: wrong secrets and claims spread over two nodes (one real PostgreSQL,
one redis-server) stop at one budget, a name locked by guesses on two nodes still admits its owner, and while Redis is
away each node keeps its own budget."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from protocol import PROTOCOL_VERSION
from server.players import passwords
from server.players.account_limits import AccountLimits

from ..server.conftest import Raw
from .redis_server import RedisServer
from .test_cluster_identity import SECRET, SharedNodes, _gone
from .test_cluster_nodes import until


@pytest.fixture
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)


def _limits(two: SharedNodes, **sizes: Any) -> None:
    for server in two.servers.values():
        server.accounts.limits = AccountLimits(**sizes)


async def _guess(two: SharedNodes, node: str, secret: str, source: str = "127.0.0.1") -> str:
    """One ``hello`` as ann with ``secret`` on ``node`` from ``source``: ``welcome`` or the error's code."""
    reader, writer = await asyncio.open_connection("127.0.0.1", two.servers[node].port, local_addr=(source, 0))
    conn = Raw(reader, writer)
    reply = await conn.request("hello", version=PROTOCOL_VERSION, name="ann", secret=secret)
    await conn.close()
    return str(reply["type"] if reply["type"] == "welcome" else reply["code"])


async def _ann_claimed(two: SharedNodes) -> None:
    """Ann claims her name on node a and leaves; wait until node b knows the name is claimed and free (no proof counted)."""
    ann = await two.connect("a", "ann", claim=True, secret=SECRET)
    await _gone(ann)

    async def unproven_on_b() -> bool:
        _, reply = await two.hello("b", "ann")  # no secret: refused before anything is counted
        return reply.get("code") == "name_claimed"

    await until(unproven_on_b, "node b to refuse ann's name unproven")


async def test_wrong_secrets_spread_over_two_nodes_stop_at_the_clusters_budget(two: SharedNodes, cheap_hashes: None) -> None:
    _limits(two, per_address=4)
    await _ann_claimed(two)
    assert [await _guess(two, node, f"wrong {i} " * 4) for i, node in enumerate("abab")] == ["name_claimed"] * 4
    assert await _guess(two, "b", "wrong again " * 4) == "rate_limited"  # node b saw only two: the cluster saw four
    assert await _guess(two, "a", SECRET) == "rate_limited"  # from there even the right one waits, as on one node


async def test_a_name_locked_by_guesses_on_two_nodes_refuses_the_guessers_and_admits_its_owner(two: SharedNodes, cheap_hashes: None) -> None:
    _limits(two, per_address=100, per_name=2)
    await _ann_claimed(two)
    assert [await _guess(two, node, f"wrong {node} " * 4) for node in "ab"] == ["name_claimed"] * 2
    assert await _guess(two, "a", "wrong again " * 4) == "rate_limited"  # locked against 127.0.0.1, which guessed on both
    assert await _guess(two, "b", SECRET, source="127.0.0.2") == "welcome"  # the owner, from an address that did not guess


async def test_claims_spread_over_two_nodes_stop_at_the_clusters_budget(two: SharedNodes, cheap_hashes: None) -> None:
    _limits(two, claims_per_address=2)
    for node, name in (("a", "c1"), ("b", "c2")):
        _, welcome = await two.hello(node, name, claim=True, secret=SECRET)
        assert welcome["type"] == "welcome" and welcome["claimed"] is True, welcome
    _, refused = await two.hello("a", "c3", claim=True, secret=SECRET)
    assert refused["type"] == "error" and refused["code"] == "rate_limited" and "names claimed" in refused["message"], refused


async def test_while_redis_is_away_each_node_counts_its_own_guesses(
    two: SharedNodes, redis_server: RedisServer, cheap_hashes: None, caplog: pytest.LogCaptureFixture
) -> None:
    _limits(two, per_address=2)
    await _ann_claimed(two)
    redis_server.kill()
    try:
        with caplog.at_level(logging.WARNING, logger="server.cluster.limits"):
            assert [await _guess(two, "a", f"wrong {i} " * 4) for i in range(2)] == ["name_claimed"] * 2
            assert await _guess(two, "a", "wrong again " * 4) == "rate_limited"  # node a's own budget
        assert sum("each node counts its own" in record.getMessage() for record in caplog.records) == 1  # once per outage
    finally:
        redis_server.start()
