"""The web face in process: real HTTP and WebSockets on 127.0.0.1 (aiohttp's client), real game clients beside.

What a browser receives is exactly what a terminal spectator receives; only
the served files are reachable; every answer carries the Content-Security-Policy
and no cookie; WebSockets count against the address's connections; a browser
that stops reading is dropped; the TV picks the most watched running game.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
from typing import Any, AsyncIterator

import aiohttp
import msgspec
import pytest

from client.connection import Client, ServerError
from protocol import messages as m
from protocol.lan import ServiceRecord, decode_txt, encode_txt
from server.app import Server
from server.cli import http_address
from server.net.limits import Limits
from server.web import CONTENT_SECURITY_POLICY
from server.web.assets import ASSETS, PAGES

WEB = ("127.0.0.1", 0)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def base(server: Server) -> str:
    assert server.http_address is not None
    host, port = server.http_address
    return f"http://{host}:{port}"


async def receive(ws: aiohttp.ClientWebSocketResponse, timeout_s: float = 5.0) -> list[dict[str, Any]]:
    """One WebSocket message of the feed: a JSON array of messages."""
    message = await ws.receive(timeout=timeout_s)
    assert message.type == aiohttp.WSMsgType.TEXT, message
    batch = json.loads(message.data)
    assert isinstance(batch, list)
    return batch


async def test_pages_and_files_carry_a_strict_policy_set_no_cookie_and_hold_no_inline_code(configured_server: Any, http: aiohttp.ClientSession) -> None:
    server = await configured_server(http=WEB)
    paths = ["/", "/table/1", "/tv", "/archive", "/archive/1", "/api/tv", "/api/archive", "/nowhere"] + [f"/static/{name}" for name in ASSETS]
    for path in paths:
        async with http.get(base(server) + path) as response:
            assert response.status == (404 if path == "/nowhere" else 200), path
            assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert "Set-Cookie" not in response.headers
            body = await response.text()
            if path.endswith(".html") or response.content_type == "text/html":
                assert not re.search(r"<script(?![^>]*\bsrc=)", body), f"{path} has an inline script"
                assert not re.search(r"\son\w+=|\sstyle=", body), f"{path} has inline handlers or styles"
            assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", body), f"{path} loads something from elsewhere"
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe" not in CONTENT_SECURITY_POLICY


async def test_only_the_served_files_are_reachable_by_path(configured_server: Any, http: aiohttp.ClientSession) -> None:
    server = await configured_server(http=WEB)
    for path in ("/static/app.py", "/static/..%2fapp.py", "/static/%2e%2e%2f__init__.py", "/static/../app.py",
                 "/static/static", "/static/", "/table/..%2f..%2fetc%2fpasswd", "/static/lobby.html%00.js", "/archive/1.txt"):
        async with http.get(base(server) + path) as response:
            assert response.status == 404, path
            assert "import" not in await response.text(), path
    async with http.get(base(server) + "/api/archive?offset=-1") as response:
        assert response.status == 400 and "offset must be a whole number" in await response.text()
    assert set(PAGES) <= {"lobby.html", "table.html", "archive.html", "replay.html"}


def quiet_move(view: dict[str, Any]) -> str:
    """A legal Tactego move of ``view``'s seat to an empty square: no combat, so the game goes on."""
    for move in view["legal_moves"]:
        target = move.split("-")[1]
        if view["board"][int(target[1:]) - 1]["abcdefghijklmnopqrstuvwxyz".index(target[0])] is None:
            return move
    raise AssertionError(f"no quiet move in {view['legal_moves']}")


async def test_a_browser_receives_exactly_what_a_terminal_spectator_receives(configured_server: Any, http: aiohttp.ClientSession) -> None:
    server = await configured_server(http=WEB)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    carl = await Client.connect("127.0.0.1", server.port, name="carl")
    try:
        table = (await ann.create_table("tactego", {"rows": 6, "cols": 6}, time_control="5+3")).table.id
        views = {1: (await bob.join_table(table)).view, 0: (await ann.next_event(m.GameStarted)).view}
        joined = await carl.watch_table(table)
        async with http.ws_connect(f"{base(server)}/ws/table/{table}") as ws:
            (snapshot,) = await receive(ws)
            assert snapshot["type"] == "table_joined" and snapshot["seat"] is None
            assert snapshot["view"] == joined.view and snapshot["moves"] == joined.moves
            assert all(cell is None or cell[1] == "?" for row in snapshot["view"]["board"] for cell in row)
            players = {0: ann, 1: bob}
            for _ in range(4):
                seat = views[0]["to_move"]
                await players[seat].move(table, quiet_move(views[seat]))
                for each in (0, 1):
                    views[each] = (await players[each].next_event(m.Moved)).view
                seen = msgspec.to_builtins(await carl.next_event(m.Moved))
                batch = await receive(ws)
                assert batch == [seen]
                view = batch[0]["view"]
                assert view["outcome"] is None
                assert all(cell is None or cell[1] == "?" for row in view["board"] for cell in row)  # never a seat's view
            await ann.say("well played", table=table)
            said = msgspec.to_builtins(await carl.next_event(m.Chat))
            assert await receive(ws) == [said]
    finally:
        for client in (ann, bob, carl):
            await client.close()


async def test_web_sockets_count_against_the_address_connections_and_free_them(configured_server: Any, http: aiohttp.ClientSession) -> None:
    server = await configured_server(http=WEB, limits=Limits(max_connections_per_address=2))
    first = await http.ws_connect(f"{base(server)}/ws/lobby")
    second = await http.ws_connect(f"{base(server)}/ws/lobby")
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await http.ws_connect(f"{base(server)}/ws/lobby")
    assert refused.value.status == 503
    with pytest.raises(ServerError, match="maximum of 2 connections"):
        await Client.connect("127.0.0.1", server.port, name="ann")  # the game port counts them too
    await first.close()
    await asyncio.sleep(0.1)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    await ann.close()
    await second.close()
    await asyncio.sleep(0.1)
    assert server.connections.others == 0


def _handshake(port: int, path: str) -> socket.socket:
    """A WebSocket opened by hand on a socket with a small receive buffer, which then reads nothing."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert sock.recv(12) == b"HTTP/1.1 101"
    return sock


async def test_a_browser_that_stops_reading_is_dropped_and_the_game_goes_on(configured_server: Any) -> None:
    server = await configured_server(http=WEB, limits=Limits(send_buffer_bytes=16384))
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        table = (await ann.create_table("nimble", {"board": [0] + [40] * 99})).table.id
        await bob.join_table(table)
        assert server.http_address is not None
        sock = await asyncio.to_thread(_handshake, server.http_address[1], f"/ws/table/{table}")
        try:
            await asyncio.sleep(0.1)
            assert server.web.browsers[table] == 1
            players, moves = [ann, bob], 0
            while server.web.browsers.get(table) and moves < 2000:
                await players[moves % 2].move(table, f"{100 - moves % 99}-1")
                moves += 1
                await asyncio.sleep(0)
            assert not server.web.browsers.get(table), "the browser that reads nothing was not dropped"
            print(f"dropped after {moves} moves")
            await players[moves % 2].move(table, "2-1")  # the table plays on
        finally:
            sock.close()
        await asyncio.sleep(0.1)
        assert server.connections.others == 0
    finally:
        for client in (ann, bob):
            await client.close()


async def test_the_tv_shows_the_most_watched_running_game_and_moves_on_when_it_ends(configured_server: Any, http: aiohttp.ClientSession) -> None:
    server = await configured_server(http=WEB)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        quiet = (await ann.create_table("othello")).table.id
        await bob.join_table(quiet)
        watched = (await bob.create_table("hexapawn")).table.id
        await ann.join_table(watched)
        await ann.create_table("nimble")  # waiting: never on TV
        async with http.get(base(server) + "/api/tv") as response:
            assert (await response.json())["table"] == watched  # no watchers yet: the newer table
        async with http.ws_connect(f"{base(server)}/ws/table/{quiet}") as ws:
            await receive(ws)
            async with http.get(base(server) + "/api/tv") as response:
                assert (await response.json())["table"] == quiet  # one browser watches it
            await ann.resign(quiet)
            await asyncio.sleep(0.1)
            async with http.get(base(server) + "/api/tv") as response:
                assert (await response.json())["table"] == watched
    finally:
        for client in (ann, bob):
            await client.close()


async def test_welcome_names_the_web_port_and_the_client_makes_the_table_address(configured_server: Any) -> None:
    server = await configured_server(http=WEB)
    without = await configured_server()
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", without.port, name="bob")
    try:
        assert server.http_address is not None
        port = server.http_address[1]
        assert ann.welcome is not None and ann.welcome.http == port
        assert ann.web_address(7) == f"http://127.0.0.1:{port}/table/7" and ann.web_address() == f"http://127.0.0.1:{port}/"
        assert bob.welcome is not None and bob.welcome.http is None and bob.web_address(7) is None
    finally:
        await ann.close()
        await bob.close()


def test_the_mdns_record_carries_the_web_port() -> None:
    record = ServiceRecord(name="den", version="0.1.0", protocol=2, password=False, tls=False, server_id="abc", http=8080)
    properties = encode_txt(record)
    assert properties["http"] == "8080"
    assert decode_txt({key.encode(): value.encode() for key, value in properties.items()}) == record
    for bad in (b"", b"0", b"65536", b"80a", b"-1", b"\xff"):
        assert decode_txt({b"name": b"den", b"http": bad}).http is None
    assert encode_txt(ServiceRecord(name="den", version="", protocol=2, password=False, tls=False))["http"] == ""


def test_the_http_option_takes_a_port_with_an_optional_host() -> None:
    assert http_address("8080") == (None, 8080)
    assert http_address("0.0.0.0:8080") == ("0.0.0.0", 8080)
    assert http_address("[::1]:0") == ("::1", 0)
    for bad in ("", "http", "65536", ":8080", "host:", "[::1]", "8080x"):
        with pytest.raises(Exception, match=r"--http takes \[HOST:\]PORT"):
            http_address(bad)


async def test_a_port_in_use_stops_the_start_with_a_clear_error(configured_server: Any) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        with pytest.raises(OSError, match="the web face's address 127.0.0.1:"):
            await configured_server(http=("127.0.0.1", taken.getsockname()[1]))
    finally:
        taken.close()


async def test_an_othello_record_downloads_as_ggf_and_another_game_is_refused_by_name(configured_server: Any, http: aiohttp.ClientSession, tmp_path: Any) -> None:
    server = await configured_server(http=WEB, db_path=str(tmp_path / "parlour.db"))
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        ids = {}
        for game in ("othello", "nimble"):
            ids[game] = (await ann.create_table(game)).table.id
            await bob.join_table(ids[game])
            await ann.resign(ids[game])
        async with http.get(f"{base(server)}/archive/{ids['othello']}.ggf") as response:
            assert response.status == 200, await response.text()
            assert response.headers["Content-Disposition"] == f'attachment; filename="parlour-{ids["othello"]}.ggf"'
            ggf = await response.text()
        assert ggf.startswith("(;GM[Othello]") and "PB[ann]" in ggf and "PW[bob]" in ggf and ggf.rstrip().endswith(";)")
        async with http.get(f"{base(server)}/archive/{ids['othello']}.txt") as response:
            assert response.status == 200 and "ann" in await response.text()
        async with http.get(f"{base(server)}/archive/{ids['nimble']}.ggf") as response:
            assert response.status == 404
            assert f"GGF records are for Othello games only, and game {ids['nimble']} is nimble" in await response.text()
    finally:
        await ann.close()
        await bob.close()


def test_the_web_address_warns_when_the_game_port_is_guarded_and_the_web_face_is_not() -> None:
    from server.cli import web_instructions

    open_lines = web_instructions(["192.0.2.7"], ("0.0.0.0", 8080))
    assert open_lines == ["Watch in a browser (read-only):", "    http://192.0.2.7:8080/"]
    guarded = web_instructions(["192.0.2.7"], ("0.0.0.0", 8080), guarded=True)
    assert guarded[:2] == open_lines and "plain HTTP and asks no password" in guarded[2]
    assert web_instructions(["192.0.2.7"], None, guarded=True) == []
