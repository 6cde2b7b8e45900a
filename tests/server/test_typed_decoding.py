"""Typed request decoding on a real server, over real sockets.

Requests are decoded straight into their structs (``protocol.codec``): no map,
no ``msgspec.convert``. What that decoder would skip (unknown fields, free-form
options) is still checked, repeated keys and other encoders' choices (key
order, int widths, defaults sent) mean what they always meant.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any, Callable

import msgpack
import msgspec
import pytest

from client import Client
from protocol import encode_frame
from protocol import messages as m
from protocol.framing import MAX_NESTING
from server.app import Server

from ..protocol.bodies import nested, packed, with_entry
from .conftest import TIMEOUT_S, Raw, RawFactory

Connect = Callable[..., Any]


def frame_of(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


async def next_push(conn: Raw, kind: str) -> dict[str, Any]:
    while (frame := await conn.recv())["type"] != kind:
        pass
    return frame


async def seated_game(raw: RawFactory, connect: Connect) -> tuple[Raw, Client, int, list[str]]:
    """``eve`` (raw frames) at seat 0 against ``ann`` (the client library) at seat 1 of a new Othello table."""
    eve = await raw()
    assert (await eve.hello("eve"))["type"] == "welcome"
    created = await eve.request("create_table", game="othello", options={"size": 8}, seat=0)
    table = created["table"]["id"]
    ann = await connect("ann")
    await ann.join_table(table, seat=1)
    started = await next_push(eve, "game_started")
    return eve, ann, table, started["view"]["legal_moves"]


async def test_a_game_is_served_without_converting_a_single_map(
    server: Server, raw: RawFactory, connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    real_convert = msgspec.convert

    def counting_convert(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1] if len(args) > 1 else kwargs.get("type"))
        return real_convert(*args, **kwargs)

    monkeypatch.setattr(msgspec, "convert", counting_convert)
    eve, ann, table, legal = await seated_game(raw, connect)
    assert (await eve.request("move", table=table, move=legal[0], ply=0))["type"] == "ok"
    moved = await ann.next_event(m.Moved, timeout_s=TIMEOUT_S)
    assert isinstance(moved, m.Moved) and moved.move == legal[0]
    await ann.move(table, moved.view["legal_moves"][0], ply=1)
    await ann.say("gg", table=table)
    await ann.offer(table, "draw")
    assert (await eve.request("answer", table=table, kind="draw", accept=False))["type"] == "ok"
    assert (await eve.request("say", text="no", table=table))["type"] == "ok"
    await ann.ping()
    await eve.sync()
    assert calls == [], f"msgspec.convert was called for {calls}"


@pytest.mark.parametrize(
    ("hidden", "value"),
    [
        ("ext", packed(msgpack.ExtType(5, b"abc"))),
        ("timestamp", packed(msgpack.Timestamp(1, 0))),
        ("deep", packed(nested(MAX_NESTING + 1))),
        ("invalid-utf8", b"\xa2\xff\xfe"),
        ("int-key", packed({1: 2})),
        ("bin-key", packed({b"k": 1})),
    ],
)
@pytest.mark.parametrize("where", ["unknown field of a move", "unknown field of a ping", "create_table options"])
async def test_what_typed_decoding_skips_still_closes_the_connection(
    server: Server, raw: RawFactory, connect: Connect, hidden: str, value: bytes, where: str
) -> None:
    ann = await connect("ann")
    eve = await raw()
    await eve.hello("eve")
    if where == "unknown field of a move":
        body = with_entry(packed({"type": "move", "id": 5, "table": 1, "move": "d3"}), "zz", value)
    elif where == "unknown field of a ping":
        body = with_entry(packed({"type": "ping", "id": 5}), "zz", value)
    else:
        options = with_entry(packed({"size": 8}), "x", value)
        body = with_entry(packed({"type": "create_table", "id": 5, "game": "othello"}), "options", options)
    await eve.send_bytes(frame_of(body))
    frames = await eve.expect_closed()
    assert [(f["type"], f.get("code"), f.get("id")) for f in frames] == [("error", "bad_frame", None)], frames
    await asyncio.wait_for(ann.ping(), TIMEOUT_S)
    assert not server.tables  # the create_table never got through


async def test_repeated_keys_and_other_encoders_mean_what_a_map_means(server: Server, raw: RawFactory, connect: Connect) -> None:
    eve, ann, table, legal = await seated_game(raw, connect)
    illegal = "a1"
    assert illegal not in legal
    # fields in reverse order, a repeated move (the last one counts), an int64 table id, an explicit nil ply
    body = b"\x86" + packed("ply") + b"\xc0" + packed("move") + packed(illegal) + packed("move") + packed(legal[0])
    body += packed("table") + b"\xd3" + table.to_bytes(8, "big") + packed("id") + b"\xcd\x00\x09" + packed("type") + packed("move")
    await eve.send_bytes(frame_of(body))
    reply = await eve.reply(9)
    assert reply["type"] == "ok", reply
    moved = await ann.next_event(m.Moved, timeout_s=TIMEOUT_S)
    assert isinstance(moved, m.Moved) and moved.move == legal[0]
    # a repeated type whose values differ names the type, as a map's last value would
    body = with_entry(packed({"type": "ping", "id": 10}), "type", packed("teleport"))
    await eve.send_bytes(frame_of(body))
    error = await eve.reply(10)
    assert (error["type"], error["code"], error["field"]) == ("error", "bad_message", "type")
    assert error["message"] == "unknown message type 'teleport'"
    # a known default sent explicitly, and an unknown field that is plain: fine
    await eve.send_bytes(encode_frame({"type": "say", "id": 11, "text": "hi", "table": None, "future": {"a": [1, 2]}}))
    assert (await eve.reply(11))["type"] == "ok"
