"""The web face of a node of a cluster: every node's tables, and another node's table watched through the relay.

Node a holds a Tactego game between ann and bob; node b has the web face (and
no table). A browser on node b lists the game and watches it: the table's node
feeds it exactly what a spectator connected to node b receives (carl, through
the relay), never a seat's view.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import aiohttp
import pytest
import redis.asyncio as aioredis

from server.app import Server, ServerConfig

from ..server.test_web import quiet_move, receive
from .redis_server import RedisServer
from .test_cluster_nodes import Nodes, _listed_all, until


class WebNodes(Nodes):
    """:class:`Nodes`, node ``b`` with the web face."""

    async def start(self, node: str) -> Server:
        http = ("127.0.0.1", 0) if node == "b" else None
        config = ServerConfig(
            host="127.0.0.1", port=0, server_name="club", grace_s=30.0, db_path=self.db_url, bus=self.redis_url, node=node, http=http, lease_s=self.lease_s
        )  # fmt: skip
        server = Server(config)
        await server.start()
        self.servers[node] = server
        return server


@pytest.fixture
async def web_nodes(redis_server: RedisServer, postgres_url: str) -> AsyncIterator[WebNodes]:
    cluster = WebNodes(redis_server.url, postgres_url)
    for name in ("a", "b"):
        await cluster.start(name)
    yield cluster
    await cluster.close()


def web_base(server: Server) -> str:
    assert server.http_address is not None
    return "http://{}:{}".format(*server.http_address)


async def _seen_by(conn: Any, kind: str) -> dict[str, Any]:
    while True:
        frame = await conn.recv()
        if frame["type"] == kind:
            return frame


async def test_a_browser_on_one_node_lists_and_watches_a_game_held_by_another_as_a_spectator(web_nodes: WebNodes) -> None:
    ann, bob, carl = await web_nodes.connect("a", "ann"), await web_nodes.connect("a", "bob"), await web_nodes.connect("b", "carl")
    created = await ann.request("create_table", game="tactego", options={"rows": 6, "cols": 6}, seat=0)
    table = created["table"]["id"]
    joined = await bob.request("join_table", table=table, seat=1)
    views = {0: (await _seen_by(ann, "game_started"))["view"], 1: joined["view"]}
    await until(lambda: _listed_all(carl, {table}), "node b to list the table")
    watching = await carl.request("watch_table", table=table)
    web = web_base(web_nodes.servers["b"])
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(f"{web}/ws/lobby") as lobby:
            (tables,) = await receive(lobby)
            assert tables["type"] == "tables" and [line["id"] for line in tables["tables"]] == [table]
        async with http.ws_connect(f"{web}/ws/table/{table}") as ws:
            (snapshot,) = await receive(ws)
            assert snapshot["type"] == "table_joined" and snapshot["seat"] is None
            assert snapshot["view"] == watching["view"] and snapshot["moves"] == watching["moves"]
            assert all(cell is None or cell[1] == "?" for row in snapshot["view"]["board"] for cell in row)
            players = {0: ann, 1: bob}
            for _ in range(4):
                seat = views[0]["to_move"]
                assert (await players[seat].request("move", table=table, move=quiet_move(views[seat])))["type"] == "ok"
                for each in (0, 1):
                    views[each] = (await _seen_by(players[each], "moved"))["view"]
                seen = await _seen_by(carl, "moved")
                batch = await receive(ws)
                assert batch == [seen]  # exactly what a spectator on node b gets
                assert "legal_moves" not in batch[0]["view"]
                assert all(cell is None or cell[1] == "?" for row in batch[0]["view"]["board"] for cell in row)
        async with http.ws_connect(f"{web}/ws/table/{table + 999}") as missing:
            (error,) = await receive(missing)
            assert error["type"] == "error" and error["code"] == "no_such_table"
    tap = aioredis.Redis.from_url(web_nodes.redis_url).pubsub()
    await tap.psubscribe("parlour:node:b:*")  # node b's inbox: the browser's feed came this way
    try:
        for _ in range(2):  # the browser left: node a feeds it no more
            seat = views[0]["to_move"]
            assert (await players[seat].request("move", table=table, move=quiet_move(views[seat])))["type"] == "ok"
            for each in (0, 1):
                views[each] = (await _seen_by(players[each], "moved"))["view"]
            await _seen_by(carl, "moved")
        inbox = []
        while (message := await tap.get_message(timeout=0.5)) is not None:
            if message["type"] == "pmessage":
                inbox.append(bytes(message["data"]))
        assert inbox, "carl's frames cross to node b"
        assert not [data for data in inbox if b"\xa4feed" in data], "a feed to a browser that left"
    finally:
        await tap.aclose()


async def test_a_browser_whose_frames_were_lost_on_the_bus_gets_a_fresh_snapshot(web_nodes: WebNodes) -> None:
    ann, bob = await web_nodes.connect("a", "ann"), await web_nodes.connect("a", "bob")
    table = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    node_b = web_nodes.servers["b"]
    await until(lambda: _mirrored(node_b, table), "node b to know the table")
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{web_base(node_b)}/ws/table/{table}") as ws:
        (snapshot,) = await receive(ws)
        assert snapshot["type"] == "table_joined" and snapshot["moves"] == []
        view = (await _seen_by(ann, "game_started"))["view"]
        assert (await ann.request("move", table=table, move=view["legal_moves"][0]))["type"] == "ok"
        (moved,) = await receive(ws)
        assert moved["type"] == "moved"
        assert node_b.bus.on_gap, "the bus tells its listeners of lost messages"
        for listener in node_b.bus.on_gap:  # as the bus does when a number from node a jumps on node b's inbox
            listener("node:b", None, "a")
        (again,) = await receive(ws)
        assert again["type"] == "table_joined" and again["moves"] == [moved["move"]] and again["view"] == moved["view"]


async def _mirrored(server: Server, table: int) -> bool:
    return server.cluster is not None and table in server.cluster.mirror.owner
