"""Typed decoding and direct encoding (``protocol.codec``) against the map path they replace.

``decode_request(body)`` must accept and refuse exactly what
``parse_request(decode_body(body))`` does, with the same errors, whatever hides
in the body: unknown fields holding extension values, timestamps, non-text keys
or deep nesting, repeated keys, free-form options. The same for
``decode_server_message``; and ``encode_message`` must give the bytes of
``encode_frame(to_wire(message))``.
"""

from __future__ import annotations

from typing import Any, Callable

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    Code,
    FrameError,
    ProtocolError,
    decode_request,
    decode_server_message,
    encode_frame,
    encode_message,
    parse_request,
    parse_server_message,
    to_wire,
)
from protocol import messages as m

from .bodies import nested, packed, with_entry
from protocol.codec import SERVER_TAGS
from protocol.framing import MAX_NESTING, decode_body

from .test_messages import REQUESTS, SERVER_MESSAGES, candidate_maps, mutated_requests, typed_maps, valid_requests

# --- the two paths, side by side -------------------------------------------------------------


def outcome(decode: Callable[[bytes], Any], body: bytes) -> tuple[Any, ...]:
    """What ``decode`` makes of ``body``: the message, or the error's every visible part."""
    try:
        return ("message", decode(body))
    except ProtocolError as exc:
        return (type(exc).__name__, exc.code, exc.message, exc.field, exc.request_id, exc.fatal)


def by_map_request(body: bytes) -> m.Message:
    return parse_request(decode_body(body))


def by_map_server_message(body: bytes) -> m.Message | None:
    frame = decode_body(body)
    kind = frame.get("type")
    return parse_server_message(frame) if isinstance(kind, str) and kind in SERVER_TAGS else None


def assert_same_request(body: bytes) -> tuple[Any, ...]:
    expected = outcome(by_map_request, body)
    assert outcome(decode_request, body) == expected
    return expected


def assert_same_server_message(body: bytes) -> tuple[Any, ...]:
    expected = outcome(by_map_server_message, body)
    assert outcome(decode_server_message, body) == expected
    return expected


HOSTILE_VALUES = {
    "ext": msgpack.ExtType(5, b"abc"),
    "timestamp": msgpack.Timestamp(1, 0),
    "bin-key": {b"k": 1},
    "int-key": {1: 2},
    "deep": nested(MAX_NESTING + 5),
    "deep-at-the-limit": nested(MAX_NESTING - 2),  # with the body's map and the field's, 32 levels: fine
    "bin": b"\x00\x01",
}
RAW_HOSTILE_VALUES = {
    "invalid-utf8": b"\xa2\xff\xfe",
    "reserved-byte": b"\xc1",
    "ext-negative-code": b"\xd4\x80\x00",
}

# --- samples: every type ---------------------------------------------------------------------


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_every_request_decodes_straight_into_its_struct(request_: m.Message) -> None:
    body = packed(to_wire(request_))
    assert decode_request(body) == request_
    assert type(decode_request(body)) is type(request_)


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda s: type(s).__name__)
def test_every_server_message_decodes_straight_into_its_struct(message: m.Message) -> None:
    assert decode_server_message(packed(to_wire(message))) == message


@pytest.mark.parametrize("message", REQUESTS + SERVER_MESSAGES, ids=lambda s: type(s).__name__)
def test_encode_message_gives_the_bytes_of_the_map_path(message: m.Message) -> None:
    direct, via_map = encode_message(message), encode_frame(to_wire(message))
    if len(type(message).__struct_fields__) < 15:
        assert direct == via_map
    else:  # a struct of 16 entries or more (type included) is a map16 however many are left out: the same map
        assert direct[4:7] == b"\xde\x00" + bytes([via_map[4] & 0x0F]) and direct[7:] == via_map[5:]


@settings(max_examples=300, deadline=None)
@given(request=valid_requests)
def test_any_valid_request_encodes_as_before_and_decodes_back(request: m.Message) -> None:
    frame = encode_message(request)
    assert frame == encode_frame(to_wire(request))
    assert decode_request(frame[4:]) == request


def test_unknown_server_type_is_none_and_a_request_type_too() -> None:
    assert decode_server_message(packed({"type": "teleported", "table": 1})) is None
    assert decode_server_message(packed(to_wire(REQUESTS[0]))) is None


# --- what the typed decoder would skip is still judged ---------------------------------------------


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
@pytest.mark.parametrize("hostile", list(HOSTILE_VALUES), ids=list(HOSTILE_VALUES))
def test_unknown_field_of_every_request_is_still_checked(request_: m.Message, hostile: str) -> None:
    body = packed({**to_wire(request_), "zz": HOSTILE_VALUES[hostile]})
    result = assert_same_request(body)
    if hostile in ("deep-at-the-limit", "bin"):
        assert result == ("message", request_)
    else:
        assert result[0] == "FrameError"


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
@pytest.mark.parametrize("hostile", list(RAW_HOSTILE_VALUES), ids=list(RAW_HOSTILE_VALUES))
def test_malformed_unknown_field_of_every_request_is_a_frame_error(request_: m.Message, hostile: str) -> None:
    body = with_entry(packed(to_wire(request_)), "zz", RAW_HOSTILE_VALUES[hostile])
    assert assert_same_request(body)[0] == "FrameError"


@pytest.mark.parametrize("hostile", list(HOSTILE_VALUES), ids=list(HOSTILE_VALUES))
def test_free_form_options_are_still_checked(hostile: str) -> None:
    wire = {"type": "create_table", "id": 4, "game": "othello", "options": {"size": 8, "x": HOSTILE_VALUES[hostile]}}
    result = assert_same_request(packed(wire))
    if hostile in ("deep-at-the-limit", "bin"):
        assert result[0] == "message" and result[1].options == wire["options"]
    else:
        assert result[0] == "FrameError"


def test_trailing_bytes_after_a_valid_request_are_a_frame_error() -> None:
    body = packed(to_wire(m.PlayMove(id=1, table=2, move="d3")))
    assert assert_same_request(body + b"\x01")[1:3] == (Code.BAD_FRAME, "the frame holds more than one MessagePack object")


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("hostile", list(HOSTILE_VALUES), ids=list(HOSTILE_VALUES))
def test_unknown_field_of_every_server_message_is_still_checked(message: m.Message, hostile: str) -> None:
    result = assert_same_server_message(packed({**to_wire(message), "zz": HOSTILE_VALUES[hostile]}))
    assert result[0] == ("message" if hostile in ("deep-at-the-limit", "bin") else "FrameError")


@pytest.mark.parametrize("hostile", list(HOSTILE_VALUES), ids=list(HOSTILE_VALUES))
def test_nested_and_free_form_parts_of_server_messages_are_still_checked(hostile: str) -> None:
    value = HOSTILE_VALUES[hostile]
    table = to_wire(m.TableUpdated(table=SERVER_MESSAGES[4].tables[0]))["table"]  # type: ignore[attr-defined]
    assert_same_server_message(packed({"type": "table_updated", "table": {**table, "zz": value}}))
    assert_same_server_message(packed({"type": "table_updated", "table": {**table, "options": {"x": value}}}))
    moved = to_wire(m.Moved(table=3, seat=0, move="d3", ply=1, view={"board": ["..."]}))
    assert_same_server_message(packed({**moved, "view": {"board": ["..."], "x": value}}))


# --- repeated keys: the last one counts, as in a map ----------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [("id", 9), ("id", "9"), ("move", "e6"), ("move", ""), ("table", 3), ("ply", None), ("ply", 4), ("type", "move"),
     ("type", "ping"), ("type", "nope"), ("zz", 1)],
)
def test_repeated_key_in_a_request(key: str, value: Any) -> None:
    body = packed({"type": "move", "id": 1, "table": 2, "move": "d3", "ply": 5, "zz": 0})
    assert_same_request(with_entry(body, key, packed(value)))


def test_repeated_key_inside_a_nested_table() -> None:
    table = to_wire(m.TableUpdated(table=SERVER_MESSAGES[4].tables[0]))["table"]  # type: ignore[attr-defined]
    inner = with_entry(packed(table), "spectators", packed(7))
    body = b"\x82" + packed("type") + packed("table_updated") + packed("table") + inner
    result = assert_same_server_message(body)
    assert result[1].table.spectators == 7


# --- other encoders: any key order, any int width, defaults sent ---------------------------------------------


def test_fields_in_any_order_with_wide_ints_and_explicit_defaults() -> None:
    body = b"\x86\xa3ply\xc0\xa4move\xa2d3\xa5table\xcf" + (2).to_bytes(8, "big") + b"\xa2id\xd1\x00\x07\xa4type\xa4move\xa3zzz\x90"
    assert assert_same_request(body) == ("message", m.PlayMove(id=7, table=2, move="d3"))
    wire = {"type": "create_table", "id": 1, "game": "othello", "options": {}, "seed": None, "seat": 0, "time_control": None}
    assert assert_same_request(packed(wire)) == ("message", m.CreateTable(id=1, game="othello"))
    map16 = b"\xde\x00\x02" + packed("type") + packed("ping") + packed("id") + packed(3)
    assert assert_same_request(map16) == ("message", m.Ping(id=3))


# --- properties: the same outcome for anything -------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(wire=candidate_maps | typed_maps | mutated_requests)
def test_any_map_gives_the_same_outcome_both_ways(wire: dict[str, Any]) -> None:
    body = packed(wire)
    assert_same_request(body)
    assert_same_server_message(body)


hostile_raw = st.sampled_from(list(RAW_HOSTILE_VALUES.values())) | st.sampled_from(list(HOSTILE_VALUES.values())).map(packed)


@settings(max_examples=300, deadline=None)
@given(request=valid_requests, key=st.sampled_from(["type", "id", "table", "move", "options", "zz"]), value=hostile_raw | st.integers(min_value=-(2**63), max_value=2**64 - 1).map(packed) | st.text(max_size=5).map(packed))
def test_a_valid_request_with_an_extra_or_repeated_entry_gives_the_same_outcome(request: m.Message, key: str, value: bytes) -> None:
    assert_same_request(with_entry(packed(to_wire(request)), key, value))


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=60))
def test_any_bytes_give_the_same_outcome_both_ways(body: bytes) -> None:
    assert_same_request(body)
    assert_same_server_message(body)


def test_frame_errors_keep_their_wording() -> None:
    with pytest.raises(FrameError, match="extension type 5 is not allowed"):
        decode_request(packed({"type": "ping", "id": 1, "x": msgpack.ExtType(5, b"")}))
    with pytest.raises(FrameError, match="deeper than 32 levels"):
        decode_request(packed({"type": "ping", "id": 1, "x": nested(40)}))
    with pytest.raises(FrameError, match="not allowed for map key"):
        decode_request(packed({"type": "create_table", "id": 1, "game": "g", "options": {"a": {1: 2}}}))


# --- what decoding costs ---------------------------------------------------------------------------------------


def test_a_request_whose_defaults_are_none_is_decoded_without_encoding_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The map header a move encodes to is counted from its values (every move comes here); any request, counted or
    encoded, is still judged whole by that header: an extra entry sends it the thorough way."""
    from protocol import codec

    encoded: list[Any] = []
    monkeypatch.setattr(codec, "_encode", lambda message: encoded.append(message) or codec.ENCODER.encode(message))
    for move in (m.PlayMove(id=7, table=2, move="d3"), m.PlayMove(id=7, table=2, move="d3", ply=0)):
        body = packed(to_wire(move))
        assert decode_request(body) == move and encoded == []
        repeated = assert_same_request(with_entry(body, "move", packed("e6")))  # the map path's verdict: its last value
        assert repeated != ("message", move), repeated
    assert decode_request(packed(to_wire(m.ListTables(id=1)))) == m.ListTables(id=1)
    assert encoded == [m.ListTables(id=1)], "a request with a default other than None is still encoded to be judged"


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_the_counted_map_header_is_the_encoded_one_for_every_request_that_has_one(request_: m.Message) -> None:
    from protocol import codec

    header = codec._REQUESTS._headers.get(type(request_))
    if header is None:
        return
    head, optional = header
    for present in range(1 << len(optional)):  # every combination of the optional fields left out or given
        values = {name: getattr(request_, name) for name in request_.__struct_fields__}
        for index, name in enumerate(optional):
            if not present >> index & 1:
                values[name] = None
            elif values[name] is None:
                values[name] = 1 if name in ("seat", "ply", "table", "seek") else "x"
        message = type(request_)(**values)
        counted = head + sum(1 for name in optional if getattr(message, name) is not None)
        assert counted == codec.ENCODER.encode(message)[0], (message, hex(counted))
