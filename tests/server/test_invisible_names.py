"""Invisible characters and look-alikes of a claimed name, as guests and as claims, over real sockets."""

from __future__ import annotations

import asyncio
import secrets
import unicodedata
from pathlib import Path
from typing import Awaitable, Callable

import pytest

from client import Client
from protocol import PROTOCOL_VERSION
from server.players import passwords
from server.app import Server
from server.core.names import NameError_, check_name, invisible

from ..conftest import ConfiguredServer
from .conftest import Raw, refused

Start = Callable[..., Awaitable[Server]]

INVISIBLE = {
    "combining grapheme joiner": "\u034f",
    "variation selector 1": "\ufe00",
    "variation selector 16": "\ufe0f",
    "variation selector 17": "\U000e0100",
    "variation selector 256": "\U000e01ef",
    "Hangul filler": "\u3164",
    "Hangul choseong filler": "\u115f",
    "Hangul jungseong filler": "\u1160",
    "halfwidth Hangul filler": "\uffa0",
    "Khmer vowel inherent aq": "\u17b4",
    "Khmer vowel inherent aa": "\u17b5",
    "braille pattern blank": "\u2800",
    "Mongolian free variation selector 1": "\u180b",
    "Mongolian free variation selector 4": "\u180f",
    "zero width space": "\u200b",
    "soft hyphen": "\u00ad",
    "word joiner": "\u2060",
    "musical null notehead": "\U0001d159",
}
"""Characters that show nothing, by what they are: each after ``alice`` must not pass for ``alice``."""


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**10)


@pytest.fixture
def start(configured_server: ConfiguredServer, tmp_path: Path) -> Start:
    return lambda **config: configured_server(db_path=str(tmp_path / "parlour.db"), **config)


async def hello(server: Server, name: str, **kwargs: object) -> Client:
    return await Client.connect("127.0.0.1", server.port, name=name, timeout_s=5.0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("char", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_invisible_characters_are_refused_by_name(char: str) -> None:
    assert invisible(char)
    with pytest.raises(NameError_, match=f"U\\+{ord(char):04X}"):
        check_name("alice" + char)


def test_visible_letters_marks_and_symbols_are_not_invisible() -> None:
    for name in ("Jos\u00e9", "Jose\u0301", "\u0438\u0432\u0430\u043d", "Kim \ud55c\uae00", "ann-\U0001f600", "\u5c71\u7530"):
        assert check_name(name) == name
    assert not any(invisible(c) for c in "aZ09-_\u00e9\u0301\ud55c\u3131")


async def test_no_invisible_variant_of_a_claimed_name_is_admitted(start: Start) -> None:
    server = await start()
    owner = await hello(server, "alice", claim=True, secret=secrets.token_urlsafe(32))
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    raw = Raw(reader, writer)  # one connection says hello again after each refusal
    for what, char in INVISIBLE.items():
        for where in (0, 2, 5):
            name = "alice"[:where] + char + "alice"[where:]
            guest = await raw.request("hello", version=PROTOCOL_VERSION, name=name)
            assert guest["type"] == "error" and guest["code"] == "bad_name", (what, guest)
            assert f"U+{ord(char):04X}" in guest["message"] and unicodedata.name(char) in guest["message"], what
            claim = await raw.request("hello", version=PROTOCOL_VERSION, name=name, claim=True, secret=secrets.token_urlsafe(32))
            assert claim["type"] == "error" and claim["code"] == "bad_name", (what, claim)
    assert list(server.names) == ["alice"]
    await raw.close()
    await owner.close()


@pytest.mark.parametrize("look_alike", ["AIice", "aIice", "ALlCE", "\u0430lice", "\u0251lice"])
async def test_look_alikes_of_a_claimed_name_are_refused_as_guest_and_as_claim(start: Start, look_alike: str) -> None:
    server = await start()
    owner = await hello(server, "alice", claim=True, secret=secrets.token_urlsafe(32))
    guest = await refused(hello(server, look_alike), "name_taken")
    assert "looks like the claimed name 'alice'" in guest.message
    await refused(hello(server, look_alike, claim=True, secret=secrets.token_urlsafe(32)), "name_taken")
    await owner.close()
    other = await hello(server, "alicia", claim=True, secret=secrets.token_urlsafe(32))  # a different name still passes
    await other.close()


async def test_a_guest_name_mixing_scripts_is_refused(start: Start) -> None:
    server = await start()
    owner = await hello(server, "alice", claim=True, secret=secrets.token_urlsafe(32))
    mixed = await refused(hello(server, "\u0251\u04cf\u0456\u0441\u0435"), "bad_name")  # Latin alpha, Cyrillic palochka, i, es, ie
    assert "Cyrillic and Latin" in mixed.message
    await owner.close()
