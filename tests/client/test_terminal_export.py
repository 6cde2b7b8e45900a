"""The line client's ``export ID FILE``: plain text, or GGF by ``--format ggf`` or a ``.ggf`` file, against a real server and SQLite file."""

from __future__ import annotations

from pathlib import Path

from client import Client
from games.ggf import GgfResult, parse_ggf
from games.record import parse_record

from .finished_games import finished
from .test_terminal import Shell




async def test_export_chooses_ggf_by_option_or_file_name_and_refuses_it_for_other_games(configured_server, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))
    othello = await finished(server.port, "othello", {"size": 6})
    nimble = await finished(server.port, "nimble")
    client = await Client.connect("127.0.0.1", server.port, name="carol")
    shell = Shell(client)
    try:
        by_name = tmp_path / "game.GGF"
        assert await shell.run(f"export {othello} {by_name}") == f"Exported the GGF record of game {othello} to {by_name}."
        game = parse_ggf(by_name.read_text(encoding="utf-8"))
        assert (game.size, game.black, game.white, game.result) == (6, "ann", "bob", GgfResult(36.0, "r"))
        assert [(move.color, move.square) for move in game.moves] == [("B", "C2"), ("W", "B2")]

        by_option = tmp_path / "game.record"
        assert await shell.run(f"export --format ggf {othello} {by_option}") == f"Exported the GGF record of game {othello} to {by_option}."
        assert by_option.read_text(encoding="utf-8") == by_name.read_text(encoding="utf-8")

        text = tmp_path / "game.txt"
        assert await shell.run(f"export {othello} {text}") == f"Exported the record of game {othello} to {text}."
        assert parse_record(text.read_text(encoding="utf-8")).game == "othello"
        plain = tmp_path / "plain.ggf"
        assert await shell.run(f"export {othello} {plain} --format=text") == f"Exported the record of game {othello} to {plain}."
        assert plain.read_text(encoding="utf-8").startswith("Game: othello\n")

        out = await shell.run(f"export {nimble} {tmp_path / 'nimble.ggf'}")
        assert out == f"error (bad_request): GGF records are for Othello games only, and game {nimble} is nimble; export it as text instead"
        assert not (tmp_path / "nimble.ggf").exists()

        assert (await shell.run(f"export {othello} x.txt --format pgn")).startswith("--format is text or ggf, given once, not 'pgn'; usage: export ID FILE")
        assert (await shell.run(f"export {othello} x.txt --format")).startswith("--format is text or ggf")
        assert (await shell.run(f"export {othello} --format ggf")).startswith("usage: export ID FILE [--format text|ggf]")
    finally:
        await client.close()


async def test_replay_reads_a_ggf_file(configured_server, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))
    othello = await finished(server.port, "othello", {"size": 6})
    client = await Client.connect("127.0.0.1", server.port, name="carol")
    shell = Shell(client)
    try:
        path = tmp_path / "game.ggf"
        await shell.run(f"export {othello} {path}")
        out = await shell.run(f"replay {path}")
        assert f"Replay of {path}: ply 0/2" in out
        out = await shell.run("last")
        assert "Ply 2: White played b2" in out and "Recorded result: Black wins" in out
        path.write_text("(;GM[Othello]TY[8r]BO[8 " + "-" * 64 + " *];)")
        assert "cannot replay" in await shell.run(f"replay {path}") and "TY[8r]" in await shell.run(f"replay {path}")
    finally:
        await client.close()
