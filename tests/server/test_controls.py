"""Game controls, clocks, chat and the archive, over real sockets."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

import games
from client import Client
from games.record import parse_record, replay
from protocol import encode_frame
from protocol import messages as m
from server.app import Server, ServerConfig
from server.play.endings import FLAG_FELL_FIRST_MESSAGE, FLAG_FELL_MESSAGE

from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, Raw, refused


async def _game(connect: Any, *, time_control: str | None = None, watcher: bool = True) -> tuple[Client, Client, Client | None, int]:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello", time_control=time_control)).table.id
    cat = None
    if watcher:
        cat = await connect("cat")
        await cat.watch_table(table)
    await bob.join_table(table)
    return ann, bob, cat, table


async def _next(client: Client, kind: type[m.Message]) -> Any:
    return await client.next_event(kind, timeout_s=TIMEOUT_S)


# --- draw ---------------------------------------------------------------------------------


async def test_draw_offer_accepted_ends_the_game_for_everyone(connect) -> None:
    ann, bob, cat, table = await _game(connect)
    await ann.offer(table, "draw")
    offered = await _next(bob, m.Offered)
    assert (offered.seat, offered.kind) == (0, "draw")
    assert (await _next(cat, m.Offered)).kind == "draw"
    await bob.answer(table, "draw", True)
    for client in (ann, bob, cat):
        over = await _next(client, m.GameOver)
        assert over.outcome == {"winner": None, "reason": "draw by agreement", "score": None}


async def test_draw_offer_declined_and_refusals(connect) -> None:
    ann, bob, cat, table = await _game(connect)
    await refused(ann.answer(table, "draw", True), "bad_action")  # nothing offered
    await ann.offer(table, "draw")
    await refused(ann.offer(table, "draw"), "bad_action")  # twice
    await refused(ann.answer(table, "draw", True), "bad_action")  # own offer
    await refused(cat.offer(table, "draw"), "not_seated")
    await refused(cat.answer(table, "draw", True), "not_seated")
    await bob.answer(table, "draw", False)
    answered = await _next(ann, m.Answered)
    assert (answered.kind, answered.accepted, answered.lapsed) == ("draw", False, False)
    await refused(bob.answer(table, "draw", True), "bad_action")  # already answered


async def test_draw_offer_lapses_when_the_offerer_moves(connect) -> None:
    ann, bob, _cat, table = await _game(connect)
    await ann.offer(table, "draw")
    await ann.move(table, "d3")
    lapsed = await _next(bob, m.Answered)
    assert lapsed.kind == "draw" and lapsed.lapsed and not lapsed.accepted
    await refused(bob.answer(table, "draw", True), "bad_action")


async def test_offering_a_draw_back_accepts_it(connect) -> None:
    ann, bob, _cat, table = await _game(connect)
    await ann.offer(table, "draw")
    await bob.offer(table, "draw")
    assert (await _next(ann, m.GameOver)).outcome["reason"] == "draw by agreement"


# --- takeback ----------------------------------------------------------------------------


async def test_takeback_accepted_restores_the_position_for_everyone(connect) -> None:
    ann, bob, cat, table = await _game(connect)
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    await ann.move(table, "c4")
    await ann.offer(table, "takeback", plies=2)
    await refused(ann.offer(table, "takeback", plies=1), "bad_action")
    await bob.answer(table, "takeback", True)
    expected = games.get("othello").new_state().play("d3")
    for client, seat in ((ann, 0), (bob, 1), (cat, None)):
        taken = await _next(client, m.TakenBack)
        assert taken.plies == 2 and taken.moves == ["d3"]
        assert taken.view == expected.view(seat)
    await bob.move(table, "e3")  # white to move again, with a different move


async def test_takeback_refusals(connect) -> None:
    ann, bob, cat, table = await _game(connect)
    await refused(ann.offer(table, "takeback"), "bad_action")  # nothing played
    await ann.move(table, "d3")
    await refused(ann.offer(table, "takeback", plies=2), "bad_action")
    await refused(cat.offer(table, "takeback"), "not_seated")
    await ann.offer(table, "takeback")
    await bob.move(table, "c3")  # a move makes the request stale
    assert (await _next(ann, m.Answered)).lapsed
    await refused(bob.answer(table, "takeback", True), "bad_action")


# --- rematch -----------------------------------------------------------------------------


async def test_rematch_swaps_seats(connect) -> None:
    ann, bob, _cat, table = await _game(connect)
    await refused(ann.offer(table, "rematch"), "bad_action")  # game still running
    await ann.resign(table)
    await _next(bob, m.GameOver)
    await bob.offer(table, "rematch")
    assert (await _next(ann, m.Offered)).kind == "rematch"
    await ann.answer(table, "rematch", True)
    for client, seat in ((ann, 1), (bob, 0)):
        started = await _next(client, m.RematchStarted)
        assert started.previous == table and started.seat == seat
        assert started.table.seats == ["bob", "ann"] and started.table.status == "playing"
    new_table = started.table.id
    await bob.move(new_table, "d3")
    await refused(ann.move(table, "d3"), "game_over")


# --- clocks ------------------------------------------------------------------------------


async def test_time_control_is_validated(connect) -> None:
    ann = await connect("ann")
    error = await refused(ann.create_table("othello", time_control="5-3"), "bad_option")
    assert error.field == "time_control"


async def test_clocks_start_after_each_sides_first_move_then_add_the_increment(connect) -> None:
    ann, bob, cat, table = await _game(connect, time_control="1+2")
    started = await _next(cat, m.GameStarted)
    info = (await cat.list_tables())[0]
    assert info.time_control == "1+2" and info.clock == {"remaining_ms": [60_000, 60_000], "running": None, "control": "1+2"}
    await ann.move(table, "d3")
    first = await _next(cat, m.Moved)
    assert first.clock["running"] is None and first.clock["remaining_ms"] == [60_000, 60_000], "a first move costs nothing, earns nothing"
    await bob.move(table, "c3")
    second = await _next(cat, m.Moved)
    assert second.clock["running"] == 0 and second.clock["remaining_ms"][1] == 60_000, "ann has moved: her time runs"
    assert 59_000 < second.clock["remaining_ms"][0] <= 60_000, "a first move costs nothing, earns nothing"
    await ann.move(table, "c4")
    third = await _next(cat, m.Moved)
    assert third.clock["running"] == 1 and third.clock["remaining_ms"][1] == 60_000
    assert 60_000 < third.clock["remaining_ms"][0] <= 62_000, "the Fischer increment is added after the move"
    assert started.table == table


async def test_flag_falls_for_a_silent_player(connect) -> None:
    ann, bob, cat, table = await _game(connect, time_control="0.01+0")  # 0.6 s each
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    for client in (ann, bob, cat):
        over = await client.next_event(m.GameOver, timeout_s=TIMEOUT_S)
        assert over.outcome["winner"] == 1 and over.outcome["reason"] == "Black ran out of time"
    await refused(ann.move(table, "c4"), "game_over")


@pytest.mark.parametrize("durable", [False, True], ids=["in_memory", "durable"])
async def test_a_move_after_the_flag_fell_loses_on_time_though_the_flag_timer_has_not_fired(
    configured_server: ConfiguredServer, tmp_path: Path, durable: bool
) -> None:
    # The flag falls while this test holds the event loop (time.sleep), with ann's move
    # already in the server's socket: when the loop runs again the server handles the move
    # before its flag timer's check runs (the selector loop handles I/O before due timers,
    # and the timer only schedules the check), so the move, not the timer, finds the flag
    # down. No sleeping races a timer.
    db_path = tmp_path / "flag.sqlite3"
    server = await configured_server(**({"db_path": str(db_path)} if durable else {}))
    ann, bob = await _raw(server), await _raw(server)
    try:
        table_id = await _bullet_game(server, ann, bob)
        table = server.tables[table_id]
        _send_as_the_flag_falls(server, table_id, ann, {"type": "move", "id": 99, "table": table_id, "move": "c4", "ply": 2})

        frames = []
        while (frame := await ann.recv()).get("id") != 99:
            frames.append(frame)
        assert (frame["type"], frame["code"], frame["message"]) == ("error", "game_over", FLAG_FELL_MESSAGE)
        assert [f["type"] for f in frames] == ["game_over"], "game_over is pushed before the error reply, and no moved"
        assert frames[0]["outcome"]["winner"] == 1 and frames[0]["outcome"]["reason"] == "Black ran out of time"
        pushes = await bob.sync()
        assert [p["type"] for p in pushes] == ["game_over"] and pushes[0]["outcome"] == frames[0]["outcome"]
        assert table.moves == ["d3", "c3"] and table.clock.running is None and table.clock.remaining(0, time.monotonic()) == 0.0
    finally:
        await ann.close()
        await bob.close()
    if durable:
        await server.close()
        db = sqlite3.connect(db_path)
        try:
            assert db.execute("SELECT count(*) FROM moves").fetchone() == (2,), "the late move was saved"
            status, outcome, clocks = db.execute("SELECT status, outcome, clocks FROM tables WHERE id = ?", (table_id,)).fetchone()
        finally:
            db.close()
        assert status == "over" and json.loads(outcome)["reason"] == "Black ran out of time"
        assert json.loads(clocks)["remaining_ms"][0] == 0


@pytest.mark.parametrize(
    ("who", "request_fields"),
    [
        ("bob", {"type": "resign"}),
        ("ann", {"type": "offer", "kind": "draw"}),
        ("bob", {"type": "answer", "kind": "draw", "accept": True}),
    ],
    ids=["the_opponent_resigns", "the_flagged_seat_offers_a_draw", "the_opponent_accepts_a_draw"],
)
async def test_a_flag_that_fell_first_decides_the_game_before_a_resignation_or_a_draw(
    configured_server: ConfiguredServer, who: str, request_fields: dict[str, Any]
) -> None:
    # As above, the test holds the event loop past ann's flag time with the request already
    # in the server's socket, so the request finds the flag down before the flag timer runs:
    # the game is lost on time, not resigned or drawn.
    server = await configured_server()
    ann, bob = await _raw(server), await _raw(server)
    try:
        table_id = await _bullet_game(server, ann, bob)
        if request_fields["type"] == "answer":
            await ann.request("offer", table=table_id, kind="draw")
        table = server.tables[table_id]
        asker = ann if who == "ann" else bob
        _send_as_the_flag_falls(server, table_id, asker, {**request_fields, "id": 99, "table": table_id})

        pushes = []
        while (frame := await asker.recv()).get("id") != 99:
            pushes.append(frame)
        assert (frame["type"], frame["code"], frame["message"]) == ("error", "game_over", FLAG_FELL_FIRST_MESSAGE)
        assert table.outcome is not None and (table.outcome.winner, table.outcome.reason) == (1, "Black ran out of time")
        for receiver_pushes in (pushes, await (bob if asker is ann else ann).sync()):
            over = [p for p in receiver_pushes if p["type"] == "game_over"]
            assert len(over) == 1 and over[0]["outcome"]["reason"] == "Black ran out of time", receiver_pushes
    finally:
        await ann.close()
        await bob.close()


async def _bullet_game(server: Server, ann: Raw, bob: Raw) -> int:
    """Seat ann and bob at a new Othello table with 0.6 s each, each plays a first move; return its id.

    Ann's clock runs (from bob's first move on); the pushes so far are read.
    """
    await ann.hello("ann")
    await bob.hello("bob")
    table_id: int = (await ann.request("create_table", game="othello", time_control="0.01+0"))["table"]["id"]
    await bob.request("join_table", table=table_id)  # the game starts
    assert (await ann.request("move", table=table_id, move="d3", ply=0))["type"] == "ok"
    assert (await bob.request("move", table=table_id, move="c3", ply=1))["type"] == "ok"
    await ann.sync()
    await bob.sync()
    return table_id


def _send_as_the_flag_falls(server: Server, table_id: int, sender: Raw, frame: dict[str, Any]) -> None:
    """Put ``frame`` in the server's socket, then hold the event loop until just past the running flag's time.

    When the loop runs again the server reads ``frame`` before its flag timer's
    check can run, so the request, not the timer, finds the flag down.
    """
    flag_at = server.tables[table_id].clock.flag_time(time.monotonic())
    assert time.monotonic() < flag_at, "the flag fell (and its timer could fire) before the test could act"
    sender.writer.write(encode_frame(frame))
    time.sleep(flag_at - time.monotonic() + 0.05)  # hold the loop: the flag falls, its timer cannot fire


async def _raw(server: Server) -> Raw:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    return Raw(reader, writer)


# --- chat --------------------------------------------------------------------------------


async def test_table_and_lobby_chat(connect) -> None:
    ann, bob, cat, table = await _game(connect)
    dan = await connect("dan")
    await ann.say("good luck", table)
    for client in (ann, bob, cat):  # the sender sees its own line too
        said = await _next(client, m.Chat)
        assert (said.name, said.text, said.table) == ("ann", "good luck", table)
    await dan.say("anyone for nimble?")
    for client in (ann, bob, cat):
        said = await _next(client, m.Chat)
        assert (said.name, said.text, said.table) == ("dan", "anyone for nimble?", None)
    await refused(dan.say("hi", table), "not_at_table")
    error = await refused(dan.request(m.Say, text="x" * (m.MAX_CHAT_CHARS + 1)), "bad_message")
    assert error.field == "text"


# --- archive -----------------------------------------------------------------------------


@pytest.fixture
async def persistent(tmp_path: Path) -> AsyncIterator[Server]:
    srv = Server(ServerConfig(host="127.0.0.1", port=0, db_path=str(tmp_path / "p.sqlite3"), grace_s=0.3))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()


async def test_archive_lists_finished_games_and_their_records_replay(persistent: Server) -> None:
    ann = await Client.connect("127.0.0.1", persistent.port, name="ann")
    bob = await Client.connect("127.0.0.1", persistent.port, name="bob")
    try:
        table = (await ann.create_table("othello", {"size": 6})).table.id
        await bob.join_table(table)
        state = games.get("othello").new_state({"size": 6})
        for _ in range(6):
            move = state.legal_moves()[0]
            await (ann if state.to_move == 0 else bob).move(table, move)
            state = state.play(move)
        await ann.resign(table)
        await refused(ann.get_record(table + 100), "no_such_table")
        entries = await bob.list_archive()
        assert [(e["id"], e["game"], e["players"], e["plies"]) for e in entries] == [(table, "othello", ["ann", "bob"], 6)]
        assert entries[0]["result"]["winner"] == 1
        record = parse_record(await bob.get_record(table))
        positions = replay(record)
        assert positions[-1].view(None) == state.view(None)
    finally:
        await ann.close()
        await bob.close()


async def test_archive_summarizes_long_option_texts(persistent: Server) -> None:
    pieces = "0" * 9993 + "5 3\nF 1"  # 10,000 characters: 200 such games in one archive page would be 2 MB
    ann = await Client.connect("127.0.0.1", persistent.port, name="ann")
    bob = await Client.connect("127.0.0.1", persistent.port, name="bob")
    try:
        table = (await ann.create_table("tactego", {"pieces": pieces})).table.id
        await bob.join_table(table)
        await ann.resign(table)
        [entry] = await bob.list_archive()
        assert entry["options"]["pieces"] == {"length": 10000, "sha256": hashlib.sha256(pieces.encode()).hexdigest()[:16]}
        assert entry["options"]["rows"] == 8
    finally:
        await ann.close()
        await bob.close()


async def test_archive_is_empty_without_a_database(connect) -> None:
    ann = await connect("ann")
    assert await ann.list_archive() == []


async def _timed_game_then_stop(config: ServerConfig, time_control: str, moves: list[str]) -> tuple[int, str, str]:
    """On a fresh server with ``config``: ann and bob play ``moves`` at a timed table; then all stops.

    Returns:
        The table id and ann's and bob's tokens.
    """
    first = Server(config)
    await first.start()
    ann = await Client.connect("127.0.0.1", first.port, name="ann")
    bob = await Client.connect("127.0.0.1", first.port, name="bob")
    table = (await ann.create_table("othello", time_control=time_control)).table.id
    await bob.join_table(table)
    for index, move in enumerate(moves):
        await (ann, bob)[index % 2].move(table, move)
    tokens = ann.token, bob.token
    await ann.close()
    await bob.close()
    await first.close()
    return table, *tokens


async def test_persistent_server_restores_tables_and_sessions(tmp_path: Path) -> None:
    config = ServerConfig(host="127.0.0.1", port=0, db_path=str(tmp_path / "p.sqlite3"), grace_s=5.0)
    table, *tokens = await _timed_game_then_stop(config, "5+0", ["d3"])
    second = Server(config)
    await second.start()
    try:
        restored = second.tables[table]
        assert restored.moves == ["d3"] and restored.status == "playing"
        assert restored.clock is not None and restored.clock.running is None  # bob's time runs after his first move
        back = await Client.connect("127.0.0.1", second.port, name="bob", token=tokens[1])
        resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert resumed.seat == 1 and resumed.moves == ["d3"] and resumed.table.clock["running"] is None
        await back.move(table, resumed.view["legal_moves"][0])
        await back.close()
    finally:
        await second.close()
    await asyncio.sleep(0)


async def test_rematch_refused_once_the_opponent_left(connect) -> None:
    ann, bob, _cat, table = await _game(connect, watcher=False)
    await ann.resign(table)
    await bob.offer(table, "rematch")
    await bob.leave_table(table)
    await refused(ann.answer(table, "rematch", True), "bad_action")  # the offer left with bob


async def test_game_ending_during_the_grace_period_frees_the_absent_name(connect, server: Server) -> None:
    server.config = type(server.config)(**{name: getattr(server.config, name) for name in server.config.__slots__} | {"grace_s": 30.0})
    ann, bob, _cat, table = await _game(connect, watcher=False)
    await ann.move(table, "d3")
    await bob.close()
    await _next(ann, m.PlayerAway)
    await ann.resign(table)
    await _next(ann, m.GameOver)
    again = await connect("bob")  # the name is free: nobody waits for bob any more
    assert again.name == "bob"


async def test_timed_game_restored_before_its_first_move_can_be_played(tmp_path: Path) -> None:
    config = ServerConfig(host="127.0.0.1", port=0, db_path=str(tmp_path / "p.sqlite3"), grace_s=5.0)
    table, token, _ = await _timed_game_then_stop(config, "1+0", [])
    second = Server(config)
    await second.start()
    try:
        back = await Client.connect("127.0.0.1", second.port, name="ann", token=token)
        await back.move(table, "d3")
        assert second.tables[table].clock.running is None  # type: ignore[union-attr]  # bob's time waits for his first move
        await back.close()
    finally:
        await second.close()
