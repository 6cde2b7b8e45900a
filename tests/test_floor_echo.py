"""The floor echo (``benchmarks/floor_echo.py``), compare.py's default floor, over real sockets.

It must answer exactly what the load generator waits for -- one
``{"type": "ok", "id": <id>}`` frame per request, in order -- however the
frames arrive, and close a connection that sends something that is not a
frame of one map, as ``benchmarks/echo_server.py`` does.
"""

from __future__ import annotations

import socket
import struct
import sys
from pathlib import Path
from typing import Any, Iterator

import msgpack
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import compare  # noqa: E402
import floor_echo  # noqa: E402
from roundtrip import ServerProcess  # noqa: E402


def frame(payload: Any) -> bytes:
    body = msgpack.packb(payload, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


def read_frame(sock: socket.socket) -> Any:
    header = _read_exactly(sock, 4)
    return msgpack.unpackb(_read_exactly(sock, struct.unpack(">I", header)[0]), raw=False)


def _read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.fixture(scope="module", params=["asyncio", "uvloop"])
def floor_port(request: pytest.FixtureRequest) -> Iterator[int]:
    server = ServerProcess(launcher=compare.Servers("floor", request.param).floor_launcher())
    server.start()
    try:
        yield server.port
    finally:
        server.stop()


@pytest.fixture
def conn(floor_port: int) -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", floor_port), timeout=5)
    try:
        yield sock
    finally:
        sock.close()


def test_every_request_gets_its_ok_in_order_however_the_frames_arrive(conn: socket.socket) -> None:
    ids = [1, 2, 65535, 65536, 2**40, -3, "seven", None]
    stream = b"".join(frame({"type": "move", "id": i, "table": 1, "move": "d3", "ply": 0}) for i in ids)
    conn.sendall(stream[:3])  # a partial header
    conn.sendall(stream[3:20])  # a partial body
    conn.sendall(stream[20:])  # the rest: several frames in one write
    assert [read_frame(conn) for _ in ids] == [{"type": "ok", "id": i} for i in ids]
    conn.sendall(frame({"id": 9, "type": "hello"}))  # the key order is not fixed
    assert read_frame(conn) == {"type": "ok", "id": 9}


def test_pre_encoded_replies_are_the_replies_encoded() -> None:
    for request_id in (0, 1, 127, 128, 255, 256, floor_echo.CACHED_IDS - 1, floor_echo.CACHED_IDS, "x"):
        assert floor_echo.reply_to(request_id) == frame({"type": "ok", "id": request_id})


def test_a_broadcast_reaches_every_watcher_of_its_group(floor_port: int, conn: socket.socket) -> None:
    with socket.create_connection(("127.0.0.1", floor_port), timeout=5) as watcher:
        watcher.sendall(frame({"type": "watch_table", "id": 1, "table": 7}))
        assert read_frame(watcher) == {"type": "ok", "id": 1}
        conn.sendall(frame({"type": "broadcast", "id": 4, "table": 7, "ply": 3}))
        assert read_frame(conn) == {"type": "ok", "id": 4}
        assert read_frame(watcher) == {"type": "moved", "table": 7, "ply": 3}


@pytest.mark.parametrize(
    "garbage",
    [frame([1, 2]), struct.pack(">I", 3) + b"\xc1\xc1\xc1", struct.pack(">I", floor_echo.MAX_FRAME_BYTES + 1)],
    ids=["not a map", "not msgpack", "too long"],
)
def test_what_is_not_a_frame_of_one_map_closes_the_connection(conn: socket.socket, garbage: bytes) -> None:
    conn.sendall(garbage)
    assert closed_by_server(conn)


def test_compare_measures_against_the_floor_on_the_servers_loop_by_default() -> None:
    servers = compare.Servers()
    assert servers.floor == "floor" and "floor_echo.py" in servers.floor_launcher()[0]
    uvloop = compare.Servers("floor", "uvloop")
    assert uvloop.floor_launcher()[-2:] == ["--loop", "uvloop"]
    assert uvloop.parlour_options()[-2:] == ["--loop", "uvloop"]
    assert compare.plan_for(quick=True, rounds=1, servers=uvloop).servers == uvloop
    assert "floor_echo.py" in compare.report({}, compare.plan_for(quick=True, rounds=1, servers=uvloop), "0 0 0 1/1 1")
    with pytest.raises(ValueError, match="asyncio"):
        compare.Servers("echo", "uvloop")


def test_compare_takes_games_counts_and_names_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    assert compare.plan_for(quick=True, rounds=1, games=[3, 7]).games == [3, 7]
    for argv, complaint in (
        (["--games", "10,x"], "--games takes comma-separated counts"),
        (["--games", "0"], "must be positive"),
        (["--floor", "echo", "--loop", "uvloop"], "asyncio's loop only"),
    ):
        with pytest.raises(SystemExit) as exited:
            compare.main(argv)
        assert exited.value.code == 2
        assert complaint in capsys.readouterr().err
