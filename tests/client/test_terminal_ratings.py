"""The terminal's ratings commands against a real in-process server: new ... rated=yes, finger, top, the rating change."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Awaitable, Callable

from client import Client
from client.ratings_text import describe_finger, describe_ranking
from protocol import messages as m
from server.app import Server

from .test_terminal import CONTROL_CHARS, HOSTILE, Shell


async def claimed(server: Server, name: str) -> Shell:
    client = await Client.connect("127.0.0.1", server.port, name=name, claim=True, secret=secrets.token_urlsafe(32))
    return Shell(client)


async def test_a_rated_game_from_the_terminal(configured_server: Callable[..., Awaitable[Server]], tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))  # the archive, and so the last games, need a database
    ann, bob = await claimed(server, "ann"), await claimed(server, "bob")
    guest = Shell(await Client.connect("127.0.0.1", server.port, name="guest"))
    try:
        assert "Created table 1" in await ann.run("new othello rated=yes")
        assert "rated_needs_claim" in await guest.run("join 1")
        await bob.run("join 1")
        ann.feed(await ann.next_push(m.GameStarted))
        assert "ann (1500?) vs bob (1500?)" in await ann.run("list") and "rated" in await ann.run("list")
        await ann.term.client.move(1, "d3")
        await bob.term.client.move(1, "c3")
        await bob.run("resign")
        shown = ann.feed(await ann.next_push(m.GameOver))
        assert "Ratings: ann 1500 -> 1662 (+162), bob 1500 -> 1338 (-162)" in shown
        finger = await guest.run("finger ANN")
        assert "ann (online)" in finger and "othello untimed: 1662? (deviation 290), 1 games: 1 won, 0 drawn, 0 lost" in finger
        assert "#1 othello untimed vs bob: win, 1500 -> 1662 (+162)" in finger
        assert "nobody yet" in await guest.run("top othello")
        assert "usage: top GAME" in await guest.run("top")
        assert "a family is one of" in await guest.run("top othello hourly")
        assert "unknown_game" in await guest.run("top chess")
        assert "rated=on or rated=off" in await guest.run("new othello rated=maybe")
    finally:
        for shell in (ann, bob, guest):
            await shell.term.client.close()


def test_ratings_text_is_sanitised_and_pages() -> None:
    player = m.Player(
        id=1, name=HOSTILE, online=False,
        ratings=[m.RatingInfo(game="othello", family="blitz", rating=1700, deviation=60, provisional=False, games=50, wins=30, draws=5, losses=15)],
        recent=[m.PastGame(table=9, game="othello", family="blitz", opponent=HOSTILE, result="loss", before=1710, after=1700,
                           finished="2026-11-24T00:10:00.000Z")],
    )  # fmt: skip
    text = describe_finger(player)
    assert not any(char in text for char in CONTROL_CHARS)
    assert "othello blitz: 1700 (deviation 60), 50 games: 30 won, 5 drawn, 15 lost" in text and "1710 -> 1700 (-10), 2026-11-24 00:10" in text
    ranking = m.Ranking(id=2, game="othello", family=None, next=20, rows=[
        m.RankingRow(rank=1, name=HOSTILE, family="rapid", rating=1900, deviation=50, provisional=False, games=80)])
    text = describe_ranking(ranking)
    assert not any(char in text for char in CONTROL_CHARS)
    assert "1. " in text and "1900 rapid (80 games)" in text and "more: top othello all 21" in text
