"""Claimed names over real sockets, with real SQLite files: claim, prove, refuse, rate-limit, survive restarts."""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
from pathlib import Path
from typing import Awaitable, Callable

import pytest

from client import Client
from client.connection import ServerError
from server.players import passwords
from server.app import Server, ServerConfig
from server.players.account_limits import AccountLimits, SlidingWindow

from ..conftest import ConfiguredServer
from .conftest import refused

Start = Callable[..., Awaitable[Server]]
REAL_SCRYPT_N = passwords.SCRYPT_N


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hash at scrypt n=2**10 (a few ms, not 50-150) where a test is not about the hash's cost or stored parameters."""
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)


@pytest.fixture
def start(configured_server: ConfiguredServer, tmp_path: Path) -> Start:
    """Factory: ``await start(accounts=...)`` runs a server on 127.0.0.1 on ``tmp_path/parlour.db``; a second call after
    ``close()`` of the first reopens the same file (a restart)."""
    return lambda **config: configured_server(db_path=str(tmp_path / "parlour.db"), grace_s=ServerConfig().grace_s, **config)


async def hello(server: Server, name: str, **kwargs: object) -> Client:
    return await Client.connect("127.0.0.1", server.port, name=name, timeout_s=5.0, **kwargs)  # type: ignore[arg-type]


def new_secret() -> str:
    return secrets.token_urlsafe(32)


async def test_a_claimed_name_needs_its_secret(start: Start) -> None:
    server = await start()
    secret = new_secret()
    owner = await hello(server, "alice", claim=True, secret=secret)
    assert owner.welcome is not None and owner.welcome.claimed and owner.welcome.accounts == "optional"
    assert server.names["alice"].claimed
    await owner.close()

    await refused(hello(server, "Alice"), "name_claimed")
    await refused(hello(server, "alice", secret=new_secret()), "name_claimed")
    again = await hello(server, "alice", secret=secret)
    assert again.welcome is not None and again.welcome.claimed
    await again.close()


async def test_a_guest_name_is_not_claimed(start: Start) -> None:
    server = await start()
    guest = await hello(server, "bob")
    assert guest.welcome is not None and not guest.welcome.claimed
    assert not server.names["bob"].claimed
    await guest.close()


async def test_a_proving_hello_takes_over_the_names_live_session(start: Start) -> None:
    server = await start()
    secret = new_secret()
    first = await hello(server, "alice", claim=True, secret=secret)
    second = await hello(server, "ALICE", secret=secret)
    assert second.welcome is not None and second.welcome.resumed and second.welcome.claimed
    assert second.token != first.token and second.name == "alice"  # a proof issues a fresh token
    assert len(server.names) == 1 and list(server.sessions) == [second.token]
    await first.close()
    await second.close()


async def test_a_token_resumes_a_claimed_session_without_the_secret(start: Start) -> None:
    server = await start()
    owner = await hello(server, "alice", claim=True, secret=new_secret())
    table = (await owner.create_table("othello")).table.id  # a seat keeps the session while away
    token = owner.token
    await owner.close()
    again = await hello(server, "alice", token=token)
    assert again.welcome is not None and again.welcome.resumed and again.welcome.claimed
    await again.leave_table(table)
    await again.close()


async def test_a_look_alike_of_a_claimed_name_is_refused(start: Start) -> None:
    server = await start()
    owner = await hello(server, "alice", claim=True, secret=new_secret())
    cyrillic = await refused(hello(server, "\u0430lice"), "name_taken")  # Cyrillic a
    assert "looks like the claimed name 'alice'" in cyrillic.message
    await refused(hello(server, "aIice", claim=True, secret=new_secret()), "name_taken")  # capital i
    await refused(hello(server, "\u0410LICE"), "name_taken")  # Cyrillic A, upper case
    mixed = await refused(hello(server, "p\u0430ypal", claim=True, secret=new_secret()), "bad_name")
    assert "Cyrillic and Latin" in mixed.message
    fine = await hello(server, "alicia", claim=True, secret=new_secret())
    assert fine.welcome is not None and fine.welcome.claimed
    await owner.close()
    await fine.close()


async def test_wrong_guesses_are_rate_limited_per_address(start: Start, caplog: pytest.LogCaptureFixture) -> None:
    server = await start()
    secret = new_secret()
    await (await hello(server, "alice", claim=True, secret=secret)).close()
    wrong = "not the secret " + "x" * 20
    for _ in range(server.accounts.limits.addresses.most):
        await refused(hello(server, "alice", secret=wrong), "name_claimed")
    limited = await refused(hello(server, "alice", secret=secret), "rate_limited")  # even the right one, for now
    assert "try again in" in limited.message and " s" in limited.message
    await refused(hello(server, "alice", secret=wrong), "rate_limited")
    assert any("wrong secret or password for the claimed name 'alice'" in r.getMessage() for r in caplog.records)
    assert not any(wrong in r.getMessage() or secret in r.getMessage() for r in caplog.records), "no secret is logged"
    guest = await hello(server, "bob")  # other hellos from the address are not held back
    await guest.close()


async def test_wrong_guesses_are_rate_limited_per_name(start: Start) -> None:
    server = await start()
    server.accounts.limits = AccountLimits(per_address=100, per_name=2)
    secret = new_secret()
    await (await hello(server, "alice", claim=True, secret=secret)).close()
    for _ in range(2):
        await refused(hello(server, "alice", secret=new_secret()), "name_claimed")
    limited = await refused(hello(server, "alice", secret=secret), "rate_limited")
    assert "for this name" in limited.message


async def test_accounts_required_refuses_an_unclaimed_name(start: Start) -> None:
    server = await start(accounts="required")
    refusal = await refused(hello(server, "bob"), "claim_required")
    assert "needs claimed names" in refusal.message
    bob = await hello(server, "bob", claim=True, secret=new_secret())
    assert bob.welcome is not None and bob.welcome.claimed and bob.welcome.accounts == "required"
    await bob.close()


async def test_accounts_off_claims_nothing_but_keeps_earlier_claims(start: Start) -> None:
    server = await start()
    secret = new_secret()
    await (await hello(server, "alice", claim=True, secret=secret)).close()
    await server.close()
    server = await start(accounts="off")
    bob = await hello(server, "bob", claim=True, secret=new_secret())
    assert bob.welcome is not None and not bob.welcome.claimed and bob.welcome.accounts == "off"
    await refused(hello(server, "alice"), "name_claimed")
    alice = await hello(server, "alice", secret=secret)
    assert alice.welcome is not None and alice.welcome.claimed
    await bob.close()
    await alice.close()


async def test_a_password_proves_the_name_too(start: Start) -> None:
    server = await start()
    guest = await hello(server, "bob")
    await refused(guest.set_password("a long password", "anything"), "bad_action")
    secret = new_secret()
    owner = await hello(server, "alice", claim=True, secret=secret)
    short = await refused(owner.set_password("short", secret), "bad_request")
    assert "at least 8 characters" in short.message
    await owner.set_password("correct horse", secret)
    await owner.close()
    other_machine = await hello(server, "alice", secret="correct horse")
    assert other_machine.welcome is not None and other_machine.welcome.claimed
    await other_machine.set_password(None, "correct horse")
    await other_machine.close()
    await refused(hello(server, "alice", secret="correct horse"), "name_claimed")
    await guest.close()


async def test_claims_survive_a_restart_and_only_hashes_are_stored(start: Start, tmp_path: Path) -> None:
    passwords.SCRYPT_N = REAL_SCRYPT_N  # the stored parameters are the real ones (the fixture's monkeypatch restores it)
    server = await start()
    secret, password = new_secret(), "correct horse battery"
    owner = await hello(server, "Alice", claim=True, secret=secret)
    await owner.set_password(password, secret)
    await owner.close()
    await server.close()

    raw = b"".join(path.read_bytes() for path in tmp_path.glob("parlour.db*") if path.is_file())
    assert secret.encode() not in raw and password.encode() not in raw
    with sqlite3.connect(tmp_path / "parlour.db") as db:
        rows = db.execute("SELECT name_key, name, secret_hash, password_hash FROM accounts").fetchall()
    assert [(key, name) for key, name, _, _ in rows] == [("alice", "Alice")]
    for stored in rows[0][2:]:
        scheme, n, r, p, salt, digest = stored.split("$")
        assert (scheme, n, r, p) == ("scrypt", "16384", "8", "1") and len(salt) == 24 and len(digest) == 44  # 16- and 32-byte base64
    assert rows[0][2] != rows[0][3]

    server = await start()
    await refused(hello(server, "alice"), "name_claimed")
    await refused(hello(server, "\u0430lice"), "name_taken")
    for proof in (secret, password):
        again = await hello(server, "alice", secret=proof)
        assert again.welcome is not None and again.welcome.claimed and again.name == "Alice"
        await again.close()


async def test_two_claims_of_one_name_at_once_give_it_to_one(start: Start) -> None:
    server = await start()
    results = await asyncio.gather(*(hello(server, "zed", claim=True, secret=new_secret()) for _ in range(3)), return_exceptions=True)
    winners = [r for r in results if isinstance(r, Client)]
    assert len(winners) == 1 and winners[0].welcome is not None and winners[0].welcome.claimed
    assert all(isinstance(r, ServerError) and r.code == "name_taken" for r in results if r not in winners)
    for winner in winners:
        await winner.close()


async def test_hashing_does_not_hold_up_other_players(start: Start) -> None:
    """scrypt runs off the event loop: a ping sent after four claims is answered before any claim's welcome."""
    passwords.SCRYPT_N = REAL_SCRYPT_N  # a real hash's cost
    server = await start()
    watcher = await hello(server, "watcher")
    claims = [asyncio.ensure_future(hello(server, f"player{i}", claim=True, secret=new_secret())) for i in range(4)]
    await asyncio.sleep(0.01)  # the claims' hellos have reached the server
    await watcher.ping()
    assert not any(claim.done() for claim in claims)
    for client in await asyncio.gather(*claims):
        await client.close()
    await watcher.close()


async def test_claims_are_rate_limited_per_address(start: Start) -> None:
    server = await start()
    server.accounts.limits = AccountLimits(claims_per_address=2)
    for name in ("ann", "bob"):
        await (await hello(server, name, claim=True, secret=new_secret())).close()
    limited = await refused(hello(server, "cat", claim=True, secret=new_secret()), "rate_limited")
    assert "too many names claimed from your address: try again in" in limited.message
    guest = await hello(server, "cat")  # playing as a guest is not held back
    await guest.close()


async def test_a_restored_session_is_still_claimed(start: Start) -> None:
    server = await start()
    owner = await hello(server, "alice", claim=True, secret=new_secret())
    await owner.create_table("othello")  # the seat keeps the session through the restart
    token = owner.token
    await owner.close()
    await server.close()
    server = await start()
    again = await hello(server, "alice", token=token)
    assert again.welcome is not None and again.welcome.resumed and again.welcome.claimed
    await again.close()


def test_a_sliding_window_forgets_old_events() -> None:
    now = [0.0]
    window = SlidingWindow(2, 60.0, clock=lambda: now[0])
    assert window.count("1.2.3.4") == 1 and window.wait_s("1.2.3.4") == 0
    now[0] = 10.0
    assert window.count("1.2.3.4") == 2 and window.wait_s("1.2.3.4") == 50.0
    assert window.wait_s("5.6.7.8") == 0, "other keys are not held back"
    now[0] = 60.0
    assert window.wait_s("1.2.3.4") == 0 and window.count("1.2.3.4") == 2


async def test_a_claim_whose_commit_fails_claims_nothing(start: Start, tmp_path: Path) -> None:
    server = await start()
    with sqlite3.connect(tmp_path / "parlour.db") as other:
        other.execute("CREATE TRIGGER refuse BEFORE INSERT ON accounts BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
    other.close()
    failed = await refused(hello(server, "alice", claim=True, secret=new_secret()), "internal_error")
    assert "could not be saved" in failed.message
    assert not server.accounts.is_claimed("alice") and not server.names
    look_alike = await hello(server, "AIice")  # no look-alike entry was left behind either (capital i)
    await look_alike.close()
    with sqlite3.connect(tmp_path / "parlour.db") as other:
        other.execute("DROP TRIGGER refuse")
    other.close()
    owner = await hello(server, "alice", claim=True, secret=new_secret())
    assert owner.welcome is not None and owner.welcome.claimed
    await owner.close()
