"""The archive's export as GGF: offered for an Othello game, written to a ``.ggf`` file, refused with the server's reason for others."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static

from client.app.archive import ArchiveScreen
from games.ggf import GgfResult, parse_ggf

from ..finished_games import finished
from .conftest import SIZE, in_lobby, until




def message(screen: ArchiveScreen) -> str:
    return str(screen.query_one("#message", Static).render())


async def test_an_othello_game_exports_as_ggf_to_a_ggf_file_and_another_game_is_refused(configured_server, make_app, tmp_path):
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite"))
    nimble = await finished(server.port, "nimble", {})
    othello = await finished(server.port, "othello", {"size": 6})
    app = make_app(name="carol", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        await in_lobby(app, pilot)
        await pilot.press("f3")
        archive = await until(pilot, lambda: isinstance(app.screen, ArchiveScreen) and app.screen)
        listed = archive.query_one("#games", DataTable)
        await until(pilot, lambda: listed.row_count == 2)
        assert str(listed.get_row_at(0)[0]) == str(othello)  # newest first
        await pilot.press("enter")
        await until(pilot, lambda: archive.replaying is not None and archive.replaying.table == othello)
        await pilot.press("e")
        ask = archive.query_one("#ask", Input)
        assert ask.placeholder == "file to write the record to (name it .ggf for GGF)"
        path = tmp_path / f"game{othello}.ggf"
        ask.value = str(path)
        await pilot.press("enter")
        await until(pilot, lambda: message(archive).startswith("Saved"))
        assert message(archive) == f"Saved the GGF record of game {othello} to {path}."
        game = parse_ggf(path.read_text(encoding="utf-8"))
        assert (game.size, game.black, game.white, game.result) == (6, "ann", "bob", GgfResult(36.0, "r"))
        assert [(move.color, move.square) for move in game.moves] == [("B", "C2"), ("W", "B2")]

        archive.query_one("#games", DataTable).focus()
        await pilot.press("down", "enter")
        await until(pilot, lambda: archive.replaying is not None and archive.replaying.table == nimble)
        await pilot.press("e")
        assert ask.placeholder == "file to write the record to"  # GGF is not offered for Nimble
        ask.value = str(tmp_path / "nimble.ggf")
        await pilot.press("enter")
        await until(pilot, lambda: message(archive).startswith("cannot export"))
        assert message(archive) == (
            f"cannot export game {nimble} as GGF: GGF records are for Othello games only, and game {nimble} is nimble; export it as text instead"
        )
        assert not (tmp_path / "nimble.ggf").exists()
