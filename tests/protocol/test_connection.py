"""The sans-IO connection objects, fed byte strings: no sockets.

Golden byte vectors in both directions, every message type through
``ClientConnection`` / ``ServerConnection``, chunking, limits, the handshake
state table, and properties over arbitrary input.
"""

from __future__ import annotations

import struct
from typing import Any, Iterable

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    DEFAULT_MAX_FRAME_BYTES,
    ClientConnection,
    Code,
    FrameError,
    MessageError,
    ProtocolError,
    ServerConnection,
    State,
    encode_frame,
    to_wire,
)
from protocol import messages as m

from .test_messages import REQUESTS, SERVER_MESSAGES, candidate_maps, msgpack_values, typed_maps, valid_requests

# --- golden vectors ---------------------------------------------------------------------------

HELLO = m.Hello(id=1, version=1, name="ann")
HELLO_BYTES = (
    b"\x00\x00\x00\x22"  # body length 34, big-endian
    b"\x84"  # map of 4 entries
    b"\xa4type" b"\xa5hello"
    b"\xa2id" b"\x01"
    b"\xa7version" b"\x01"
    b"\xa4name" b"\xa3ann"
)

WELCOME = m.Welcome(id=1, protocol=1, server="test", version="0.1.0", name="ann", token="tok", games=[])
WELCOME_BYTES = (
    b"\x00\x00\x00\x52"  # 82
    b"\xde\x00\x08"  # a map16 header: welcome has more fields than a fixmap holds (16 with type), though defaults are left out
    b"\xa4type" b"\xa7welcome"
    b"\xa2id" b"\x01"
    b"\xa8protocol" b"\x01"
    b"\xa6server" b"\xa4test"
    b"\xa7version" b"\xa50.1.0"
    b"\xa4name" b"\xa3ann"
    b"\xa5token" b"\xa3tok"
    b"\xa5games" b"\x90"
)

ERROR = m.Error(id=7, code=Code.NO_SUCH_TABLE, message="there is no table 9")
ERROR_BYTES = (
    b"\x00\x00\x00\x3f"  # 63
    b"\x84"
    b"\xa4type" b"\xa5error"
    b"\xa4code" b"\xadno_such_table"
    b"\xa7message" b"\xb3there is no table 9"
    b"\xa2id" b"\x07"
)

CONNECTION_ERROR = m.Error(code=Code.BAD_FRAME, message="x")  # no id: not an answer to a request
CONNECTION_ERROR_BYTES = b"\x00\x00\x00\x25\x83\xa4type\xa5error\xa4code\xa9bad_frame\xa7message\xa1x"

PING_BYTES = b"\x00\x00\x00\x0f\x82\xa4type\xa4ping\xa2id\x02"


def server_events(conn: ServerConnection, data: bytes) -> list[m.Message | ProtocolError]:
    return list(conn.receive_data(data))


def open_server() -> ServerConnection:
    conn = ServerConnection()
    conn.accept_hello()
    return conn


def test_hello_request_golden_bytes() -> None:
    assert ClientConnection().send(HELLO) == HELLO_BYTES
    assert len(HELLO_BYTES) == 4 + 0x22


def test_server_reads_golden_hello() -> None:
    conn = ServerConnection()
    assert server_events(conn, HELLO_BYTES) == [HELLO]


def test_welcome_reply_golden_bytes() -> None:
    assert ServerConnection().send(WELCOME) == WELCOME_BYTES
    assert len(WELCOME_BYTES) == 4 + 0x52


def test_client_reads_golden_welcome() -> None:
    assert ClientConnection().receive_data(WELCOME_BYTES) == [WELCOME]


def test_error_reply_golden_bytes() -> None:
    assert ServerConnection().send(ERROR) == ERROR_BYTES
    assert ClientConnection().receive_data(ERROR_BYTES) == [ERROR]


def test_connection_error_golden_bytes_omit_id() -> None:
    assert ServerConnection().send(CONNECTION_ERROR) == CONNECTION_ERROR_BYTES
    [error] = ClientConnection().receive_data(CONNECTION_ERROR_BYTES)
    assert isinstance(error, m.Error) and error.id is None and error.field is None


def test_ping_golden_bytes() -> None:
    assert ClientConnection().send(m.Ping(id=2)) == PING_BYTES


def test_server_reads_fields_in_any_order_and_any_int_width() -> None:
    body = b"\x84\xa4name\xa3ann\xa7version\xcc\x01\xa2id\xcf" + (1).to_bytes(8, "big") + b"\xa4type\xa5hello"
    assert server_events(ServerConnection(), struct.pack(">I", len(body)) + body) == [HELLO]


# --- every type, both ways ------------------------------------------------------------------------


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_every_request_through_the_connections(request_: m.Message) -> None:
    data = ClientConnection().send(request_)
    assert data[4:] == msgpack.packb(to_wire(request_), use_bin_type=True)
    conn = ServerConnection() if isinstance(request_, m.Hello) else open_server()
    assert server_events(conn, data) == [request_]


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda s: type(s).__name__)
def test_every_server_message_through_the_connections(message: m.Message) -> None:
    data = ServerConnection().send(message)
    assert struct.unpack(">I", data[:4])[0] == len(data) - 4
    assert ClientConnection().receive_data(data) == [message]


def test_all_server_messages_in_one_chunk() -> None:
    stream = b"".join(ServerConnection().send(s) for s in SERVER_MESSAGES)
    assert ClientConnection().receive_data(stream) == SERVER_MESSAGES


def test_all_server_messages_byte_by_byte() -> None:
    stream = b"".join(ServerConnection().send(s) for s in SERVER_MESSAGES)
    client = ClientConnection()
    got: list[m.Message] = []
    for i in range(len(stream)):
        got += client.receive_data(stream[i : i + 1])
    assert got == SERVER_MESSAGES


# --- chunking on the server side ------------------------------------------------------------------------


def test_hello_byte_by_byte() -> None:
    conn = ServerConnection()
    for i, byte in enumerate(HELLO_BYTES[:-1]):
        assert server_events(conn, bytes([byte])) == [], f"event after byte {i}"
        assert conn.buffered_bytes == i + 1
    assert server_events(conn, HELLO_BYTES[-1:]) == [HELLO]
    assert conn.buffered_bytes == 0


@pytest.mark.parametrize("cut", range(1, len(HELLO_BYTES)))
def test_hello_split_at_every_boundary(cut: int) -> None:
    conn = ServerConnection()
    assert server_events(conn, HELLO_BYTES[:cut]) == []
    assert server_events(conn, HELLO_BYTES[cut:]) == [HELLO]


def test_several_requests_in_one_chunk() -> None:
    requests = [r for r in REQUESTS if not isinstance(r, m.Hello)]
    stream = b"".join(ClientConnection().send(r) for r in requests)
    assert server_events(open_server(), stream) == requests


def test_requests_and_a_partial_one() -> None:
    conn = open_server()
    assert server_events(conn, PING_BYTES + PING_BYTES[:5]) == [m.Ping(id=2)]
    assert conn.buffered_bytes == 5
    assert server_events(conn, PING_BYTES[5:]) == [m.Ping(id=2)]


def test_truncated_frame_gives_nothing_until_complete() -> None:
    conn = open_server()
    assert server_events(conn, PING_BYTES[:-1]) == []
    assert conn.state is State.OPEN
    assert server_events(conn, PING_BYTES[-1:]) == [m.Ping(id=2)]


# --- framing violations: fatal -------------------------------------------------------------------------


def assert_fatal_frame_error(event: object) -> FrameError:
    assert isinstance(event, FrameError)
    assert event.code is Code.BAD_FRAME
    assert event.fatal is True
    assert event.request_id is None
    return event


def test_oversize_header_alone_is_refused_at_once() -> None:
    conn = open_server()
    [event] = server_events(conn, struct.pack(">I", DEFAULT_MAX_FRAME_BYTES + 1))
    assert "65537 bytes exceeds the limit of 65536 bytes" in assert_fatal_frame_error(event).message
    assert conn.state is State.CLOSED
    assert conn.buffered_bytes == 0


def test_server_limit_is_a_constructor_argument() -> None:
    assert len(PING_BYTES) - 4 == 15
    conn = ServerConnection(max_frame_bytes=15)
    conn.accept_hello()
    assert server_events(conn, PING_BYTES) == [m.Ping(id=2)]
    conn = ServerConnection(max_frame_bytes=14)
    [event] = server_events(conn, PING_BYTES)
    assert "15 bytes exceeds the limit of 14 bytes" in assert_fatal_frame_error(event).message


def test_frame_exactly_at_the_server_limit_is_accepted() -> None:
    body = msgpack.packb({"type": "ping", "id": 9, "pad": "x" * 5})
    conn = ServerConnection(max_frame_bytes=len(body))
    conn.accept_hello()
    assert server_events(conn, struct.pack(">I", len(body)) + body) == [m.Ping(id=9)]
    conn = ServerConnection(max_frame_bytes=len(body) - 1)
    assert isinstance(server_events(conn, struct.pack(">I", len(body)))[0], FrameError)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"\xc1", id="not-msgpack"),
        pytest.param(msgpack.packb({"type": "ping", "id": 1}) + b"\xc0", id="trailing-object"),
        pytest.param(msgpack.packb([{"type": "ping", "id": 1}]), id="list"),
        pytest.param(msgpack.packb(1), id="int"),
        pytest.param(msgpack.packb("ping"), id="str"),
        pytest.param(b"\x82\x01\xa4ping\xa2id\x01", id="int-key"),
        pytest.param(msgpack.packb({"type": "ping", "id": 1, "x": msgpack.ExtType(1, b"")}), id="ext"),
    ],
)
def test_bad_body_is_a_fatal_frame_error(body: bytes) -> None:
    conn = open_server()
    frame = struct.pack(">I", len(body)) + body
    assert server_events(conn, frame[:-1]) == []
    [event] = server_events(conn, frame[-1:])
    assert_fatal_frame_error(event)
    assert conn.state is State.CLOSED


def test_nothing_after_a_frame_error() -> None:
    conn = open_server()
    [event] = server_events(conn, struct.pack(">I", 1) + b"\xc1")
    assert_fatal_frame_error(event)
    assert server_events(conn, PING_BYTES) == []
    assert server_events(conn, b"\xff" * 10) == []
    assert conn.state is State.CLOSED


def test_requests_before_garbage_come_first_and_the_error_last() -> None:
    conn = open_server()
    events = server_events(conn, PING_BYTES + PING_BYTES + struct.pack(">I", 1) + b"\xc1" + PING_BYTES)
    assert events[:2] == [m.Ping(id=2), m.Ping(id=2)]
    assert len(events) == 3
    assert_fatal_frame_error(events[2])
    assert conn.state is State.CLOSED


def test_message_errors_are_not_fatal() -> None:
    conn = open_server()
    bad = encode_frame({"type": "move", "id": 4, "table": "1", "move": "d3"})
    unknown = encode_frame({"type": "teleport", "id": 5})
    events = server_events(conn, PING_BYTES + bad + unknown + PING_BYTES)
    assert events[0] == m.Ping(id=2) and events[3] == m.Ping(id=2)
    for event, request_id, field in ((events[1], 4, "table"), (events[2], 5, "type")):
        assert isinstance(event, MessageError)
        assert (event.code, event.fatal, event.request_id, event.field) == (Code.BAD_MESSAGE, False, request_id, field)
    assert conn.state is State.OPEN


def test_message_error_before_hello_keeps_waiting_for_hello() -> None:
    conn = ServerConnection()
    [event] = server_events(conn, encode_frame({"type": "hello", "id": 1, "version": "1", "name": "ann"}))
    assert isinstance(event, MessageError) and event.field == "version" and event.request_id == 1
    assert conn.state is State.AWAIT_HELLO
    assert server_events(conn, HELLO_BYTES) == [HELLO]


# --- the handshake table ---------------------------------------------------------------------------------

NON_HELLO = [r for r in REQUESTS if not isinstance(r, (m.Hello, m.Identify))]


@pytest.mark.parametrize("request_", NON_HELLO, ids=lambda r: type(r).__name__)
def test_request_before_hello_is_refused(request_: m.Message) -> None:
    conn = ServerConnection()
    [event] = server_events(conn, ClientConnection().send(request_))
    assert isinstance(event, ProtocolError) and not isinstance(event, MessageError)
    assert event.code is Code.HANDSHAKE_REQUIRED
    assert event.message == "say hello first"
    assert event.request_id == request_.id  # type: ignore[attr-defined]
    assert event.fatal is False
    assert conn.state is State.AWAIT_HELLO


def test_identify_is_accepted_before_and_after_hello() -> None:
    conn = ServerConnection()
    identify = m.Identify(id=4)
    assert server_events(conn, ClientConnection().send(identify)) == [identify]
    assert conn.state is State.AWAIT_HELLO  # it is no hello: hello is still awaited
    assert server_events(conn, HELLO_BYTES) == [HELLO]
    conn.accept_hello()
    assert server_events(conn, ClientConnection().send(identify)) == [identify]


def test_hello_is_accepted_while_awaiting_hello() -> None:
    conn = ServerConnection()
    assert conn.state is State.AWAIT_HELLO
    assert server_events(conn, HELLO_BYTES) == [HELLO]
    assert conn.state is State.AWAIT_HELLO  # only the caller's accept_hello() opens the session
    conn.accept_hello()
    assert conn.state is State.OPEN


def test_hello_with_any_version_passes_the_protocol_layer() -> None:
    # The version check (unsupported_version) is the server's job, not ServerConnection's.
    hello = m.Hello(id=3, version=99, name="ann")
    assert server_events(ServerConnection(), ClientConnection().send(hello)) == [hello]


def test_hello_after_the_handshake_is_refused() -> None:
    conn = open_server()
    [event] = server_events(conn, HELLO_BYTES)
    assert isinstance(event, ProtocolError)
    assert (event.code, event.message, event.request_id, event.fatal) == (
        Code.HANDSHAKE_REQUIRED, "hello was already received", 1, False)
    assert conn.state is State.OPEN


@pytest.mark.parametrize("request_", NON_HELLO, ids=lambda r: type(r).__name__)
def test_every_other_request_is_accepted_after_the_handshake(request_: m.Message) -> None:
    assert server_events(open_server(), ClientConnection().send(request_)) == [request_]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_nothing_is_accepted_after_close(request_: m.Message) -> None:
    for conn in (ServerConnection(), open_server()):
        conn.close()
        assert conn.state is State.CLOSED
        assert server_events(conn, ClientConnection().send(request_)) == []
        assert server_events(conn, b"\xff\xff\xff\xff") == []  # not even a frame error


def test_close_discards_a_pipelined_rest() -> None:
    conn = open_server()
    events = conn.receive_data(PING_BYTES * 3)
    assert next(events) == m.Ping(id=2)
    conn.close()
    assert list(events) == []


def test_pipelined_hello_then_request_is_judged_after_accept() -> None:
    conn = ServerConnection()
    events = conn.receive_data(HELLO_BYTES + PING_BYTES)
    assert next(events) == HELLO
    conn.accept_hello()  # the caller handled hello before taking the next event
    assert list(events) == [m.Ping(id=2)]


def test_pipelined_hello_then_request_without_accept() -> None:
    conn = ServerConnection()
    events = list(conn.receive_data(HELLO_BYTES + PING_BYTES))
    assert events[0] == HELLO
    assert isinstance(events[1], ProtocolError) and events[1].code is Code.HANDSHAKE_REQUIRED


def test_pipelined_second_hello_is_refused_after_accept() -> None:
    conn = ServerConnection()
    events = conn.receive_data(HELLO_BYTES + HELLO_BYTES)
    assert next(events) == HELLO
    conn.accept_hello()
    [second] = list(events)
    assert isinstance(second, ProtocolError) and second.code is Code.HANDSHAKE_REQUIRED


def test_a_refused_hello_may_be_retried() -> None:
    # The server refuses a hello (say, name_taken) by not calling accept_hello().
    conn = ServerConnection()
    assert server_events(conn, HELLO_BYTES) == [HELLO]
    retry = m.Hello(id=2, version=1, name="ann2")
    assert server_events(conn, ClientConnection().send(retry)) == [retry]


# --- the client end -----------------------------------------------------------------------------------


def test_client_limit_is_four_times_the_default() -> None:
    limit = 4 * DEFAULT_MAX_FRAME_BYTES
    client = ClientConnection()
    assert client.receive_data(struct.pack(">I", limit)) == []  # exactly at the limit: waits for the body
    with pytest.raises(FrameError, match=f"{limit + 1} bytes exceeds"):
        ClientConnection().receive_data(struct.pack(">I", limit + 1))


def test_client_accepts_a_big_view_at_its_limit() -> None:
    limit = 4 * DEFAULT_MAX_FRAME_BYTES
    base = len(msgpack.packb(to_wire(m.Shutdown(message=""))))
    message = m.Shutdown(message="x" * (limit - base - 4))  # str32 header grows the body by 4
    data = ServerConnection().send(message)
    assert len(data) - 4 == limit
    assert ClientConnection().receive_data(data) == [message]


def test_client_skips_unknown_types_for_forward_compatibility() -> None:
    client = ClientConnection()
    assert client.receive_data(encode_frame({"type": "teleported", "table": 1}) + ERROR_BYTES) == [ERROR]


def test_client_raises_for_a_bad_message_of_a_known_type_and_keeps_going() -> None:
    client = ClientConnection()
    with pytest.raises(MessageError) as info:
        client.receive_data(encode_frame({"type": "moved", "table": "one"}))
    assert info.value.field in ("table", "seat", "move", "ply", "view")
    assert client.receive_data(ERROR_BYTES) == [ERROR]


def test_client_is_broken_after_a_frame_error() -> None:
    client = ClientConnection()
    with pytest.raises(FrameError):
        client.receive_data(struct.pack(">I", 1) + b"\xc1")
    with pytest.raises(FrameError):
        client.receive_data(ERROR_BYTES)


def test_client_gets_messages_before_garbage_then_the_error() -> None:
    client = ClientConnection()
    assert client.receive_data(ERROR_BYTES + struct.pack(">I", 1) + b"\xc1") == [ERROR]
    with pytest.raises(FrameError):
        client.receive_data(b"")


def test_client_ignores_a_request_type_from_the_server() -> None:
    assert ClientConnection().receive_data(HELLO_BYTES + ERROR_BYTES) == [ERROR]


# --- properties ------------------------------------------------------------------------------------------


def _chunks(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


def _summary(event: object) -> tuple[Any, ...]:
    if isinstance(event, ProtocolError):
        return (type(event).__name__, event.code, event.message, event.request_id, event.field, event.fatal)
    return ("request", event)


def _run_server(chunks: list[bytes], max_frame_bytes: int) -> tuple[list[Any], ServerConnection]:
    """Feed ``chunks``, accepting the first hello as a server would; check every event."""
    conn = ServerConnection(max_frame_bytes=max_frame_bytes)
    seen: list[Any] = []
    for chunk in chunks:
        for event in conn.receive_data(chunk):
            assert not (seen and seen[-1][-1] is True), "an event after a fatal error"
            if isinstance(event, ProtocolError):
                assert isinstance(event.code, Code)
                assert event.fatal == (event.code is Code.BAD_FRAME)
                seen.append(_summary(event))
            else:
                assert isinstance(event, m.REQUEST_TYPES)
                if isinstance(event, m.Hello):
                    assert conn.state is State.AWAIT_HELLO
                    conn.accept_hello()
                seen.append(_summary(event) + (False,))
    fatal = any(s[-1] is True for s in seen)
    assert (conn.state is State.CLOSED) == fatal
    return seen, conn


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=300), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_arbitrary_bytes_in_arbitrary_chunks_never_raise(data: bytes, cuts: list[int]) -> None:
    whole, _ = _run_server([data], 200)
    chunked, _ = _run_server(_chunks(data, cuts), 200)
    assert chunked == whole  # how the bytes were split changes nothing


frames_of_maps = st.lists(
    st.one_of(
        candidate_maps.map(lambda d: encode_frame(d)),
        typed_maps.map(lambda d: encode_frame(d)),
        valid_requests.map(lambda r: encode_frame(to_wire(r))),
        st.binary(max_size=12),  # garbage between frames
        msgpack_values.map(lambda v: struct.pack(">I", len(b := msgpack.packb(v))) + b),  # not necessarily a map
    ),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(parts=frames_of_maps, cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_mostly_well_framed_streams_in_arbitrary_chunks_never_raise(parts: list[bytes], cuts: list[int]) -> None:
    data = b"".join(parts)
    whole, _ = _run_server([data], 1 << 16)
    chunked, _ = _run_server(_chunks(data, cuts), 1 << 16)
    assert chunked == whole


@settings(max_examples=300, deadline=None)
@given(requests=st.lists(valid_requests, max_size=6), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_valid_requests_round_trip_through_any_chunking(requests: list[m.Message], cuts: list[int]) -> None:
    client = ClientConnection()
    stream = b"".join(client.send(r) for r in requests)
    conn = open_server()
    got: list[Any] = []
    for chunk in _chunks(stream, cuts):
        got += conn.receive_data(chunk)
    expected = [
        ProtocolError(Code.HANDSHAKE_REQUIRED, "hello was already received", request_id=r.id)  # type: ignore[attr-defined]
        if isinstance(r, m.Hello) else r
        for r in requests
    ]
    assert [_summary(e) for e in got] == [_summary(e) for e in expected]


@settings(max_examples=300, deadline=None)
@given(wire=candidate_maps | typed_maps)
def test_any_map_on_the_wire_gives_one_request_or_one_error(wire: dict[str, Any]) -> None:
    [event] = server_events(open_server(), encode_frame(wire))
    if isinstance(event, ProtocolError):
        assert event.code in (Code.BAD_MESSAGE, Code.HANDSHAKE_REQUIRED)
        assert not event.fatal
    else:
        assert isinstance(event, m.REQUEST_TYPES) and not isinstance(event, m.Hello)


# --- one whole frame, without the generator ---------------------------------------------------


def test_one_whole_frame_is_received_without_the_generator() -> None:
    conn = open_server()
    assert conn.receive_frame(PING_BYTES) == m.Ping(id=2)
    assert isinstance(conn._decoder, int), "no frame decoder was made for a whole frame"


@pytest.mark.parametrize(
    "data",
    [PING_BYTES[:-1], PING_BYTES + PING_BYTES, PING_BYTES[:3], bytearray(PING_BYTES)],
    ids=["partial", "two frames", "short header", "not bytes"],
)
def test_anything_but_one_whole_frame_is_left_to_receive_data(data: bytes) -> None:
    conn = open_server()
    assert conn.receive_frame(data) is None
    assert isinstance(conn._decoder, int), "nothing was taken"
    assert server_events(conn, PING_BYTES) == [m.Ping(id=2)], "the next frame is read from its start"


def test_a_whole_frame_after_a_partial_one_is_not_taken_alone() -> None:
    conn = open_server()
    assert server_events(conn, PING_BYTES[:5]) == []
    assert conn.receive_frame(PING_BYTES) is None, "the bytes waiting come first"


def test_a_whole_frame_that_is_not_a_request_is_refused_and_one_that_is_not_a_map_closes() -> None:
    conn = open_server()
    error = conn.receive_frame(encode_frame({"type": "move", "id": 3}))
    assert isinstance(error, ProtocolError) and error.request_id == 3 and not error.fatal
    broken = conn.receive_frame(b"\x00\x00\x00\x01\x01")  # the integer 1: not a map
    assert isinstance(broken, ProtocolError) and broken.fatal
    assert conn.receive_frame(PING_BYTES) is None and server_events(conn, PING_BYTES) == [], "closed for good"


def test_a_closed_connection_takes_no_whole_frame() -> None:
    conn = open_server()
    conn.close()
    assert conn.receive_frame(PING_BYTES) is None
