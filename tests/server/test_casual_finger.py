"""``finger`` counts casual games too, apart from the rated ones (real servers on 127.0.0.1, real SQLite files).

A casual game is a finished game that changed no rating: an unrated table, a
game against the computer, a rated table's game that ended too soon to be
rated. Games ended by a move, a resignation and an agreement all count; a
rated game counts only in the ratings. The counts survive a restart; without
a database they are kept in memory (the move that ends the game then takes
the slow path too).
"""

from __future__ import annotations

import secrets

from client import Client
from client.ratings_text import describe_finger
from client.terminal import TerminalClient
from protocol import messages as m
from server.app import Server, ServerConfig

from .conftest import TIMEOUT_S

ONE_MOVE = {"board": [0, 1, 0]}
"""A Nimble setup that the first player wins with the first move (2-1)."""


def _config(db: str | None) -> ServerConfig:
    return ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=str(db) if db else None, bot_seconds=0.02, bot_workers=1)


async def _claim(server: Server, name: str) -> Client:
    return await Client.connect("127.0.0.1", server.port, name=name, claim=True, secret=secrets.token_urlsafe(32))


async def _over(client: Client, table: int) -> m.GameOver:
    while (over := await client.next_event(m.GameOver, timeout_s=TIMEOUT_S)).table != table:
        pass
    return over


async def _table(ann: Client, bob: Client, game: str, options: dict | None = None, *, rated: bool = False) -> int:
    table = (await ann.create_table(game, options, seat=0, rated=rated)).table.id
    await bob.join_table(table)
    return table


async def _play_every_kind_of_ending(ann: Client, bob: Client) -> None:
    """ann wins at Nimble by a move and at Othello by bob's resignation, draws an Othello game, plays one rated."""
    nimble = await _table(ann, bob, "nimble", ONE_MOVE)
    await ann.move(nimble, "2-1")
    assert (await _over(bob, nimble)).outcome["winner"] == 0
    resigned = await _table(ann, bob, "othello")
    await bob.resign(resigned)
    await _over(ann, resigned)
    drawn = await _table(bob, ann, "othello")
    await ann.offer(drawn, "draw")
    await bob.answer(drawn, "draw", True)
    await _over(ann, drawn)
    too_short = await _table(ann, bob, "othello", rated=True)  # one ply: not rated, so casual
    await ann.move(too_short, "d3")
    await bob.resign(too_short)
    assert (await _over(ann, too_short)).ratings is None
    rated = await _table(ann, bob, "othello", rated=True)
    await ann.move(rated, "d3")
    await bob.move(rated, "c3")
    await bob.resign(rated)
    assert (await _over(ann, rated)).ratings is not None


def _casual(player: m.Player) -> dict[str, tuple[int, int, int, int]]:
    return {c.game: (c.games, c.wins, c.draws, c.losses) for c in player.casual}


async def test_finger_counts_casual_games_apart_from_rated_ones_and_they_survive_a_restart(any_db: str) -> None:
    db = any_db
    server = Server(_config(db))
    await server.start()
    ann, bob = await _claim(server, "Ann"), await _claim(server, "Bob")
    try:
        await _play_every_kind_of_ending(ann, bob)
        computer = (await ann.create_table("othello", computer={1: 1})).table.id  # the computer's seat counts nothing
        await ann.resign(computer)
        await _over(ann, computer)
        player = await bob.finger("ANN")
        assert _casual(player) == {"nimble": (1, 1, 0, 0), "othello": (4, 2, 1, 1)}
        assert [(r.game, r.games, r.wins) for r in player.ratings] == [("othello", 1, 1)]
        assert _casual(await ann.finger("bob")) == {"nimble": (1, 0, 0, 1), "othello": (3, 0, 1, 2)}
    finally:
        await ann.close()
        await bob.close()
        await server.close()

    again = Server(_config(db))
    await again.start()
    try:
        reader = await Client.connect("127.0.0.1", again.port, name="reader")
        assert _casual(await reader.finger("ann")) == {"nimble": (1, 1, 0, 0), "othello": (4, 2, 1, 1)}
        assert _casual(await reader.finger("reader")) == {}
        await reader.close()
    finally:
        await again.close()


async def test_without_a_database_casual_games_are_counted_in_memory(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    for _ in range(2):
        table = await _table(ann, bob, "nimble", ONE_MOVE)
        await ann.move(table, "2-1")  # the game's end waits for its count, even on the fast path
        await _over(bob, table)
    player = await bob.finger("ann")
    assert _casual(player) == {"nimble": (2, 2, 0, 0)} and player.ratings == []
    assert _casual(await ann.finger("bob")) == {"nimble": (2, 0, 0, 2)}


async def test_the_line_client_shows_rated_and_casual_games_apart(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = await _table(ann, bob, "nimble", ONE_MOVE)
    await ann.move(table, "2-1")
    await _over(bob, table)
    written: list[str] = []
    await TerminalClient(bob, written.append).handle("finger ann")
    text = "\n".join(written)
    assert "  rated: no rated games yet" in text
    assert "  casual (unrated):\n    nimble: 1 games: 1 won, 0 drawn, 0 lost" in text


def test_finger_text_lists_ratings_then_casual_games() -> None:
    player = m.Player(
        id=1, name="ann", online=True,
        ratings=[m.RatingInfo(game="othello", family="blitz", rating=1700, deviation=60, provisional=False, games=5, wins=3, draws=1, losses=1)],
        recent=[],
        casual=[m.CasualInfo(game="tactego", games=7, wins=4, draws=0, losses=3)],
    )  # fmt: skip
    lines = describe_finger(player).splitlines()
    assert lines == [
        "ann (online)",
        "  rated:",
        "    othello blitz: 1700 (deviation 60), 5 games: 3 won, 1 drawn, 1 lost",
        "  casual (unrated):",
        "    tactego: 7 games: 4 won, 0 drawn, 3 lost",
    ]
