"""Challenges, tells, seeks, the player modal and rated tables in the app, against a real server on 127.0.0.1 (PROTOCOL.md §15-17)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from textual.widgets import Checkbox, Input, OptionList, RichLog, Select, Static

from client import Client
from client.app.challenges import ChallengeScreen
from client.app.match_form import MatchForm
from client.app.new_table import NewTableScreen
from client.app.player import PlayerScreen
from client.app.seats import SeatLines
from client.claims import NameClaims
from client.tokens import SecretStore
from protocol import messages as m
from server.players import passwords

from .conftest import SIZE, in_lobby, until

NIMBLE = {"board": [1, 2, 3]}


async def lobby(app: Any, pilot: Any) -> Any:
    """Wait until the lobby pane is mounted whole (its seek and online lists too); return the main screen."""
    main = await in_lobby(app, pilot)
    return await until(pilot, lambda: main.query("#seeks") and main.query("#who") and main.query("#messages-log") and main)


def notes(app: Any) -> list[str]:
    """The texts of the app's notifications still shown."""
    return [str(note.message) for note in app._notifications]


def option_ids(options: OptionList) -> list[str | None]:
    return [options.get_option_at_index(index).id for index in range(options.option_count)]


def log_text(log: RichLog) -> str:
    """The log's text without spaces or line breaks (its lines wrap at the column's width)."""
    return "".join("".join(line.text for line in log.lines).split())


async def test_a_challenge_is_a_dialog_that_closes_when_withdrawn_and_accepting_opens_the_running_game(server, connect, make_app) -> None:
    carl, bob = await connect("carl"), await connect("bob")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await lobby(app, pilot)
        withdrawn = await carl.challenge("ann", "othello")
        await until(pilot, lambda: isinstance(app.screen, ChallengeScreen))
        await carl.withdraw_challenge(withdrawn.id)
        await until(pilot, lambda: app.screen is main and any("carl was withdrawn" in note for note in notes(app)))
        assert not app.session.challenges

        await bob.challenge("ann", "nimble", NIMBLE, time_control="5+0")
        dialog = await until(pilot, lambda: isinstance(app.screen, ChallengeScreen) and app.screen)
        question = str(dialog.query_one("#offer-question", Static).render())
        assert question.startswith("bob challenges you to a casual game of nimble, clock 5+0")
        await pilot.press("a")
        paired = await bob.next_event(m.Paired)
        table = paired.table.id
        await until(pilot, lambda: main.query(f"#table-{table}") and main.active_table() == table)
        assert app.session.tables[table].running and app.session.focus == table and not app.session.challenges


async def test_a_tell_shows_and_a_player_picked_from_the_online_list_is_told_and_challenged(server, connect, make_app) -> None:
    bob = await connect("bob")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await lobby(app, pilot)
        await bob.tell("ann", "psst [b]\x1b[31mhi")
        messages = main.query_one("#messages-log", RichLog)
        await until(pilot, lambda: "bob:psst[b]␛[31mhi" in log_text(messages))
        assert any("bob tells you: psst [b]␛[31mhi" in note for note in notes(app))  # sanitised, shown as plain text

        who = main.query_one("#who", OptionList)
        await until(pilot, lambda: "bob" in option_ids(who))
        who.focus()
        who.highlighted = option_ids(who).index("bob")
        await pilot.press("enter")
        player = await until(pilot, lambda: isinstance(app.screen, PlayerScreen) and app.screen)
        await until(pilot, lambda: "no rated games yet" in str(player.query_one("#finger", Static).render()))
        player.query_one("#tell-text", Input).focus()
        await pilot.press(*"hello", "enter")
        told = await bob.next_event(m.Told)
        assert (told.name, told.text) == ("ann", "hello")

        await pilot.click("#p-challenge")
        form = await until(pilot, lambda: isinstance(app.screen, MatchForm) and app.screen)
        form.query_one("#m-game", Select).value = "hexapawn"
        form.query_one("#m-time_control", Input).value = "nonsense"
        await pilot.click("#m-send")
        assert "time control" in str(form.query_one("#match-error", Static).render())  # checked before sending
        form.query_one("#m-time_control", Input).value = "3+2"
        form.query_one("#m-time_control", Input).focus()
        await pilot.press("enter")  # Enter in a field sends too
        received = (await bob.next_event(m.ChallengeReceived)).challenge
        assert (received.challenger, received.game, received.time_control, received.rated) == ("ann", "hexapawn", "3+2", False)
        await until(pilot, lambda: app.screen is main)


async def test_seeks_are_listed_answered_with_enter_and_posted_from_the_seek_form(server, connect, make_app) -> None:
    bob, carl = await connect("bob"), await connect("carl")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await lobby(app, pilot)
        seeks = main.query_one("#seeks", OptionList)
        posted = await carl.seek("nimble", NIMBLE, time_control="2+1")
        await until(pilot, lambda: str(posted.seek.id) in option_ids(seeks))
        assert "carl nimble 2+1 casual" in str(seeks.get_option(str(posted.seek.id)).prompt)
        seeks.focus()
        seeks.highlighted = 0
        await pilot.press("enter")
        first = (await carl.next_event(m.Paired)).table.id
        await until(pilot, lambda: main.active_table() == first and app.session.tables[first].running)
        await until(pilot, lambda: not seeks.option_count)  # the answered seek is gone from the list

        await app.session.leave(first)  # the server takes seeks only from players not seated; back to the lobby
        await until(pilot, lambda: main.active_table() is None and main.query_one("#seek-button").region.width)
        await pilot.pause()
        await pilot.click("#seek-button")
        form = await until(pilot, lambda: isinstance(app.screen, MatchForm) and app.screen)
        form.query_one("#m-game", Select).value = "hexapawn"
        form.query_one("#m-rating_min", Input).value = "1900"
        form.query_one("#m-rating_max", Input).value = "1200"
        await pilot.click("#m-send")
        assert "above the highest" in str(form.query_one("#match-error", Static).render())
        form.query_one("#m-rating_min", Input).value = ""
        form.query_one("#m-rating_max", Input).value = ""
        form.query_one("#m-rating_max", Input).focus()
        await pilot.press("enter")  # Enter in a field sends too
        await until(pilot, lambda: any(seek.name == "ann" and seek.game == "hexapawn" for seek in app.session.seeks.values()))
        assert (await bob.seek("hexapawn")).paired  # bob's matching seek pairs with the app's
        second = (await bob.next_event(m.Paired)).table.id
        await until(pilot, lambda: main.active_table() == second and app.session.tables[second].seat is not None)


async def test_the_rated_switch_makes_a_rated_table_whose_seats_and_result_show_ratings(configured_server, make_app, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)  # the hash's cost is not the point here
    server = await configured_server(db_path=str(tmp_path / "parlour.db"))
    bob = await Client.connect("127.0.0.1", server.port, name="bob", claim=True, secret=secrets.token_urlsafe(32))
    claims = NameClaims(store=SecretStore(tmp_path / "secrets.json"), say=print)
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}", claims=claims)
    try:
        async with app.run_test(size=(100, 32)) as pilot:
            main = await lobby(app, pilot)
            await pilot.press("f2")
            form = await until(pilot, lambda: isinstance(app.screen, NewTableScreen) and app.screen)
            form.query_one("#game", Select).value = "othello"
            await pilot.pause()
            form.query_one("#f-rated", Checkbox).value = True
            await pilot.click("#create")
            table = await until(pilot, lambda: app.session.focus)
            await bob.join_table(table)
            await until(pilot, lambda: app.session.tables[table].running)
            view = main.query_one(f"#table-{table}")
            assert app.session.tables[table].info.ratings is not None
            await until(pilot, lambda: "ann (1500?)" in view.query_one("#seat-bottom", SeatLines).plain)
            await until(pilot, lambda: "bob (1500?)" in view.query_one("#seat-top", SeatLines).plain)  # from the table's update
            await app.session.move(table, app.session.tables[table].legal_moves[0])  # a rated game counts from two plies
            reply = await bob.next_event(m.Moved)
            await bob.move(table, reply.view["legal_moves"][0])
            await bob.resign(table)
            await until(pilot, lambda: "Ratings: ann 1500 -> " in str(view.query_one("#result-banner", Static).render()))
    finally:
        await bob.close()
