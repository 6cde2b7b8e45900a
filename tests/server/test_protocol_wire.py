"""The bytes the server sends where PROTOCOL.md says which keys are left out, and the ids it issues.

Over real sockets (and, for a restart, a real SQLite file): ``who`` leaves
out a player's default fields (§17.1), a seek and a challenge leave out
theirs (§3), a seated rating is ``[1484]`` or ``[1500, true]`` (§16), and no
id the server issues is above 2^53 - 1 (§3), the largest a JavaScript client
can read exactly.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Awaitable, Callable

import msgspec

from client import Client
from protocol import messages as m
from protocol import encode_frame as encode_frame_of
from protocol.codec import encode_message
from server.app import Server, ServerConfig
from server.core.names import name_key

from ..conftest import Connect
from .conftest import Raw, RawFactory, refused

# --- who, seeks and challenges leave default fields out (§3, §17) ------------------------


async def test_who_leaves_a_guests_default_fields_out(raw: RawFactory) -> None:
    ann = await raw()
    await ann.hello("ann")
    reply = await ann.request("who")
    assert reply["type"] == "players"
    assert reply["players"] == [{"name": "ann", "status": "idle"}]  # claimed false, bot false, rating nil: all left out


async def test_who_shows_a_bot_flag_only_when_it_is_set(raw: RawFactory) -> None:
    bot = await raw()
    await bot.request("hello", version=m.PROTOCOL_VERSION, name="deep", bot=True)
    [player] = (await bot.request("who"))["players"]
    assert player == {"name": "deep", "status": "idle", "bot": True}


async def test_a_seek_and_a_challenge_leave_their_default_fields_out(raw: RawFactory) -> None:
    ann, bob = await raw(), await raw()
    await ann.hello("ann")
    await bob.hello("bob")
    seek = (await ann.request("seek", game="othello"))["seek"]
    assert set(seek) == {"id", "name", "game", "options"}  # rated false, time control, ratings and bounds nil
    challenge = (await ann.request("challenge", name="bob", game="othello"))["challenge"]
    assert set(challenge) == {"id", "challenger", "challenged", "game", "options", "expires_in_s"}


# --- a seated rating on the wire (§16) -----------------------------------------------------


def _table_info(ratings: list[m.SeatRating | None]) -> m.TableInfo:
    return m.TableInfo(id=6, game="othello", options={"size": 8}, seats=["ann", "bob"], status="playing", spectators=0, ply=0, ratings=ratings)


def test_a_settled_rating_is_one_number_and_a_provisional_one_is_marked() -> None:
    frame = encode_message(m.TableUpdated(table=_table_info([m.SeatRating(rating=1484), m.SeatRating(rating=1500, provisional=True)])))
    body = msgspec.msgpack.decode(frame[4:])
    assert body["table"]["ratings"] == [[1484], [1500, True]]
    assert m.to_wire(m.TableUpdated(table=_table_info([m.SeatRating(rating=1484), None])))["table"]["ratings"] == [[1484], None]


def test_seated_ratings_read_back_as_sent_and_malformed_ones_are_refused() -> None:
    wire = m.to_wire(m.TableUpdated(table=_table_info([m.SeatRating(rating=1484), m.SeatRating(rating=1500, provisional=True)])))
    assert m.parse_server_message(wire).table.ratings == [m.SeatRating(rating=1484), m.SeatRating(rating=1500, provisional=True)]
    wire["table"]["ratings"] = [[1484, False], None]  # an older server's form still reads
    assert m.parse_server_message(wire).table.ratings == [m.SeatRating(rating=1484), None]
    for bad in ([], [1484, 1], ["1484"], [1484, True, 3], 1484, [True]):
        wire["table"]["ratings"] = [bad, None]
        try:
            m.parse_server_message(wire)
        except m.MessageError as exc:
            assert exc.field == "table.ratings[0]", exc
        else:
            raise AssertionError(f"{bad!r} was accepted")


# --- ids stay below 2^53 (§3) -----------------------------------------------------------------


async def test_the_server_issues_no_table_id_above_2_53_minus_1(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    config = ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=str(db))
    server = Server(config)
    await server.start()
    try:
        ann = await Client.connect("127.0.0.1", server.port, name="ann")
        bob = await Client.connect("127.0.0.1", server.port, name="bob")
        await ann.create_table("othello")
        await bob.join_table(1)
        await ann.resign(1)  # over, archived, no moves
        await ann.close()
        await bob.close()
    finally:
        await server.close()
    with sqlite3.connect(db) as connection:  # as if the server had handed out every id but the last
        connection.execute("UPDATE tables SET id = ? WHERE id = 1", (m.MAX_ID,))
    connection.close()
    server = Server(config)
    await server.start()
    try:
        cat = await Client.connect("127.0.0.1", server.port, name="cat")
        try:
            assert "2^53-1" in (await refused(cat.create_table("othello"), "internal_error")).message
            assert await cat.list_tables() == []  # nothing was created
            assert [game["id"] for game in await cat.list_archive()] == [m.MAX_ID]
        finally:
            await cat.close()
    finally:
        await server.close()


async def test_no_challenge_or_seek_id_above_2_53_minus_1(server: Server, connect: Connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    server.social.challenges.next_id = itertools.count(m.MAX_ID).__next__  # as if all the others had been handed out
    server.social.seeks.next_id = itertools.count(m.MAX_ID).__next__
    assert (await ann.challenge("bob", "othello")).id == m.MAX_ID
    assert (await ann.seek("nimble")).seek.id == m.MAX_ID
    for request in (ann.challenge("bob", "hexapawn"), bob.seek("hexapawn")):
        assert "2^53-1" in (await refused(request, "internal_error")).message
    assert [seek.id for seek in (await bob.list_seeks()).seeks] == [m.MAX_ID]


# --- statements PROTOCOL.md makes, each checked over a real socket ------------------------------

DECIDED = {"rows": 4, "cols": 4, "pieces": "F 1\n"}
"""A Tactego setup that leaves Red (seat 0) no move: over before the first move."""


async def test_a_decided_tactego_setup_known_at_creation_cannot_be_sat_at(raw: RawFactory) -> None:
    ann = await raw()
    await ann.hello("ann")
    for request in ({"options": {**DECIDED, "hidden": False}}, {"options": DECIDED, "seed": "abc"}):
        reply = await ann.request("create_table", game="tactego", **request)
        assert (reply["type"], reply["code"]) == ("error", "game_over") and "seat null" in reply["message"], reply
    watched = await ann.request("create_table", game="tactego", options=DECIDED, seed="abc", seat=None)
    assert watched["table"]["status"] == "over"


async def test_a_decided_secret_tactego_setup_waits_and_ends_as_play_starts(raw: RawFactory) -> None:
    ann, bob = await raw(), await raw()
    await ann.hello("ann")
    await bob.hello("bob")
    created = await ann.request("create_table", game="tactego", options=DECIDED)  # hidden, no seed: dealt when bob sits
    assert (created["type"], created["table"]["status"], created["seat"]) == ("table_joined", "waiting", 0)
    joined = await bob.request("join_table", table=created["table"]["id"])
    assert joined["type"] == "table_joined" and joined["seat"] == 1
    for conn in (ann, bob):
        pushes = [frame["type"] for frame in await conn.sync()]
        assert pushes == ["game_started", "game_over"], pushes


async def test_a_resume_without_bot_clears_the_bot_flag(raw: RawFactory) -> None:
    first, second = await raw(), await raw()
    welcome = await first.request("hello", version=m.PROTOCOL_VERSION, name="deep", bot=True)
    assert (await first.request("who"))["players"] == [{"name": "deep", "status": "idle", "bot": True}]
    resumed = await second.request("hello", version=m.PROTOCOL_VERSION, name="deep", token=welcome["token"])
    assert resumed["resumed"] is True
    assert (await second.request("who"))["players"] == [{"name": "deep", "status": "idle"}]


async def test_a_players_other_seeks_vanish_when_one_of_theirs_pairs(raw: RawFactory) -> None:
    ann, bob, cat = await raw(), await raw(), await raw()
    for conn, name in ((ann, "ann"), (bob, "bob"), (cat, "cat")):
        await conn.hello(name)
    await ann.request("seek", game="othello")
    await ann.request("seek", game="nimble")
    await bob.request("seek", game="hexapawn")
    paired = await bob.request("seek", game="othello")
    assert paired["paired"] is True
    assert (await cat.request("list_seeks"))["seeks"] == []  # ann's nimble and bob's hexapawn seeks are gone too


async def test_tell_and_challenge_find_a_name_whatever_its_case_or_width(raw: RawFactory) -> None:
    ann, bob = await raw(), await raw()
    await ann.hello("ann")
    await bob.hello("Bob")
    assert (await ann.request("tell", name="BOB", text="hi"))["type"] == "ok"
    assert (await ann.request("challenge", name="ｂｏｂ", game="othello"))["type"] == "challenge_sent"
    pushes = await bob.sync()
    assert [frame["type"] for frame in pushes] == ["told", "challenge_received"]
    assert pushes[1]["challenge"]["challenged"] == "Bob"


async def test_invalid_utf8_is_a_fatal_framing_error_after_the_requests_before_it(raw: RawFactory) -> None:
    ann = await raw()
    await ann.hello("ann")
    bad = b"\x83\xa4type\xa3say\xa2id\x02\xa4text\xa2\xff\xfe"  # say with a str that is not UTF-8
    await ann.send_bytes(encode_frame_of({"type": "ping", "id": 1}) + len(bad).to_bytes(4, "big") + bad)
    frames = await ann.expect_closed()
    assert [(f["type"], f.get("code"), "id" in f) for f in frames] == [("pong", None, True), ("error", "bad_frame", False)]


async def test_which_errors_name_a_field(raw: RawFactory) -> None:
    ann, bob = await raw(), await raw()
    assert "field" not in await ann.request("hello", version=m.PROTOCOL_VERSION, name="a\tb")  # bad_name in hello: no field
    await ann.hello("ann")
    await bob.hello("bob")
    named = {
        ("create_table", "unknown_game", None): {"game": "chess"},
        ("challenge", "unknown_game", "game"): {"name": "bob", "game": "chess"},
        ("who", "unknown_game", "game"): {"game": "chess"},
        ("leaderboard", "unknown_game", "game"): {"game": "chess"},
        ("tell", "no_such_player", "name"): {"name": "zed", "text": "hi"},
        ("mute", "bad_name", "name"): {"name": " "},
        ("finger", "bad_name", "name"): {"name": " "},
        ("unseek", "no_such_seek", "seek"): {"seek": 9},
        ("decline_challenge", "no_such_challenge", "challenge"): {"challenge": 9},
        ("create_table", "bad_option", "options.size"): {"game": "othello", "options": {"size": 7}},
        ("join_table", "no_such_table", None): {"table": 9},
        ("seek", "unknown_game", "game"): {"game": "chess"},
        ("tell", "bad_request", "name"): {"name": "ANN", "text": "hi"},
        ("mute", "bad_request", "name"): {"name": "ann"},
    }
    for (kind, code, field), fields in named.items():
        reply = await ann.request(kind, **fields)
        assert (reply["code"], reply.get("field")) == (code, field), (kind, reply)


RATINGS = [  # name, game, family, rating, deviation: a deviation above 110 is provisional
    ("Ann", "othello", "untimed", 1484, 60),
    ("Ann", "othello", "blitz", 1700, 200),
    ("Ann", "nimble", "rapid", 1800, 70),
    ("Bob", "othello", "untimed", 1550, 300),
]


def _seed_ratings(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        for name, game, family, rating, deviation in RATINGS:
            connection.execute(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, 0.06, 10, 10, 0, 0, ?)",
                (name_key(name), name, game, family, rating, deviation, time.time()),
            )
    connection.close()


async def _raw_to(server: Server, name: str) -> Raw:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    conn = Raw(reader, writer)
    assert (await conn.hello(name))["type"] == "welcome"
    return conn


async def test_ratings_as_a_table_who_finger_and_leaderboard_send_them(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    config = ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=str(db))
    server = Server(config)
    await server.start()
    await server.close()  # the file now has the schema
    _seed_ratings(db)
    server = Server(config)
    await server.start()
    clients = [await Client.connect("127.0.0.1", server.port, name=name, claim=True, secret=secrets.token_urlsafe(32)) for name in ("Ann", "Bob")]
    cat = await _raw_to(server, "cat")
    try:
        ann, bob = clients
        table = (await ann.create_table("othello", rated=True)).table.id
        await bob.join_table(table)
        watched = await cat.request("watch_table", table=table)
        assert watched["table"]["ratings"] == [[1484], [1550, True]]  # settled: one number; provisional: marked
        who = {p["name"]: p for p in (await cat.request("who"))["players"]}  # each player's best in any game and family
        assert who["Ann"] == {"name": "Ann", "status": "playing", "claimed": True, "rating": 1800, "deviation": 70, "rating_game": "nimble"}
        assert who["cat"] == {"name": "cat", "status": "watching"}
        who = {p["name"]: p for p in (await cat.request("who", game="othello"))["players"]}  # best in othello, provisional included
        assert (who["Ann"]["rating"], who["Ann"]["rating_game"], who["Bob"]["rating"]) == (1700, "othello", 1550)
        finger = await cat.request("finger", name="ann")
        assert [(r["game"], r["family"]) for r in finger["ratings"]] == [("nimble", "rapid"), ("othello", "blitz"), ("othello", "untimed")]
        ranking = await cat.request("leaderboard", game="othello", provisional=True)
        assert ranking["family"] is None and "family" in ranking  # each player's best family; each row names it
        assert [(r["name"], r["family"], r["rating"]) for r in ranking["rows"]] == [("Ann", "blitz", 1700), ("Bob", "untimed", 1550)]
    finally:
        await cat.close()
        for client in clients:
            await client.close()
        await server.close()


async def test_the_computers_thinking_time_is_a_cap_not_a_wait(configured_server: Callable[..., Awaitable[Server]]) -> None:
    server = await configured_server(bot_seconds=60.0, bot_workers=1)  # level 5 may think for up to a minute
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    try:
        started = time.monotonic()
        await ann.create_table("nimble", {"board": [0, 0, 1]}, seat=1, computer={0: 5})
        moved = await ann.next_event(m.Moved, timeout_s=20.0)  # one pawn, two squares: solved at once
        assert isinstance(moved, m.Moved) and moved.seat == 0
        assert time.monotonic() - started < 20.0
    finally:
        await ann.close()


async def test_a_mute_stops_tells_but_not_chat(raw: RawFactory) -> None:
    ann, bob = await raw(), await raw()
    await ann.hello("ann")
    await bob.hello("bob")
    await ann.request("watch_lobby")
    assert (await ann.request("mute", name="BOB"))["type"] == "ok"
    assert (await bob.request("tell", name="ann", text="psst"))["type"] == "ok"  # dropped, as on FICS
    assert (await bob.request("say", text="hello all"))["type"] == "ok"
    assert [(f["type"], f.get("text")) for f in await ann.sync()] == [("chat", "hello all")]


async def test_every_game_has_a_computer_player(raw: RawFactory) -> None:
    ann = await raw()
    welcome = await ann.hello("ann")
    names = [game["name"] for game in welcome["games"]]
    assert sorted(names) == ["hexapawn", "mingmang", "morris", "nimble", "othello", "tactego"]
    for name in names:  # hints need a computer player: "no computer player for GAME" otherwise
        reply = await ann.request("create_table", game=name, hints=True, seat=None)
        assert reply["type"] == "table_joined" and reply["table"]["hints"] is True, reply
        await ann.request("leave_table", table=reply["table"]["id"])
