"""Two nodes (in-process servers on real sockets) sharing one real redis-server: one lobby, one set of names, who and tells."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable

import msgpack
import msgspec
import pytest
import redis.asyncio as aioredis

from protocol import encode_message
from protocol.messages import TableInfo, TableUpdated
from server.app import Server, ServerConfig
from server.bus.bus import LOBBY
from server.bus.redis import channel
from server.cluster.keys import name_key_of, tables_key
from server.cluster.lobby import SEQ_FIELD
from server.cluster.node import HEARTBEAT_S

from ..server.conftest import Raw
from .redis_server import RedisServer

TIMEOUT_S = 8.0


async def until(check: Callable[[], Awaitable[Any]], what: str, timeout_s: float = TIMEOUT_S) -> Any:
    """Poll ``check`` until it returns something true; return that."""
    for _ in range(int(timeout_s / 0.05)):
        result = await check()
        if result:
            return result
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Nodes:
    """Servers joined to one Redis and sharing one PostgreSQL database, and the raw connections opened to them."""

    def __init__(self, redis_url: str, db_url: str, lease_s: float = 10.0) -> None:
        self.redis_url = redis_url
        self.db_url = db_url
        self.lease_s = lease_s
        self.servers: dict[str, Server] = {}
        self.conns: list[Raw] = []

    async def start(self, node: str) -> Server:
        config = ServerConfig(
            host="127.0.0.1", port=0, server_name="club", grace_s=30.0, db_path=self.db_url, bus=self.redis_url, node=node, lease_s=self.lease_s
        )  # fmt: skip
        server = Server(config)
        await server.start()
        self.servers[node] = server
        return server

    async def connect(self, node: str, name: str) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.servers[node].port)
        conn = Raw(reader, writer)
        self.conns.append(conn)
        welcome = await conn.hello(name)
        assert welcome["type"] == "welcome", welcome
        return conn

    async def close(self) -> None:
        for conn in self.conns:
            await conn.close()
        for server in self.servers.values():
            await server.close()


@pytest.fixture
async def nodes(redis_server: RedisServer, postgres_url: str) -> AsyncIterator[Nodes]:
    cluster = Nodes(redis_server.url, postgres_url)
    await cluster.start("a")
    await cluster.start("b")
    yield cluster
    await cluster.close()


async def listed(conn: Raw) -> dict[int, dict[str, Any]]:
    reply = await conn.request("list_tables")
    assert reply["type"] == "tables", reply
    return {table["id"]: table for table in reply["tables"]}


async def test_every_nodes_tables_are_listed_and_pushed_on_every_node(nodes: Nodes) -> None:
    ann, bob = await nodes.connect("a", "ann"), await nodes.connect("b", "bob")
    assert (await bob.request("watch_lobby"))["type"] == "ok"
    on_a = (await ann.request("create_table", game="nimble"))["table"]["id"]
    await until(lambda: _updated(bob, on_a), "bob to hear of ann's table")  # (before bob's next request: a reply's wait skips pushes)
    on_b = (await bob.request("create_table", game="othello", options={"size": 6}))["table"]["id"]
    assert on_a != on_b  # ids are unique across the nodes
    both = await until(lambda: _listed_all(ann, {on_a, on_b}), "ann's node to list both tables")
    assert both[on_b]["seats"] == ["bob", None] and both[on_a]["seats"][0] == "ann" or both[on_a]["seats"][1] == "ann"
    assert set(await listed(bob)) >= {on_a, on_b}
    assert (await ann.request("leave_table", table=on_a))["type"] == "ok"
    await until(lambda: _closed(bob, on_a), "bob to hear the table closed")
    assert on_a not in await listed(bob)


async def _pushes(conn: Raw, kind: str) -> list[dict[str, Any]]:
    return [push for push in await conn.sync() if push["type"] == kind]


async def _updated(conn: Raw, table_id: int) -> bool:
    return any(push["type"] == "table_updated" and push["table"]["id"] == table_id for push in await conn.sync())


async def _listed_all(conn: Raw, ids: set[int]) -> dict[int, dict[str, Any]] | None:
    tables = await listed(conn)
    return tables if ids <= set(tables) else None


async def _closed(conn: Raw, table_id: int) -> bool:
    return any(push["type"] == "table_closed" and push["table"] == table_id for push in await conn.sync())


async def test_a_name_in_use_on_one_node_is_taken_on_every_node_until_it_is_free(nodes: Nodes) -> None:
    ann = await nodes.connect("a", "ann")
    reader, writer = await asyncio.open_connection("127.0.0.1", nodes.servers["b"].port)
    other = Raw(reader, writer)
    nodes.conns.append(other)
    refused = await other.hello("ANN")
    assert refused["type"] == "error" and refused["code"] == "name_taken", refused
    await ann.close()  # ann held no seat: her session ends and the name is free on every node

    async def taken_on_b() -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", nodes.servers["b"].port)
        conn = Raw(reader, writer)
        nodes.conns.append(conn)
        return (await conn.hello("Ann"))["type"] == "welcome"

    assert await until(taken_on_b, "the name to be free on node b")


async def test_who_finger_and_tells_reach_players_on_other_nodes_and_mutes_hold(nodes: Nodes) -> None:
    ann, bob = await nodes.connect("a", "ann"), await nodes.connect("b", "bob")

    async def bob_sees_ann() -> dict[str, Any] | None:
        players = (await bob.request("who"))["players"]
        return next((p for p in players if p["name"] == "ann" and p["status"] == "idle"), None)

    await until(bob_sees_ann, "who on node b to list ann")
    told = await bob.request("tell", name="ann", text="hello from b")
    assert told["type"] == "ok", told
    got = await until(lambda: _pushes(ann, "told"), "ann to get bob's tell")
    assert got == [{"type": "told", "name": "bob", "text": "hello from b"}]
    assert (await ann.request("mute", name="bob"))["type"] == "ok"
    assert (await bob.request("tell", name="ann", text="muted"))["type"] == "ok"  # as on one node: the sender is not told
    async def told_back() -> bool:
        return (await ann.request("tell", name="bob", text="back"))["type"] == "ok"  # once node a has read node b's players

    assert await until(told_back, "ann's tell to bob to go out")
    assert await until(lambda: _pushes(bob, "told"), "bob to get ann's tell") == [{"type": "told", "name": "ann", "text": "back"}]
    assert await _pushes(ann, "told") == []  # the muted tell never reached ann
    fingered = await bob.request("finger", name="ANN")
    assert fingered["type"] == "player" and fingered["online"] is True, fingered  # online on node a
    nobody = await bob.request("tell", name="carol", text="hi")
    assert nobody["type"] == "error" and nobody["code"] == "no_such_player"


async def test_the_lobby_heals_after_redis_is_killed_and_restarted(nodes: Nodes, redis_server: RedisServer) -> None:
    ann, bob = await nodes.connect("a", "ann"), await nodes.connect("a", "bob")
    watcher = await nodes.connect("b", "watcher")
    assert (await watcher.request("watch_lobby"))["type"] == "ok"
    table = (await ann.request("create_table", game="othello", options={"size": 6}))["table"]["id"]
    await bob.request("join_table", table=table)
    move = [push for push in await ann.sync() if push["type"] == "game_started"][0]["view"]["legal_moves"][0]
    await until(lambda: _listed_all(watcher, {table}), "node b to list the table")
    redis_server.kill()
    players = [ann, bob]
    for ply in range(4):  # the table lives on node a: its moves go on, acknowledged, while Redis is away
        mover, other = players[ply % 2], players[1 - ply % 2]
        reply = await mover.request("move", table=table, move=move)
        assert reply["type"] == "ok", reply
        moved = [push for push in await other.sync() if push["type"] == "moved"]
        move = moved[-1]["view"]["legal_moves"][0]
    later = await ann.request("create_table", game="nimble")  # needs no Redis: the node holds a block of ids
    assert later["type"] == "table_joined", later
    redis_server.start()  # empty: it kept nothing
    # Node a's first lobby event after reconnecting (the new table's) can reach node b a tick before node a's rejoin
    # announces its older tables again: for that tick node b lists both tables, the older with its line from before.
    # The lobby has healed once the line is the table's own.
    healed = await until(lambda: _listed_at_ply(watcher, {table, later["table"]["id"]}, table, 4), "node b's lobby to heal")
    assert healed[table]["seats"] == ["ann", "bob"]


async def _listed_at_ply(conn: Raw, ids: set[int], table_id: int, ply: int) -> dict[int, dict[str, Any]] | None:
    tables = await _listed_all(conn, ids)
    return tables if tables is not None and tables[table_id]["ply"] == ply else None


async def test_a_node_that_stops_hands_its_tables_to_another_node_at_once_and_they_stay_in_the_lobby(nodes: Nodes) -> None:
    ann, watcher = await nodes.connect("a", "ann"), await nodes.connect("b", "watcher")
    assert (await watcher.request("watch_lobby"))["type"] == "ok"
    table = (await ann.request("create_table", game="nimble"))["table"]["id"]
    await until(lambda: _listed_all(watcher, {table}), "node b to list the table")
    await nodes.servers.pop("a").close()  # a graceful stop (SIGTERM): its leases expire now, and node b hears so on the bus
    await until(lambda: _holds(nodes.servers["b"], table), "node b to take the table over", timeout_s=nodes.lease_s / 2)  # sooner than a lease
    assert not await _closed(watcher, table)  # it never left node b's lobby
    assert (await listed(watcher))[table]["seats"][0] == "ann"


async def _holds(server: Server, table: int) -> bool:
    return table in server.tables


async def test_a_lost_lobby_event_is_noticed_by_its_number_and_the_lobby_reloads_the_publishers_tables(nodes: Nodes, redis_server: RedisServer) -> None:
    """Node a's next lobby event on the channel is forged: with the number that follows, node b takes it as it is;
    with a number that skips one (an event was lost), node b reloads node a's tables and shows the truth."""
    ann, bob = await nodes.connect("a", "ann"), await nodes.connect("b", "bob")
    table = (await ann.request("create_table", game="nimble", seat=0))["table"]["id"]
    truth = await until(lambda: _listed_all(bob, {table}), "node b to list the table")
    assert truth[table]["seats"] == ["ann", None]
    bus_a = nodes.servers["a"].bus
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        forged = TableUpdated(table=msgspec.structs.replace(TableInfo(**truth[table]), seats=["mallory", None]))

        async def forge(skip: int) -> None:
            seq = bus_a._seq[channel(LOBBY)] = bus_a._seq[channel(LOBBY)] + 1 + skip  # type: ignore[attr-defined]
            await client.publish(channel(LOBBY), msgpack.packb(("a", seq, encode_message(forged))))

        await asyncio.sleep(2 * HEARTBEAT_S)  # node b has read node a's tables as they are now
        await forge(skip=0)
        await until(lambda: _seated(bob, table, "mallory"), "node b to take the forged line in order")
        await asyncio.sleep(2 * HEARTBEAT_S)
        assert (await listed(bob))[table]["seats"] == ["mallory", None]  # nothing changed on node a: no reload
        # node a's snapshot is newer than the forged line (as it is after any lost event) but its version is the same,
        # so only the gap makes node b read it
        await client.hset(tables_key("a"), SEQ_FIELD, bus_a._seq[channel(LOBBY)] + 10)  # type: ignore[attr-defined]
        await forge(skip=1)
        await until(lambda: _seated(bob, table, "ann"), "node b to reload node a's tables after the gap", timeout_s=HEARTBEAT_S)
    finally:
        await client.aclose()


async def _seated(conn: Raw, table_id: int, name: str) -> bool:
    return (await listed(conn)).get(table_id, {}).get("seats", [None])[0] == name


async def test_a_node_that_closes_frees_its_players_names_in_redis_before_its_client_closes(nodes: Nodes, redis_server: RedisServer) -> None:
    """Each name's release is a task of its own: the node waits for them before it closes its Redis client,
    so none is cut off half-way (the names free now, not an expiry later, and no task dies with an unread error)."""
    names = [f"player{number}" for number in range(8)]  # (under the admission burst of 10 from one address)
    for name in names:
        await nodes.connect("a", name)
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        assert len(await client.keys(name_key_of("*"))) == len(names)
        await nodes.servers["a"].close()
        assert await client.keys(name_key_of("*")) == []
    finally:
        await client.aclose()
