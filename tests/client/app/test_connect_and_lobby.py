"""The server screen and the lobby, against a real server on 127.0.0.1."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static

from client.app.recent import RecentServer
from protocol import messages as m
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


async def test_lobby_sorts_by_a_clicked_header_filters_joins_by_enter_and_chats(server, connect, make_app):
    bob, dora = await connect("bob"), await connect("dora")
    await bob.create_table("othello", {"size": 6})
    await dora.create_table("hexapawn", {})
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen)
        table = main.query_one("#tables", DataTable)
        await until(pilot, lambda: table.row_count == 2)
        games = lambda: [str(table.get_row_at(row)[1]) for row in range(table.row_count)]  # noqa: E731
        assert games() == ["othello", "hexapawn"]  # by id
        await pilot.click("#tables", offset=(5, 0))  # the Game header
        assert games() == ["hexapawn", "othello"]
        await pilot.click("#tables", offset=(5, 0))
        assert games() == ["othello", "hexapawn"]
        main.query_one("#filter", Input).value = "DORA"
        await until(pilot, lambda: table.row_count == 1)
        assert games() == ["hexapawn"]
        table.focus()
        await pilot.press("enter")  # a free seat: join it
        await until(pilot, lambda: app.session.focus is not None)
        state = app.session.tables[app.session.focus]
        assert state.game == "hexapawn" and state.seat == 1
        main.query_one("#filter", Input).value = ""
        await until(pilot, lambda: table.row_count == 2)

        await bob.say("hello lobby")
        log = main.query_one("#chat-log")
        await until(pilot, lambda: any("bob: hello lobby" in line.text for line in log.lines))
        chat = main.query_one("#chat-input", Input)
        chat.value = "hi bob"
        chat.focus()
        await pilot.press("enter")
        while (heard := await bob.next_event(m.Chat)).name != "ann":
            pass  # bob's own line comes back to him too
        assert heard.text == "hi bob" and heard.table is None


async def test_a_password_prompt_appears_when_the_server_wants_one(configured_server, make_app):
    server = await configured_server(password="sesame")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        error = app.screen.query_one("#password-error", Static)
        await until(pilot, lambda: "needs a password" in str(error.render()))
        assert app.screen.query_one("#password-row").display
        app.screen.query_one("#password", Input).value = "wrong"
        await pilot.click("#connect")
        await until(pilot, lambda: "refused the password" in str(error.render()))
        app.screen.query_one("#password", Input).value = "sesame"
        await pilot.click("#connect")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
