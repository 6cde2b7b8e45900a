"""Line mode: the ``abort`` command, and aborted games shown as aborted, against a real server."""

from __future__ import annotations

from pathlib import Path

from client import Client
from client.terminal import HELP, describe_archived
from protocol import messages as m

from ..conftest import ConfiguredServer
from .test_terminal import Connect, Shell, _two_at_a_table


async def test_abort_before_your_first_move_ends_the_game_as_aborted(connect: Connect) -> None:
    ann, bob = await _two_at_a_table(connect)
    assert await ann.run("abort") == ""
    for shell in (ann, bob):
        out = shell.feed(await shell.next_push(m.GameOver))
        assert out.splitlines()[0] == "Result: aborted — Black aborted the game"
    assert "over: aborted — Black aborted the game" in await bob.run("tables")


async def test_abort_after_your_first_move_is_refused_with_the_reason(connect: Connect) -> None:
    ann, bob = await _two_at_a_table(connect)
    assert ann.term.at is not None and ann.term.at.legal_moves
    await ann.run(ann.term.at.legal_moves[0])
    out = await ann.run("abort")
    assert out.startswith("error (bad_action): you have already moved: a game can be aborted only before your own first move")
    assert (await ann.run("abort now")).startswith("usage: abort")
    carl = Shell(await connect("carl"))
    await carl.run("watch 1")
    assert await carl.run("abort") == "only the players can abort the game; you are watching table 1"


async def test_the_archive_shows_an_aborted_game_as_aborted(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "p.sqlite3"))
    clients = [await Client.connect("127.0.0.1", server.port, name=name) for name in ("ann", "bob")]
    try:
        ann, bob = (Shell(client) for client in clients)
        await ann.run("new othello tc=1+0")
        await bob.run("join 1")
        await bob.next_push(m.GameStarted)
        await bob.run("leave")  # before both sides moved: aborted, not forfeited
        await ann.next_push(m.GameOver)
        out = await ann.run("archive")
        assert "— aborted — White left the table before both sides had moved — 0 plies —" in out, out
        assert "wins" not in out and "draw" not in out
    finally:
        for client in clients:
            await client.close()


def test_describe_archived_says_aborted_not_draw() -> None:
    entry = {"id": 4, "game": "othello", "options": {}, "players": ["ann", "bob"], "plies": 1,
             "result": {"winner": None, "reason": "White aborted the game", "score": None, "aborted": True}}  # fmt: skip
    assert " — aborted — White aborted the game — 1 plies — " in describe_archived(entry)


def test_help_lists_abort() -> None:
    assert "\n  abort " in HELP and "before your own first move" in HELP
