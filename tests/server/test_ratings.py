"""Rated games over real sockets and real SQLite files: who may play them, which endings count, what is kept.

Names are claimed as players claim them: ``hello`` with ``claim`` and a secret (:func:`claim`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sqlite3
import time
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import pytest

from client import Client
from protocol import messages as m
from server.app import Server, ServerConfig
from server.ratings.glicko2 import Rating as Glicko, rate_game
from server.core.names import name_key

from tests.pgserver import run_sql

from .conftest import TIMEOUT_S, refused

Players = Callable[..., Awaitable[tuple[Client, Client]]]


def config(db: Path | None, **fields: object) -> ServerConfig:
    return ServerConfig(**{"host": "127.0.0.1", "port": 0, "server_name": "test", "grace_s": 30.0, "db_path": str(db) if db else None, **fields})  # type: ignore[arg-type]


async def claim(server: Server, name: str) -> Client:
    """Connect as ``name``, claiming it with a fresh secret."""
    client = await Client.connect("127.0.0.1", server.port, name=name, claim=True, secret=secrets.token_urlsafe(32))
    assert client.welcome is not None and client.welcome.claimed
    return client


@pytest.fixture
async def db_server(tmp_path: Path) -> AsyncIterator[Server]:
    server = Server(config(tmp_path / "parlour.sqlite3"))
    await server.start()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def players(db_server: Server) -> AsyncIterator[Players]:
    """Factory: ``ann, bob = await players()``: two claimed names, connected."""
    opened: list[Client] = []

    async def factory(first: str = "Ann", second: str = "Bob") -> tuple[Client, Client]:
        pair = (await claim(db_server, first), await claim(db_server, second))
        opened.extend(pair)
        return pair

    yield factory
    for client in opened:
        await client.close()


async def rated_table(black: Client, white: Client, time_control: str | None = None) -> int:
    """A rated othello table with ``black`` in seat 0 and ``white`` in seat 1, started."""
    table = (await black.create_table("othello", seat=0, rated=True, time_control=time_control)).table.id
    await white.join_table(table)
    return table


async def game_over(client: Client) -> m.GameOver:
    event = await client.next_event(m.GameOver, timeout_s=TIMEOUT_S)
    assert isinstance(event, m.GameOver)
    return event


def newcomers_after(score: float) -> Glicko:
    return rate_game(Glicko(), Glicko(), score)


# --- a rated game, its ratings, and the restart ------------------------------------------------


async def test_a_rated_game_changes_both_ratings_as_glicko2_says_and_they_survive_a_restart(any_db: str) -> None:
    db = any_db
    server = Server(config(db))
    await server.start()
    ann, bob = await claim(server, "Ann"), await claim(server, "Bob")
    try:
        joined = await ann.create_table("othello", seat=0, rated=True)
        assert joined.table.ratings == [m.SeatRating(rating=1500, provisional=True), None]
        table = joined.table.id
        assert (await bob.join_table(table)).table.ratings == [m.SeatRating(rating=1500, provisional=True)] * 2
        await ann.move(table, "d3")
        await bob.move(table, "c3")
        await bob.resign(table)
        over = await game_over(ann)
        won, lost = newcomers_after(1.0), newcomers_after(0.0)
        assert over.ratings == [
            m.RatingChange(before=1500, after=round(won.rating), deviation=round(won.deviation)),
            m.RatingChange(before=1500, after=round(lost.rating), deviation=round(lost.deviation)),
        ]
        assert (over.ratings[0].after, over.ratings[1].after) == (1662, 1338)
        assert server.ratings.get("ann", "othello", "untimed").rating == pytest.approx(won.rating)
    finally:
        await ann.close()
        await bob.close()
        await server.close()

    server = Server(config(db))
    await server.start()
    try:
        reader = await Client.connect("127.0.0.1", server.port, name="carol")
        player = await reader.finger("ANN")
        assert player.name == "Ann" and not player.online
        [rating] = player.ratings
        assert (rating.game, rating.family, rating.rating, rating.games, rating.wins, rating.draws, rating.losses) == ("othello", "untimed", 1662, 1, 1, 0, 0)
        assert rating.deviation == round(won.deviation) and rating.provisional
        [past] = player.recent
        assert (past.table, past.game, past.opponent, past.result, past.before, past.after) == (table, "othello", "Bob", "win", 1500, 1662)
        record = await reader.get_record(past.table)  # the archive's replay and export take the id
        assert "Ann" in record and "Bob" in record and "d3" in record
        assert [(r.result, r.after) for r in (await reader.finger("bob")).recent] == [("loss", 1338)]
        board = await reader.leaderboard("othello", provisional=True)
        assert [(row.rank, row.name, row.rating, row.provisional) for row in board.rows] == [(1, "Ann", 1662, True), (2, "Bob", 1338, True)]
        assert (await reader.leaderboard("othello")).rows == []  # provisional ratings are left out by default
        await reader.close()
    finally:
        await server.close()


async def test_the_next_rated_table_shows_the_new_rating_and_a_second_game_builds_on_the_first(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    for _ in range(2):
        table = await rated_table(ann, bob)
        await ann.move(table, "d3")
        await bob.move(table, "c3")
        await ann.offer(table, "draw")
        await bob.answer(table, "draw", True)
        over = await game_over(ann)
        await ann.leave_table(table)
        await bob.leave_table(table)
    first = rate_game(Glicko(), Glicko(), 0.5)
    second = rate_game(first, first, 0.5)
    assert over.ratings is not None and over.ratings[0].deviation == round(second.deviation) < round(first.deviation)
    joined = await ann.create_table("othello", seat=0, rated=True)
    assert joined.table.ratings == [m.SeatRating(rating=1500, provisional=True), None]
    player = await ann.finger("Ann")
    assert [(r.games, r.draws) for r in player.ratings] == [(2, 2)]
    assert [p.result for p in player.recent] == ["draw", "draw"]


# --- which endings are rated ---------------------------------------------------------------


async def test_flag_fall_is_rated_in_its_family(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    table = await rated_table(ann, bob, time_control="0.02+0")  # 1.2 s each: bullet
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    over = await game_over(bob)  # ann does not move again: her flag falls
    assert "ran out of time" in over.outcome["reason"] and over.outcome["winner"] == 1
    assert over.ratings is not None and [r.after for r in over.ratings] == [1338, 1662]
    assert [(r.family, r.losses) for r in (await ann.finger("ann")).ratings] == [("bullet", 1)]


async def test_leaving_a_running_rated_game_is_a_rated_forfeit(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    table = await rated_table(ann, bob)
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    await ann.leave_table(table)
    over = await game_over(bob)
    assert over.ratings is not None and [r.after for r in over.ratings] == [1338, 1662]


async def test_grace_expiry_is_a_rated_forfeit(tmp_path: Path) -> None:
    server = Server(config(tmp_path / "p.sqlite3", grace_s=0.2))
    await server.start()
    ann, bob = await claim(server, "Ann"), await claim(server, "Bob")
    try:
        table = await rated_table(ann, bob)
        await ann.move(table, "d3")
        await bob.move(table, "c3")
        await ann.close()  # gone: her seat is forfeited when the grace period ends
        over = await game_over(bob)
        assert "abandoned the game" in over.outcome["reason"]
        assert over.ratings is not None and [r.after for r in over.ratings] == [1338, 1662]
    finally:
        await bob.close()
        await server.close()


async def test_a_game_of_one_move_is_not_rated(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    table = await rated_table(ann, bob)
    await ann.move(table, "d3")
    await bob.resign(table)
    assert (await game_over(ann)).ratings is None
    assert (await ann.finger("bob")).ratings == [] and db_server.ratings.get("bob", "othello", "untimed").games == 0


async def test_an_unrated_table_changes_no_rating(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    table = (await ann.create_table("othello", seat=0)).table.id
    assert (await bob.join_table(table)).table.ratings is None
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    await bob.resign(table)
    assert (await game_over(ann)).ratings is None
    assert (await ann.finger("ann")).ratings == []


# --- who may play a rated game --------------------------------------------------------------


async def test_no_rated_game_against_the_computer(db_server: Server, players: Players) -> None:
    ann, _bob = await players()
    error = await refused(ann.create_table("nimble", seat=0, rated=True, computer={1: 1}), "bad_request")
    assert error.field == "rated" and "computer" in str(error)
    error = await refused(ann.create_table("othello", seat=0, rated=True, hints=True), "bad_request")
    assert error.field == "rated" and "hints" in str(error)


async def test_a_guest_cannot_sit_at_a_rated_table(db_server: Server, players: Players) -> None:
    ann, _bob = await players()
    guest = await Client.connect("127.0.0.1", db_server.port, name="guest")
    try:
        table = (await ann.create_table("othello", seat=0, rated=True)).table.id
        error = await refused(guest.join_table(table), "rated_needs_claim")
        assert "guest" in str(error) and "claim" in str(error)
        await refused(guest.create_table("othello", seat=0, rated=True), "rated_needs_claim")
        assert (await guest.watch_table(table)).seat is None  # watching is for everyone
    finally:
        await guest.close()


async def test_the_operator_can_refuse_rated_games(tmp_path: Path) -> None:
    server = Server(config(tmp_path / "p.sqlite3", rated=False))
    await server.start()
    ann = await claim(server, "Ann")
    try:
        error = await refused(ann.create_table("othello", seat=0, rated=True), "rated_off")
        assert "does not allow rated games" in str(error)
        assert (await ann.create_table("othello", seat=0)).table.ratings is None
    finally:
        await ann.close()
        await server.close()


# --- finger and leaderboard ------------------------------------------------------------------


def seed_ratings(db: str | Path, rows: list[tuple[str, str, float, float, int]]) -> None:
    """Store ratings as a server would have: (name, family, rating, deviation, games), updated now."""
    for name, family, rating, deviation, games in rows:
        run_sql(
            str(db), "INSERT INTO ratings VALUES (?, ?, 'othello', ?, ?, ?, 0.06, ?, ?, 0, 0, ?)",
            (name_key(name), name, family, rating, deviation, games, games, time.time()),
        )


async def test_leaderboards_rank_page_and_leave_out_provisional_ratings(any_db: str) -> None:
    db = any_db
    server = Server(config(db))
    await server.start()
    await server.close()  # the file now has the schema
    seed_ratings(db, [("Ann", "blitz", 1900, 60, 40), ("Bob", "blitz", 2000, 200, 3), ("Cy", "blitz", 1700, 50, 90),
                      ("Dee", "rapid", 1800, 70, 20), ("Ann", "rapid", 1600, 70, 20), ("Eve", "blitz", 1650, 109, 12)])
    server = Server(config(db))
    await server.start()
    reader = await Client.connect("127.0.0.1", server.port, name="reader")
    try:
        blitz = await reader.leaderboard("othello", "blitz")
        assert [(r.rank, r.name, r.rating) for r in blitz.rows] == [(1, "Ann", 1900), (2, "Cy", 1700), (3, "Eve", 1650)]
        assert blitz.next is None and blitz.family == "blitz"
        first = await reader.leaderboard("othello", "blitz", limit=2)
        assert [r.name for r in first.rows] == ["Ann", "Cy"] and first.next == 2
        second = await reader.leaderboard("othello", "blitz", limit=2, offset=first.next)
        assert [(r.rank, r.name) for r in second.rows] == [(3, "Eve")] and second.next is None
        everyone = await reader.leaderboard("othello", "blitz", provisional=True)
        assert [(r.name, r.provisional) for r in everyone.rows][:2] == [("Bob", True), ("Ann", False)]
        best = await reader.leaderboard("othello")  # each player's best family
        assert [(r.name, r.family, r.rating) for r in best.rows] == [("Ann", "blitz", 1900), ("Dee", "rapid", 1800), ("Cy", "blitz", 1700), ("Eve", "blitz", 1650)]
        await refused(reader.leaderboard("chess"), "unknown_game")
        with pytest.raises(Exception, match="limit"):
            await reader.leaderboard("othello", limit=51)
        player = await reader.finger("ann")
        assert [(r.family, r.rating, r.provisional) for r in player.ratings] == [("blitz", 1900, False), ("rapid", 1600, False)]
        nobody = await reader.finger("Nobody")
        assert (nobody.name, nobody.ratings, nobody.recent, nobody.online) == ("Nobody", [], [], False)
        assert (await reader.finger("reader")).online
        await refused(reader.finger("bad\x00name"), "bad_name")
    finally:
        await reader.close()
        await server.close()


async def test_a_damaged_rating_row_is_skipped_with_a_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "p.sqlite3"
    server = Server(config(db))
    await server.start()
    await server.close()
    seed_ratings(db, [("Ann", "blitz", 1900, 60, 40), ("Bob", "blitz", 1800, 60, 40)])
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE ratings SET rating = 'lots', deviation = -1 WHERE name = 'Bob'")
    connection.close()
    caplog.set_level(logging.ERROR, logger="server.ratings.ratings")
    server = Server(config(db))
    await server.start()
    reader = await claim(server, "Bob")
    try:
        assert [r.name for r in (await reader.leaderboard("othello", "blitz")).rows] == ["Ann"]
        assert (await reader.finger("bob")).ratings == []
        assert any("cannot be read back and is skipped" in record.getMessage() for record in caplog.records)
        # Bob plays on from a newcomer's rating in that family
        joined = await reader.create_table("othello", seat=0, rated=True, time_control="3+2")
        assert joined.table.ratings == [m.SeatRating(rating=1500, provisional=True), None]
    finally:
        await reader.close()
        await server.close()


async def test_two_rated_games_of_one_player_ending_together_both_count(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    carol = await claim(db_server, "Carol")
    try:
        first = await rated_table(ann, bob)
        second = await rated_table(ann, carol)
        for table, opponent in ((first, bob), (second, carol)):
            await ann.move(table, "d3")
            await opponent.move(table, "c3")
        await asyncio.gather(bob.resign(first), carol.resign(second))
        [rating] = (await ann.finger("ann")).ratings
        assert (rating.games, rating.wins) == (2, 2)
        assert rating.rating == round(rate_game(newcomers_after(1.0), Glicko(), 1.0).rating)
    finally:
        await carol.close()


async def test_without_a_database_ratings_live_in_memory(configured_server: Callable[..., Awaitable[Server]]) -> None:
    server = await configured_server()
    ann, bob = await claim(server, "Ann"), await claim(server, "Bob")
    try:
        table = await rated_table(ann, bob)
        await ann.move(table, "d3")
        await bob.move(table, "c3")
        await bob.resign(table)
        assert [r.after for r in (await game_over(ann)).ratings or []] == [1662, 1338]
        assert [(r.rating, r.wins) for r in (await bob.finger("ann")).ratings] == [(1662, 1)]
        assert [r.name for r in (await bob.leaderboard("othello", provisional=True)).rows] == ["Ann", "Bob"]
    finally:
        await ann.close()
        await bob.close()


async def test_a_rated_game_restored_after_a_restart_is_still_rated(any_db: str) -> None:
    db = any_db
    server = Server(config(db))
    await server.start()
    ann, bob = await claim(server, "Ann"), await claim(server, "Bob")
    table = await rated_table(ann, bob, time_control="10+5")  # rapid
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    tokens = (ann.token, bob.token)
    await server.close()
    await ann.close()
    await bob.close()

    server = Server(config(db))
    await server.start()
    ann = await Client.connect("127.0.0.1", server.port, name="Ann", token=tokens[0])
    try:
        resumed = await ann.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert isinstance(resumed, m.Resumed) and resumed.table.ratings == [m.SeatRating(rating=1500, provisional=True)] * 2
        await ann.resign(table)
        over = await game_over(ann)
        assert over.ratings is not None and [r.after for r in over.ratings] == [1338, 1662]
        assert [(r.family, r.losses) for r in (await ann.finger("Ann")).ratings] == [("rapid", 1)]
    finally:
        await ann.close()
        await server.close()
