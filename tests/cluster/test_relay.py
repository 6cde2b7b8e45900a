"""Playing and watching a table held by another node, through the relay, on a real redis-server.

Ann plays on node a, which holds the table; Bob plays it from node b and
Carol watches it from node c. Every frame reaches each of them as node a
made it for them: Bob gets his seat's view (with his legal moves), Carol the
spectators' view (never anyone's legal moves).
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest

from ..server.conftest import Raw
from .redis_server import RedisServer
from .test_cluster_nodes import Nodes, _listed_all, listed, until


@pytest.fixture
async def three(redis_server: RedisServer, postgres_url: str) -> AsyncIterator[Nodes]:
    cluster = Nodes(redis_server.url, postgres_url)
    for name in ("a", "b", "c"):
        await cluster.start(name)
    yield cluster
    await cluster.close()


async def play_out(players: list[Raw], watchers: list[Raw], table: int, seen: dict[Raw, list[dict[str, Any]]]) -> int:
    """Play each player's first legal move when its view offers one, until ``game_over``; return the moves played."""
    latest: dict[Raw, dict[str, Any] | None] = {player: None for player in players}
    over: set[Raw] = set()
    moves = 0
    for _ in range(2000):
        for conn in (*players, *watchers):
            for push in await conn.sync():
                seen[conn].append(push)
                if push.get("table") != table:
                    continue
                if push["type"] == "game_over":
                    over.add(conn)
                if conn in latest and isinstance(push.get("view"), dict):
                    latest[conn] = push["view"]
        if len(over) == len(players) + len(watchers):
            return moves
        mover = next((player for player in players if (latest[player] or {}).get("legal_moves")), None)
        if mover is None:
            await asyncio.sleep(0.02)
            continue
        move = latest[mover]["legal_moves"][0]  # type: ignore[index]
        latest[mover] = None
        reply = await mover.request("move", table=table, move=move)
        assert reply["type"] == "ok", reply
        moves += 1
    raise AssertionError("the game did not end")


async def test_a_whole_game_between_nodes_with_a_spectator_on_a_third(three: Nodes) -> None:
    ann, bob, carol = await three.connect("a", "ann"), await three.connect("b", "bob"), await three.connect("c", "carol")
    table = (await ann.request("create_table", game="nimble", seat=0))["table"]["id"]
    for conn in (bob, carol):
        await until(lambda conn=conn: _listed_all(conn, {table}), "the other nodes to list the table")  # type: ignore[misc]
    joined = await bob.request("join_table", table=table, seat=1)
    assert joined["type"] == "table_joined" and joined["seat"] == 1, joined
    watching = await carol.request("watch_table", table=table)
    assert watching["type"] == "table_joined" and watching.get("seat") is None, watching
    seen: dict[Raw, list[dict[str, Any]]] = {ann: [], bob: [], carol: []}
    moves = await play_out([ann, bob], [carol], table, seen)
    assert moves >= 2
    assert any(p["type"] == "moved" and p.get("seat") == 0 for p in seen[bob])  # bob saw ann's moves, relayed
    assert any(p["type"] == "moved" and p.get("seat") == 1 for p in seen[ann])  # and ann bob's
    spectated = [p for p in seen[carol] if p.get("table") == table and isinstance(p.get("view"), dict)]
    assert len([p for p in spectated if p["type"] == "moved"]) == moves
    assert all("legal_moves" not in p["view"] for p in spectated)  # nobody's legal moves reach the spectator
    said = await bob.request("say", table=table, text="good game")
    assert said["type"] == "ok", said
    await until(lambda: _chat(ann, "good game"), "ann to read bob's chat")


async def _chat(conn: Raw, text: str) -> bool:
    return any(push["type"] == "chat" and push.get("text") == text for push in await conn.sync())


async def test_a_relayed_player_who_disconnects_keeps_the_seat_for_the_grace_period_on_the_tables_node(three: Nodes) -> None:
    ann, bob = await three.connect("a", "ann"), await three.connect("b", "bob")
    table = (await ann.request("create_table", game="nimble", seat=0))["table"]["id"]
    await until(lambda: _listed_all(bob, {table}), "node b to list the table")
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await bob.close()

    async def ann_hears_bob_away() -> bool:
        return any(push["type"] == "player_away" and push.get("seat") == 1 for push in await ann.sync())

    await until(ann_hears_bob_away, "node a to hold bob's seat as away")
    line = (await listed(ann))[table]
    assert line["seats"] == ["ann", "bob"] and line["status"] == "playing"  # the seat is held, the game not forfeited
