"""The archive (list, replay stepping, export) and the help screen, against a real server with a real SQLite file."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Markdown, Select, Static

import games
from client import Client
from client.app.archive import ArchiveScreen
from client.app.help import HelpScreen

from .conftest import SIZE, in_lobby, until


async def finished_game(port: int) -> tuple[int, list[str]]:
    """Two clients play two plies of 6x6 Othello and the second resigns; returns the table and the moves."""
    ann = await Client.connect("127.0.0.1", port, name="ann")
    bob = await Client.connect("127.0.0.1", port, name="bob")
    try:
        table = (await ann.create_table("othello", {"size": 6})).table.id
        await bob.join_table(table)
        state = games.get("othello").new_state({"size": 6})
        moves = []
        for player in (ann, bob):
            move = state.legal_moves()[0]
            await player.move(table, move)
            state = state.play(move)
            moves.append(move)
        await bob.resign(table)
    finally:
        await ann.close()
        await bob.close()
    return table, moves


def board_text(screen) -> str:
    """The replay's status lines and the board's picture."""
    return str(screen.query_one("#replay-status", Static).render()) + "\n" + screen.query_one("#board").render().plain


async def test_archive_lists_replays_step_by_step_and_exports_a_finished_game_and_help_shows_keys_and_rules(configured_server, make_app, tmp_path):
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite"))
    table, moves = await finished_game(server.port)
    app = make_app(name="carol", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        await in_lobby(app, pilot)
        await pilot.press("f3")
        archive = await until(pilot, lambda: isinstance(app.screen, ArchiveScreen) and app.screen)
        listed = archive.query_one("#games", DataTable)
        await until(pilot, lambda: listed.row_count == 1)
        assert [str(cell) for cell in listed.get_row_at(0)[:2]] == [str(table), "othello"]
        await pilot.press("enter")
        await until(pilot, lambda: "ply 0/2" in board_text(archive))
        start = archive.query_one("#board").render().plain
        await pilot.press("right")
        assert "ply 1/2" in board_text(archive) and f"played {moves[0]}" in board_text(archive)
        assert archive.query_one("#board").render().plain != start  # the board shows the disc played
        await pilot.press("end")
        assert "ply 2/2" in board_text(archive) and "White wins" not in board_text(archive) and "Black wins" in board_text(archive)
        await pilot.press("right")  # past the end stays at the end
        assert "ply 2/2" in board_text(archive)
        await pilot.press("home")
        assert "ply 0/2" in board_text(archive)
        await pilot.press("g")
        ask = archive.query_one("#ask", Input)
        ask.value = "1"
        await pilot.press("enter")
        assert "ply 1/2" in board_text(archive)
        await pilot.press("e")
        ask.value = str(tmp_path / "game.txt")
        await pilot.press("enter")
        await pilot.pause()
        exported = (tmp_path / "game.txt").read_text(encoding="utf-8")
        assert "Game: othello" in exported and f"1. {moves[0]}" in exported
        await pilot.press("escape")
        await in_lobby(app, pilot)

        await pilot.press("f1")  # help: the keys, and the rules (of the first game, in the lobby)
        help_screen = await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen)
        assert help_screen.game == "othello"
        assert "## Othello" in help_screen.rules_markdown() and "Name in Parlour: `othello`" in help_screen.rules_markdown()
        assert "takeback" in help_screen.query_one("#keys", Markdown).source.lower()
        help_screen.query_one("#rules-game", Select).value = "nimble"
        await pilot.pause()
        assert help_screen.query_one("#rules", Markdown).source.startswith("## Nimble")
        await pilot.press("escape")
        await in_lobby(app, pilot)


async def test_a_finished_tactego_game_replays_with_every_piece_shown(configured_server, make_app, tmp_path):
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite"))
    options = {"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n"}
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        table = (await ann.create_table("tactego", options)).table.id
        started = await bob.join_table(table)
        assert any(cell[1] == "?" for row in started.view["board"] for cell in row if cell), "hidden while it runs"
        await bob.resign(table)
    finally:
        await ann.close()
        await bob.close()
    app = make_app(name="carol", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        await in_lobby(app, pilot)
        await pilot.press("f3")
        archive = await until(pilot, lambda: isinstance(app.screen, ArchiveScreen) and app.screen)
        await until(pilot, lambda: archive.query_one("#games", DataTable).row_count == 1)
        await pilot.press("enter")
        await until(pilot, lambda: "ply 0/0" in board_text(archive))
        picture = archive.query_one("#board").render().plain
        board = picture.split("? = unknown piece")[0]  # the legend names the mark
        assert "?" not in board and "F" in board and "3" in board, picture
