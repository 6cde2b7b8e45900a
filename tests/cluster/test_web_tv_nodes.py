"""The TV page of a node of a cluster picks among every node's running games: node b's web face shows node a's game."""

from __future__ import annotations

from typing import Any

import aiohttp

from .test_cluster_nodes import _listed_all, until
from .test_web_nodes import WebNodes, web_base, web_nodes  # noqa: F401 (the fixture)


async def test_the_tv_of_a_node_without_games_picks_the_game_another_node_holds(web_nodes: WebNodes) -> None:  # noqa: F811
    ann, bob, carl = await web_nodes.connect("a", "ann"), await web_nodes.connect("a", "bob"), await web_nodes.connect("b", "carl")
    quiet = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]  # nobody joins: not running
    table = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    await until(lambda: _listed_all(carl, {quiet, table}), "node b to list node a's tables")
    assert not web_nodes.servers["b"].tables  # node b holds no table of its own
    tv = f"{web_base(web_nodes.servers['b'])}/api/tv"
    async with aiohttp.ClientSession() as http:

        async def picked() -> Any:
            async with http.get(tv) as response:
                assert response.status == 200
                return (await response.json())["table"] == table

        assert await until(picked, "node b's TV to pick node a's running game")
