"""Every key hint the footer shows fits an 80x24 terminal: the lobby, a table (playing and over), the archive's replay."""

from __future__ import annotations

from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey

from client import Client
from client.app.archive import ArchiveScreen
from client.app.help import KEYS_TEXT

from .conftest import SIZE, in_lobby, until
from .test_archive_and_help import finished_game


def footer_keys(screen) -> list[str]:
    """The keys the screen's footer shows (``"f4"``), after checking that every hint fits its width."""
    footer = screen.query_one(Footer)
    assert footer.size.width == SIZE[0] == 80
    assert footer.virtual_size.width <= footer.size.width, "the footer scrolls: its last hints are cut"
    shown = [key for key in footer.query(FooterKey) if key.display]
    for key in shown:
        assert key.region.width > 0 and key.region.right <= footer.region.right, f"{key.key_display} {key.description} is cut"
    return [key.key_display for key in shown]


async def test_every_key_hint_fits_the_footer_at_80_columns(configured_server, make_app, tmp_path):
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite"))
    await finished_game(server.port)  # for the archive's replay
    app = make_app(name="carol", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await in_lobby(app, pilot)
        main.query_one("#tables").focus()
        await pilot.pause()
        assert {"j", "w", "s", "e", "o", "u", "f1", "f2", "f3", "^q"} <= set(footer_keys(main))  # e, o: the seek and online lists; u: muted

        # The widest: a player at a running table with hints has the game's four keys and all the app's.
        table = await app.session.create("othello", hints=True)
        dave = await Client.connect("127.0.0.1", server.port, name="dave")
        await dave.join_table(table.id)
        await until(pilot, lambda: main.query(f"#table-{table.id} #board"))
        main.query_one(f"#table-{table.id} #board").focus()
        await until(pilot, lambda: "h" in main.active_bindings and app.session.tables[table.id].running)
        await pilot.pause()
        assert footer_keys(main) == ["d", "h", "x", "a", "^q", "f1", "f2", "f3", "f4"]  # before our first move: abort, no takeback

        await app.session.move(table.id, "d3")
        await until(pilot, lambda: app.session.tables[table.id].moves)
        await pilot.pause()
        assert footer_keys(main) == ["d", "t", "h", "x", "^q", "f1", "f2", "f3", "f4"]  # no rematch while it runs, no abort once we moved

        await app.session.resign(table.id)
        await until(pilot, lambda: app.session.tables[table.id].outcome is not None)
        await pilot.pause()
        assert footer_keys(main) == ["r", "^q", "f1", "f2", "f3", "f4"]  # over: the rematch, not the game's keys (nor a hint)

        await pilot.press("f3")
        archive = await until(pilot, lambda: isinstance(app.screen, ArchiveScreen) and app.screen)
        await until(pilot, lambda: archive.query_one("#games", DataTable).row_count >= 1)
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is archive.query_one("#replay-pane"))
        await pilot.pause()
        keys = footer_keys(archive)
        assert {"←", "→", "home", "end", "esc", "g", "e", "m", "^q", "f1"} <= set(keys)
        assert not {"f2", "f3", "f4"} & set(keys)  # they do nothing here, so they are not offered
        await dave.close()

    for key in ("**F2**", "**F3**", "**F4**", "**m**", "**r** rematch", "**e** the open seeks", "**o** who is online", "**u** lists"):  # the help screen still names every key
        assert key in KEYS_TEXT
