"""The server screen: a server advertised on the LAN (mDNS on 127.0.0.1 only) is listed, chosen and connected to; it is then a recent server."""

from __future__ import annotations

import os
import secrets

from textual.widgets import Input, OptionList, Static

from server.cli import advertise

from .conftest import SIZE, in_lobby, until

LOOPBACK = ["127.0.0.1"]


def options(screen, list_id: str) -> list[str]:
    listed = screen.query_one(f"#{list_id}", OptionList)
    return [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]


async def test_a_server_found_on_the_lan_is_chosen_its_password_asked_until_right_and_it_is_remembered(configured_server, make_app):
    name = f"tui-lan-{os.getpid()}-{secrets.token_hex(3)}"
    server = await configured_server(server_name=name, password="sesame")
    advertiser = advertise(server, fingerprint=None)
    try:
        app = make_app(name="ann", discover=True, lan_interfaces=LOOPBACK)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await until(pilot, lambda: any(name in line for line in options(screen, "lan")), timeout_s=10.0)
            index = next(i for i, line in enumerate(options(screen, "lan")) if name in line)
            assert "(password)" in options(screen, "lan")[index]
            lan = screen.query_one("#lan", OptionList)
            lan.focus()
            lan.highlighted = index
            await pilot.press("enter")
            assert screen.query_one("#address", Input).value == f"127.0.0.1:{server.port}"
            assert screen.query_one("#password-row").display  # it said it wants one
            error = screen.query_one("#password-error", Static)
            await pilot.click("#connect")
            await until(pilot, lambda: "needs a password" in str(error.render()))
            screen.query_one("#password", Input).value = "wrong"
            await pilot.click("#connect")
            await until(pilot, lambda: "refused the password" in str(error.render()))
            screen.query_one("#password", Input).value = "sesame"
            await pilot.click("#connect")
            await in_lobby(app, pilot)
    finally:
        await advertiser.close()
    again = make_app(recent=app.recent)
    async with again.run_test(size=SIZE) as pilot:
        screen = again.screen
        assert options(screen, "recent") == [f"ann @ 127.0.0.1:{server.port}"]
        recent = screen.query_one("#recent", OptionList)
        recent.focus()
        recent.highlighted = 0
        await pilot.press("enter")
        assert (screen.query_one("#name", Input).value, screen.query_one("#address", Input).value) == ("ann", f"127.0.0.1:{server.port}")


async def test_with_servers_found_the_focus_is_on_the_found_list_and_enter_connects_to_the_highlighted_one(configured_server, make_app):
    name = f"tui-enter-{os.getpid()}-{secrets.token_hex(3)}"
    server = await configured_server(server_name=name)
    advertiser = advertise(server, fingerprint=None)
    try:
        app = make_app(name="ann", discover=True, lan_interfaces=LOOPBACK)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            lan = screen.query_one("#lan", OptionList)
            assert app.focused is screen.query_one("#address", Input)  # nothing found yet
            await until(pilot, lambda: any(name in line for line in options(screen, "lan")), timeout_s=10.0)
            await until(pilot, lambda: app.focused is lan and lan.highlighted is not None)
            while name not in options(screen, "lan")[lan.highlighted]:  # other test servers may share loopback
                await pilot.press("down")
            await pilot.press("enter")
            await in_lobby(app, pilot)
            assert app.session.client.welcome.server == name
    finally:
        await advertiser.close()
