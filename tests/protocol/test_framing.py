"""Framing, byte by byte: ``encode_frame``, ``decode_body`` and ``FrameDecoder``.

A frame is a 4-byte big-endian length ``N`` and then ``N`` bytes holding one
MessagePack map with text keys. These tests use byte strings only; no socket.
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import DEFAULT_MAX_FRAME_BYTES, Code, FrameDecoder, FrameError, encode_frame
from protocol.framing import HEADER_BYTES, decode_body

# --- helpers ---------------------------------------------------------------------------


def frame_of(body: bytes) -> bytes:
    """A frame around ``body`` exactly as given (possibly not a valid map)."""
    return struct.pack(">I", len(body)) + body


def body_of_size(size: int) -> bytes:
    """A valid MessagePack map body of exactly ``size`` bytes (``size`` >= 16)."""
    overhead = len(msgpack.packb({"type": "ping", "id": 1, "pad": ""}))
    for pad_len in range(size, -1, -1):
        body = msgpack.packb({"type": "ping", "id": 1, "pad": "x" * pad_len})
        if len(body) == size:
            return body
    raise AssertionError(f"cannot build a body of {size} bytes (overhead {overhead})")


PING = {"type": "ping", "id": 1}
PING_FRAME = b"\x00\x00\x00\x0f" + b"\x82\xa4type\xa4ping\xa2id\x01"

# --- constants and encoding ------------------------------------------------------------


def test_limits_and_header_size() -> None:
    assert DEFAULT_MAX_FRAME_BYTES == 65536
    assert HEADER_BYTES == 4
    assert FrameDecoder().max_frame_bytes == DEFAULT_MAX_FRAME_BYTES
    assert FrameDecoder(max_frame_bytes=10).max_frame_bytes == 10


def test_encode_frame_golden_bytes() -> None:
    assert encode_frame(PING) == PING_FRAME


def test_encode_frame_length_is_big_endian_body_length() -> None:
    payload = {"type": "ping", "id": 1, "pad": "x" * 300}
    frame = encode_frame(payload)
    (length,) = struct.unpack(">I", frame[:4])
    assert length == len(frame) - 4 == 322
    assert frame[:4] == b"\x00\x00\x01\x42"
    assert msgpack.unpackb(frame[4:]) == payload


def test_encode_frame_uses_str_for_text_and_bin_for_bytes() -> None:
    frame = encode_frame({"t": "ab", "b": b"ab"})
    assert frame[4:] == b"\x82\xa1t\xa2ab\xa1b\xc4\x02ab"


def test_encode_frame_refuses_unencodable_values() -> None:
    with pytest.raises(TypeError):
        encode_frame({"x": object()})


# --- decode_body -------------------------------------------------------------------------


def test_decode_body_reads_one_map() -> None:
    assert decode_body(PING_FRAME[4:]) == PING


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\xc1", id="never-used-byte"),
        pytest.param(b"\x82\xa4type", id="truncated-map"),
        pytest.param(b"\xa5hel", id="truncated-str"),
        pytest.param(b"\xdf\xff\xff\xff\xff", id="map32-claiming-4G-entries"),
        pytest.param(b"\x81\xa1a\xd9\x05abc", id="str8-longer-than-body"),
        pytest.param(b"\x81\xa1a\xa2\xff\xfe", id="invalid-utf8-str"),
    ],
)
def test_decode_body_refuses_non_msgpack(body: bytes) -> None:
    with pytest.raises(FrameError) as info:
        decode_body(body)
    assert info.value.code is Code.BAD_FRAME
    assert info.value.fatal is True
    assert "MessagePack" in info.value.message


def test_decode_body_refuses_trailing_object() -> None:
    with pytest.raises(FrameError, match="more than one MessagePack object"):
        decode_body(msgpack.packb(PING) + msgpack.packb(1))


def test_decode_body_refuses_trailing_second_map() -> None:
    with pytest.raises(FrameError, match="more than one"):
        decode_body(msgpack.packb(PING) + msgpack.packb(PING))


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ([1, 2], "list"),
        ([], "list"),
        (7, "int"),
        (-1, "int"),
        ("hello", "str"),
        (None, "NoneType"),
        (True, "bool"),
        (1.5, "float"),
        (b"\x00", "bytes"),
    ],
)
def test_decode_body_refuses_non_map(value: Any, kind: str) -> None:
    with pytest.raises(FrameError) as info:
        decode_body(msgpack.packb(value, use_bin_type=True))
    assert info.value.message == f"a frame must hold a MessagePack map, not {kind}"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"\x81\x01\xa1x", id="int-key"),
        pytest.param(b"\x81\xc0\xa1x", id="nil-key"),
        pytest.param(b"\x81\xc3\xa1x", id="bool-key"),
        pytest.param(b"\x81\x91\x01\xa1x", id="array-key"),
        pytest.param(b"\x81\xa1o\x81\x01\x02", id="int-key-in-nested-map"),
    ],
)
def test_decode_body_refuses_non_text_keys(body: bytes) -> None:
    with pytest.raises(FrameError, match="not allowed for map key"):
        decode_body(body)


def test_decode_body_refuses_bin_keys() -> None:
    with pytest.raises(FrameError):
        decode_body(b"\x81\xc4\x04type\xa4ping")


@pytest.mark.parametrize("code", [0, 1, 5, 127, -2, -128])
def test_decode_body_refuses_extension_types(code: int) -> None:
    # fixext 4 by hand: msgpack-python will not pack negative (reserved) codes itself.
    body = b"\x83\xa4type\xa4ping\xa2id\x01\xa1x\xd6" + struct.pack("b", code) + b"data"
    with pytest.raises(FrameError, match=f"extension type {code} is not allowed"):
        decode_body(body)


def test_decode_body_refuses_timestamp_extension() -> None:
    body = msgpack.packb({"type": "ping", "id": 1, "x": msgpack.Timestamp(1, 0)})
    assert body.endswith(b"\xd6\xff\x00\x00\x00\x01")  # fixext 4, type -1
    with pytest.raises(FrameError):
        decode_body(body)


def test_decode_body_accepts_any_int_width() -> None:
    # Other languages' encoders may pick wider encodings than needed; all are fine.
    body = b"\x82\xa4type\xa4ping\xa2id\xcf\x00\x00\x00\x00\x00\x00\x00\x01"
    assert decode_body(body) == PING
    body = b"\x82\xa4type\xd9\x04ping\xa2id\xd1\x00\x01"  # str8 value, int16 id
    assert decode_body(body) == PING


# --- FrameDecoder: whole, split, several ----------------------------------------------------


def test_decoder_yields_one_frame() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(PING_FRAME) == [PING]
    assert decoder.buffered_bytes == 0
    assert decoder.error is None


def test_decoder_feed_of_nothing_yields_nothing() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"") == []
    assert decoder.buffered_bytes == 0


def test_decoder_byte_by_byte() -> None:
    decoder = FrameDecoder()
    for i, byte in enumerate(PING_FRAME[:-1]):
        assert decoder.feed(bytes([byte])) == [], f"output after byte {i}"
        assert decoder.buffered_bytes == i + 1
    assert decoder.feed(PING_FRAME[-1:]) == [PING]
    assert decoder.buffered_bytes == 0


@pytest.mark.parametrize("cut", range(1, len(PING_FRAME)))
def test_decoder_split_at_every_boundary(cut: int) -> None:
    decoder = FrameDecoder()
    assert decoder.feed(PING_FRAME[:cut]) == []
    assert decoder.buffered_bytes == cut
    assert decoder.feed(PING_FRAME[cut:]) == [PING]
    assert decoder.buffered_bytes == 0


def test_decoder_several_frames_in_one_chunk_in_order() -> None:
    payloads = [{"type": "ping", "id": i} for i in range(5)]
    decoder = FrameDecoder()
    assert decoder.feed(b"".join(encode_frame(p) for p in payloads)) == payloads


def test_decoder_frames_and_a_partial_one_in_one_chunk() -> None:
    first, second = encode_frame({"n": 1}), encode_frame({"n": 2})
    decoder = FrameDecoder()
    assert decoder.feed(first + second[:3]) == [{"n": 1}]
    assert decoder.buffered_bytes == 3
    assert decoder.feed(second[3:]) == [{"n": 2}]


def test_decoder_stream_of_frames_split_at_every_boundary() -> None:
    payloads = [{"n": i, "s": "x" * i} for i in range(4)]
    stream = b"".join(encode_frame(p) for p in payloads)
    for cut in range(len(stream) + 1):
        decoder = FrameDecoder()
        assert decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) == payloads


def test_truncated_frame_gives_no_output() -> None:
    frame = encode_frame({"type": "ping", "id": 1, "pad": "x" * 100})
    decoder = FrameDecoder()
    assert decoder.feed(frame[:-1]) == []
    assert decoder.buffered_bytes == len(frame) - 1
    assert decoder.error is None


def test_header_alone_gives_no_output() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"\x00\x00\x00\x0f") == []
    assert decoder.buffered_bytes == 4


# --- the size limit ----------------------------------------------------------------------------


def test_oversize_refused_from_the_header_alone() -> None:
    decoder = FrameDecoder()
    with pytest.raises(FrameError) as info:
        decoder.feed(struct.pack(">I", DEFAULT_MAX_FRAME_BYTES + 1))  # no body at all
    assert info.value.code is Code.BAD_FRAME
    assert info.value.fatal
    assert info.value.message == "frame of 65537 bytes exceeds the limit of 65536 bytes"
    assert decoder.buffered_bytes == 0


def test_oversize_header_split_is_refused_on_its_fourth_byte() -> None:
    header = b"\xff\xff\xff\xff"
    decoder = FrameDecoder()
    for byte in header[:3]:
        assert decoder.feed(bytes([byte])) == []
    with pytest.raises(FrameError, match="4294967295 bytes exceeds"):
        decoder.feed(header[3:])


def test_oversize_refused_with_a_custom_limit() -> None:
    decoder = FrameDecoder(max_frame_bytes=100)
    with pytest.raises(FrameError, match="frame of 101 bytes exceeds the limit of 100 bytes"):
        decoder.feed(struct.pack(">I", 101))


@pytest.mark.parametrize("limit", [64, 1000, DEFAULT_MAX_FRAME_BYTES])
def test_frame_exactly_at_the_limit_is_accepted(limit: int) -> None:
    body = body_of_size(limit)
    assert len(body) == limit
    decoder = FrameDecoder(max_frame_bytes=limit)
    [frame] = decoder.feed(frame_of(body))
    assert frame["pad"] == "x" * len(frame["pad"])
    assert decoder.buffered_bytes == 0


@pytest.mark.parametrize("limit", [64, 1000, DEFAULT_MAX_FRAME_BYTES])
def test_frame_one_byte_over_the_limit_is_refused(limit: int) -> None:
    decoder = FrameDecoder(max_frame_bytes=limit)
    with pytest.raises(FrameError, match="exceeds the limit"):
        decoder.feed(frame_of(body_of_size(limit + 1)))


def test_zero_length_frame_is_not_a_map() -> None:
    with pytest.raises(FrameError, match="not valid MessagePack"):
        FrameDecoder().feed(b"\x00\x00\x00\x00")


# --- bad bodies through the decoder ----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"\xc1", id="not-msgpack"),
        pytest.param(msgpack.packb(PING) + b"\x01", id="trailing-object"),
        pytest.param(msgpack.packb([1, 2]), id="list"),
        pytest.param(msgpack.packb(3), id="int"),
        pytest.param(msgpack.packb("ping"), id="str"),
        pytest.param(b"\x81\x01\x02", id="int-key"),
        pytest.param(msgpack.packb({"x": msgpack.ExtType(9, b"")}), id="ext"),
    ],
)
def test_bad_body_raises_once_complete(body: bytes) -> None:
    frame = frame_of(body)
    decoder = FrameDecoder()
    assert decoder.feed(frame[:-1]) == []  # nothing is judged before the body is complete
    with pytest.raises(FrameError) as info:
        decoder.feed(frame[-1:])
    assert info.value.code is Code.BAD_FRAME


def test_decoder_is_broken_after_a_frame_error() -> None:
    decoder = FrameDecoder()
    with pytest.raises(FrameError) as first:
        decoder.feed(frame_of(b"\xc1"))
    assert decoder.error is first.value
    assert decoder.buffered_bytes == 0
    for data in (PING_FRAME, b"", PING_FRAME[:2]):
        with pytest.raises(FrameError) as again:
            decoder.feed(data)
        assert again.value is first.value
    assert decoder.buffered_bytes == 0


def test_frames_before_garbage_are_returned_then_the_error() -> None:
    decoder = FrameDecoder()
    frames = decoder.feed(PING_FRAME + PING_FRAME + frame_of(b"\xc1") + PING_FRAME)
    assert frames == [PING, PING]
    assert isinstance(decoder.error, FrameError)
    with pytest.raises(FrameError) as info:
        decoder.feed(b"")
    assert info.value is decoder.error


def test_frames_before_an_oversize_header_are_returned_then_the_error() -> None:
    decoder = FrameDecoder(max_frame_bytes=100)
    assert decoder.feed(PING_FRAME + struct.pack(">I", 101)) == [PING]
    assert decoder.error is not None and "exceeds" in decoder.error.message
    with pytest.raises(FrameError):
        decoder.feed(PING_FRAME)


# --- feed_bodies: frames split, bodies left undecoded -------------------------------------------------


def test_feed_bodies_hands_out_each_body_as_bytes_in_order() -> None:
    bodies = [b"\xc1", msgpack.packb(PING), b"", b"anything"]  # not judged here
    stream = b"".join(frame_of(body) for body in bodies)
    decoder = FrameDecoder()
    assert decoder.feed_bodies(stream[:7]) == [b"\xc1"]
    got = decoder.feed_bodies(bytearray(stream[7:-2])) + decoder.feed_bodies(memoryview(stream[-2:]))
    assert got == bodies[1:]
    assert all(type(body) is bytes for body in got)
    assert decoder.buffered_bytes == 0 and decoder.error is None


def test_a_big_frame_byte_by_byte_waits_then_completes() -> None:
    body = body_of_size(DEFAULT_MAX_FRAME_BYTES)
    frame = frame_of(body) + PING_FRAME[:3]
    decoder = FrameDecoder()
    for i in range(len(frame) - 3 - 1):
        assert decoder.feed_bodies(frame[i : i + 1]) == []
    assert decoder.feed_bodies(frame[-4:]) == [body]
    assert decoder.buffered_bytes == 3
    assert decoder.feed(PING_FRAME[3:]) == [PING]


def test_feed_bodies_refuses_an_oversize_prefix_and_keeps_it_after_complete_frames() -> None:
    decoder = FrameDecoder(max_frame_bytes=100)
    assert decoder.feed_bodies(PING_FRAME + struct.pack(">I", 101)) == [PING_FRAME[4:]]
    with pytest.raises(FrameError, match="101 bytes exceeds"):
        decoder.feed_bodies(b"")
    with pytest.raises(FrameError, match="101 bytes exceeds"):
        FrameDecoder(max_frame_bytes=100).feed_bodies(b"\x00\x00" + b"\x00\x65")


def test_fail_breaks_the_stream_for_good() -> None:
    decoder = FrameDecoder()
    decoder.feed_bodies(PING_FRAME + PING_FRAME[:6])
    error = FrameError("the caller found a bad body")
    decoder.fail(error)
    assert decoder.error is error and decoder.buffered_bytes == 0
    for feed in (decoder.feed_bodies, decoder.feed):
        with pytest.raises(FrameError) as info:
            feed(PING_FRAME)
        assert info.value is error


# --- properties ------------------------------------------------------------------------------------

_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
msgpack_values = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
msgpack_maps = st.dictionaries(st.text(max_size=10), msgpack_values, max_size=6)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


@settings(max_examples=200, deadline=None)
@given(payloads=st.lists(msgpack_maps, max_size=5), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_any_maps_round_trip_through_any_chunking(payloads: list[dict[str, Any]], cuts: list[int]) -> None:
    stream = b"".join(encode_frame(p) for p in payloads)
    decoder = FrameDecoder(max_frame_bytes=1 << 20)
    out: list[dict[str, Any]] = []
    for chunk in _chunks(stream, cuts):
        out += decoder.feed(chunk)
    assert out == payloads
    assert decoder.buffered_bytes == 0


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), cuts=st.lists(st.integers(min_value=0), max_size=10))
def test_arbitrary_bytes_only_ever_give_maps_or_frame_error(data: bytes, cuts: list[int]) -> None:
    decoder = FrameDecoder(max_frame_bytes=1000)
    for chunk in _chunks(data, cuts):
        try:
            frames = decoder.feed(chunk)
        except FrameError as exc:
            assert exc.code is Code.BAD_FRAME and exc.fatal
            assert decoder.error is exc
            return
        assert all(isinstance(f, dict) and all(isinstance(k, (str, bytes)) for k in f) for f in frames)
    assert decoder.buffered_bytes <= len(data)
