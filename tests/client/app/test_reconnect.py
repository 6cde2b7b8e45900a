"""The app when the server goes away: a lasting bar on every tab, paused clocks, a retry key; and signed in elsewhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Static

from client.app.tabs import LOBBY_TAB, MainScreen, tab_id
from client.claims import NameClaims
from client.reconnect import GIVE_UP_S
from client.tokens import SecretStore
from server.players import passwords
from server.core.names import name_key

from ...e2e.harness import start_server
from .conftest import SIZE, in_lobby, until

pytestmark = pytest.mark.slow


def screen_text(app: object) -> str:
    """The screen's rows as drawn now (the compositor's own strips: what the terminal gets)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())  # type: ignore[attr-defined]


def bar_text(main: MainScreen) -> str:
    """What the connection bar above the tabs says ('' while hidden)."""
    bar = main.query_one("#offline", Static)
    return str(bar.render()) if bar.has_class("shown") and bar.region.height else ""


async def test_a_killed_server_shows_reconnecting_on_every_tab_pauses_the_clocks_and_the_key_retries(make_app, tmp_path: Path) -> None:
    db = str(tmp_path / "parlour.sqlite3")
    server, port = await asyncio.to_thread(start_server, "--db", db, "--grace", "60")
    try:
        app = make_app(name="ann", address=f"127.0.0.1:{port}")
        async with app.run_test(size=SIZE) as pilot:
            main = await in_lobby(app, pilot)
            session = app.session
            state = await session.create("othello", time_control="5+0", computer={1: 1})
            table = state.id
            await until(pilot, lambda: main.query(f"#{tab_id(table)}") and session.tables[table].my_turn)
            await session.move(table, session.tables[table].legal_moves[0])
            await until(pilot, lambda: len(session.tables[table].moves) == 2 and session.tables[table].my_turn, timeout_s=15)  # the computer replied
            await until(pilot, lambda: (session.tables[table].clock or {}).get("running") == 0)  # ann's clock runs

            server.popen.kill()  # SIGKILL: no shutdown message, the connection just breaks
            await asyncio.to_thread(server.popen.wait, 10)
            await until(pilot, lambda: "Reconnecting" in bar_text(main), timeout_s=15)
            assert "Ctrl+R" in bar_text(main) and "clocks paused" in bar_text(main)
            assert app.reconnector is not None and app.reconnector.give_up_s >= GIVE_UP_S >= 300, "at least as long as the line client"
            assert app.reconnector.give_up_s >= 60, "and the server's grace period (welcome.grace_s)"
            for shown in (LOBBY_TAB, tab_id(table)):  # the bar is above the tabs: every tab shows it
                session.set_focus(None if shown == LOBBY_TAB else table)
                await until(pilot, lambda: main.query_one("#tabs").active == shown)
                await pilot.pause(0.6)  # a redraw of the countdown
                assert "Reconnecting" in bar_text(main), shown

            reading = session.tables[table].remaining_ms(session.clock_time())
            await pilot.pause(1.2)
            assert session.tables[table].remaining_ms(session.clock_time()) == reading, "the clocks stand still while the server is away"
            await until(pilot, lambda: "paused" in screen_text(app), timeout_s=3)  # by the clocks

            server, _ = await asyncio.to_thread(start_server, "--db", db, "--grace", "60", port=port)
            await asyncio.sleep(0.2)
            await pilot.press("ctrl+r")  # without waiting for the next attempt (it may be seconds away)
            await until(pilot, lambda: bar_text(main) == "" and session.offline_since is None, timeout_s=10)
            assert table in session.tables and session.tables[table].seat == 0, "the seat came back"
            await until(pilot, lambda: session.tables[table].clock is not None and session.tables[table].clock.get("running") == 0)
            before = session.tables[table].remaining_ms(session.clock_time())
            await pilot.pause(0.3)
            after = session.tables[table].remaining_ms(session.clock_time())
            assert before is not None and after is not None and after[0] < before[0], "the clock runs again"
            await until(pilot, lambda: "paused" not in screen_text(app), timeout_s=3)
    finally:
        server.kill()


async def test_an_app_signed_in_elsewhere_stops_says_so_and_never_takes_the_session_back(
    configured_server, make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)  # the hash's cost is not the point here
    server = await configured_server()
    store = SecretStore(tmp_path / "secrets.json")
    app = make_app(name="ann", address=f"127.0.0.1:{server.port}", claims=NameClaims(store=store, say=print))
    async with app.run_test(size=SIZE) as pilot:
        main = await in_lobby(app, pilot)
        first = app.session.client
        assert first.welcome is not None and first.welcome.claimed
        other = await NameClaims(store=store, say=print).connect("127.0.0.1", server.port, "ann")  # the same player, another window
        try:
            await until(pilot, lambda: "Signed in elsewhere" in bar_text(main))
            await pilot.pause(2.0)  # long enough for several attempts (after 0.5 s, 1 s), had it retried
            assert app.reconnector is None and app.session.client is first and first.superseded
            assert not other.closed.is_set(), "the other window keeps the session"
            await other.ping()
            assert server.names[name_key("ann")].peer is not None and server.names[name_key("ann")].connected
            assert "Signed in elsewhere" in bar_text(main), "the state lasts"
        finally:
            await other.close()
