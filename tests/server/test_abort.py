"""When clocks start and how games are aborted, over real sockets and real SQLite files.

A side's clock runs only after its own first move; a game that ends before
both sides have moved (an ``abort`` request, leaving, the grace period, or a
timed game whose side to move stays silent past ``abort_after_s``) is
aborted: no winner, ``"aborted": true``, not rated, archived as aborted.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from client import Client
from client.cli import build_parser, parse_args
from protocol import messages as m
from server import archive_cli
from server.app import Server, ServerConfig

from ..client.test_cli_args import refused as cli_refused
from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, refused
from .test_ratings import claim, rated_table


async def _next(client: Client, kind: type[m.Message]) -> Any:
    return await client.next_event(kind, timeout_s=TIMEOUT_S)


async def _started(server: Server, time_control: str | None = None) -> tuple[Client, Client, int]:
    """ann (Black, seat 0) and bob (White, seat 1) at a new Othello table whose game has started."""
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    table = (await ann.create_table("othello", time_control=time_control)).table.id
    await bob.join_table(table)
    return ann, bob, table


def _aborted(reason: str) -> dict[str, Any]:
    return {"winner": None, "reason": reason, "score": None, "aborted": True}


# --- the clock waits for each side's first move -----------------------------------------


async def test_a_bullet_game_is_not_lost_on_time_before_each_side_has_moved(configured_server: ConfiguredServer) -> None:
    server = await configured_server()
    ann, bob, table = await _started(server, "0.01+0")  # 0.6 s each
    try:
        await asyncio.sleep(1.0)  # past Black's whole time, before her first move
        assert server.tables[table].status == "playing"
        await ann.move(table, "d3")
        await asyncio.sleep(1.0)  # past White's whole time, before his first move
        await bob.move(table, "c3")
        moved = await _next(ann, m.Moved)
        while moved.ply < 2:
            moved = await _next(ann, m.Moved)
        black, white = moved.clock["remaining_ms"]
        assert moved.clock["running"] == 0 and white == 600 and 550 < black <= 600, "nobody was charged for a first move"
        over = await _next(ann, m.GameOver)  # now Black's time runs: she stays silent and loses on time
        assert over.outcome["reason"] == "Black ran out of time"
    finally:
        await ann.close()
        await bob.close()


@pytest.mark.parametrize("silent", ["Black", "White"])
async def test_a_timed_game_whose_side_to_move_does_not_move_first_in_time_is_aborted(
    configured_server: ConfiguredServer, silent: str
) -> None:
    server = await configured_server(abort_after_s=0.3)
    ann, bob, table = await _started(server, "1+0")
    try:
        if silent == "White":
            await ann.move(table, "d3")
        for client in (ann, bob):
            over = await _next(client, m.GameOver)
            assert over.outcome == _aborted(f"{silent} did not play a first move within 0.3 s") and over.ratings is None
        info = (await ann.list_tables())[0]
        assert info.status == "over" and info.outcome["aborted"] is True and info.clock["running"] is None
    finally:
        await ann.close()
        await bob.close()


async def test_an_untimed_game_is_not_aborted_by_the_timer(configured_server: ConfiguredServer) -> None:
    server = await configured_server(abort_after_s=0.2)
    ann, bob, table = await _started(server)
    try:
        await asyncio.sleep(0.6)
        assert server.tables[table].status == "playing"
        await ann.move(table, "d3")
    finally:
        await ann.close()
        await bob.close()


async def test_the_abort_timer_stops_once_the_side_to_move_has_moved_before(configured_server: ConfiguredServer) -> None:
    server = await configured_server(abort_after_s=0.3)
    ann, bob, table = await _started(server, "1+0")
    try:
        await ann.move(table, "d3")
        await bob.move(table, "c3")
        await asyncio.sleep(0.6)  # Black has moved before: her clock runs instead
        assert server.tables[table].status == "playing" and server.tables[table].abort_timer is None
    finally:
        await ann.close()
        await bob.close()


# --- the abort request ------------------------------------------------------------------


async def test_either_player_may_abort_before_their_own_first_move(connect) -> None:
    ann, bob, cat = await connect("ann"), await connect("bob"), await connect("cat")
    table = (await ann.create_table("othello")).table.id
    await refused(ann.abort(table), "not_started")
    await bob.join_table(table)
    await cat.watch_table(table)
    await refused(cat.abort(table), "not_seated")
    await ann.move(table, "d3")
    error = await refused(ann.abort(table), "bad_action")
    assert "already moved" in error.message and "before your own first move" in error.message
    await bob.abort(table)  # White has not moved yet
    for client in (ann, bob, cat):
        over = await _next(client, m.GameOver)
        assert over.outcome == _aborted("White aborted the game")
    await refused(ann.abort(table), "game_over")


async def test_the_first_player_may_abort_at_the_start(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello", time_control="5+0")).table.id
    await bob.join_table(table)
    await ann.abort(table)
    assert (await _next(bob, m.GameOver)).outcome == _aborted("Black aborted the game")


async def test_nobody_may_abort_once_both_sides_have_moved(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    for client in (ann, bob):
        await refused(client.abort(table), "bad_action")


async def test_a_takeback_to_the_start_makes_the_game_abortable_again(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.move(table, "d3")
    await ann.offer(table, "takeback", plies=1)
    await bob.answer(table, "takeback", True)
    await _next(ann, m.TakenBack)
    await ann.abort(table)
    assert (await _next(bob, m.GameOver)).outcome["aborted"] is True


# --- leaving -----------------------------------------------------------------------------


@pytest.mark.parametrize("leaver", ["ann", "bob"])
async def test_leaving_before_both_sides_moved_aborts_rather_than_forfeits(connect, leaver: str) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello", time_control="1+0")).table.id
    await bob.join_table(table)
    await ann.move(table, "d3")
    gone, stays = (ann, bob) if leaver == "ann" else (bob, ann)
    await gone.leave_table(table)
    seat = "Black" if leaver == "ann" else "White"
    assert (await _next(stays, m.GameOver)).outcome == _aborted(f"{seat} left the table before both sides had moved")


async def test_leaving_after_both_sides_moved_still_forfeits(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.move(table, "d3")
    await bob.move(table, "c3")
    await ann.leave_table(table)
    over = await _next(bob, m.GameOver)
    assert over.outcome["winner"] == 1 and "aborted" not in over.outcome


# --- ratings, the archive, a restart -----------------------------------------------------


async def test_an_aborted_rated_game_is_not_rated(tmp_path: Path) -> None:
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_path=str(tmp_path / "p.sqlite3"), grace_s=30.0))
    await server.start()
    ann, bob = await claim(server, "Ann"), await claim(server, "Bob")
    try:
        table = await rated_table(ann, bob)
        await ann.move(table, "d3")
        await bob.abort(table)
        over = await _next(ann, m.GameOver)
        assert over.outcome["aborted"] is True and over.ratings is None
        assert (await ann.finger("Ann")).ratings == [] and (await bob.finger("Bob")).ratings == []
    finally:
        await ann.close()
        await bob.close()
        await server.close()
    db = sqlite3.connect(tmp_path / "p.sqlite3")
    try:
        assert db.execute("SELECT count(*) FROM ratings").fetchone() == (0,)
    finally:
        db.close()


async def test_an_aborted_game_is_archived_as_aborted_and_stays_so_after_a_restart(tmp_path: Path) -> None:
    db_path = tmp_path / "p.sqlite3"
    config = ServerConfig(host="127.0.0.1", port=0, db_path=str(db_path), grace_s=30.0)
    server = Server(config)
    await server.start()
    ann, bob, table = await _started(server, "3+2")
    try:
        await ann.move(table, "d3")
        await bob.abort(table)
        await _next(ann, m.GameOver)
    finally:
        await ann.close()
        await bob.close()
        await server.close()
    again = Server(config)
    await again.start()
    try:
        assert table not in again.tables, "an aborted game is over: it is not restored"
        cat = await Client.connect("127.0.0.1", again.port, name="cat")
        [entry] = await cat.list_archive()
        assert entry["id"] == table and entry["result"] == _aborted("White aborted the game") and entry["plies"] == 1
        record = await cat.get_record(table)
        assert '"aborted":true' in record.replace(" ", "")
        await cat.close()
    finally:
        await again.close()
    out = io.StringIO()
    assert archive_cli.run(argparse.Namespace(db=db_path, export=None, limit=50, offset=0), out=out) == 0
    [row] = out.getvalue().splitlines()[1:]
    assert "  ann vs bob  aborted: White aborted the game  " in row and "draw" not in row
    db = sqlite3.connect(db_path)
    try:
        status, outcome = db.execute("SELECT status, outcome FROM tables WHERE id = ?", (table,)).fetchone()
    finally:
        db.close()
    assert status == "over" and json.loads(outcome)["aborted"] is True


async def test_a_timed_game_restored_before_a_first_move_waits_again_and_is_aborted(tmp_path: Path) -> None:
    config = ServerConfig(host="127.0.0.1", port=0, db_path=str(tmp_path / "p.sqlite3"), grace_s=30.0, abort_after_s=0.4)
    server = Server(config)
    await server.start()
    ann, bob, table = await _started(server, "0.01+0")
    await ann.move(table, "d3")
    await ann.close()
    await bob.close()
    await server.close()  # Black moved; White has not: his clock does not run, and the abort timer waits for him
    again = Server(config)
    await again.start()
    try:
        restored = again.tables[table]
        assert restored.status == "playing" and restored.clock is not None and restored.clock.running is None
        await asyncio.sleep(1.0)  # past the abort time after the restart
        assert restored.outcome is not None and restored.outcome.aborted
        assert restored.outcome.reason == "White did not play a first move within 0.4 s"
    finally:
        await again.close()


# --- the server option -------------------------------------------------------------------


def test_abort_after_is_a_serve_option_in_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["serve"], {}).abort_after == 30.0
    assert parse_args(["serve", "--abort-after", "0"], {}).abort_after == 0.0  # 0: never (abort_after_s None)
    assert parse_args(["serve", "--abort-after", "86400"], {}).abort_after == 86400.0
    for text in ("-1", "nan", "86401", "soon"):
        error = cli_refused(["serve", f"--abort-after={text}"], capsys)
        assert "argument --abort-after: expected a number from 0 to 86400 (seconds)" in error and repr(text) in error, error
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    assert "--abort-after SECONDS" in capsys.readouterr().out
    with pytest.raises(ValueError, match="abort_after_s must be more than 0"):
        ServerConfig(abort_after_s=0)
