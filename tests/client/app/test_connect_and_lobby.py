"""The server screen and the lobby, against a real server on 127.0.0.1."""

from __future__ import annotations

from textual.widgets import DataTable, Input, OptionList, Static, TabbedContent

from client.app.help import HelpScreen
from client.app.recent import RecentServer
from client import Client
from protocol import messages as m

from .conftest import SIZE, in_lobby, until


async def test_connect_by_address_field_then_a_new_table_appears_in_the_lobby(server, connect, make_app, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#name")
        await pilot.press(*"ann")
        app.screen.query_one("#address", Input).value = f"127.0.0.1:{server.port}"
        await pilot.click("#connect")
        main = await in_lobby(app, pilot)
        bob = await connect("bob")
        await bob.create_table("othello", {"size": 6})
        table = main.query_one("#tables", DataTable)
        await until(pilot, lambda: table.row_count == 1)
        cells = [str(cell) for cell in table.get_row_at(0)]
        assert cells[1] == "othello" and cells[2] == "Size: 6" and "bob vs (free)" == cells[3] and cells[4] == "waiting"
        who = main.query_one("#who", OptionList)
        assert "bob" in [who.get_option_at_index(index).id for index in range(who.option_count)]
    assert app.recent.load() == [RecentServer("127.0.0.1", server.port, "ann")]


async def test_lobby_sorts_by_a_clicked_header_filters_joins_by_enter_and_chats(server, connect, make_app):
    bob, dora = await connect("bob"), await connect("dora")
    await bob.create_table("othello", {"size": 6})
    await dora.create_table("hexapawn", {})
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await in_lobby(app, pilot)
        table = main.query_one("#tables", DataTable)
        await until(pilot, lambda: table.row_count == 2)
        games = lambda: [str(table.get_row_at(row)[1]) for row in range(table.row_count)]  # noqa: E731
        assert games() == ["othello", "hexapawn"]  # by id
        await pilot.click("#tables", offset=(5, 0))  # the Game header
        await until(pilot, lambda: games() == ["hexapawn", "othello"])  # sorted once the click is handled
        await pilot.click("#tables", offset=(5, 0))
        await until(pilot, lambda: games() == ["othello", "hexapawn"])
        main.query_one("#filter", Input).value = "DORA"
        await until(pilot, lambda: table.row_count == 1)
        assert games() == ["hexapawn"]
        table.focus()
        await pilot.press("enter")  # a free seat: join it
        await until(pilot, lambda: app.session.focus is not None)
        state = app.session.tables[app.session.focus]
        assert state.game == "hexapawn" and state.seat == 1
        await until(pilot, lambda: main.query_one(TabbedContent).active == f"table-{state.id}")
        await pilot.press("f1")  # help opens on the rules of the game at hand
        assert (await until(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen)).game == "hexapawn"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is main)
        main.query_one("#filter", Input).value = ""
        await until(pilot, lambda: table.row_count == 2)

        await bob.say("hello lobby")
        log = main.query_one("#lobby-chat-log")
        await until(pilot, lambda: any("bob: hello lobby" in line.text for line in log.lines))
        chat = main.query_one("#lobby-chat-input", Input)
        chat.value = "hi bob"
        chat.focus()
        await pilot.press("enter")
        while (heard := await bob.next_event(m.Chat)).name != "ann":
            pass  # bob's own line comes back to him too
        assert heard.text == "hi bob" and heard.table is None


async def test_a_dropped_connection_is_resumed_and_the_seat_and_its_tab_stay(configured_server, make_app):
    server = await configured_server(grace_s=30.0)  # the seat outlives the reconnection's first wait
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await in_lobby(app, pilot)
        table = (await app.session.create("othello", {"size": 6})).id
        bob = await Client.connect("127.0.0.1", server.port, name="bob")
        await bob.join_table(table)
        await until(pilot, lambda: app.session.tables[table].running)
        first = app.session.client
        first._writer.transport.abort()  # the network drops: not a close the app asked for
        # the app's first attempts come after 0.5 s and 1 s more, each waiting up to 5 s: room for a busy machine
        await until(pilot, lambda: app.session.client is not first and not app.session.client.closed.is_set(), timeout_s=20.0)
        assert app.session.client.token == first.token  # the same session, resumed
        await until(pilot, lambda: main.query(f"#table-{table}") and app.session.tables[table].running)
        state = await until(pilot, lambda: app.session.tables[table].my_turn and app.session.tables[table])
        await app.session.move(table, state.legal_moves[0])  # the resumed seat plays on
        assert (await bob.next_event(m.Moved)).seat == 0
        await bob.close()
