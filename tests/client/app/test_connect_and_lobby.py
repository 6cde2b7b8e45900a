"""The server screen and the lobby, against a real server on 127.0.0.1."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static

from client.app.recent import RecentServer
from client.app.tabs import MainScreen

from .conftest import SIZE, until


async def test_connect_by_address_field_then_a_new_table_appears_in_the_lobby(server, connect, make_app, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#name")
        await pilot.press(*"ann")
        app.screen.query_one("#address", Input).value = f"127.0.0.1:{server.port}"
        await pilot.click("#connect")
        main = await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen)
        bob = await connect("bob")
        await bob.create_table("othello", {"size": 6})
        table = main.query_one("#tables", DataTable)
        await until(pilot, lambda: table.row_count == 1)
        cells = [str(cell) for cell in table.get_row_at(0)]
        assert cells[1] == "othello" and "size=6" in cells[2] and "bob vs (free)" == cells[3] and cells[4] == "waiting"
        assert "bob" in str(main.query_one("#who", Static).render())
    assert app.recent.load() == [RecentServer("127.0.0.1", server.port, "ann")]
