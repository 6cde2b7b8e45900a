"""Playing and watching a table held by another node, through the relay, on a real redis-server.

Ann plays on node a, which holds the table; Bob plays it from node b and
Carol watches it from node c. Every frame reaches each of them as node a
made it for them: Bob gets his seat's view (with his legal moves), Carol the
spectators' view (never anyone's legal moves).
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import msgpack
import pytest
import redis.asyncio as aioredis

from protocol import encode_frame
from server.bus.redis import RedisBus, channel
from server.cluster.players import node_topic
from server.cluster.relay import FRAMES, MESSAGE, OPEN, REQUEST, Mail, read_batch

from ..server.conftest import Raw
from .redis_server import RedisServer
from .test_cluster_nodes import TIMEOUT_S, Nodes, _listed_all, listed, until


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
    # a fixed setup: a random one may let the first player's first legal move end the game
    table = (await ann.request("create_table", game="nimble", options={"board": [0, 0, 1, 2, 0, 2]}, seat=0))["table"]["id"]
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


async def _started_views(players: list[Raw], table: int) -> dict[Raw, dict[str, Any]]:
    views: dict[Raw, dict[str, Any]] = {}

    async def all_started() -> bool:
        for player in players:
            for push in await player.sync():
                if push["type"] == "game_started" and push.get("table") == table:
                    views[player] = push["view"]
        return len(views) == len(players)

    await until(all_started, "both players to hear the game start")
    return views


async def _relayed_game(three: Nodes, game: str) -> tuple[Raw, Raw, int, dict[Raw, dict[str, Any]]]:
    """A ``game`` table made on node a and played by bob and carol from node b: ``(bob, carol, table, start views)``."""
    ann, bob, carol = await three.connect("a", "ann"), await three.connect("b", "bob"), await three.connect("b", "carol")
    table = (await ann.request("create_table", game=game, seat=None))["table"]["id"]
    await until(lambda: _listed_all(bob, {table}), "node b to list the table")
    for seat, player in enumerate((bob, carol)):
        assert (await player.request("join_table", table=table, seat=seat))["type"] == "table_joined"
    return bob, carol, table, await _started_views([bob, carol], table)


async def test_a_relayed_move_crosses_the_bus_once_each_way_with_both_players_frames_in_one_message(three: Nodes, redis_server: RedisServer) -> None:
    bob, carol, table, views = await _relayed_game(three, "nimble")
    mover, other = (bob, carol) if views[bob].get("legal_moves") else (carol, bob)
    client = aioredis.Redis.from_url(redis_server.url)
    pubsub = client.pubsub()
    inboxes = {channel(node_topic("a")): "to a", channel(node_topic("b")): "to b"}
    try:
        await pubsub.subscribe(*inboxes)
        for _ in inboxes:  # the confirmations
            assert (await pubsub.get_message(timeout=TIMEOUT_S))["type"] == "subscribe"  # type: ignore[index]
        assert (await mover.request("move", table=table, move=views[mover]["legal_moves"][0]))["type"] == "ok"
        await until(lambda: _pushed(other, "moved", table), "the other player to hear the move")
        crossed: list[tuple[str, str, bytes]] = []
        while (message := await pubsub.get_message(timeout=0.3)) is not None:
            origin, _, data = msgpack.unpackb(message["data"])
            crossed.append((inboxes[message["channel"].decode()], origin, data))
    finally:
        await pubsub.aclose()
        await client.aclose()
    assert [(way, origin) for way, origin, _ in crossed] == [("to a", "b"), ("to b", "a")]  # the request; the reply and both pushes
    sender, records = read_batch(crossed[1][2])
    assert sender == "a" and [kind for kind, _, _ in records] == [FRAMES, FRAMES]  # one record per player's link
    assert len({link for _, link, _ in records}) == 2


async def _pushed(conn: Raw, kind: str, table: int) -> bool:
    return any(push["type"] == kind and push.get("table") == table for push in await conn.sync())


class Inbox:
    """A bus subscriber that keeps the frames it gets."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_frame(self, frame: bytes, message: object = None) -> None:
        self.frames.append(frame)


async def test_what_one_turn_sends_a_node_is_one_batch_in_order_other_layers_messages_included(redis_server: RedisServer) -> None:
    a, b = RedisBus(redis_server.url, "a"), RedisBus(redis_server.url, "b")
    await a.start()
    await b.start()
    try:
        inbox = Inbox()
        b.subscribe(node_topic("b"), inbox)
        await until(lambda: _confirmed(b), "node b's inbox to be subscribed")
        mail = Mail.of(a)
        assert Mail.of(a) is mail and Mail.of(b) is not mail  # one a bus: every sender's records share its batches
        mail.put("b", OPEN, 7, msgpack.packb(["ann", False, False]))
        mail.message("b", ["pair", "a", 7])  # another layer's message, after the open it depends on
        mail.put("b", REQUEST, 7, b"\x81\xa4type\xa4ping")
        await until(lambda: _arrived(inbox), "the batch")
        await asyncio.sleep(0.1)
        assert len(inbox.frames) == 1
        sender, records = read_batch(inbox.frames[0])
        assert sender == "a" and [(kind, link) for kind, link, _ in records] == [(OPEN, 7), (MESSAGE, 0), (REQUEST, 7)]
        assert msgpack.unpackb(records[1][2]) == ["pair", "a", 7]
        with pytest.raises(ValueError, match="cut short"):
            read_batch(inbox.frames[0][:-1])
    finally:
        await a.close()
        await b.close()


async def _confirmed(bus: RedisBus) -> bool:
    return bus.channels() <= bus.confirmed


async def _arrived(inbox: Inbox) -> bool:
    return bool(inbox.frames)


def _server_coroutine(coro: object) -> str | None:
    """The qualified name of ``coro`` if it is a coroutine of the server's own code, else ``None``."""
    code = getattr(coro, "cr_code", None)
    return code.co_qualname if code is not None and "/server/" in code.co_filename else None


async def test_relayed_moves_are_answered_on_the_tables_node_without_a_task_each(three: Nodes) -> None:
    bob, carol, table, views = await _relayed_game(three, "othello")
    loop = asyncio.get_running_loop()
    started: list[str] = []  # the server's coroutines made tasks while the moves are played

    def counting(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        name = _server_coroutine(coro)
        if name is not None:
            started.append(name)
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counting)  # type: ignore[arg-type]
    moves = 0
    try:
        while moves < 6:
            mover = next((p for p in (bob, carol) if views.get(p, {}).get("legal_moves")), None)
            assert mover is not None, views
            reply = await mover.request("move", table=table, move=views[mover]["legal_moves"][0])
            assert reply["type"] == "ok", reply  # committed to PostgreSQL on node a, relayed both ways
            moves += 1
            views = {}
            for player in (bob, carol):
                while player not in views:
                    push = await player.recv()
                    if push["type"] == "moved" and push.get("table") == table:
                        views[player] = push["view"]
    finally:
        loop.set_task_factory(None)
    assert moves == 6
    assert [name for name in started if name.endswith("_answer")] == []  # main made a task of each relayed move's handling


async def test_a_links_requests_are_answered_in_the_order_sent_even_while_a_move_waits_for_its_commit(three: Nodes) -> None:
    bob, carol, table, views = await _relayed_game(three, "othello")
    mover = bob if views[bob].get("legal_moves") else carol
    frames = b"".join(
        encode_frame(request)
        for request in (
            {"type": "move", "id": 101, "table": table, "move": views[mover]["legal_moves"][0]},  # waits for its commit
            {"type": "say", "id": 102, "table": table, "text": "then this"},  # answered at once, but only after the move
            {"type": "move", "id": 103, "table": table, "move": views[mover]["legal_moves"][0]},  # not this seat's turn any more
        )
    )
    await mover.send_bytes(frames)
    replies = []
    while len(replies) < 3:
        frame = await mover.recv()
        if frame.get("id") is not None:
            replies.append((frame["id"], frame["type"], frame.get("code")))
    assert [(request_id, kind) for request_id, kind, _ in replies] == [(101, "ok"), (102, "ok"), (103, "error")], replies
    assert replies[2][2] == "not_your_turn", replies
