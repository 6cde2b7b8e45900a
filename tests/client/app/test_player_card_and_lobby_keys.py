"""The player card (focus, Mute/Unmute, the finger text), the muted list, and the lobby's list keys, against a real server on 127.0.0.1."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from textual.widgets import Button, DataTable, Input, OptionList, Static

from client import Client
from client.app.match_form import MatchForm
from client.app.muted import MutedScreen
from client.app.player import PlayerScreen
from protocol import messages as m
from server.players import passwords

from .conftest import SIZE, in_lobby, until


async def lobby(app: Any, pilot: Any) -> Any:
    """Wait until the lobby pane is mounted whole (its seek and online lists too); return the main screen."""
    main = await in_lobby(app, pilot)
    return await until(pilot, lambda: main.query("#seeks") and main.query("#who") and main)


def option_ids(options: OptionList) -> list[str | None]:
    return [options.get_option_at_index(index).id for index in range(options.option_count)]


async def open_card(app: Any, pilot: Any, main: Any, name: str) -> PlayerScreen:
    """Pick ``name`` in the online list with the keys (o, arrows, Enter); return the card once it shows."""
    who = main.query_one("#who", OptionList)
    await until(pilot, lambda: name in option_ids(who))
    main.query_one("#tables").focus()
    await pilot.press("o")
    await until(pilot, lambda: app.focused is who)
    while who.highlighted_option is None or who.highlighted_option.id != name:
        await pilot.press("down")
    await pilot.press("enter")
    return await until(pilot, lambda: isinstance(app.screen, PlayerScreen) and app.screen)


async def test_the_card_opens_on_the_message_field_so_typing_writes_a_tell_not_a_challenge(server, connect, make_app) -> None:
    bob = await connect("bob")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await lobby(app, pilot)
        card = await open_card(app, pilot, main, "bob")
        tell = card.query_one("#tell-text", Input)
        assert app.focused is tell
        await pilot.press(*"c'mon", "enter")  # c is Challenge's key: here it is only a letter of the tell
        told = await bob.next_event(m.Told)
        assert (told.name, told.text) == ("ann", "c'mon")
        assert app.screen is card and not isinstance(app.screen, MatchForm)


async def test_a_muted_player_s_card_offers_unmute_and_the_muted_list_unmutes(server, connect, make_app) -> None:
    await connect("Bob")
    await connect("carl")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await lobby(app, pilot)
        card = await open_card(app, pilot, main, "Bob")
        button = card.query_one("#p-mute", Button)
        await until(pilot, lambda: str(button.label) == "Mute")
        await pilot.click("#p-mute")
        await until(pilot, lambda: str(button.label) == "Unmute")
        assert await app.session.client.list_mutes() == ["bob"]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is main)

        card = await open_card(app, pilot, main, "Bob")  # opened again: the server says Bob is muted
        button = card.query_one("#p-mute", Button)
        await until(pilot, lambda: str(button.label) == "Unmute")
        await pilot.click("#p-mute")
        await until(pilot, lambda: str(button.label) == "Mute")
        assert await app.session.client.list_mutes() == []
        await pilot.press("escape")

        await app.session.client.mute("Bob")
        await app.session.client.mute("carl")
        main.query_one("#tables").focus()
        await pilot.press("u")
        muted = await until(pilot, lambda: isinstance(app.screen, MutedScreen) and app.screen)
        names = muted.query_one("#muted", OptionList)
        await until(pilot, lambda: option_ids(names) == ["bob", "carl"])
        assert app.focused is names and names.highlighted == 0
        await pilot.press("enter")  # unmutes bob, the highlighted one
        await until(pilot, lambda: option_ids(names) == ["carl"])
        assert await app.session.client.list_mutes() == ["carl"]
        assert "bob is no longer muted" in str(muted.query_one("#muted-status", Static).render())
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is main)


async def test_e_and_o_reach_the_seek_and_online_lists_with_a_highlighted_row(server, connect, make_app) -> None:
    carl = await connect("carl")
    posted = await carl.seek("hexapawn")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await lobby(app, pilot)
        seeks, who = main.query_one("#seeks", OptionList), main.query_one("#who", OptionList)
        await until(pilot, lambda: str(posted.seek.id) in option_ids(seeks) and "carl" in option_ids(who))
        main.query_one("#tables", DataTable).focus()
        await pilot.press("e")
        await until(pilot, lambda: app.focused is seeks)
        await until(pilot, lambda: seeks.highlighted == 0)  # the cursor row shows at once
        await pilot.press("o")
        await until(pilot, lambda: app.focused is who)
        await until(pilot, lambda: who.highlighted is not None)
        await pilot.press("t")
        await until(pilot, lambda: app.focused is main.query_one("#tables"))
        await pilot.press("e", "enter")  # Enter plays the highlighted seek, no arrow key needed
        paired = await carl.next_event(m.Paired)
        await until(pilot, lambda: main.active_table() == paired.table.id)


async def test_the_card_s_record_says_how_the_app_replays_a_game_not_line_mode_commands(configured_server, make_app, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)
    server = await configured_server(db_path=str(tmp_path / "parlour.db"))
    bob = await Client.connect("127.0.0.1", server.port, name="bob", claim=True, secret=secrets.token_urlsafe(32))
    carl = await Client.connect("127.0.0.1", server.port, name="carl", claim=True, secret=secrets.token_urlsafe(32))
    try:
        table = (await bob.create_table("othello", rated=True)).table.id
        joined = await carl.join_table(table)
        started = await bob.next_event(m.GameStarted)
        await bob.move(table, started.view["legal_moves"][0])
        moved = await carl.next_event(m.Moved)
        assert joined.table.id == table
        await carl.move(table, moved.view["legal_moves"][0])
        await bob.resign(table)
        app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
        async with app.run_test(size=SIZE) as pilot:
            main = await lobby(app, pilot)
            card = await open_card(app, pilot, main, "bob")
            finger = card.query_one("#finger", Static)
            await until(pilot, lambda: f"#{table}" in str(finger.render()))
            text = str(finger.render())
            assert "F3" in text and "archive" in text
            assert "replay ID" not in text and "export ID" not in text
    finally:
        await bob.close()
        await carl.close()
