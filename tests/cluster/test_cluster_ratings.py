"""Ratings across nodes: two rated games of one player ending at once on two nodes (one real PostgreSQL, one redis-server) both count.

Each node plans a game's rating change from the player's rating as it read it;
the test holds the ``ratings`` table locked (as a slow commit would) while both
games end, so that both nodes plan from the same old rating, then lets both
commits go. The second one must not overwrite the first.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from server.ratings import glicko2

from ..server.conftest import Raw
from .test_cluster_identity import SharedNodes, _claimed
from .test_cluster_nodes import _listed_all, until


async def _play_two_plies(players: list[Raw], table: int) -> None:
    """Each seat plays its first legal move once (a rated game needs two plies)."""
    latest: dict[Raw, dict[str, Any] | None] = {player: None for player in players}
    played = 0
    for _ in range(200):
        if played == 2:
            return
        for conn in players:
            for push in await conn.sync():
                if push.get("table") == table and isinstance(push.get("view"), dict):
                    latest[conn] = push["view"]
        mover = next((player for player in players if (latest[player] or {}).get("legal_moves")), None)
        if mover is None:
            await asyncio.sleep(0.02)
            continue
        reply = await mover.request("move", table=table, move=latest[mover]["legal_moves"][0])  # type: ignore[index]
        assert reply["type"] == "ok", reply
        latest[mover] = None
        played += 1
    raise AssertionError(f"only {played} plies were played at table {table}")


async def _rated_table(creator: Raw, joiner: Raw, watcher_of_lobby: Raw) -> int:
    table = (await creator.request("create_table", game="othello", options={"size": 6}, seat=0, rated=True))["table"]["id"]
    await until(lambda: _listed_all(watcher_of_lobby, {table}), "the other node to list the table")
    joined = await joiner.request("join_table", table=table, seat=1)
    assert joined["type"] == "table_joined", joined
    return int(table)


def _waiting_on_locks(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").fetchone()
        return int(row[0]) if row else 0


async def test_two_rated_games_of_one_player_ending_at_once_on_two_nodes_both_count(two: SharedNodes) -> None:
    ann, bob = await _claimed(two, "a", "ann"), await _claimed(two, "a", "bob")
    carol = await _claimed(two, "b", "carol")
    on_a = await _rated_table(ann, bob, carol)  # hosted on node a
    await _play_two_plies([ann, bob], on_a)
    on_b = await _rated_table(carol, ann, ann)  # hosted on node b; ann plays there through node a's relay
    await _play_two_plies([carol, ann], on_b)

    with psycopg.connect(two.db_url) as holder:
        holder.execute("LOCK TABLE ratings IN SHARE ROW EXCLUSIVE MODE")  # both nodes' game ends wait for it
        resigned = [asyncio.ensure_future(bob.request("resign", table=on_a)), asyncio.ensure_future(carol.request("resign", table=on_b))]
        await until(lambda: _both_waiting(two.db_url), "both nodes' commits to wait on the ratings table")
        holder.commit()
    for reply in await asyncio.gather(*resigned):
        assert reply["type"] == "ok", reply

    with psycopg.connect(two.db_url) as conn:
        stored = conn.execute("SELECT rating, games, wins FROM ratings WHERE name_key = 'ann' AND game = 'othello'").fetchone()
        befores = [row[0] for row in conn.execute("SELECT before FROM rating_changes WHERE name_key = 'ann' ORDER BY at").fetchall()]
    assert stored is not None
    rating, games, wins = stored
    assert (games, wins) == (2, 2)  # not 1: the second commit did not overwrite the first
    newcomer = glicko2.Rating(glicko2.DEFAULT_RATING, glicko2.DEFAULT_DEVIATION, glicko2.DEFAULT_VOLATILITY)
    once = glicko2.rate_game(newcomer, newcomer, 1.0)
    twice = glicko2.rate_game(once, newcomer, 1.0)  # both opponents are newcomers: either order gives this
    assert rating == pytest.approx(twice.rating, abs=0.01)
    assert befores == [pytest.approx(glicko2.DEFAULT_RATING), pytest.approx(once.rating, abs=0.01)]


async def _both_waiting(url: str) -> bool:
    return await asyncio.to_thread(_waiting_on_locks, url) >= 2
