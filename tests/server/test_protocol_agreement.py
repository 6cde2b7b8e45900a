"""Where PROTOCOL.md and the server once disagreed, over real sockets.

Each test drives a real server on 127.0.0.1 and checks the behaviour the
document now states: an already-over setup cannot be sat at, a game is
rematched once, takebacks count the players' own plies, a pass the server
will play is not offered to anyone, and ``welcome`` announces the request
rate.
"""

from __future__ import annotations

from typing import Any

import pytest

import games
from client import Client
from protocol import messages as m
from server.net.limits import Limits

from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, RawFactory, refused
from .test_play import Game, game_with_pass

OVER_BOARD = {"board": [3, 0, 0]}
"""A Nimble setup with every pawn on square 1: over before the first move."""

WATCHERS = 60
"""Spectators enough that sending one ply's pushes to the table takes over a millisecond."""


async def _next(client: Client, kind: type[m.Message]) -> Any:
    return await client.next_event(kind, timeout_s=TIMEOUT_S)


@pytest.fixture
async def trio(connect) -> tuple[Client, Client, Client]:
    """Three connected clients: ann (Black), bob (White), cat (spectator)."""
    return await connect("ann"), await connect("bob"), await connect("cat")


# --- create_table and join_table at an already-over setup (§10) ---------------------------


async def test_an_over_setup_created_with_a_seat_is_refused_with_game_over(connect) -> None:
    ann = await connect("ann")
    error = await refused(ann.create_table("nimble", OVER_BOARD, seat=0), "game_over")
    assert "seat null" in error.message and "no movable pawn" in error.message
    assert await ann.list_tables() == []  # nothing was created, nobody sits anywhere


async def test_an_over_setup_can_be_watched_but_not_joined(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    joined = await ann.create_table("nimble", OVER_BOARD, seat=None)
    assert joined.seat is None and joined.table.status == "over"
    assert joined.view["outcome"]["reason"].startswith("no movable pawn")
    await refused(bob.join_table(joined.table.id), "game_over")
    await refused(ann.join_table(joined.table.id, seat=1), "game_over")
    [info] = await bob.list_tables()
    assert info.seats == [None, None] and info.status == "over"


# --- rematch at most once (§5 offer) -------------------------------------------------------


async def test_a_rematch_offer_after_the_rematch_was_played_is_refused(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.resign(table)
    await ann.offer(table, "rematch")
    await bob.answer(table, "rematch", True)
    rematch = (await _next(ann, m.RematchStarted)).table.id
    for offerer in (ann, bob):
        error = await refused(offerer.offer(table, "rematch"), "bad_action")
        assert f"table {rematch}" in error.message
    await refused(ann.answer(table, "rematch", True), "bad_action")  # and nothing is pending


# --- takebacks across forced passes (§5 offer/answer, §7 taken_back) ------------------------


async def _up_to_first_pass(trio: tuple[Client, Client, Client]) -> tuple[Game, list[str], int]:
    """A 6×6 Othello game played up to its first forced pass (the server's), and the seat that moves after it."""
    ann, bob, cat = trio
    _seed, moves = game_with_pass(size=6)
    game = await Game.start(ann, bob, cat, size=6)
    while "pass" not in game.moves:
        await game.play(moves[len(game.moves)])
    assert game.moves[-1] == "pass" and game.state.to_move is not None
    return game, moves, game.state.to_move


async def test_a_one_ply_takeback_right_after_a_forced_pass_takes_back_the_move_and_the_pass(trio) -> None:
    game, _moves, mover = await _up_to_first_pass(trio)
    before = game.moves[:-2]
    asker, other = game.players[mover], game.players[1 - mover]
    await asker.offer(game.id, "takeback", plies=1)
    await other.answer(game.id, "takeback", True)
    expected = games.get("othello").new_state({"size": 6})
    for move in before:
        expected = expected.play(move)
    for client, seat in game.everyone:
        taken = await _next(client, m.TakenBack)
        assert taken.plies == 2 and taken.moves == before, (client.name, taken)
        assert taken.view == expected.view(seat)
    assert expected.to_move == mover  # the asker's own move is undone: their turn again
    await asker.move(game.id, expected.legal_moves()[-1], ply=len(before))


async def test_a_takeback_counts_only_the_players_plies(trio) -> None:
    game, _moves, mover = await _up_to_first_pass(trio)
    played = len(game.moves) - 1
    asker, other = game.players[mover], game.players[1 - mover]
    error = await refused(asker.offer(game.id, "takeback", plies=played + 1), "bad_action")
    assert f"only {played} plies" in error.message and "forced passes do not count" in error.message
    await asker.offer(game.id, "takeback", plies=played)  # every ply back to the start
    await other.answer(game.id, "takeback", True)
    taken = await _next(asker, m.TakenBack)
    assert taken.plies == played + 1 and taken.moves == []
    assert taken.view["ply"] == 0 and taken.view["to_move"] == 0


async def test_a_takeback_across_a_forced_pass_never_stops_before_the_pass(trio) -> None:
    game, moves, mover = await _up_to_first_pass(trio)
    before_first_move = len(game.moves) - 2
    await game.play(moves[len(game.moves)])  # the seat that passed cannot move: the same seat moves again
    asker = game.players[mover]
    await asker.offer(game.id, "takeback", plies=2)  # this move, and the one before the pass
    await game.players[1 - mover].answer(game.id, "takeback", True)
    taken = await _next(asker, m.TakenBack)
    assert taken.moves == game.moves[:before_first_move]
    assert taken.plies == len(game.moves) - before_first_move >= 3
    assert taken.view["to_move"] == mover and "legal_moves" in taken.view and "forced_pass" not in taken.view


# --- views of a position where the server will pass (§9) -----------------------------------


async def test_a_pass_the_server_will_play_is_flagged_and_not_offered(trio) -> None:
    ann, bob, cat = trio
    _seed, moves = game_with_pass(size=6)
    first_pass = moves.index("pass")
    game = await Game.start(ann, bob, cat, size=6)
    for move in moves[: first_pass - 1]:
        if move != "pass":
            await game.play(move)
    mover = game.state.to_move
    assert mover is not None
    await game.players[mover].move(game.id, moves[first_pass - 1])
    for client, _seat in game.everyone:
        before_pass = await _next(client, m.Moved)
        assert not before_pass.forced and before_pass.view["to_move"] == 1 - mover
        assert before_pass.view.get("forced_pass") is True, (client.name, before_pass.view)
        assert "legal_moves" not in before_pass.view, (client.name, before_pass.view)
        the_pass = await _next(client, m.Moved)
        assert the_pass.forced and the_pass.seat == 1 - mover
        assert "forced_pass" not in the_pass.view


# --- welcome announces the request rate (§4.1, §6) ------------------------------------------


async def test_welcome_announces_the_request_rate(configured_server: ConfiguredServer, raw: RawFactory) -> None:
    server = await configured_server(limits=Limits(requests_per_s=7.5, request_burst=9))
    client = await Client.connect("127.0.0.1", server.port, name="ann")
    try:
        assert client.welcome is not None
        assert (client.welcome.requests_per_s, client.welcome.request_burst) == (7.5, 9)
    finally:
        await client.close()


async def test_welcome_announces_the_default_request_rate_on_the_wire(raw: RawFactory) -> None:
    conn = await raw()
    welcome = await conn.hello("ann")
    assert welcome["type"] == "welcome"
    assert (welcome["requests_per_s"], welcome["request_burst"]) == (50.0, 100)


# --- the clock of the moved pushes of one request (§7 moved) --------------------------------


async def test_every_moved_of_one_request_carries_the_same_clock(configured_server: ConfiguredServer) -> None:
    server = await configured_server(limits=Limits(max_connections_per_address=200, connection_burst=200))
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    watchers = [await Client.connect("127.0.0.1", server.port, name=f"w{i}") for i in range(WATCHERS)]
    try:
        table = (await ann.create_table("othello", {"size": 6}, time_control="5+1")).table.id
        for watcher in watchers:  # many receivers: sending one ply's pushes takes a measurable time
            await watcher.watch_table(table)
        await bob.join_table(table)
        _seed, moves = game_with_pass(size=6)
        first_pass = moves.index("pass")
        players = (ann, bob)
        for ply, move in enumerate(moves[:first_pass]):
            await players[ply % 2].move(table, move)
        pushes = [await _next(ann, m.Moved) for _ in range(first_pass + 1)]
        before_pass, the_pass = pushes[-2:]
        assert the_pass.forced and before_pass.clock is not None
        assert before_pass.clock == the_pass.clock
        assert before_pass.clock["running"] == (first_pass - 1) % 2  # the pass gives the turn straight back
    finally:
        for client in (ann, bob, *watchers):
            await client.close()
