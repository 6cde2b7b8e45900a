"""Challenges and seeks between players on different nodes (in-process servers on real sockets, one real redis-server).

A challenge is held by the challenged player's node: the challenger's node
relays the ``challenge`` there, so the challenged player gets it exactly as a
local one, and an accepted challenge's table is created there (the challenger
plays it through the relay). A seek is held by its player's node; a new seek
that matches another node's seek is sent to that node to be paired, which
pairs each seek once however many nodes ask at the same moment.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, AsyncIterator

import pytest

from server.app import Server
from server.net.limits import Limits

from ..server.conftest import Raw
from .redis_server import RedisServer
from .test_cluster_nodes import Nodes, _listed_all, until


class SocialNodes(Nodes):
    """:class:`Nodes` with limits of the test's choosing."""

    def __init__(self, redis_url: str, db_url: str, limits: Limits) -> None:
        super().__init__(redis_url, db_url)
        self.limits = limits

    async def start(self, node: str) -> Server:
        server = await super().start(node)
        server.config = dataclasses.replace(server.config, limits=self.limits)  # read afresh by every challenge and seek
        return server


LIMITS = dataclasses.replace(Limits(), challenges_per_minute=60, seeks_per_minute=60)


@pytest.fixture
async def three(redis_server: RedisServer, postgres_url: str) -> AsyncIterator[SocialNodes]:
    cluster = SocialNodes(redis_server.url, postgres_url, LIMITS)
    for name in ("a", "b", "c"):
        await cluster.start(name)
    yield cluster
    await cluster.close()


async def pushed(conn: Raw, kind: str, timeout_s: float = 8.0) -> dict[str, Any]:
    """The next push of type ``kind`` on ``conn`` (earlier frames of other types are dropped)."""
    while True:
        frame = await conn.recv(timeout_s)
        if frame["type"] == kind:
            return frame


async def test_a_challenge_to_a_player_on_another_node_is_received_accepted_and_played_there(three: SocialNodes) -> None:
    ann, bob = await three.connect("a", "ann"), await three.connect("b", "bob")
    sent = await ann.request("challenge", name="BOB", game="nimble", seat=0)
    assert sent["type"] == "challenge_sent", sent
    received = await pushed(bob, "challenge_received")
    assert received["challenge"]["id"] == sent["challenge"]["id"] and received["challenge"]["challenger"] == "ann"
    accepted = await bob.request("accept_challenge", challenge=received["challenge"]["id"])
    assert accepted["type"] == "ok", accepted
    paired_ann, paired_bob = await pushed(ann, "paired"), await pushed(bob, "paired")
    table = paired_ann["table"]["id"]
    assert paired_bob["table"]["id"] == table and (paired_ann["seat"], paired_bob["seat"]) == (0, 1)
    assert table in three.servers["b"].tables  # held by the challenged player's node
    move = paired_ann["view"]["legal_moves"][0]
    played = await ann.request("move", table=table, move=move)  # at once: node a relays it without waiting for its lobby
    assert played["type"] == "ok", played
    moved = await pushed(bob, "moved")
    assert moved["table"] == table and moved["seat"] == 0


async def test_declined_withdrawn_and_expired_challenges_across_nodes_end_for_both(redis_server: RedisServer, postgres_url: str) -> None:
    cluster = SocialNodes(redis_server.url, postgres_url, dataclasses.replace(LIMITS, challenge_expiry_s=0.5))
    try:
        for name in ("a", "b"):
            await cluster.start(name)
        ann, bob = await cluster.connect("a", "ann"), await cluster.connect("b", "bob")
        first = (await ann.request("challenge", name="bob", game="nimble"))["challenge"]["id"]
        assert (await pushed(bob, "challenge_received"))["challenge"]["id"] == first
        assert (await bob.request("decline_challenge", challenge=first))["type"] == "ok"
        assert (await pushed(ann, "challenge_ended")) == {"type": "challenge_ended", "challenge": first, "reason": "declined"}
        second = (await ann.request("challenge", name="bob", game="nimble"))["challenge"]["id"]
        assert second != first
        await pushed(bob, "challenge_received")
        withdrawn = await ann.request("withdraw_challenge", challenge=second)  # node a routes it to node b, which holds it
        assert withdrawn["type"] == "ok", withdrawn
        assert (await pushed(bob, "challenge_ended"))["reason"] == "withdrawn"
        third = (await ann.request("challenge", name="bob", game="nimble"))["challenge"]["id"]
        assert (await pushed(ann, "challenge_ended", 5.0)) == {"type": "challenge_ended", "challenge": third, "reason": "expired"}
        assert (await pushed(bob, "challenge_ended"))["challenge"] == third
        missing = await ann.request("withdraw_challenge", challenge=third)
        assert missing["type"] == "error" and missing["code"] == "no_such_challenge", missing
    finally:
        await cluster.close()


async def test_a_challenge_ends_when_either_player_on_another_node_leaves(three: SocialNodes) -> None:
    ann, bob, carol = await three.connect("a", "ann"), await three.connect("b", "bob"), await three.connect("c", "carol")
    to_bob = (await ann.request("challenge", name="bob", game="nimble"))["challenge"]["id"]
    await pushed(bob, "challenge_received")
    await bob.close()  # no seat: the session ends at once, and its challenges with it
    assert (await pushed(ann, "challenge_ended")) == {"type": "challenge_ended", "challenge": to_bob, "reason": "gone"}
    from_ann = (await ann.request("challenge", name="carol", game="nimble"))["challenge"]["id"]
    await pushed(carol, "challenge_received")
    await ann.close()
    assert (await pushed(carol, "challenge_ended")) == {"type": "challenge_ended", "challenge": from_ann, "reason": "gone"}


async def test_a_player_who_mutes_the_challenger_on_another_node_is_not_challenged(three: SocialNodes) -> None:
    ann, bob = await three.connect("a", "ann"), await three.connect("b", "bob")
    assert (await bob.request("mute", name="ann"))["type"] == "ok"
    refused = await ann.request("challenge", name="bob", game="nimble")
    assert refused["type"] == "error" and refused["code"] == "muted", refused
    assert not [push for push in await bob.sync() if push["type"] == "challenge_received"]
    nobody = await ann.request("challenge", name="nobody", game="nimble")
    assert nobody["type"] == "error" and nobody["code"] == "no_such_player", nobody


async def test_every_nodes_seeks_are_listed_and_pushed_on_every_node(three: SocialNodes) -> None:
    ann, bob, carol = await three.connect("a", "ann"), await three.connect("b", "bob"), await three.connect("c", "carol")
    assert (await carol.request("watch_lobby"))["type"] == "ok"
    on_a = (await ann.request("seek", game="nimble"))["seek"]["id"]
    on_b = (await bob.request("seek", game="othello", options={"size": 6}))["seek"]["id"]
    assert on_a != on_b  # seek ids are unique across the nodes
    added = {(await pushed(carol, "seek_added"))["seek"]["id"] for _ in range(2)}
    assert added == {on_a, on_b}

    async def listed_on_c() -> list[dict[str, Any]] | None:
        seeks = (await carol.request("list_seeks"))["seeks"]
        return seeks if {seek["id"] for seek in seeks} == {on_a, on_b} else None

    seeks = await until(listed_on_c, "node c to list both seeks")
    assert [seek["name"] for seek in seeks] == (["ann", "bob"] if on_a < on_b else ["bob", "ann"])
    first_page = await carol.request("list_seeks", limit=1)
    assert len(first_page["seeks"]) == 1 and first_page["next"] == min(on_a, on_b)
    assert (await ann.request("unseek"))["type"] == "ok"
    assert (await pushed(carol, "seek_removed"))["seek"] == on_a
    await until(lambda: _listed_ids(carol, {on_b}), "node c to list bob's seek only")


async def _listed_ids(conn: Raw, ids: set[int]) -> bool:
    return {seek["id"] for seek in (await conn.request("list_seeks"))["seeks"]} == ids


async def test_a_seek_pairs_with_a_matching_seek_on_another_node(three: SocialNodes) -> None:
    ann, bob = await three.connect("a", "ann"), await three.connect("b", "bob")
    posted = await ann.request("seek", game="nimble", time_control="5+0")
    assert posted["type"] == "seek_posted" and not posted.get("paired"), posted
    other = await ann.request("seek", game="othello")
    assert other["type"] == "seek_posted"
    await until(lambda: _listed_ids(bob, {posted["seek"]["id"], other["seek"]["id"]}), "node b to see ann's seeks")
    paired = await bob.request("seek", game="nimble", time_control="5+0")
    assert paired["type"] == "seek_posted" and paired["paired"] is True, paired
    on_ann, on_bob = await pushed(ann, "paired"), await pushed(bob, "paired")
    assert on_ann["table"]["id"] == on_bob["table"]["id"] and on_ann["seek"] == posted["seek"]["id"]
    assert {on_ann["seat"], on_bob["seat"]} == {0, 1}
    assert on_ann["table"]["id"] in three.servers["a"].tables  # the matched seek's node holds the table
    await until(lambda: _listed_ids(bob, set()), "ann's other seek to vanish: she is seated")
    mover, view = (ann, on_ann) if on_ann["view"].get("legal_moves") else (bob, on_bob)
    played = await mover.request("move", table=on_ann["table"]["id"], move=view["view"]["legal_moves"][0])
    assert played["type"] == "ok", played


async def test_two_players_on_two_nodes_taking_one_seek_at_once_pair_it_once(three: SocialNodes) -> None:
    ann, bob, carol = await three.connect("a", "ann"), await three.connect("b", "bob"), await three.connect("c", "carol")
    seek = (await ann.request("seek", game="nimble"))["seek"]["id"]
    for conn in (bob, carol):
        await until(lambda conn=conn: _listed_ids(conn, {seek}), "the other nodes to see ann's seek")  # type: ignore[misc]
    replies = await asyncio.gather(bob.request("seek", game="nimble"), carol.request("seek", game="nimble"))
    assert sorted(bool(reply.get("paired")) for reply in replies) == [False, True], replies
    loser = (bob, carol)[[bool(reply.get("paired")) for reply in replies].index(False)]
    await until(lambda: _one_seek_of(loser), "the one who missed to have its seek posted")
    assert len(three.servers["a"].tables) == 1


async def _one_seek_of(conn: Raw) -> bool:
    return len((await conn.request("list_seeks"))["seeks"]) == 1


async def test_a_relayed_player_is_counted_by_its_own_address_on_the_node_that_seats_it(redis_server: RedisServer, postgres_url: str) -> None:
    cluster = SocialNodes(redis_server.url, postgres_url, dataclasses.replace(LIMITS, max_tables_per_address=1))
    try:
        for name in ("a", "b"):
            await cluster.start(name)
        ann, bob, carol = await cluster.connect("b", "ann"), await cluster.connect("a", "bob"), await cluster.connect("b", "carol")
        assert (await ann.request("create_table", game="nimble"))["type"] == "table_joined"  # 127.0.0.1's one table on node b
        challenge = (await bob.request("challenge", name="carol", game="nimble"))["challenge"]["id"]
        await pushed(carol, "challenge_received")
        refused = await carol.request("accept_challenge", challenge=challenge)  # bob, from 127.0.0.1 too, would create it
        assert refused["type"] == "error" and refused["code"] == "too_many_tables", refused
    finally:
        await cluster.close()


async def test_matching_seeks_made_at_the_same_moment_on_two_nodes_are_paired_once(three: SocialNodes) -> None:
    for round_ in range(3):  # each time both are posted before either node can see the other's, or one pairs at once
        ann, bob = await three.connect("a", f"ann{round_}"), await three.connect("b", f"bob{round_}")
        replies = await asyncio.gather(ann.request("seek", game="hexapawn"), bob.request("seek", game="hexapawn"))
        assert all(reply["type"] == "seek_posted" for reply in replies), replies
        on_ann, on_bob = await pushed(ann, "paired"), await pushed(bob, "paired")
        assert on_ann["table"]["id"] == on_bob["table"]["id"] and {on_ann["seat"], on_bob["seat"]} == {0, 1}
        await until(lambda: _listed_ids(ann, set()), "both seeks to be gone")
        assert [push for push in await ann.sync() + await bob.sync() if push["type"] == "paired"] == []  # paired once
    tables = [table for server in three.servers.values() for table in server.tables.values()]
    assert len(tables) == 3 and all(table.game.name == "hexapawn" for table in tables)


async def test_after_redis_restarts_empty_the_seeks_are_listed_again_and_new_ids_never_repeat_open_ones(
    three: SocialNodes, redis_server: RedisServer
) -> None:
    ann, bob = await three.connect("a", "ann"), await three.connect("b", "bob")
    on_a = (await ann.request("seek", game="nimble"))["seek"]["id"]
    challenge = (await bob.request("challenge", name="ann", game="othello"))["challenge"]["id"]
    await pushed(ann, "challenge_received")
    redis_server.kill()
    await asyncio.sleep(0.3)
    redis_server.start()  # empty: it kept nothing, the id counter included
    await until(lambda: _listed_ids(bob, {on_a}), "node a to write its seek again")
    on_b = (await bob.request("seek", game="othello", options={"size": 6}))["seek"]["id"]
    again = (await ann.request("challenge", name="bob", game="nimble"))
    assert again["type"] == "challenge_sent", again
    await three.start("d")  # takes its first block of ids from the counter Redis lost
    dan = await three.connect("d", "dan")
    on_d = (await dan.request("seek", game="hexapawn"))["seek"]["id"]
    assert len({on_a, challenge, on_b, again["challenge"]["id"], on_d}) == 5
    await until(lambda: _listed_ids(ann, {on_a, on_b, on_d}), "every seek to be listed on node a")


async def test_a_challenge_to_someone_not_on_this_node_while_redis_is_away_says_so(three: SocialNodes, redis_server: RedisServer) -> None:
    ann = await three.connect("a", "ann")
    await three.connect("b", "bob")
    redis_server.kill()
    refused = await ann.request("challenge", name="bob", game="nimble")
    assert refused["type"] == "error" and refused["code"] == "internal_error" and "cluster" in refused["message"], refused


async def test_a_player_at_a_running_game_on_another_node_is_not_paired_there(three: SocialNodes) -> None:
    ann, bob, carol = await three.connect("a", "ann"), await three.connect("b", "bob"), await three.connect("a", "carol")
    table = (await carol.request("create_table", game="nimble", seat=0))["table"]["id"]
    await until(lambda: _listed_all(bob, {table}), "node b to list carol's table")
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"  # a running game, held by node a
    seek = (await ann.request("seek", game="hexapawn"))["seek"]["id"]
    await until(lambda: _listed_ids(bob, {seek}), "node b to see ann's seek")
    refused = await bob.request("seek", game="hexapawn")
    assert refused["type"] == "error" and refused["code"] == "bad_request" and f"table {table}" in refused["message"], refused
    assert len(three.servers["a"].tables) == 1


async def test_a_players_seeks_vanish_when_they_sit_at_a_table_of_another_node(three: SocialNodes) -> None:
    ann, bob = await three.connect("a", "ann"), await three.connect("b", "bob")
    table = (await bob.request("create_table", game="nimble", seat=0))["table"]["id"]
    seek = (await ann.request("seek", game="othello"))["seek"]["id"]
    await until(lambda: _listed_all(ann, {table}), "node a to list bob's table")
    assert await _listed_ids(bob, {seek})
    assert (await ann.request("join_table", table=table, seat=1))["type"] == "table_joined"  # relayed: node b seats her
    await until(lambda: _listed_ids(bob, set()), "ann's seek to vanish: she sits at a table")
