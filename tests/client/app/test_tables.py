"""Creating, joining, tabs, resigning and leaving in the app, against a real server on 127.0.0.1."""

from __future__ import annotations

from textual.widgets import Button, Input, Select, Static, TabbedContent

import games
from client.app.confirm import ConfirmScreen
from client.app.new_table import NewTableScreen

from .conftest import SIZE, in_lobby, until
from .screen import screen_text


async def connected(app, pilot):
    return await in_lobby(app, pilot)


def error_text(screen, widget_id: str) -> str:
    return str(screen.query_one(f"#{widget_id}", Static).render())


async def test_the_form_shows_errors_on_their_fields_then_creates_the_table_a_second_client_joins_and_resigning_asks(server, connect, make_app):
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await connected(app, pilot)
        await pilot.press("f2")
        form = await until(pilot, lambda: isinstance(app.screen, NewTableScreen) and app.screen)
        await until(pilot, lambda: app.focused is form.query_one("#game", Select))  # the first field, ready for the keys
        form.query_one("#game", Select).value = "tactego"
        # Its rows are built once the title shows (one pause was too short on a busy machine); the seed row is set with it.
        await until(pilot, lambda: str(form.query_one("#game-title", Static).render()) == games.get("tactego").title)
        assert form.query_one("#row-seed").display
        form.query_one("#f-seed", Input).value = "x" * 300  # the form does not check a seed's length: the server does
        form.query_one("#create", Button).press()
        await until(pilot, lambda: error_text(form, "err-seed"))
        assert "seed" in error_text(form, "err-seed") and not error_text(form, "err-form")
        assert isinstance(app.screen, NewTableScreen) and not app.session.tables

        form.query_one("#game", Select).value = "hexapawn"
        await until(pilot, lambda: form.game == "hexapawn" and form.query("#f-options-size"))
        form.query_one("#game", Select).value = "othello"  # the same option, "size": its old row goes first
        await until(pilot, lambda: form.game == "othello" and len(form.query("#f-options-size")) == 1)
        await until(pilot, lambda: str(form.query_one("#game-title", Static).render()) == games.get("othello").title)  # the rows are built
        assert not form.query_one("#row-seed").display and not error_text(form, "err-seed")
        size = form.query_one("#f-options-size", Input)
        size.value = "7"
        form.query_one("#f-time_control", Input).value = "5+3"
        form.query_one("#create", Button).press()
        await pilot.pause()
        assert "from 4 to 16" in error_text(form, "err-options-size") or "even" in error_text(form, "err-options-size")
        assert isinstance(app.screen, NewTableScreen)
        size.value = "6"
        form.query_one("#create", Button).press()
        await until(pilot, lambda: app.screen is main)
        tabs = main.query_one(TabbedContent)
        table = app.session.focus
        assert table is not None
        await until(pilot, lambda: tabs.active == f"table-{table}")
        assert app.session.tables[table].info.options["size"] == 6 and app.session.tables[table].info.time_control == "5+3"

        bob = await connect("bob")
        await bob.join_table(table)
        await until(pilot, lambda: app.session.tables[table].running)

        await pilot.press("ctrl+w")  # closing the tab of a running game asks first
        question = await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen)
        assert "aborts" in str(question.query_one("#question", Static).render())  # nobody has moved yet
        await pilot.press("n")
        await until(pilot, lambda: app.screen is main)
        assert tabs.active == f"table-{table}" and table in app.session.tables

        main.query_one(f"#table-{table} #board").focus()
        await pilot.press("x")  # resign: asks first
        question = await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen)
        assert "Resign" in str(question.query_one("#question", Static).render())
        await pilot.press("n")
        await until(pilot, lambda: app.screen is main)
        assert app.session.tables[table].running
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: app.session.tables[table].outcome is not None)
        assert app.session.tables[table].outcome["winner"] == 1

        await pilot.press("ctrl+w")  # the game is over: the tab closes without a question
        await until(pilot, lambda: table not in app.session.tables)
        assert tabs.active == "lobby" and not tabs.query(f"#table-{table}")


async def test_the_leave_question_says_aborts_before_both_sides_moved_and_forfeits_after(server, connect, make_app):
    bob = await connect("bob")
    table = (await bob.create_table("othello", {"size": 6})).table.id  # bob is Black: he moves first
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await connected(app, pilot)
        await app.session.join(table)
        await until(pilot, lambda: app.session.tables[table].running and main.query(f"#table-{table} #board"))

        async def question_and_yes() -> tuple[str, str]:
            await pilot.press("ctrl+w")
            screen = await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen)
            said = (str(screen.query_one("#question", Static).render()), str(screen.query_one("#yes", Button).label))
            await pilot.press("n")
            await until(pilot, lambda: app.screen is main)
            return said

        aborts = "Leave table {}? A side has not moved yet: leaving aborts the game (no result, not rated)."
        assert await question_and_yes() == (aborts.format(table), "Leave and abort")
        await bob.move(table, "c2")
        await until(pilot, lambda: app.session.tables[table].moves == ["c2"])
        assert await question_and_yes() == (aborts.format(table), "Leave and abort")  # ann has not moved yet
        await app.session.move(table, "b2")
        await until(pilot, lambda: len(app.session.tables[table].moves) == 2)
        forfeits = f"Leave table {table}? Your game there is running: leaving it forfeits the game."
        assert await question_and_yes() == (forfeits, "Leave and forfeit")
        assert app.session.tables[table].running


async def test_a_watched_tab_closes_at_once_and_quitting_asks_first_ctrl_c_only_during_a_game(server, connect, make_app):
    bob = await connect("bob")
    watched = (await bob.create_table("othello", {"size": 6})).table.id
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await connected(app, pilot)
        await app.session.watch(watched)
        tabs = main.query_one(TabbedContent)
        await until(pilot, lambda: tabs.active == f"table-{watched}")
        await until(pilot, lambda: app.focused is main.query_one(f"#table-{watched} #board"))
        assert "f4" in main.active_bindings  # a table's tab closes
        assert not {"d", "t", "r", "x"} & set(main.active_bindings)  # a spectator has no player's keys
        assert not main.query_one(f"#table-{watched} #table-buttons").display
        await pilot.click("#--content-tab-lobby")  # the user's choice of tab moves the model's focus
        await until(pilot, lambda: app.session.focus is None and tabs.active == "lobby")
        await until(pilot, lambda: "f4" not in main.active_bindings)  # the lobby's does not: no key for it in the footer
        await pilot.click(f"#--content-tab-table-{watched}")
        await until(pilot, lambda: app.session.focus == watched and tabs.active == f"table-{watched}")
        await pilot.press("f4")  # watching: no question
        await until(pilot, lambda: watched not in app.session.tables)
        assert not isinstance(app.screen, ConfirmScreen) and tabs.active == "lobby"

        await pilot.press("ctrl+q")
        question = await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen)
        assert str(question.query_one("#question", Static).render()) == "Quit Parlour?"
        await pilot.press("escape")  # no
        await until(pilot, lambda: app.screen is main)

        playing = (await app.session.join(watched)).id
        await until(pilot, lambda: app.session.tables[playing].running)
        await until(pilot, lambda: {"d", "x"} <= set(main.active_bindings))  # seated now: the player's keys
        await pilot.press("ctrl+c")
        question = await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen)
        assert f"table {playing}" in str(question.query_one("#question", Static).render())
        await pilot.press("y")
        await until(pilot, lambda: app.return_code == 0)


async def test_choosing_a_table_tab_by_mouse_or_key_puts_the_focus_on_its_board(server, connect, make_app):
    bob = await connect("bob")
    table = (await bob.create_table("othello", {"size": 6})).table.id
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await connected(app, pilot)
        await app.session.join(table)
        tabs = main.query_one(TabbedContent)
        board = await until(pilot, lambda: tabs.active == f"table-{table}" and main.query_one(f"#table-{table} #board"))
        await pilot.click("#--content-tab-lobby")
        await until(pilot, lambda: app.focused is main.query_one("#tables"))
        await pilot.click(f"#--content-tab-table-{table}")
        await until(pilot, lambda: app.focused is board)
        await pilot.press("f6")  # the next tab wraps round to the lobby
        await until(pilot, lambda: tabs.active == "lobby" and app.session.focus is None and app.focused is main.query_one("#tables"))
        await pilot.press("f5")
        await until(pilot, lambda: tabs.active == f"table-{table}" and app.session.focus == table and app.focused is board)


async def test_a_spectator_who_takes_a_seat_loses_the_watching_label(server, connect, make_app):
    bob = await connect("bob")
    table = (await bob.create_table("othello", {"size": 6})).table.id
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await connected(app, pilot)
        await app.session.watch(table)
        tabs = main.query_one(TabbedContent)
        await until(pilot, lambda: tabs.active == f"table-{table}")
        label = tabs.get_tab(f"table-{table}")
        assert label.label_text == f"#{table} othello (watching)"
        await app.session.join(table, 1)
        await until(pilot, lambda: app.session.tables[table].seat == 1 and app.session.tables[table].running)
        await until(pilot, lambda: label.label_text == f"#{table} othello")
        await pilot.pause()
        assert len(tabs.query("TabPane")) == 2  # the same tab, not a second one
        assert "(watching)" not in screen_text(app) and f"#{table} othello" in screen_text(app)
        assert "you are White" in str(main.query_one(f"#table-{table} #table-title", Static).render())
