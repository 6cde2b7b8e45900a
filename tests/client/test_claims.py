"""The client's side of claimed names: the secrets file, claiming on first connect, export and import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.bot import resume_or_renew
from client.claims import NameClaims
from client.cli import ConnectSettings, _connect, main
from client.secret_cli import ExportError, export_secrets, import_secrets
from client.tokens import SecretStore, SecretStoreError, TokenStore
from server.players import passwords
from server.app import Server

from ..conftest import ConfiguredServer
from ..server.conftest import refused


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server hashes at scrypt n=2**10 here: these tests are about the client."""
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)


def claims(path: Path, said: list[str] | None = None, **kwargs: object) -> NameClaims:
    return NameClaims(SecretStore(path / "secrets.json"), say=(said if said is not None else []).append, **kwargs)  # type: ignore[arg-type]


def test_secrets_are_kept_per_server_and_name_for_the_owner_only(tmp_path: Path) -> None:
    store = SecretStore(tmp_path / "secrets.json")
    assert store.get("127.0.0.1", 7420, "Ann Lee") is None
    store.put("127.0.0.1", 7420, "Ann Lee", "s1")
    store.put("::1", 7421, "Ann Lee", "s2")
    assert store.get("127.0.0.1", 7420, "Ann Lee") == "s1" and store.get("::1", 7421, "Ann Lee") == "s2"
    assert (tmp_path / "secrets.json").stat().st_mode & 0o777 == 0o600
    store.put("127.0.0.1", 7420, "Ann Lee", None)
    assert store.entries() == {"::1:7421 Ann Lee": "s2"}


def test_a_secret_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(SecretStoreError, match="cannot write"):
        SecretStore(tmp_path / "file" / "secrets.json").put("h", 1, "ann", "s")


def test_export_and_import_move_a_names_secrets(tmp_path: Path) -> None:
    first, second = SecretStore(tmp_path / "a.json"), SecretStore(tmp_path / "b.json")
    first.update({"127.0.0.1:7420 ann": "s1", "10.0.0.2:7000 ann": "s2", "127.0.0.1:7420 bob": "s3"})
    document = export_secrets(first, "ann")
    assert [(e["server"], e["secret"]) for e in document["secrets"]] == [("10.0.0.2:7000", "s2"), ("127.0.0.1:7420", "s1")]
    assert export_secrets(first, "ann", ("10.0.0.2", 7000))["secrets"] == [{"server": "10.0.0.2:7000", "name": "ann", "secret": "s2"}]
    assert export_secrets(first, "cat")["secrets"] == []
    import_secrets(second, json.loads(json.dumps(document)))
    assert second.entries() == {"127.0.0.1:7420 ann": "s1", "10.0.0.2:7000 ann": "s2"}
    import_secrets(second, export_secrets(first, "bob"), server=("192.168.1.5", 7420))  # reached by another address here
    assert second.get("192.168.1.5", 7420, "bob") == "s3"
    for bad in ({}, {"parlour_secrets": 1, "secrets": [{"server": "h:1", "name": "ann"}]}, {"parlour_secrets": 1, "secrets": [{"server": "h", "name": "a", "secret": "s"}]}):
        with pytest.raises(ExportError):
            import_secrets(second, bad)


async def test_the_first_connection_claims_and_says_so_once(server: Server, tmp_path: Path) -> None:
    said: list[str] = []
    first = await claims(tmp_path, said).connect("127.0.0.1", server.port, "ann")
    assert first.welcome is not None and first.welcome.claimed
    assert len(said) == 1 and said[0].startswith("Claimed the name ann on this server; your secret is in ")
    assert "parlour secret export ann" in said[0]
    await first.close()
    again = await claims(tmp_path, said).connect("127.0.0.1", server.port, "ann")
    assert again.welcome is not None and again.welcome.claimed and len(said) == 1
    await again.close()


async def test_another_machine_needs_the_exported_secret(server: Server, tmp_path: Path) -> None:
    home, laptop = tmp_path / "home", tmp_path / "laptop"
    await (await claims(home).connect("127.0.0.1", server.port, "ann")).close()
    refusal = await refused(claims(laptop).connect("127.0.0.1", server.port, "ann"), "name_claimed")
    assert "parlour secret import" in refusal.message
    assert SecretStore(laptop / "secrets.json").entries() == {}, "a refused claim keeps no secret"
    import_secrets(SecretStore(laptop / "secrets.json"), export_secrets(SecretStore(home / "secrets.json"), "ann"))
    said: list[str] = []
    there = await claims(laptop, said).connect("127.0.0.1", server.port, "ann")
    assert there.welcome is not None and there.welcome.claimed and said == []
    await there.close()


async def test_a_guest_claims_nothing(server: Server, tmp_path: Path) -> None:
    guest = await claims(tmp_path, guest=True).connect("127.0.0.1", server.port, "ann")
    assert guest.welcome is not None and not guest.welcome.claimed
    assert SecretStore(tmp_path / "secrets.json").entries() == {}
    await guest.close()


async def test_no_secret_is_kept_where_names_cannot_be_claimed(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(accounts="off")
    said: list[str] = []
    client = await claims(tmp_path, said).connect("127.0.0.1", server.port, "ann")
    assert client.welcome is not None and not client.welcome.claimed and said == []
    assert SecretStore(tmp_path / "secrets.json").entries() == {}
    await client.close()


async def test_the_play_command_claims_through_its_settings(server: Server, tmp_path: Path) -> None:
    said: list[str] = []
    settings = ConnectSettings(claims=claims(tmp_path, said))
    client = await _connect("127.0.0.1", server.port, "ann", TokenStore(tmp_path / "tokens.json"), settings)
    assert client.welcome is not None and client.welcome.claimed and len(said) == 1
    await client.close()


async def test_a_bot_claims_its_name_where_names_must_be_claimed(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(accounts="required")
    await refused(resume_or_renew("127.0.0.1", server.port, "robo")(None), "claim_required")
    bot = await resume_or_renew("127.0.0.1", server.port, "robo", claims(tmp_path))(None)
    assert bot.welcome is not None and bot.welcome.claimed
    await bot.close()


async def test_a_server_in_this_process_lets_its_host_keep_a_secret_from_another_port(server: Server, tmp_path: Path) -> None:
    """``parlour host`` with a secret kept by address (or for another database): checked by the server itself, never sent."""
    home = claims(tmp_path)
    await (await home.connect("127.0.0.1", server.port, "ann")).close()
    secret = home.store.get_for(server.server_id, "ann")
    assert secret is not None
    home.store.update({f"@{server.server_id} ann": None, "127.0.0.1:1 ann": "not it", "127.0.0.1:2 ann": secret})
    assert home.adopt(server.server_id, "ann", lambda s: server.accounts.proves("ann", s))
    assert home.store.get_for(server.server_id, "ann") == secret
    assert not home.adopt(server.server_id, "bob", lambda s: server.accounts.proves("bob", s))


async def test_a_claimed_name_works_through_every_address_of_its_server(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    """The secret is kept by the server's id: 127.0.0.1, localhost and 127.0.0.2 (loopback too) reach one server."""
    server = await configured_server(host="0.0.0.0")
    said: list[str] = []
    home = claims(tmp_path, said)
    for host in ("127.0.0.1", "localhost", "127.0.0.2"):
        client = await home.connect(host, server.port, "ann")
        assert client.welcome is not None and client.welcome.claimed and client.welcome.server_id == server.server_id
        await client.close()
    assert len(said) == 1, "claimed once, proven through the other spellings"
    assert home.store.entries() == {f"@{server.server_id} ann": home.store.get_for(server.server_id, "ann")}
    assert home.store.server_ids.addresses(server.server_id) == [f"{host}:{server.port}" for host in ("127.0.0.1", "127.0.0.2", "localhost")]
    assert (tmp_path / "server_ids.json").stat().st_mode & 0o777 == 0o600


async def test_a_secret_kept_by_address_moves_to_the_server_id_on_first_use(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(host="0.0.0.0")
    home = claims(tmp_path)
    await (await home.connect("127.0.0.1", server.port, "ann")).close()
    secret = home.store.get_for(server.server_id, "ann")
    home.store.update({f"@{server.server_id} ann": None, f"127.0.0.1:{server.port} ann": secret})  # as a client before server ids kept it
    refusal = await refused(claims(tmp_path).connect("localhost", server.port, "ann"), "name_claimed")  # not moved yet: another spelling
    assert home.store.entries() == {f"127.0.0.1:{server.port} ann": secret}, "the refused attempt changed nothing"
    assert refusal.message.count(". This machine has the secret of ann for 127.0.0.1") == 1
    first_use = await home.connect("127.0.0.1", server.port, "ann")
    assert first_use.welcome is not None and first_use.welcome.claimed
    await first_use.close()
    assert home.store.entries() == {f"@{server.server_id} ann": secret}, "moved to the server id"
    elsewhere = await home.connect("localhost", server.port, "ann")
    assert elsewhere.welcome is not None and elsewhere.welcome.claimed
    await elsewhere.close()


async def test_an_imported_secret_works_through_another_address_than_the_exporting_ones(
    configured_server: ConfiguredServer, tmp_path: Path
) -> None:
    server = await configured_server(host="0.0.0.0")
    home, laptop = claims(tmp_path / "home"), claims(tmp_path / "laptop")
    await (await home.connect("127.0.0.1", server.port, "ann")).close()
    document = json.loads(json.dumps(export_secrets(home.store, "ann", ("127.0.0.1", server.port))))
    assert document["secrets"] == [
        {"server": f"127.0.0.1:{server.port}", "server_id": server.server_id, "name": "ann", "secret": home.store.get_for(server.server_id, "ann")}
    ]
    assert import_secrets(laptop.store, document) == [f"ann for 127.0.0.1:{server.port}"]
    there = await laptop.connect("127.0.0.2", server.port, "ann")
    assert there.welcome is not None and there.welcome.claimed
    await there.close()
    with pytest.raises(ExportError, match="is not a server id"):
        import_secrets(laptop.store, {"parlour_secrets": 1, "secrets": [{"server": "", "server_id": "a b", "name": "ann", "secret": "s"}]})


async def test_a_refused_claim_says_where_this_machine_has_the_secret(server: Server, tmp_path: Path) -> None:
    await (await claims(tmp_path / "home").connect("127.0.0.1", server.port, "ann")).close()
    laptop = claims(tmp_path / "laptop")
    laptop.store.put("10.0.0.9", 7420, "ann", "the secret for another address")
    refusal = await refused(laptop.connect("127.0.0.1", server.port, "ann"), "name_claimed")
    assert "or choose another name. This machine has the secret of ann for 10.0.0.9:7420" in refusal.message, "two sentences, not run together"
    assert f"parlour secret import --server 127.0.0.1:{server.port} -" in refusal.message


async def test_a_password_set_on_one_machine_proves_the_name_on_another(server: Server, tmp_path: Path) -> None:
    home = claims(tmp_path / "home")
    owner = await home.connect("127.0.0.1", server.port, "ann")
    assert (await home.set_password(owner, "short", "127.0.0.1", server.port)).startswith("No password set (bad_request)")
    assert (await home.set_password(owner, "correct horse", "127.0.0.1", server.port)).startswith("Password set")
    await owner.close()
    by_setting = await claims(tmp_path / "laptop", password="correct horse").connect("127.0.0.1", server.port, "ann")
    assert by_setting.welcome is not None and by_setting.welcome.claimed
    await by_setting.close()
    prompts: list[str] = []
    asking = claims(tmp_path / "phone", ask=lambda prompt: prompts.append(prompt) or "correct horse")
    by_asking = await asking.connect("127.0.0.1", server.port, "ann")
    assert by_asking.welcome is not None and by_asking.welcome.claimed
    assert prompts == ["The name ann is claimed on this server. Its password (Enter to give up): "]
    assert asking.store.entries() == {}, "a password is not kept on disk"
    await by_asking.close()
    guest = await claims(tmp_path / "guest", guest=True).connect("127.0.0.1", server.port, "bob")
    assert (await home.set_password(guest, "correct horse", "127.0.0.1", server.port)).startswith("No password set: bob is not a name")
    await guest.close()


def parlour(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the ``parlour`` command in this process; return its status, stdout and stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


async def test_a_name_moves_to_another_machine_through_the_secret_commands(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, laptop = tmp_path / "home", tmp_path / "laptop"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    said: list[str] = []
    await (await NameClaims(say=said.append).connect("127.0.0.1", server.port, "ann")).close()
    assert said and str(home / "parlour" / "secrets.json") in said[0]
    status, exported, warning = parlour(["secret", "export", "ann", "--server", f"127.0.0.1:{server.port}"], capsys)
    assert status == 0 and "Keep this export private" in warning
    assert [entry["name"] for entry in json.loads(exported)["secrets"]] == ["ann"]
    assert parlour(["secret", "export", "bob"], capsys)[0] == 1

    monkeypatch.setenv("XDG_DATA_HOME", str(laptop))
    export_file = tmp_path / "ann.secret"
    export_file.write_text(exported)
    status, out, _ = parlour(["secret", "import", str(export_file)], capsys)
    assert status == 0 and out.strip() == f"Imported the secret of ann for 127.0.0.1:{server.port}."
    assert (laptop / "parlour" / "secrets.json").stat().st_mode & 0o777 == 0o600
    there = await NameClaims(say=said.append).connect("127.0.0.1", server.port, "ann")
    assert there.welcome is not None and there.welcome.claimed and len(said) == 1
    await there.close()
    (tmp_path / "junk").write_text("{}")
    status, _, error = parlour(["secret", "import", str(tmp_path / "junk")], capsys)
    assert status == 1 and "not a Parlour secrets export" in error


def test_doctests() -> None:
    import doctest

    import client.claims

    assert doctest.testmod(client.claims).failed == 0


async def test_new_secret_replaces_the_kept_secret_and_the_old_one_stops_working(server: Server, tmp_path: Path) -> None:
    from client.cli import _change_credentials, parse_args

    args = parse_args(["play", "127.0.0.1", "--name", "ann", "--new-secret"], environ={})
    assert args.settings.claims.new_secret and not args.settings.claims.new_password
    home = claims(tmp_path / "home", new_secret=True)
    owner = await home.connect("127.0.0.1", server.port, "ann")
    server_id = owner.welcome.server_id
    old_secret, old_token = home.store.get_for(server_id, "ann"), owner.token
    said = await _change_credentials(owner, home, "127.0.0.1", server.port)
    assert old_secret is not None
    assert said.startswith("New secret for ann kept in") and owner.token != old_token
    new_secret = home.store.get_for(server_id, "ann")
    assert new_secret is not None and new_secret != old_secret and json.loads(home.store.path.read_text())
    await owner.close()
    stale = claims(tmp_path / "copy")
    stale.store.put("127.0.0.1", server.port, "ann", old_secret)  # an export made before the change
    await refused(stale.connect("127.0.0.1", server.port, "ann"), "name_claimed")
    again = await home.connect("127.0.0.1", server.port, "ann")
    assert again.welcome is not None and again.welcome.claimed
    await again.close()
