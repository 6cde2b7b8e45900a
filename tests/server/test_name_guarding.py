"""Guarding claimed names over real sockets, many at once, from many loopback addresses, with real SQLite files.

Guesses are counted before they are hashed (so guesses in flight cannot all
slip past a limit); a name locked by guesses still admits its owner from an
address that did not guess, and holds the owner's seat meanwhile; a proof or a
change of password or secret issues a fresh token and shuts out whoever held
the old one, across a restart too.
"""

from __future__ import annotations

import asyncio
import collections
import secrets
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from client import Client
from protocol import PROTOCOL_VERSION
from protocol import messages as m
from server.players import passwords
from server.players.account_limits import AccountLimits, LimitReached
from server.app import Server
from server.net.limits import Limits

from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, Raw, refused

Start = Callable[..., Awaitable[Server]]
OPEN_LIMITS = Limits(connections_per_address_per_s=1000.0, connection_burst=1000, max_connections_per_address=1000)
"""Connection limits out of the way: these tests are about the limits of guesses."""


@pytest.fixture
def start(configured_server: ConfiguredServer, tmp_path: Path) -> Start:
    """Factory: a server on ``tmp_path/parlour.db`` (a second call after ``close()`` is a restart), grace 0.3 s."""
    return lambda **config: configured_server(db_path=str(tmp_path / "parlour.db"), limits=OPEN_LIMITS, **config)


@pytest.fixture
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


async def raw_from(server: Server, source: str = "127.0.0.1") -> Raw:
    """A plain connection to ``server`` from the loopback address ``source``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port, local_addr=(source, 0))
    return Raw(reader, writer)


async def say_hello(server: Server, name: str, source: str = "127.0.0.1", **fields: Any) -> dict[str, Any]:
    """One ``hello`` on a fresh connection from ``source``; the reply (``welcome`` or ``error``)."""
    raw = await raw_from(server, source)
    try:
        return await raw.request("hello", version=PROTOCOL_VERSION, name=name, **fields)
    finally:
        await raw.close()


def outcome(reply: dict[str, Any]) -> str:
    return reply["type"] if reply["type"] == "welcome" else reply["code"]


async def claim(server: Server, name: str = "alice") -> tuple[Client, str]:
    secret = new_secret()
    return await Client.connect("127.0.0.1", server.port, name=name, secret=secret, claim=True, timeout_s=TIMEOUT_S), secret


# --- guesses counted before hashing (item 2) ------------------------------------------------


async def test_guesses_sent_at_once_from_one_address_stop_at_its_limit(start: Start) -> None:
    server = await start()  # real scrypt cost: the guesses are in flight together
    owner, _ = await claim(server)
    await owner.close()
    most = server.accounts.limits.addresses.most
    replies = await asyncio.gather(*(say_hello(server, "alice", secret=f"wrong guess number {i:02}") for i in range(2 * most)))
    counted = collections.Counter(outcome(reply) for reply in replies)
    assert counted == {"name_claimed": most, "rate_limited": most}, counted


async def test_guesses_at_one_name_from_forty_addresses_at_once(start: Start, cheap_hashes: None) -> None:
    server = await start()
    owner, _ = await claim(server)
    await owner.close()
    per_name, sources = server.accounts.limits.names.most, [f"127.0.0.{i}" for i in range(2, 42)]
    first = await asyncio.gather(*(say_hello(server, "alice", source, secret=f"guess {source} {n}") for source in sources for n in range(2)))
    checked = sum(outcome(reply) == "name_claimed" for reply in first)
    assert per_name <= checked <= per_name + len(sources), checked  # once locked, one more per address that had not guessed
    again = await asyncio.gather(*(say_hello(server, "alice", source, secret=f"again {source}") for source in sources))
    assert {outcome(reply) for reply in again} == {"rate_limited"}, "every address that guessed is shut out"


async def test_a_right_proof_gives_its_count_back(start: Start, cheap_hashes: None) -> None:
    server = await start()
    server.accounts.limits = AccountLimits(per_address=2)
    owner, secret = await claim(server)
    await owner.close()
    for _ in range(5):  # more right proofs than the address may make wrong ones
        assert outcome(await say_hello(server, "alice", secret=secret)) == "welcome"
    assert outcome(await say_hello(server, "alice", secret="a wrong one, the first")) == "name_claimed"


# --- a locked name still admits its owner, and holds their seat (item 5) ---------------------


async def test_a_name_locked_by_guesses_admits_its_owner_from_another_address(start: Start, cheap_hashes: None) -> None:
    server = await start()
    server.accounts.limits = AccountLimits(per_name=4)
    owner, secret = await claim(server)
    await owner.close()
    guessers = [f"127.0.0.{i}" for i in range(2, 6)]
    await asyncio.gather(*(say_hello(server, "alice", source, secret="not it at all") for source in guessers))
    assert server.accounts.limits.locked_s("alice") > 0
    refusal = await say_hello(server, "alice", guessers[0], secret=secret)  # a guessing address: refused, right or not
    assert outcome(refusal) == "rate_limited" and "yours among them" in refusal["message"]
    welcome = await say_hello(server, "alice", "127.0.0.99", secret=secret)
    assert outcome(welcome) == "welcome" and welcome["claimed"]


async def test_a_seat_is_held_while_others_guesses_lock_its_name(start: Start, cheap_hashes: None) -> None:
    server = await start()  # grace 0.3 s
    server.accounts.limits = AccountLimits(per_name=3)
    owner, secret = await claim(server)
    bob = await Client.connect("127.0.0.1", server.port, name="bob", timeout_s=TIMEOUT_S)
    table = (await owner.create_table("othello")).table.id
    await bob.join_table(table)
    await owner.close()
    assert (await bob.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)).forfeit_in_s == pytest.approx(0.3)
    await asyncio.gather(*(say_hello(server, "alice", f"127.0.0.{i}", secret="a wrong guess") for i in range(2, 5)))
    held = await bob.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)  # the grace ran out: held on, not forfeited
    assert held.name == "alice" and held.forfeit_in_s > 500
    assert server.tables[table].status == "playing"
    back = await Client.connect("127.0.0.1", server.port, name="alice", secret=secret, timeout_s=TIMEOUT_S)
    assert back.welcome is not None and back.welcome.resumed
    assert (await bob.next_event(m.PlayerBack, timeout_s=TIMEOUT_S)).name == "alice"
    assert server.tables[table].status == "playing"
    await back.close()
    await bob.close()


# --- fresh tokens: a proof, a new password, a new secret (item 3) ----------------------------


async def test_a_proof_shuts_out_whoever_copied_the_old_token(start: Start, cheap_hashes: None) -> None:
    server = await start(grace_s=60.0)
    owner, secret = await claim(server)
    await owner.create_table("othello")  # a seat keeps the session while away
    stolen = owner.token
    await owner.close()
    thief = await Client.connect("127.0.0.1", server.port, name="alice", token=stolen, timeout_s=TIMEOUT_S)
    again = await Client.connect("127.0.0.1", server.port, name="alice", secret=secret, timeout_s=TIMEOUT_S)
    assert again.welcome is not None and again.welcome.resumed and again.token != stolen
    await asyncio.wait_for(thief.closed.wait(), TIMEOUT_S)
    assert thief.superseded
    await refused(Client.connect("127.0.0.1", server.port, name="alice", token=stolen, timeout_s=TIMEOUT_S), "bad_token")
    fresh = again.token
    await again.close()
    await server.close()
    server = await start(grace_s=60.0)  # the old token stays dead after a restart, the new one works
    await refused(Client.connect("127.0.0.1", server.port, name="alice", token=stolen, timeout_s=TIMEOUT_S), "bad_token")
    back = await Client.connect("127.0.0.1", server.port, name="alice", token=fresh, timeout_s=TIMEOUT_S)
    assert back.welcome is not None and back.welcome.resumed and back.welcome.claimed
    assert [seat.name for seat in server.tables[1].seats if seat is not None] == ["alice"]
    await back.close()


async def test_a_password_change_needs_the_current_one_and_shuts_out_the_old_token(start: Start, cheap_hashes: None) -> None:
    server = await start(grace_s=60.0)
    owner, secret = await claim(server)
    await owner.create_table("othello")
    stolen = owner.token
    await owner.close()
    thief = await Client.connect("127.0.0.1", server.port, name="alice", token=stolen, timeout_s=TIMEOUT_S)
    bare = await refused(thief.request(m.SetPassword, password="the thief's own"), "bad_request")  # an old client: no current
    assert bare.field == "current"
    await refused(thief.set_password("the thief's own", "a guess at it"), "name_claimed")
    await thief.close()
    again = await Client.connect("127.0.0.1", server.port, name="alice", secret=secret, timeout_s=TIMEOUT_S)
    before = again.token
    renewed = await again.set_password("correct horse", secret)
    assert renewed == again.token != before and list(server.sessions) == [renewed]
    await refused(Client.connect("127.0.0.1", server.port, name="alice", token=stolen, timeout_s=TIMEOUT_S), "bad_token")
    await refused(Client.connect("127.0.0.1", server.port, name="alice", token=before, timeout_s=TIMEOUT_S), "bad_token")
    await again.close()
    await server.close()
    server = await start(grace_s=60.0)
    for token in (stolen, before):
        await refused(Client.connect("127.0.0.1", server.port, name="alice", token=token, timeout_s=TIMEOUT_S), "bad_token")
    back = await Client.connect("127.0.0.1", server.port, name="alice", token=renewed, timeout_s=TIMEOUT_S)
    assert back.welcome is not None and back.welcome.resumed
    await back.close()
    by_password = await Client.connect("127.0.0.1", server.port, name="alice", secret="correct horse", timeout_s=TIMEOUT_S)
    assert by_password.welcome is not None and by_password.welcome.claimed
    await by_password.close()


async def test_the_secret_can_be_changed(start: Start, cheap_hashes: None) -> None:
    server = await start()
    owner, secret = await claim(server)
    short = await refused(owner.change_secret(secret, "too short"), "bad_request")
    assert short.field == "secret" and "at least 16 characters" in short.message
    await refused(owner.change_secret("not the secret at all", new_secret()), "name_claimed")
    new = new_secret()
    old_token = owner.token
    assert await owner.change_secret(secret, new) == owner.token != old_token
    await owner.close()
    await refused(Client.connect("127.0.0.1", server.port, name="alice", secret=secret, timeout_s=TIMEOUT_S), "name_claimed")
    back = await Client.connect("127.0.0.1", server.port, name="alice", secret=new, timeout_s=TIMEOUT_S)
    assert back.welcome is not None and back.welcome.claimed
    await back.close()
    guest = await Client.connect("127.0.0.1", server.port, name="bob", timeout_s=TIMEOUT_S)
    await refused(guest.change_secret("anything at all", new_secret()), "bad_action")
    await guest.close()


def test_a_names_lock_lifts_when_its_window_has_passed() -> None:
    now = [100.0]
    limits = AccountLimits(per_address=10, per_name=2, name_window_s=10.0, clock=lambda: now[0])
    limits.reserve_proof("127.0.0.2", "alice")
    now[0] += 4.0
    limits.reserve_proof("127.0.0.2", "alice")
    assert limits.locked_s("alice") == pytest.approx(6.0)
    with pytest.raises(LimitReached, match="yours among them: try again in 6 s"):
        limits.reserve_proof("127.0.0.2", "alice")
    limits.reserve_proof("127.0.0.3", "alice").release()  # another source is checked; a right proof is given back
    assert limits.counts("127.0.0.3", "alice") == (0, 2)
    now[0] += 6.5
    assert limits.locked_s("alice") == 0
    limits.reserve_proof("127.0.0.2", "alice")
    assert limits.counts("2001:db8::1", "bob") == (0, 0)
