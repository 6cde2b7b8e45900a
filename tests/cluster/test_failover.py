"""Table leases and failover between nodes (in-process servers on real sockets, one real PostgreSQL, one real Redis).

A node whose renewal is paused (as if it hung or was cut off) loses its tables
to another node once their leases expire; from then on the fence refuses every
write it tries about them, so no move is acknowledged twice or lost; its
players follow the table to the node that took it and play on there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, AsyncIterator

import pytest

from server.cluster.leases import Leases
from server.dispatch import LEASE_LOST_MESSAGE
from server.storage.common import FENCE_ALL_SQL, LeaseLost
from server.storage.opening import open_store
from server.storage.rows import TableRow
from server.storage.statements import APPEND_MOVES, append_ply_sql, create_table_sql, update_table_sql
from server.storage.store import Statement
from server.storage.writer import merged_statements
from tests.pgserver import run_sql

from ..server.conftest import Raw
from .redis_server import RedisServer
from .test_cluster_nodes import Nodes, until
from .test_relay import play_out

LEASE_S = 1.0


@pytest.fixture
async def leased(redis_server: RedisServer, postgres_url: str) -> AsyncIterator[Nodes]:
    cluster = Nodes(redis_server.url, postgres_url, lease_s=LEASE_S)
    await cluster.start("a")
    await cluster.start("b")
    yield cluster
    await cluster.close()


def _row(table_id: int, status: str = "playing") -> TableRow:
    return TableRow(
        id=table_id, game="nimble", options={}, seed="s", created=1.0, time_control=None, seat_names=("ann", "bob"),
        seat_tokens=(None, None), status=status, started=1.0,
    )  # fmt: skip


async def test_leases_claim_renew_release_and_the_fence(postgres_url: str) -> None:
    store = open_store(postgres_url)
    await store.start()
    try:
        await store.write(create_table_sql(_row(1)), create_table_sql(_row(2)), create_table_sql(_row(3, status="over")))
        a, b = Leases(postgres_url, "a", 60.0), Leases(postgres_url, "b", 60.0)
        assert await a.claim_at_start() == {1, 2}  # nobody held the unfinished ones; a finished game is nobody's
        assert await b.claim_at_start() == set()  # a's leases run for a minute
        assert await a.renew() == {1, 2}  # one statement for both
        await store.write(*a.fence(1), update_table_sql(1, clocks=None))  # a holds table 1: its write goes through
        with pytest.raises(LeaseLost) as refused:
            await store.write(*b.fence(1), update_table_sql(1, status="over"))  # b does not
        assert refused.value.table == 1
        assert run_sql(postgres_url, "SELECT status FROM tables WHERE id = 1") == [("playing",)]  # nothing of it was kept
        assert await a.release() == {1, 2}
        assert await b.claim() == {1, 2}  # released leases are claimed at once
        with pytest.raises(LeaseLost):
            await store.write(*a.fence(2), update_table_sql(2, status="over"))  # a lost them
        assert await a.renew() == set()
        again = Leases(postgres_url, "b", 60.0)  # node b started again (its previous run is over): its tables are its own
        assert await again.claim_at_start() == {1, 2}
        with pytest.raises(LeaseLost):
            await store.write(*b.fence(1), update_table_sql(1, status="over"))  # the earlier run of b is fenced off too
        run_sql(postgres_url, "INSERT INTO table_leases VALUES (3, 'a', 'gone', now() - interval '2 minutes')")  # a finished game's
        run_sql(postgres_url, "UPDATE table_leases SET expires = now() - interval '2 minutes' WHERE table_id = 2")  # an unfinished one's
        assert await b.sweep() == 1  # only the finished game's expired lease goes
        assert [row[0] for row in run_sql(postgres_url, "SELECT table_id FROM table_leases ORDER BY table_id")] == [1, 2]
        for leases in (a, b, again):
            await leases.close()
    finally:
        await store.close()


@dataclass
class _Job:
    statements: tuple[Statement, ...]


def test_the_fences_of_one_group_commit_are_one_statement_and_its_moves_merge_again() -> None:
    leases = Leases("postgresql://unused", "a", 10.0)
    jobs = [_Job((*leases.fence(table), append_ply_sql(table, 1, 0, "d3", 1.0))) for table in (1, 2, 3)]
    plan = merged_statements(jobs)
    assert [sql for sql, _, _ in plan] == [FENCE_ALL_SQL, APPEND_MOVES[append_ply_sql(1, 1, 0, "d3", 1.0)[0]][2]]
    assert plan[0][1] == ([1, 2, 3], leases.run)


async def test_in_one_group_commit_a_write_whose_lease_was_lost_fails_alone(postgres_url: str) -> None:
    store = open_store(postgres_url)
    await store.start()
    try:
        await store.write(*(create_table_sql(_row(table)) for table in (1, 2, 3)))
        a, b = Leases(postgres_url, "a", 60.0), Leases(postgres_url, "b", 60.0)
        assert await a.claim_at_start() == {1, 2, 3}
        async with store._writer_gate:  # the writes pile up into one group
            writes = [store.write(*holder.fence(table), append_ply_sql(table, 1, 0, "d3", 1.0)) for holder, table in ((a, 1), (b, 2), (a, 3))]
            await asyncio.sleep(0)
        done = await asyncio.gather(*writes, return_exceptions=True)
        assert done[0] is None and done[2] is None and isinstance(done[1], LeaseLost), done
        assert run_sql(postgres_url, "SELECT table_id FROM moves ORDER BY table_id") == [(1,), (3,)]
        await a.close()
        await b.close()
    finally:
        await store.close()


async def _moved(conn: Raw, table: int, move: str) -> dict[str, Any]:
    return await conn.request("move", table=table, move=move)


async def _resumed(conn: Raw, table: int) -> dict[str, Any] | None:
    return next((push for push in await conn.sync() if push["type"] == "resumed" and push["table"]["id"] == table), None)


async def test_a_node_that_cannot_renew_loses_its_table_cannot_commit_a_move_for_it_and_its_players_follow_it(leased: Nodes) -> None:
    node_a, node_b = leased.servers["a"], leased.servers["b"]
    ann, bob = await leased.connect("a", "ann"), await leased.connect("a", "bob")
    table = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]
    assert (await bob.request("join_table", table=table, seat=1))["type"] == "table_joined"
    view = (await until(lambda: _view(ann, table), "ann's first view"))
    first = view["legal_moves"][0]
    assert (await _moved(ann, table, first))["type"] == "ok"
    assert node_a.failover is not None
    node_a.failover.paused = True  # node a hangs: it renews nothing, and claims nothing
    await until(lambda: _holds(node_b, table), "node b to claim the table once its lease expired")
    assert node_b.cluster is not None and table not in node_b.cluster.mirror.remote  # its own now, no longer node a's line
    bob_view = await until(lambda: _view(bob, table), "bob's view")
    refused = await _moved(bob, table, bob_view["legal_moves"][0])  # node a still has the table in memory: the fence refuses it
    assert refused["type"] == "error" and refused["code"] == "storage_unavailable" and refused["message"] == LEASE_LOST_MESSAGE, refused
    assert run_sql(leased.db_url, "SELECT ply, move FROM moves WHERE table_id = ? ORDER BY ply", (table,)) == [(1, first)]
    assert table not in node_a.tables  # dropped at once: node b answers from now on
    back = await until(lambda: _resumed(bob, table), "bob to see the table whole again, from node b")
    assert back["seat"] == 1 and back["moves"] == [first]
    played = await _moved(bob, table, back["view"]["legal_moves"][0])  # relayed by node a to node b
    assert played["type"] == "ok", played
    assert [row[0] for row in run_sql(leased.db_url, "SELECT ply FROM moves WHERE table_id = ? ORDER BY ply", (table,))] == [1, 2]


async def _view(conn: Raw, table: int) -> dict[str, Any] | None:
    for push in await conn.sync():
        if push.get("table") == table and isinstance(push.get("view"), dict) and push["view"].get("legal_moves"):
            return push["view"]
    return None


async def _holds(server: Any, table: int) -> bool:
    await asyncio.sleep(0)
    return table in server.tables


async def test_a_node_that_starts_restores_only_the_tables_it_holds_or_can_claim(leased: Nodes) -> None:
    ann = await leased.connect("a", "ann")
    table = (await ann.request("create_table", game="othello", options={"size": 6}, seat=0))["table"]["id"]
    node_c = await leased.start("c")  # the shared database holds node a's table, and node a holds its lease
    assert table not in node_c.tables
    assert run_sql(leased.db_url, "SELECT node FROM table_leases WHERE table_id = ?", (table,)) == [("a",)]


async def _prepared_runs(store: Any) -> dict[str, int]:
    """The prepared statements on the store's writer connection and how often each ran."""
    cursor = await store._writer.execute("SELECT name, generic_plans + custom_plans FROM pg_prepared_statements")
    return {row[0]: row[1] for row in await cursor.fetchall()}


async def test_a_lone_fenced_move_is_one_prepared_statement_that_a_lost_lease_refuses(postgres_url: str) -> None:
    store = open_store(postgres_url)
    await store.start()
    try:
        await store.write(create_table_sql(_row(1)), create_table_sql(_row(2)))
        a, b = Leases(postgres_url, "a", 60.0), Leases(postgres_url, "b", 60.0)
        assert await a.claim_at_start() == {1, 2}
        await store.write(*a.fence(1), append_ply_sql(1, 1, 0, "d3", 1.0))
        await store.write(*a.fence(1), append_ply_sql(1, 2, 1, "c5", 2.0, clock_ms=5, other_ms=6, running=0))
        await store.write(*a.fence(2), append_ply_sql(2, 1, 0, "d3", 1.0))
        runs = await _prepared_runs(store)
        assert runs.get("parlour_fenced_move_0") == 2 and runs.get("parlour_fenced_move_1") == 1, runs  # fence and INSERT in one statement
        assert store.commits == 4  # one commit a move (and one for the tables)
        with pytest.raises(LeaseLost) as refused:
            await store.write(*b.fence(1), append_ply_sql(1, 3, 0, "e6", 3.0))  # b does not hold table 1
        assert refused.value.table == 1
        assert run_sql(postgres_url, "SELECT table_id, ply FROM moves ORDER BY table_id, ply") == [(1, 1), (1, 2), (2, 1)]
        assert await a.release() == {1, 2} and await b.claim() == {1, 2}
        with pytest.raises(LeaseLost):
            await store.write(*a.fence(2), append_ply_sql(2, 2, 1, "c5", 2.0))  # a lost it: the same statement refuses it
        await store.write(*b.fence(2), append_ply_sql(2, 2, 1, "c5", 2.0))
        assert run_sql(postgres_url, "SELECT count(*) FROM moves WHERE table_id = 2") == [(2,)]
        await a.close()
        await b.close()
    finally:
        await store.close()


async def test_a_group_commit_of_fenced_moves_is_one_prepared_statement(postgres_url: str) -> None:
    store = open_store(postgres_url)
    await store.start()
    try:
        await store.write(*(create_table_sql(_row(table)) for table in (1, 2, 3)))
        a = Leases(postgres_url, "a", 60.0)
        assert await a.claim_at_start() == {1, 2, 3}
        async with store._writer_gate:  # the writes pile up into one group
            writes = [asyncio.ensure_future(store.write(*a.fence(table), append_ply_sql(table, 1, 0, "d3", 1.0))) for table in (1, 2, 3)]
            await asyncio.sleep(0.05)
        assert await asyncio.gather(*writes) == [None, None, None]
        assert (await _prepared_runs(store)).get("parlour_fenced_moves_0_3") == 1  # three fences and three rows: one statement
        assert store.commits == 2
        assert run_sql(postgres_url, "SELECT table_id, ply FROM moves ORDER BY table_id") == [(1, 1), (2, 1), (3, 1)]
        await a.close()
    finally:
        await store.close()


async def test_a_player_seated_by_a_challenge_on_another_node_follows_the_table_to_the_node_that_claims_it(leased: Nodes) -> None:
    node_c = await leased.start("c")
    ann, bob = await leased.connect("a", "ann"), await leased.connect("b", "bob")
    sent = await ann.request("challenge", name="bob", game="othello", options={"size": 6}, seat=0)
    assert sent["type"] == "challenge_sent", sent
    received = await until(lambda: _push(bob, "challenge_received"), "bob's challenge")
    assert (await bob.request("accept_challenge", challenge=received["challenge"]["id"]))["type"] == "ok"
    paired = await until(lambda: _push(ann, "paired"), "ann to be seated")  # no join_table of hers: the pairing seated her
    table = paired["table"]["id"]
    assert table in leased.servers["b"].tables
    first = paired["view"]["legal_moves"][0]
    assert (await _moved(ann, table, first))["type"] == "ok"  # relayed by node a to node b
    _pause_failover(leased, "a", "b")  # node b hangs; node a claims nothing: node c takes the table
    await until(lambda: _holds(node_c, table), "node c to claim the table once its lease expired")
    back = await until(lambda: _resumed(ann, table), "ann to see the table whole again, from node c")
    assert back["seat"] == 0 and back["moves"] == [first]
    await until(lambda: _listed_on(leased.servers["a"], table, "c"), "node a to know that node c holds the table")


def _pause_failover(nodes: Nodes, *names: str) -> None:
    """The named nodes hang as far as leases go: they renew nothing and claim nothing."""
    for name in names:
        failover = nodes.servers[name].failover
        assert failover is not None
        failover.paused = True


async def _push(conn: Raw, kind: str) -> dict[str, Any] | None:
    return next((push for push in await conn.sync() if push["type"] == kind), None)


async def _listed_on(server: Any, table: int, node: str) -> bool:
    await asyncio.sleep(0)
    return bool(server.cluster.mirror.owner.get(table) == node)


async def test_a_player_whose_link_to_the_claiming_node_is_open_already_gets_the_taken_over_seat_through_it(leased: Nodes) -> None:
    node_c = await leased.start("c")
    ann, bob = await leased.connect("a", "ann"), await leased.connect("c", "bob")
    host, carol = await leased.connect("b", "host"), await leased.connect("c", "carol")
    moving = (await host.request("create_table", game="nimble", seat=None))["table"]["id"]  # on node b, which will hang
    staying = (await carol.request("create_table", game="nimble", seat=0))["table"]["id"]  # on node c, which will claim the other
    for table, node in ((moving, "b"), (staying, "c")):
        await until(lambda table=table, node=node: _listed_on(leased.servers["a"], table, node), "node a to list the tables")  # type: ignore[misc]
    await until(lambda: _listed_on(node_c, moving, "b"), "node c to list node b's table")
    assert (await ann.request("join_table", table=staying, seat=1))["type"] == "table_joined"  # ann's link to node c opens
    assert (await ann.request("join_table", table=moving, seat=0))["type"] == "table_joined"
    assert (await bob.request("join_table", table=moving, seat=1))["type"] == "table_joined"
    _pause_failover(leased, "a", "b")  # node b hangs; node a claims nothing: node c takes the table
    await until(lambda: _holds(node_c, moving), "node c to claim the table once its lease expired")
    back = await until(lambda: _resumed(ann, moving), "ann to get her seat back from node c, through the link she had")
    assert back["seat"] == 0, back
    bob_back = await until(lambda: _resumed(bob, moving), "bob to see the table whole again, on node c")
    mover, view = (ann, back["view"]) if back["view"].get("legal_moves") else (bob, bob_back["view"])
    assert (await _moved(mover, moving, view["legal_moves"][0]))["type"] == "ok"
    seen: dict[Raw, list[dict[str, Any]]] = {ann: [], bob: []}
    assert await play_out([ann, bob], [], moving, seen) >= 1  # her moves too, relayed by node a to node c
