"""The app proves and claims names as the line client does (PROTOCOL.md §15), against a real server on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from client.app.server_screen import ServerScreen
from client.claims import NameClaims
from client.tokens import SecretStore, TokenStore
from server.players import passwords

from .conftest import SIZE, in_lobby, until


async def test_the_app_claims_a_free_name_proves_it_later_and_another_machine_is_asked_for_the_secret(
    configured_server, make_app, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)  # the hash's cost is not the point here
    server = await configured_server(db_path=str(tmp_path / "parlour.db"))
    address = f"127.0.0.1:{server.port}"
    mine = SecretStore(tmp_path / "mine" / "secrets.json")

    # With a name and an address the server screen connects at once: a click on Connect as well would
    # race the screen's own connection (the click could land while the screen was being replaced: NoWidget).
    app = make_app(name="ann", address=address, claims=NameClaims(store=mine, say=print))
    async with app.run_test(size=SIZE) as pilot:
        await in_lobby(app, pilot)
        assert app.session is not None and app.session.client.welcome.claimed
        assert list(mine.entries()) == [f"@{server.server_id} ann"]  # kept by the server's id (PROTOCOL.md section 15)
        await app.session.client.close()

    # Another machine: no secret for ann there, so the server asks for it and the app shows the secret field.
    elsewhere = make_app(
        name="ann", address=address, claims=NameClaims(store=SecretStore(tmp_path / "other" / "secrets.json")),
        tokens=TokenStore(tmp_path / "other" / "tokens.json"),
    )
    async with elsewhere.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: isinstance(elsewhere.screen, ServerScreen) and elsewhere.screen.is_mounted and elsewhere.screen)
        error = screen.query_one("#secret-error", Static)
        await until(pilot, lambda: "name_claimed" in str(error.render()))  # its own connection was refused
        assert screen.query_one("#secret-row").display
        screen.query_one("#secret", Input).value = mine.entries()[f"@{server.server_id} ann"]  # the exported secret
        await pilot.click("#connect")
        await in_lobby(elsewhere, pilot)
        assert elsewhere.session is not None and elsewhere.session.client.name == "ann"
