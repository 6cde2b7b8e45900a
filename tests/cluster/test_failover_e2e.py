"""A node that dies takes no table with it: real ``parlour serve`` nodes, one real PostgreSQL, one real Redis.

A timed game lives on node a; its players are connected to nodes b and c, a
spectator to b. Node a is SIGKILLed mid-game: once its lease expires, node b
or c claims the table, restores it from the database, and the players and the
spectator get it whole again (``resumed``) without reconnecting, with every
acknowledged move and the clocks as they stood (the outage is not charged).
They play on. A SIGTERMed node hands its table over at once, without waiting
for its lease. With PostgreSQL stopped, a move is refused with
``storage_unavailable``; once it is back, play goes on.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any, AsyncIterator, Callable

import pytest

from server.cluster.relay import REPLY_LOST_MESSAGE
from server.dispatch import STORAGE_UNAVAILABLE_MESSAGE
from server.storage.pg_lock import NODE_KEY
from tests.pgserver import PostgresServer, run_sql

from ..e2e.harness import Process, start_server
from ..server.recording import Recorder as Player, latest_view, offered, resumed
from .redis_server import RedisServer

pytestmark = pytest.mark.slow

WAIT_S = 40.0


class Cluster:
    """Nodes started as ``parlour serve`` processes on one database and one Redis, and players connected to them."""

    def __init__(self, redis: RedisServer, db: str) -> None:
        self.redis = redis
        self.db = db
        self.nodes: dict[str, tuple[Process, int]] = {}
        self.players: list[Player] = []

    def start(self, name: str, lease_s: float) -> None:
        self.nodes[name] = start_server("--db", self.db, "--bus", self.redis.url, "--node", name, "--lease-s", str(lease_s), "--grace", "300")

    async def connect(self, node: str, name: str) -> Player:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.nodes[node][1])
        player = Player(reader, writer, timeout_s=10.0)
        self.players.append(player)
        assert (await player.hello(name))["type"] == "welcome"
        return player

    def signal(self, node: str, number: int) -> None:
        process = self.nodes[node][0]
        os.kill(process.popen.pid, number)
        process.popen.wait(30)

    async def close(self) -> None:
        for player in self.players:
            await player.close()
        for process, _ in self.nodes.values():
            process.kill()


@pytest.fixture
async def cluster(redis_server: RedisServer, postgres_url: str) -> AsyncIterator[Cluster]:
    nodes = Cluster(redis_server, postgres_url)
    yield nodes
    await nodes.close()


async def until(check: Callable[[], Any], what: str, timeout_s: float = WAIT_S) -> Any:
    """Poll ``check`` (a coroutine function) until it returns something true; return that."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = await check()
        if result:
            return result
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def listed(player: Player, table: int) -> bool:
    reply = await player.request("list_tables")
    return any(line["id"] == table for line in reply["tables"])


async def play(players: list[Player], table: int, acked: list[str], count: int) -> None:
    """Play ``count`` more moves, each the mover's first legal one, noting each acknowledged move in ``acked``."""
    for _ in range(count):
        player, move = await until(lambda: offered(players, table, len(acked)), f"a player to be offered ply {len(acked) + 1}")
        reply = await player.request("move", table=table, move=move)
        assert reply["type"] == "ok", reply
        acked.append(move)


async def all_resumed(players: list[Player], table: int) -> list[dict[str, Any]] | None:
    for player in players:
        await player.sync()
    found = [resumed(player, table) for player in players]
    return found if all(found) else None  # type: ignore[return-value]


def stored_moves(db: str, table: int) -> list[str]:
    return [str(row[0]) for row in run_sql(db, "SELECT move FROM moves WHERE table_id = ? ORDER BY ply", (table,))]


async def table_on(cluster: Cluster, host_node: str, seats: dict[str, str], watcher_node: str, time_control: str | None) -> tuple[int, list[Player]]:
    """A table created on ``host_node`` by a player who does not sit, ann and bob seated from ``seats``' nodes, carol watching."""
    host = await cluster.connect(host_node, "host")
    created = await host.request("create_table", game="othello", options={"size": 6}, seat=None, time_control=time_control)
    table = created["table"]["id"]
    ann, bob, carol = await cluster.connect(seats["ann"], "ann"), await cluster.connect(seats["bob"], "bob"), await cluster.connect(watcher_node, "carol")
    for player in (ann, bob, carol):
        await until(lambda player=player: listed(player, table), "the table to be listed on every node")  # type: ignore[misc]
    assert (await ann.request("join_table", table=table, seat=0))["type"] == "table_joined"
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    assert (await carol.request("watch_table", table=table))["type"] == "table_joined"
    return table, [ann, bob, carol]


async def test_a_sigkilled_node_s_timed_game_goes_on_on_another_node_with_every_acknowledged_move(cluster: Cluster) -> None:
    lease_s = 6.0
    for name in ("a", "b", "c"):
        cluster.start(name, lease_s)
    table, (ann, bob, carol) = await table_on(cluster, "a", {"ann": "b", "bob": "c"}, "b", "5+0")
    acked: list[str] = []
    await play([ann, bob], table, acked, 4)
    last = run_sql(cluster.db, "SELECT clock_ms, other_ms, running FROM moves WHERE table_id = ? ORDER BY ply DESC LIMIT 1", (table,))[0]
    cluster.signal("a", signal.SIGKILL)
    killed = time.monotonic()
    back = await until(lambda: all_resumed([ann, bob, carol], table), "the players and the spectator to get the table back")
    outage_s = time.monotonic() - killed
    holder = run_sql(cluster.db, "SELECT node FROM table_leases WHERE table_id = ?", (table,))[0][0]
    assert holder in ("b", "c")
    for push in back:
        assert push["moves"] == acked  # every acknowledged move, nothing more
    assert [push["seat"] for push in back] == [0, 1, None]
    assert "legal_moves" not in back[2]["view"]  # the spectator's view, as before
    running = last[2]
    remaining = back[0]["table"]["clock"]["remaining_ms"]
    assert outage_s >= lease_s * 2 / 3  # (a lease renewed a third of a lease before the kill, at worst)
    assert remaining[running] > last[1] - 2000  # the side to move lost well under the outage: its time was not charged for it
    assert remaining[1 - running] == last[0]
    await play([ann, bob], table, acked, 4)  # played on the node that took the table over, through the relay
    await until(lambda: _seen_ply(carol, table, len(acked)), "the spectator to see the moves made after the failover")
    assert stored_moves(cluster.db, table) == acked


async def _seen_ply(player: Player, table: int, ply: int) -> bool:
    await player.sync()
    return any(frame.get("type") == "moved" and frame["table"] == table and frame["ply"] == ply for frame in player.seen)


async def test_a_sigtermed_node_hands_its_table_over_without_waiting_for_its_lease(cluster: Cluster) -> None:
    lease_s = 120.0  # far longer than the test may wait: only a hand-over moves the table
    for name in ("a", "b"):
        cluster.start(name, lease_s)
    table, (ann, bob, carol) = await table_on(cluster, "a", {"ann": "b", "bob": "b"}, "b", "5+0")
    acked: list[str] = []
    await play([ann, bob], table, acked, 2)
    cluster.signal("a", signal.SIGTERM)
    back = await until(lambda: all_resumed([ann, bob, carol], table), "the table to be handed to node b", timeout_s=lease_s / 4)
    assert all(push["moves"] == acked for push in back)
    await play([ann, bob], table, acked, 2)  # now local on node b
    assert stored_moves(cluster.db, table) == acked


async def test_with_postgresql_stopped_moves_are_refused_clearly_and_play_resumes_when_it_returns(
    cluster: Cluster, postgres_server: PostgresServer
) -> None:
    for name in ("a", "b"):
        cluster.start(name, 2.0)
    table, (ann, bob, carol) = await table_on(cluster, "a", {"ann": "a", "bob": "b"}, "b", None)
    acked: list[str] = []
    await play([ann, bob], table, acked, 2)
    postgres_server.stop()
    try:
        view = await until(lambda: _offered(ann, table, len(acked)), "ann's turn")
        refused = await ann.request("move", table=table, move=view["legal_moves"][0])
        assert refused["type"] == "error" and refused["code"] == "storage_unavailable", refused
        assert refused["message"] == STORAGE_UNAVAILABLE_MESSAGE
    finally:
        postgres_server.start()
    await _until_the_nodes_hold_their_locks(cluster.db, 2)

    async def accepted() -> bool:
        for player in (ann, bob):
            await player.sync()
            view = latest_view(player, table, len(acked))
            if view is not None and view.get("legal_moves"):
                reply = await player.request("move", table=table, move=view["legal_moves"][0])
                if reply["type"] == "ok":
                    acked.append(view["legal_moves"][0])
                    return True
                assert reply["code"] == "storage_unavailable", reply  # (the table may be moving to node b meanwhile)
        return False

    await until(accepted, "a move to be accepted once PostgreSQL is back")
    await play([ann, bob], table, acked, 1)
    assert stored_moves(cluster.db, table) == acked


async def _until_the_nodes_hold_their_locks(db: str, nodes: int) -> None:
    """Wait until ``nodes`` nodes have taken their database locks again after PostgreSQL came back (each checks its lock
    every second, ``pg_lock.CHECK_S``: one that has not noticed the restart yet may accept a move, then refuse the next
    as while PostgreSQL was down, until it holds its lock again)."""
    held = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = ? AND granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    deadline = time.monotonic() + WAIT_S
    while run_sql(db, held, (NODE_KEY,)) != [(nodes,)]:
        assert time.monotonic() < deadline, f"the {nodes} nodes did not take their locks again after PostgreSQL came back"
        await asyncio.sleep(0.1)


async def _offered(player: Player, table: int, ply: int) -> dict[str, Any] | None:
    await player.sync()
    view = latest_view(player, table, ply)
    return view if view is not None and view.get("legal_moves") else None


# --- a relayed request whose node goes away unanswered ------------------------------------------


def _answers(player: Player, request_id: int) -> list[dict[str, Any]]:
    """Every frame ``player`` was sent with ``id`` ``request_id``."""
    return [frame for frame in player.seen if frame.get("id") == request_id]


async def _answered(player: Player, request_id: int) -> list[dict[str, Any]]:
    await player.sync()
    return _answers(player, request_id)


async def _unanswered_move(cluster: Cluster, stop: signal.Signals) -> tuple[int, list[Player], list[str], Player, int]:
    """Nodes a and b; a table on node a whose players (and spectator) are all on node b, two moves played; then ``stop``
    sent to node a and a move relayed to it. Return the table, the players, the moves acknowledged, the mover and
    the ``id`` of its move, once it was answered."""
    for name in ("a", "b"):
        cluster.start(name, 2.0)
    table, players = await table_on(cluster, "a", {"ann": "b", "bob": "b"}, "b", None)
    acked: list[str] = []
    await play(players[:2], table, acked, 2)
    mover, move = await until(lambda: offered(players[:2], table, len(acked)), "a player to be offered ply 3")
    os.kill(cluster.nodes["a"][0].popen.pid, stop)
    request_id = next(mover.ids)
    await mover.send(type="move", id=request_id, table=table, move=move)  # relayed by node b to node a, which cannot answer
    await until(lambda: _answered(mover, request_id), "the move relayed to the stopped node to be answered")
    return table, players, acked, mover, request_id


def _reply_lost_then_resumed(mover: Player, request_id: int, table: int, acked: list[str]) -> None:
    """``mover`` got one answer, ``reply_lost``, then the table as it stands (``resumed``, without the move)."""
    [answer] = _answers(mover, request_id)
    assert answer["type"] == "error" and answer["code"] == "reply_lost" and answer["message"] == REPLY_LOST_MESSAGE, answer
    back = resumed(mover, table)
    assert back is not None and mover.seen.index(back) > mover.seen.index(answer), mover.seen[-5:]
    assert back["moves"] == acked


async def test_a_move_relayed_to_a_node_killed_before_answering_gets_reply_lost_and_the_table_back(cluster: Cluster) -> None:
    table, players, acked, mover, request_id = await _unanswered_move(cluster, signal.SIGKILL)
    cluster.nodes["a"][0].popen.wait(30)
    await until(lambda: all_resumed(players, table), "the players and the spectator to get the table back from node b")
    _reply_lost_then_resumed(mover, request_id, table, acked)
    await play(players[:2], table, acked, 2)  # on node b now; the move that got no answer was never played
    assert stored_moves(cluster.db, table) == acked
    assert len(_answers(mover, request_id)) == 1


async def test_the_late_reply_of_a_node_that_lost_the_table_meanwhile_is_dropped_after_reply_lost(cluster: Cluster) -> None:
    table, players, acked, mover, request_id = await _unanswered_move(cluster, signal.SIGSTOP)  # node a hangs (as if paused)
    await until(lambda: all_resumed(players, table), "the players and the spectator to get the table back from node b")
    _reply_lost_then_resumed(mover, request_id, table, acked)
    os.kill(cluster.nodes["a"][0].popen.pid, signal.SIGCONT)  # node a answers the move now: refused, its lease is lost
    challenged = await mover.request("challenge", name="host", game="nimble")  # through the same link: answered after the move
    assert challenged["type"] == "challenge_sent", challenged
    assert len(_answers(mover, request_id)) == 1  # node a's late answer came back to node b, which dropped it
    acked[:] = stored_moves(cluster.db, table)  # (had node a handed the move on to node b, it was played: reply_lost does not say)
    await play(players[:2], table, acked, 2)
    assert stored_moves(cluster.db, table) == acked
