"""``get_record`` with ``format: "ggf"`` over real sockets and a real SQLite file: ratings, clock, result; only Othello."""

from __future__ import annotations

import re
from pathlib import Path

from client import Client
from games.ggf import GgfClock, GgfResult, format_ggf, ggf_to_record, parse_ggf
from games.record import parse_record
from protocol import messages as m
from server.app import Server

from .conftest import refused
from .test_ratings import Players, db_server, game_over, newcomers_after, players, rated_table  # noqa: F401 (fixtures)


async def test_a_rated_timed_othello_game_comes_as_ggf_with_the_ratings_before_it_and_the_clock(db_server: Server, players: Players) -> None:
    ann, bob = await players()
    first = await rated_table(ann, bob, time_control="5+3")
    await ann.move(first, "d3")
    await bob.move(first, "c3")
    await bob.resign(first)
    await game_over(ann)
    second = await rated_table(ann, bob, time_control="5+3")
    await ann.move(second, "d3")
    await bob.move(second, "c3")
    await bob.resign(second)
    await game_over(ann)

    text = await ann.get_record(first, "ggf")
    game = parse_ggf(text)
    assert format_ggf(game) == text
    assert (game.place, game.black, game.white, game.game_type) == ("Parlour", "Ann", "Bob", "8")
    assert (game.black_rating, game.white_rating) == (1500.0, 1500.0)
    assert game.clock == GgfClock(300.0, 3.0, 0.0)
    assert game.result == GgfResult(64.0, "r")  # White resigned: Black wins by the whole board
    assert [(move.color, move.square) for move in game.moves] == [("B", "D3"), ("W", "C3")]
    assert all(move.time_s is not None and 0 <= move.time_s < 5 for move in game.moves)
    assert re.fullmatch(r"\d{4}\.\d\d\.\d\d_\d\d:\d\d:\d\d\.UTC", game.date or "")
    assert [ply.move for ply in ggf_to_record(game).moves] == [ply.move for ply in parse_record(await ann.get_record(first)).moves]

    later = parse_ggf(await bob.get_record(second, "ggf"))
    won, lost = newcomers_after(1.0), newcomers_after(0.0)
    assert (later.black_rating, later.white_rating) == (round(won.rating, 2), round(lost.rating, 2))
    assert [(move.color, move.square) for move in later.moves] == [("B", "D3"), ("W", "C3")]


async def test_ggf_of_another_game_is_refused_naming_the_game_and_text_is_still_given(db_server: Server) -> None:
    ann = await Client.connect("127.0.0.1", db_server.port, name="ann")
    bob = await Client.connect("127.0.0.1", db_server.port, name="bob")
    try:
        table = (await ann.create_table("nimble")).table.id
        await bob.join_table(table)
        await bob.resign(table)
        await game_over(ann)
        error = await refused(ann.get_record(table, "ggf"), "bad_request")
        assert error.field == "format"
        assert error.message == f"GGF records are for Othello games only, and game {table} is nimble; export it as text instead"
        assert parse_record(await ann.get_record(table)).game == "nimble"
        bad = await refused(ann.request(m.GetRecord, table=table, format="pgn"), "bad_message")
        assert bad.field == "format"
    finally:
        await ann.close()
        await bob.close()


async def test_the_reply_says_its_format_and_a_plain_request_is_answered_as_before(db_server: Server, tmp_path: Path) -> None:
    ann = await Client.connect("127.0.0.1", db_server.port, name="ann")
    bob = await Client.connect("127.0.0.1", db_server.port, name="bob")
    try:
        table = (await ann.create_table("othello", {"size": 6})).table.id
        await bob.join_table(table)
        await ann.resign(table)
        await game_over(bob)
        plain = await ann.request(m.GetRecord, table=table)
        assert isinstance(plain, m.Record) and plain.format == "text" and plain.text.startswith("Game: othello")
        assert b"format" not in m.to_wire(plain)  # left out at its default, as older servers send it
        ggf = await ann.request(m.GetRecord, table=table, format="ggf")
        assert isinstance(ggf, m.Record) and ggf.format == "ggf"
        assert ggf.text.startswith("(;GM[Othello]PC[Parlour]") and "TY[6]RE[-36.00:r]BO[6 ------ ------ --O*-- --*O-- ------ ------ *];)" in ggf.text
    finally:
        await ann.close()
        await bob.close()
