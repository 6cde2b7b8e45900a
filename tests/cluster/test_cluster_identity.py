"""Names and sessions cluster-wide: nodes (in-process servers on real sockets) sharing one real PostgreSQL and one redis-server.

A name claimed on one node is proven on another (and its look-alikes are
refused there), a rating won on one node shows on another, a mute set on
one node holds on another, and a player who reconnects to another node with
its token resumes its session and its seats and plays the game to its end.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, AsyncIterator

import pytest

from protocol import PROTOCOL_VERSION
from server.app import Server

from ..server.conftest import Raw
from .redis_server import RedisServer
from .test_cluster_nodes import Nodes, _listed_all, until
from .test_relay import play_out

SECRET = "s" * 24
OTHER_SECRET = "t" * 24
LASTS = {"board": [0, 0, 1, 2, 0, 2]}
"""A Nimble setup that lasts five plies of first legal moves: the resume tests play one or two before the resume, and a
random setup ends at the first ply in about 1 game of 270, at the second in 1 of 70 (then no seat comes back)."""


class SharedNodes(Nodes):
    """Nodes on one PostgreSQL database and one Redis (:class:`Nodes`), whose connections may say any ``hello``."""

    def __init__(self, db: str, redis_url: str) -> None:
        super().__init__(redis_url, db)

    async def open(self, node: str) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.servers[node].port)
        conn = Raw(reader, writer)
        self.conns.append(conn)
        return conn

    async def hello(self, node: str, name: str, **fields: Any) -> tuple[Raw, dict[str, Any]]:
        """A connection to ``node`` and the reply to its ``hello`` (``welcome`` or ``error``)."""
        conn = await self.open(node)
        return conn, await conn.request("hello", version=PROTOCOL_VERSION, name=name, **fields)

    async def connect(self, node: str, name: str, **fields: Any) -> Raw:  # type: ignore[override]
        conn, welcome = await self.hello(node, name, **fields)
        assert welcome["type"] == "welcome", welcome
        return conn


@pytest.fixture
async def shared(postgres_url: str, redis_server: RedisServer) -> AsyncIterator[SharedNodes]:
    nodes = SharedNodes(postgres_url, redis_server.url)
    for name in ("a", "b", "c"):
        await nodes.start(name)
    yield nodes
    await nodes.close()


async def _gone(conn: Raw) -> None:
    """Close ``conn`` and give its node a moment to hear it."""
    await conn.close()
    await asyncio.sleep(0.2)


async def _knows_claim(server: Server, key: str) -> bool:
    return server.handshake.accounts.is_claimed(key)


async def _claimed_name_free(shared: SharedNodes, node: str, name: str, **fields: Any) -> dict[str, Any]:
    """Say hello as ``name`` on ``node`` until the name is free there (its last session's node let it go); return the welcome."""

    async def attempt() -> dict[str, Any] | None:
        conn, reply = await shared.hello(node, name, **fields)
        if reply["type"] == "error" and reply["code"] == "name_taken":
            await conn.close()
            return None
        return reply

    return await until(attempt, f"the name {name} to be free on node {node}")  # type: ignore[no-any-return]


# --- claimed names --------------------------------------------------------------------------


async def test_a_name_claimed_on_one_node_is_proven_on_another_and_protected_there(shared: SharedNodes) -> None:
    ann, welcome = await shared.hello("a", "ann", claim=True, secret=SECRET)
    assert welcome["type"] == "welcome" and welcome["claimed"] is True and welcome["node"] == "a", welcome
    server_id = welcome["server_id"]
    await _gone(ann)
    unproven = await _claimed_name_free(shared, "b", "ann")
    assert unproven["type"] == "error" and unproven["code"] == "name_claimed", unproven
    _, wrong = await shared.hello("b", "ann", secret=OTHER_SECRET)
    assert wrong["type"] == "error" and wrong["code"] == "name_claimed", wrong
    _, proven = await shared.hello("b", "ANN", secret=SECRET)
    assert proven["type"] == "welcome" and proven["claimed"] is True and proven["name"] == "ann", proven
    assert proven["server_id"] == server_id and proven["node"] == "b"  # one cluster, one id: one secret for every node
    _, alike = await shared.hello("c", "a1ice", claim=True, secret=SECRET)
    assert alike["type"] == "welcome", alike
    await until(lambda: _knows_claim(shared.servers["b"], "a1ice"), "node b to hear of the claim")  # over the bus: a moment after
    _, look_alike = await shared.hello("b", "alice", claim=True, secret=SECRET)
    assert look_alike["type"] == "error" and look_alike["code"] == "name_taken" and "a1ice" in look_alike["message"], look_alike


async def test_a_secret_changed_on_one_node_is_the_only_one_another_node_takes(shared: SharedNodes) -> None:
    ann = await shared.connect("a", "ann", claim=True, secret=SECRET)
    await _gone(ann)
    on_b = await _claimed_name_free(shared, "b", "ann", secret=SECRET)  # node b reads (and keeps) the account now
    assert on_b["type"] == "welcome", on_b
    await _gone(shared.conns[-1])
    ann = await _claimed_name_free(shared, "a", "ann", secret=SECRET)
    assert ann["type"] == "welcome", ann
    changed = await shared.conns[-1].request("change_secret", secret=OTHER_SECRET, current=SECRET)
    assert changed["type"] == "token_renewed", changed
    await _gone(shared.conns[-1])
    old = await _claimed_name_free(shared, "b", "ann", secret=SECRET)
    assert old["type"] == "error" and old["code"] == "name_claimed", old
    _, new = await shared.hello("b", "ann", secret=OTHER_SECRET)
    assert new["type"] == "welcome" and new["claimed"] is True, new


# --- ratings ---------------------------------------------------------------------------------


async def _rated_game(shared: SharedNodes, node: str) -> int:
    """Ann and Bob (claimed, both on ``node``) play a rated game of Nimble there to its end; return the table."""
    ann = await _claimed(shared, node, "ann")
    bob = await _claimed(shared, node, "bob")
    table = (await ann.request("create_table", game="nimble", seat=0, rated=True))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await play_out([ann, bob], [], table, {ann: [], bob: []})
    await _gone(ann)
    await _gone(bob)
    return int(table)


async def _claimed(shared: SharedNodes, node: str, name: str) -> Raw:
    """A connection to ``node`` as the claimed ``name`` (claimed now if nobody has, else proven)."""
    _, claim = await shared.hello(node, name, claim=True, secret=SECRET)
    if claim["type"] == "welcome":
        return shared.conns[-1]
    welcome = await _claimed_name_free(shared, node, name, secret=SECRET)
    assert welcome["type"] == "welcome", welcome
    return shared.conns[-1]


async def test_a_rating_won_on_one_node_is_the_rating_another_node_shows(shared: SharedNodes) -> None:
    await _rated_game(shared, "b")  # node b knows (and keeps) ann's rating after this one
    await _rated_game(shared, "a")
    probe = await shared.connect("a", "probe")
    fingered = await probe.request("finger", name="ann")
    assert fingered["type"] == "player", fingered
    now = round(next(entry for entry in fingered["ratings"] if entry["game"] == "nimble")["rating"])
    ann = await _claimed(shared, "b", "ann")
    info = (await ann.request("create_table", game="nimble", seat=0, rated=True))["table"]
    assert info["ratings"][0][0] == now, (info["ratings"], now)
    on_b = await ann.request("finger", name="ann")
    assert round(next(entry for entry in on_b["ratings"] if entry["game"] == "nimble")["rating"]) == now

    async def who_shows() -> bool:
        reply = await ann.request("who", game="nimble")
        return any(player["name"] == "ann" and player.get("rating") == now for player in reply["players"])

    await until(who_shows, "who on node b to show ann's new rating")


# --- mutes ----------------------------------------------------------------------------------


async def _tell(sender: Raw, name: str, text: str) -> bool:
    """Tell ``name``; whether the sender's node found them (it lists other nodes' players within a tick)."""
    reply = await sender.request("tell", name=name, text=text)
    assert reply["type"] == "ok" or reply.get("code") == "no_such_player", reply
    return reply["type"] == "ok"


async def _told(conn: Raw) -> list[str]:
    return [push["name"] for push in await conn.sync() if push["type"] == "told"]


async def test_a_mute_set_on_one_node_holds_for_tells_delivered_on_another(shared: SharedNodes) -> None:
    bob, carol = await shared.connect("a", "bob"), await shared.connect("c", "carol")
    ann = await _claimed(shared, "b", "ann")
    await until(lambda: _tell(bob, "ann", "before"), "bob's node to see ann on node b")
    await until(lambda: _told(ann), "ann on node b to hear bob before the mute")  # node b has read ann's mutes (none)
    await _gone(ann)
    ann = await _claimed(shared, "a", "ann")
    assert (await ann.request("mute", name="bob"))["type"] == "ok"
    await _gone(ann)
    ann = await _claimed(shared, "b", "ann")
    assert (await ann.request("list_mutes"))["names"] == ["bob"]
    await until(lambda: _tell(bob, "ann", "muted?"), "bob's node to see ann on node b again")
    assert (await carol.request("tell", name="ann", text="and me?"))["type"] == "ok"
    heard = await until(lambda: _told(ann), "ann to hear carol")
    assert heard == ["carol"], heard  # bob's tell came first and was dropped on node b


# --- resuming on another node ---------------------------------------------------------------------


async def _resume(shared: SharedNodes, node: str, name: str, token: str) -> tuple[Raw, dict[str, Any], list[dict[str, Any]]]:
    """Resume ``name``'s session on ``node`` by ``token``; return the connection, its welcome and the ``resumed`` pushes."""

    async def attempt() -> tuple[Raw, dict[str, Any]] | None:
        conn, reply = await shared.hello(node, name, token=token)
        if reply["type"] == "error" and reply["code"] == "name_taken":
            await conn.close()
            return None
        return conn, reply

    conn, welcome = await until(attempt, f"{name} to resume on node {node}")
    assert welcome["type"] == "welcome" and welcome["resumed"] is True and welcome["token"] == token, welcome
    resumed: list[dict[str, Any]] = []
    await until(lambda: _collect(conn, resumed, "resumed"), f"{name} to get its table back on node {node}")
    return conn, welcome, resumed


async def _collect(conn: Raw, into: list[dict[str, Any]], kind: str) -> bool:
    into.extend(push for push in await conn.sync() if push["type"] == kind)
    return bool(into)


async def _back(conn: Raw, seat: int) -> bool:
    return any(push["type"] == "player_back" and push.get("seat") == seat for push in await conn.sync())


async def test_players_who_reconnect_to_other_nodes_resume_their_seats_and_finish_the_game(shared: SharedNodes) -> None:
    ann, ann_welcome = await shared.hello("a", "ann")
    bob, bob_welcome = await shared.hello("b", "bob")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    await until(lambda: _listed_all(bob, {table}), "node b to list the table")
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    seen: dict[Raw, list[dict[str, Any]]] = {ann: [], bob: []}
    await _one_move(ann, table, seen)

    await _gone(ann)  # ann was on the table's node; she comes back through node b
    ann, welcome, resumed = await _resume(shared, "b", "ann", ann_welcome["token"])
    assert welcome["node"] == "b"
    assert resumed[0]["table"]["id"] == table and resumed[0]["seat"] == 0 and resumed[0]["moves"], resumed
    await until(lambda: _back(bob, 0), "bob to hear ann is back")

    await _gone(bob)  # bob was relayed from node b; he comes back on node c
    bob, _, resumed = await _resume(shared, "c", "bob", bob_welcome["token"])
    assert resumed[0]["table"]["id"] == table and resumed[0]["seat"] == 1, resumed

    await _move_if_to_play(bob, resumed[0])
    seen = {ann: [], bob: []}
    await play_out([ann, bob], [], table, seen)
    for conn in (ann, bob):
        over = [push for push in seen[conn] if push["type"] == "game_over" and push["table"] == table]
        assert over, seen[conn]


async def _move_if_to_play(conn: Raw, resumed: dict[str, Any]) -> None:
    """Play the first legal move the ``resumed`` push offers ``conn``, if it offers one (the rest of the game then flows)."""
    legal = resumed["view"].get("legal_moves")
    if legal:
        reply = await conn.request("move", table=resumed["table"]["id"], move=legal[0])
        assert reply["type"] == "ok", reply


async def _one_move(mover: Raw, table: int, seen: dict[Raw, list[dict[str, Any]]]) -> None:
    """Play ``mover``'s first legal move once its view offers one."""

    async def legal() -> list[str] | None:
        for push in await mover.sync():
            seen[mover].append(push)
        views = [p["view"] for p in seen[mover] if p.get("table") == table and isinstance(p.get("view"), dict)]
        return views[-1].get("legal_moves") if views else None

    moves = await until(legal, "the mover's legal moves")
    assert (await mover.request("move", table=table, move=moves[0]))["type"] == "ok"


async def test_a_relayed_player_resumes_on_the_tables_own_node_and_a_connection_left_behind_is_signed_out(shared: SharedNodes) -> None:
    ann = await shared.connect("a", "ann")
    bob, bob_welcome = await shared.hello("b", "bob")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    await until(lambda: _listed_all(bob, {table}), "node b to list the table")
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await _one_move(ann, table, {ann: []})
    again, welcome, resumed = await _resume(shared, "a", "bob", bob_welcome["token"])  # bob's connection to node b is still open
    assert welcome["node"] == "a" and resumed[0]["seat"] == 1
    left_behind = await bob.expect_closed()
    assert any(frame.get("code") == "signed_in_elsewhere" for frame in left_behind), left_behind
    await _move_if_to_play(again, resumed[0])
    seen: dict[Raw, list[dict[str, Any]]] = {ann: [], again: []}
    assert await play_out([ann, again], [], table, seen) >= 1


async def test_a_player_who_resumes_on_another_node_after_the_game_ended_sees_its_result(shared: SharedNodes) -> None:
    """As on one node: still seated at the finished table (her connection to node a not closed yet), ann resumes on
    node b and gets ``resumed`` for it, with the outcome."""
    ann, ann_welcome = await shared.hello("a", "ann")
    bob = await shared.connect("a", "bob")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await _one_move(ann, table, {ann: []})
    assert (await bob.request("resign", table=table))["type"] == "ok"
    await until(lambda: _listed_over(shared, "b", table), "node b to list the finished table")
    left_behind = asyncio.create_task(_close_when_closed(ann))  # as a client does: its old connection goes at once
    again, welcome, resumed = await _resume(shared, "b", "ann", ann_welcome["token"])
    assert welcome["node"] == "b"
    assert resumed[0]["table"]["id"] == table and resumed[0]["seat"] == 0, resumed
    assert resumed[0]["table"]["status"] == "over" and resumed[0]["table"]["outcome"]["winner"] == 0, resumed
    assert any(frame.get("code") == "signed_in_elsewhere" for frame in await left_behind)


async def test_a_finished_seat_kept_for_a_player_who_moved_is_given_up_when_no_node_brings_it_back(shared: SharedNodes) -> None:
    node_a = shared.servers["a"]
    node_a.config = dataclasses.replace(node_a.config, grace_s=0.5)
    ann, ann_welcome = await shared.hello("a", "ann")
    bob = await shared.connect("a", "bob")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    assert (await bob.request("resign", table=table))["type"] == "ok"
    cluster_b = shared.servers["b"].cluster
    assert cluster_b is not None
    cluster_b.mirror.forget_node("a")  # node b does not list the finished table: it asks node a for nothing
    left_behind = asyncio.create_task(_close_when_closed(ann))
    again, welcome = await shared.hello("b", "ann", token=ann_welcome["token"])
    assert welcome["type"] == "welcome" and welcome["resumed"] is True, welcome
    await left_behind

    async def seat_given_up() -> bool:
        return node_a.tables[table].seats[0] is None

    await until(seat_given_up, "node a to give up ann's seat at the finished table once its grace ran out")
    assert node_a.tables[table].seats[1] is not None  # bob is still there


async def _close_when_closed(conn: Raw) -> list[dict[str, Any]]:
    """Read ``conn`` until the server closes it, then close it; return the frames read."""
    frames = await conn.expect_closed()
    await conn.close()
    return frames


async def _listed_over(shared: SharedNodes, node: str, table: int) -> bool:
    server = shared.servers[node]
    return server.lobby.remote.get(table) is not None and server.lobby.remote[table].status == "over"


async def test_a_wrong_or_dead_token_is_refused_on_every_node(shared: SharedNodes) -> None:
    ann, welcome = await shared.hello("a", "ann")
    token = welcome["token"]
    _, other_name = await shared.hello("b", "bob", token=token)
    assert other_name["type"] == "error" and other_name["code"] == "bad_token", other_name
    _, made_up = await shared.hello("b", "carol", token="x" * 32)
    assert made_up["type"] == "error" and made_up["code"] == "bad_token", made_up
    await _gone(ann)  # she held nothing: her session is over, its token dead everywhere
    store = shared.servers["a"].store
    assert store is not None

    async def row_gone() -> bool:
        return store.sessions().get(token) is None

    await until(row_gone, "node a to delete ann's session")
    _, dead = await shared.hello("c", "ann", token=token)
    assert dead["type"] == "error" and dead["code"] == "bad_token", dead


async def test_proving_a_claimed_name_on_another_node_takes_its_session_and_seats_over_and_kills_the_old_token(shared: SharedNodes) -> None:
    ann, ann_welcome = await shared.hello("a", "ann", claim=True, secret=SECRET)
    bob = await shared.connect("a", "bob")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await _one_move(ann, table, {ann: []})
    again, welcome = await shared.hello("b", "ann", secret=SECRET)  # her connection to node a is still open
    assert welcome["type"] == "welcome" and welcome["resumed"] is True and welcome["claimed"] is True, welcome
    assert welcome["token"] != ann_welcome["token"]  # proving a name renews its token, as on one node
    left_behind = await ann.expect_closed()
    assert any(frame.get("code") == "signed_in_elsewhere" for frame in left_behind), left_behind
    resumed: list[dict[str, Any]] = []
    await until(lambda: _collect(again, resumed, "resumed"), "ann to get her seat back on node b")
    assert resumed[0]["table"]["id"] == table and resumed[0]["seat"] == 0, resumed
    _, stale = await shared.hello("c", "ann", token=ann_welcome["token"])
    assert stale["type"] == "error" and stale["code"] == "bad_token", stale
    seen: dict[Raw, list[dict[str, Any]]] = {again: [], bob: []}
    assert await play_out([again, bob], [], table, seen) >= 1


async def test_a_seat_at_a_table_the_resuming_node_has_not_mirrored_yet_is_found_through_its_lease(shared: SharedNodes) -> None:
    ann, ann_welcome = await shared.hello("a", "ann")
    bob = await shared.connect("a", "bob")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await _one_move(ann, table, {ann: []})
    cluster_b = shared.servers["b"].cluster
    assert cluster_b is not None
    cluster_b.mirror.forget_node("a")  # node b has not heard of the table yet (it was created a moment ago)
    assert table not in cluster_b.mirror.owner
    again, welcome = await shared.hello("b", "ann", token=ann_welcome["token"])  # her connection to node a is still open
    assert welcome["type"] == "welcome" and welcome["resumed"] is True, welcome
    resumed: list[dict[str, Any]] = []
    await until(lambda: _collect(again, resumed, "resumed"), "ann to get her seat back on node b through the lease")
    assert resumed[0]["table"]["id"] == table and resumed[0]["seat"] == 0, resumed
    cluster_b.mirror.forget_node("a")  # still not mirrored: her requests about the table go where her `resumed` came from
    await _one_move(bob, table, {bob: []})
    await _one_move(again, table, {again: []})


@pytest.mark.parametrize("game_started", [False, True])
async def test_a_token_whose_grace_ran_out_is_refused_on_another_node(shared: SharedNodes, game_started: bool) -> None:
    node_a = shared.servers["a"]
    node_a.config = dataclasses.replace(node_a.config, grace_s=0.5)
    ann, welcome = await shared.hello("a", "ann")
    table = (await ann.request("create_table", game="nimble", options=LASTS, seat=0))["table"]["id"]
    if game_started:
        bob = await shared.connect("a", "bob")
        assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
        await _one_move(ann, table, {ann: []})
    await _gone(ann)
    store = node_a.store
    assert store is not None

    async def row_gone() -> bool:
        return store.sessions().get(welcome["token"]) is None

    await until(row_gone, "node a to forget ann's session once her grace ran out")
    _, expired = await shared.hello("b", "ann", token=welcome["token"])
    assert expired["type"] == "error" and expired["code"] == "bad_token", expired
