"""Tells and challenges from fresh guest sessions, over real sockets from several loopback addresses.

Budgets per source address (shared by its sessions) and per recipient (shared
by every guest), and a player's mute of all guests, whose setting a claimed
name keeps across a restart.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from protocol import PROTOCOL_VERSION
from server.players import passwords
from server.net.address_groups import address_group
from server.app import Server
from server.net.limits import Limits
from server.social.spam import PER_ADDRESS_FACTOR, PER_RECIPIENT_FACTOR

from ..conftest import ConfiguredServer
from .conftest import Raw

Start = Callable[..., Awaitable[Server]]
TELLS = 2
"""Tells a minute per session in these tests (so an address may send 6, a player take 6 from guests)."""
LIMITS = Limits(
    connections_per_address_per_s=1000.0, connection_burst=1000, max_connections_per_address=1000, tells_per_minute=TELLS, challenges_per_minute=TELLS
)


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)


@pytest.fixture
def start(configured_server: ConfiguredServer, tmp_path: Path) -> Start:
    return lambda **config: configured_server(db_path=str(tmp_path / "parlour.db"), limits=LIMITS, **config)


async def player(server: Server, name: str, source: str = "127.0.0.1", **fields: Any) -> Raw:
    """A connection from ``source`` that said hello as ``name``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port, local_addr=(source, 0))
    raw = Raw(reader, writer)
    welcome = await raw.request("hello", version=PROTOCOL_VERSION, name=name, **fields)
    assert welcome["type"] == "welcome", welcome
    return raw


async def told(recipient: Raw) -> list[str]:
    """The senders of the tells ``recipient`` has been sent so far."""
    return [push["name"] for push in await recipient.sync() if push["type"] == "told"]


def test_an_ipv6_slash_64_is_one_source() -> None:
    assert address_group("2001:db8:0:1::5") == address_group("2001:db8:0:1:ffff:1:2:3") == "2001:db8:0:1::/64"
    assert address_group("2001:db8:0:2::5") != address_group("2001:db8:0:1::5")
    assert address_group("127.0.0.2") != address_group("127.0.0.3")
    assert address_group("::ffff:127.0.0.2") == "127.0.0.2"


async def test_fresh_guest_sessions_from_one_address_share_its_budget(start: Start) -> None:
    server = await start()
    ann, bob = await player(server, "ann", "127.0.0.50"), await player(server, "bob", "127.0.0.51")
    senders = [await player(server, f"guest{i}", "127.0.0.9") for i in range(10)]
    replies = [await raw.request("tell", name=("ann", "bob")[i % 2], text="buy now") for i, raw in enumerate(senders)]
    delivered = [reply["type"] for reply in replies].count("ok")
    assert delivered == TELLS * PER_ADDRESS_FACTOR
    assert all("from one address" in reply["message"] for reply in replies if reply["type"] == "error")
    assert len(await told(ann)) + len(await told(bob)) == delivered
    other = await player(server, "neighbour", "127.0.0.10")  # another address has its own budget
    assert (await other.request("tell", name="ann", text="hello"))["type"] == "ok"


async def test_a_player_takes_a_limited_number_of_tells_and_challenges_from_guests(start: Start) -> None:
    server = await start()
    carol = await player(server, "carol", claim=True, secret=secrets.token_urlsafe(32))
    guests = [await player(server, f"g{a}{i}", f"127.0.0.{a}") for a in range(2, 6) for i in range(3)]
    replies = [await raw.request("tell", name="carol", text="spam") for raw in guests]
    assert [reply["type"] for reply in replies].count("ok") == TELLS * PER_RECIPIENT_FACTOR
    refusal = next(reply for reply in replies if reply["type"] == "error")
    assert refusal["code"] == "rate_limited" and "carol takes at most 6 tells a minute from guests" in refusal["message"]
    assert len(await told(carol)) == TELLS * PER_RECIPIENT_FACTOR
    challenges = [await raw.request("challenge", name="carol", game="othello") for raw in guests]
    assert [reply["type"] for reply in challenges].count("challenge_sent") == TELLS * PER_RECIPIENT_FACTOR
    friend = await player(server, "dave", "127.0.0.20", claim=True, secret=secrets.token_urlsafe(32))
    assert (await friend.request("tell", name="carol", text="it's me"))["type"] == "ok"  # a claimed name still gets through
    assert await told(carol) == ["dave"]


async def test_muting_guests_stops_every_fresh_guest_name(start: Start) -> None:
    server = await start()
    carol = await player(server, "carol", claim=True, secret=(secret := secrets.token_urlsafe(32)))
    assert (await carol.request("mute_guests"))["type"] == "ok"
    for i in range(3):
        guest = await player(server, f"fresh{i}", f"127.0.0.{30 + i}")
        assert (await guest.request("tell", name="carol", text="hi"))["type"] == "ok"  # dropped, as for a mute
        refusal = await guest.request("challenge", name="carol", game="othello")
        assert refusal["code"] == "muted" and "only from claimed names" in refusal["message"]
    dave = await player(server, "dave", "127.0.0.40", claim=True, secret=secrets.token_urlsafe(32))
    assert (await dave.request("tell", name="carol", text="friend"))["type"] == "ok"
    assert await told(carol) == ["dave"]
    await carol.close()
    await server.close()

    server = await start()  # a claimed name keeps the setting
    carol = await player(server, "carol", secret=secret)
    guest = await player(server, "later", "127.0.0.41")
    assert (await guest.request("challenge", name="carol", game="othello"))["code"] == "muted"
    assert (await carol.request("mute_guests", mute=False))["type"] == "ok"
    assert (await guest.request("tell", name="carol", text="now?"))["type"] == "ok"
    assert await told(carol) == ["later"]
