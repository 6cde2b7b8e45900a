"""``parlour games --export ID --format ggf``, a real process reading the database a real server wrote."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

from client import Client
from games.ggf import GgfClock, GgfResult, parse_ggf
from server.app import Server, ServerConfig

from .harness import ROOT

GAMES = [sys.executable, "-m", "client.cli", "games"]


def games_cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*GAMES, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done


async def play_and_keep(db: Path) -> tuple[int, int, str]:
    """A rated 1+2 Othello game White resigns, and a Nimble game; returns their ids and the Othello game's GGF as ``get_record`` gives it."""
    server = Server(ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=str(db)))
    await server.start()
    try:
        ann = await Client.connect("127.0.0.1", server.port, name="Ann", claim=True, secret=secrets.token_urlsafe(32))
        bob = await Client.connect("127.0.0.1", server.port, name="Bob", claim=True, secret=secrets.token_urlsafe(32))
        othello = (await ann.create_table("othello", seat=0, rated=True, time_control="1+2")).table.id
        await bob.join_table(othello)
        await ann.move(othello, "f5")
        await bob.move(othello, "d6")
        await bob.resign(othello)
        nimble = (await ann.create_table("nimble")).table.id
        await bob.join_table(nimble)
        await bob.resign(nimble)
        served = await ann.get_record(othello, "ggf")
        await ann.close()
        await bob.close()
    finally:
        await server.close()
    return othello, nimble, served


async def test_export_as_ggf_prints_what_the_server_sends_and_refuses_other_games_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    othello, nimble, served = await play_and_keep(db)

    done = games_cli("--db", str(db), "--export", str(othello), "--format", "ggf")
    assert done.returncode == 0, done.stderr
    assert done.stdout == served, "the command line and get_record give the same bytes"
    game = parse_ggf(done.stdout)
    assert (game.black, game.white, game.black_rating, game.white_rating) == ("Ann", "Bob", 1500.0, 1500.0)
    assert game.clock == GgfClock(60.0, 2.0, 0.0) and game.result == GgfResult(64.0, "r")
    assert [(move.color, move.square) for move in game.moves] == [("B", "F5"), ("W", "D6")]

    text = games_cli("--db", str(db), "--export", str(othello))
    assert text.returncode == 0 and text.stdout.startswith("Game: othello\n")

    refused = games_cli("--db", str(db), "--export", str(nimble), "--format", "ggf")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (
        f"Cannot export game {nimble}: GGF records are for Othello games only, and game {nimble} is nimble; export it as text instead\n"
    )

    alone = games_cli("--db", str(db), "--format", "ggf")
    assert alone.returncode == 2 and alone.stderr == "--format ggf goes with --export ID: it says how to print that game.\n"
    unknown = games_cli("--db", str(db), "--export", str(othello), "--format", "pgn")
    assert unknown.returncode == 2 and "invalid choice: 'pgn'" in unknown.stderr
