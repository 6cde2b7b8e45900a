"""Options read as people read them in the app (labels, yes/no), form labels whole at 80 columns, archive rows fitted at 120;
against a real server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Label, Select, Static

import games
from client import Client
from client.app.archive import ArchiveScreen
from client.app.challenges import ChallengeScreen
from client.app.new_table import NewTableScreen
from client.app.yes_no import YesNo

from .conftest import SIZE, in_lobby, until

LONG_A = "Annabel-Longname-Abcdefg"  # 24 characters: the longest name a server allows
LONG_B = "Bartholomew-Longname-Xyz"
MORRIS = {"flying": True, "mill_protection": True}


def text_of(widget: Any) -> str:
    return str(widget.render())


async def test_every_form_label_is_whole_at_80_columns_and_switches_read_yes_or_no(server, make_app) -> None:
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        await in_lobby(app, pilot)
        await pilot.press("f2")
        form = await until(pilot, lambda: isinstance(app.screen, NewTableScreen) and app.screen)
        for game in games.names():
            form.query_one("#game", Select).value = game
            await until(pilot, lambda: form.game == game and len(form.query("#options .row")) == len(form.options))
            await pilot.pause()
            labels = [label for label in form.query(".row > Label").results(Label) if label.display and label.parent.display]
            titles = {text_of(label) for label in labels}
            assert {option.title for option in form.options} <= titles, game  # labels, not wire names
            for label in labels:
                assert label.region.width - 1 >= len(text_of(label)) and label.region.right <= SIZE[0], (game, text_of(label), label.region)
        form.query_one("#game", Select).value = "morris"
        await until(pilot, lambda: form.query("#f-options-mill_protection"))
        await pilot.pause()
        switch = form.query_one("#f-options-mill_protection", YesNo)
        assert str(form.query_one("#f-hints", YesNo).label) == "no"
        assert "no" in str(switch.label) and "on" != str(switch.label)
        switch.focus()
        await pilot.press("space")
        await until(pilot, lambda: switch.value and str(switch.label) == "yes")
        await pilot.press("space")
        await until(pilot, lambda: not switch.value and str(switch.label) == "no")


async def test_the_lobby_row_and_a_challenge_say_options_by_label_in_words(server, connect, make_app) -> None:
    bob = await connect("bob")
    table = (await bob.create_table("morris", MORRIS)).table.id
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=(120, 40)) as pilot:
        main = await in_lobby(app, pilot)
        tables = main.query_one("#tables", DataTable)
        await until(pilot, lambda: str(table) in tables.rows)
        cell = str(tables.get_cell(str(table), "options"))
        assert cell == "Flying: yes, Mill protection: yes", cell
        await bob.challenge("ann", "morris", {"flying": True})
        dialog = await until(pilot, lambda: isinstance(app.screen, ChallengeScreen) and app.screen)
        question = text_of(dialog.query_one("#offer-question", Static))
        assert "Flying: yes" in question and "flying=" not in question and "True" not in question


async def morris_game(port: int) -> int:
    """Two players with 24-character names play two plies of Morris with both options on; the second resigns."""
    first = await Client.connect("127.0.0.1", port, name=LONG_A)
    second = await Client.connect("127.0.0.1", port, name=LONG_B)
    try:
        table = (await first.create_table("morris", MORRIS)).table.id
        await second.join_table(table)
        state = games.get("morris").new_state(MORRIS)
        for player in (first, second):
            move = state.legal_moves()[0]
            await player.move(table, move)
            state = state.play(move)
        await second.resign(table)
    finally:
        await first.close()
        await second.close()
    return table


async def test_archive_rows_fit_120_columns_with_options_in_words(configured_server, make_app, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite"))
    table = await morris_game(server.port)
    app = make_app(name="carol", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=(120, 40)) as pilot:
        await in_lobby(app, pilot)
        await pilot.press("f3")
        archive = await until(pilot, lambda: isinstance(app.screen, ArchiveScreen) and app.screen)
        listed = archive.query_one("#games", DataTable)
        await until(pilot, lambda: listed.row_count == 1)
        await pilot.pause()
        assert listed.virtual_size.width <= listed.scrollable_content_region.width, "the row is wider than the screen"
        row = [str(cell) for cell in listed.get_row_at(0)]
        assert row[0] == str(table) and row[1] == "morris"
        assert row[-1].startswith("20") and row[-2] == "2"  # when it finished, and the plies, are shown whole
        assert "Flying: yes" in row[4] and "True" not in " ".join(row)
        assert LONG_A[:10] in row[2] and ("wins" in row[3] or "…" in row[3])
