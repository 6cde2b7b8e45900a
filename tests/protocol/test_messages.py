"""Message schemas: ``to_wire``, ``parse_request`` and ``parse_server_message``.

Every request and server message round-trips; every field refuses wrong types
and out-of-range values with a :class:`MessageError` naming the field and
echoing the request ``id`` when it could be read.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import PROTOCOL_VERSION, Code, MessageError, parse_request, parse_server_message, to_wire
from protocol import messages as m

# --- samples: at least one of every type -----------------------------------------------------

TABLE = m.TableInfo(
    id=3,
    game="othello",
    options={"size": 8},
    seats=["ann", None],
    status="waiting",
    spectators=1,
    ply=0,
    seed="5eed",
    outcome=None,
)
VIEW = {"game": "othello", "ply": 0, "to_move": 0, "outcome": None, "board": ["." * 8] * 8, "legal_moves": ["d3"]}

REQUESTS: list[m.Message] = [
    m.Hello(id=1, version=PROTOCOL_VERSION, name="ann"),
    m.Hello(id=2, version=7, name="bob", token="t" * 128, password="secret"),
    m.ListTables(id=3),
    m.ListTables(id=3, after=17, limit=100),
    m.WatchLobby(id=4),
    m.WatchLobby(id=4, watch=False),
    m.CreateTable(id=4, game="othello"),
    m.CreateTable(id=5, game="nimble", options={"board": [1, 2, 3], "n": None}, seed="abc", seat=1),
    m.CreateTable(id=6, game="tactego", seed=-(2**63), seat=None),
    m.JoinTable(id=7, table=1),
    m.JoinTable(id=8, table=m.MAX_ID, seat=0),
    m.WatchTable(id=9, table=1),
    m.LeaveTable(id=10, table=1),
    m.PlayMove(id=11, table=1, move="d3"),
    m.PlayMove(id=12, table=1, move="x" * 64, ply=0),
    m.Resign(id=13, table=1),
    m.AbortGame(id=13, table=1),
    m.Offer(id=14, table=1, kind="draw"),
    m.Offer(id=15, table=1, kind="takeback", plies=3),
    m.Answer(id=16, table=1, kind="rematch", accept=True),
    m.Say(id=17, text="hello"),
    m.Say(id=18, text="gg", table=2),
    m.ListArchive(id=19),
    m.ListArchive(id=20, limit=10, offset=30),
    m.GetRecord(id=21, table=5),
    m.GetRecord(id=21, table=5, format="ggf"),
    m.CreateTable(id=22, game="othello", time_control="5+3"),
    m.Ping(id=0),
    m.Ping(id=m.MAX_ID),
    m.Identify(id=1),
    m.Hello(id=23, version=PROTOCOL_VERSION, name="botty", bot=True),
    m.Hello(id=26, version=PROTOCOL_VERSION, name="ann", secret="s" * 256, claim=True),
    m.SetPassword(id=27, password="correct horse"),
    m.SetPassword(id=28, password=None),
    m.SetPassword(id=29, password="correct horse", current="old password"),
    m.ChangeSecret(id=30, current="the old secret", secret="the new secret of 43 characters"),
    m.MuteGuests(id=31),
    m.MuteGuests(id=32, mute=False),
    m.CreateTable(id=24, game="nimble", seat=0, computer=[m.ComputerSeat(seat=1, level=5)], hints=True),
    m.CreateTable(id=25, game="nimble", seat=None, computer=[m.ComputerSeat(seat=0, level=1), m.ComputerSeat(seat=1, level=5)]),
    m.AskHint(id=26, table=4),
    m.Who(id=27),
    m.Who(id=28, game="othello", sort="rating", offset=100, limit=100),
    m.Challenge(id=29, name="bob", game="nimble", options={"board": [1, 2]}, seat=1, time_control="5+3", rated=True),
    m.AcceptChallenge(id=30, challenge=1),
    m.DeclineChallenge(id=31, challenge=2),
    m.WithdrawChallenge(id=32, challenge=3),
    m.Seek(id=33, game="othello", time_control="3+2", rated=True, rating_min=1400, rating_max=1800),
    m.Unseek(id=34),
    m.Unseek(id=35, seek=4),
    m.ListSeeks(id=36, after=4, limit=10),
    m.Tell(id=37, name="bob", text="hi"),
    m.Mute(id=38, name="bob", mute=False),
    m.ListMutes(id=39),
    m.CreateTable(id=27, game="othello", time_control="5+3", rated=True),
    m.Finger(id=28, name="ann"),
    m.GetLeaderboard(id=29, game="othello"),
    m.GetLeaderboard(id=30, game="othello", family="blitz", limit=50, offset=100, provisional=True),
]

CHALLENGE = m.ChallengeInfo(id=1, challenger="ann", challenged="bob", game="othello", options={"size": 8}, seat=0, time_control="5+3",
                            expires_in_s=59.5)
SEEK = m.SeekInfo(id=2, name="ann", game="othello", options={"size": 8}, time_control="5+3", rating=1500, rating_min=1400)

SERVER_MESSAGES: list[m.Message] = [
    m.Welcome(id=1, protocol=1, server="test", version="0.1.0", name="ann", token="tok", games=[{"name": "othello"}]),
    m.Ok(id=2),
    m.Pong(id=3),
    m.Tables(id=4, tables=[], next=None),
    m.Tables(id=5, tables=[TABLE, m.TableInfo(id=4, game="nimble", options={}, seats=["a", "b"], status="over",
                                              spectators=0, ply=9, seed=12, outcome={"winner": 1, "reason": "r", "score": None})], next=4),
    m.TableJoined(id=6, table=TABLE, seat=0, view=VIEW, moves=[]),
    m.TableJoined(id=7, table=TABLE, seat=None, view=VIEW, moves=["d3", "c5"]),
    m.Error(code=Code.BAD_FRAME, message="bad"),
    m.Error(id=8, code=Code.BAD_MESSAGE, message="bad id", field="id"),
    m.TableUpdated(table=TABLE),
    m.TableClosed(table=3),
    m.Moved(table=3, seat=0, move="d3", ply=1, view=VIEW),
    m.Moved(table=3, seat=1, move="pass", ply=2, view=VIEW, forced=True),
    m.GameStarted(table=3, seats=["ann", "bob"], view=VIEW),
    m.GameOver(table=3, outcome={"winner": None, "reason": "more discs", "score": [32, 32]}),
    m.Welcome(id=9, protocol=1, server="s", version="v", name="ann", token="new", games=[], resumed=True),
    m.Resumed(table=TABLE, seat=1, view=VIEW, moves=["d3"]),
    m.Resumed(table=TABLE, seat=None, view=VIEW, moves=[]),
    m.PlayerAway(table=3, seat=1, name="bob", forfeit_in_s=60.0),
    m.PlayerBack(table=3, seat=1, name="bob"),
    m.Offered(table=3, seat=0, kind="takeback", plies=2),
    m.Answered(table=3, kind="draw", accepted=False, lapsed=True),
    m.TakenBack(table=3, plies=2, view=VIEW, moves=["d3"], clock={"remaining_ms": [1000, 2000], "running": 1, "control": "5+3"}),
    m.RematchStarted(previous=3, table=TABLE, seat=1, view=VIEW),
    m.Chat(name="ann", text="hi"),
    m.Chat(name="ann", text="gg", table=3),
    m.Archive(id=10, games=[{"id": 1, "game": "othello", "plies": 60}]),
    m.Record(id=11, text="Game: othello\n"),
    m.Record(id=12, text="(;GM[Othello];)\n", format="ggf"),
    m.Shutdown(message="bye"),
    m.Heartbeat(),
    m.Welcome(id=1, protocol=1, server="t", version="1", name="ann", token="tok", games=[], heartbeat_s=15.0, idle_timeout_s=45.0),
    m.Welcome(id=2, protocol=2, server="t", version="1", name="ann", token="tok", games=[], claimed=True, accounts="required"),
    m.TableUpdated(table=m.TableInfo(id=5, game="nimble", options={}, seats=["ann", "Computer 5"], status="playing", spectators=0,
                                     ply=0, computer=[None, 5], hints=True, bots=[True, False])),
    m.Hint(id=12, table=5, ply=3, move="1:2"),
    m.Players(id=13, players=[m.PlayerInfo(name="ann", status="playing", claimed=True, rating=1612, deviation=80, rating_game="othello"),
                              m.PlayerInfo(name="bob", status="away")], total=2, next=None),
    m.ChallengeSent(id=14, challenge=CHALLENGE),
    m.SeekPosted(id=15, seek=SEEK, paired=True),
    m.Seeks(id=16, seeks=[SEEK], next=2),
    m.ChallengeReceived(challenge=CHALLENGE),
    m.ChallengeEnded(challenge=1, reason="declined"),
    m.Paired(table=TABLE, seat=1, view=VIEW, moves=[], challenge=1),
    m.SeekAdded(seek=SEEK),
    m.SeekRemoved(seek=2),
    m.Told(name="ann", text="hi"),
    m.MutedNames(id=17, names=["bob", "cat"]),
    m.TokenRenewed(id=7, token="fresh"),
    m.TableUpdated(table=m.TableInfo(id=6, game="othello", options={}, seats=["ann", None], status="waiting", spectators=0,
                                     ply=0, ratings=[m.SeatRating(rating=1662, provisional=True), None])),
    m.GameOver(table=6, outcome={"winner": 0, "reason": "resigned", "score": None},
               ratings=[m.RatingChange(before=1500, after=1662, deviation=290), m.RatingChange(before=1500, after=1338, deviation=290)]),
    m.Player(id=13, name="Ann", online=True,
                 ratings=[m.RatingInfo(game="othello", family="blitz", rating=1662, deviation=290, provisional=True, games=1, wins=1, draws=0, losses=0)],
                 recent=[m.PastGame(table=6, game="othello", family="blitz", opponent="bob", result="win", before=1500, after=1662,
                                    finished="2026-11-24T00:10:00.000Z")]),
    m.Ranking(id=14, game="othello", family=None, rows=[
        m.RankingRow(rank=1, name="Ann", family="blitz", rating=1662, deviation=80, provisional=False, games=30)], next=None),
    m.Identity(id=15, server_id="k3JQ2vXh7sPq9wLm", server="den"),
    m.Welcome(id=1, protocol=2, server="den", version="0.1.0", name="ann", token="t", games=[], server_id="k3JQ2vXh7sPq9wLm", grace_s=60.0),
]


def _tag(cls: type[m.Message]) -> str:
    return cls.__struct_config__.tag  # type: ignore[return-value]


def test_long_option_texts_are_summarized_by_length_and_digest() -> None:
    text = "é" * 65
    summary = m.summarize_options({"pieces": text, "position": "p" * 64, "size": 8, "board": [1] * 100, "hidden": True})
    assert summary == {
        "pieces": {"length": 65, "sha256": hashlib.sha256(text.encode()).hexdigest()[:16]},
        "position": "p" * 64,  # at the bound: kept
        "size": 8,
        "board": [1] * 100,
        "hidden": True,
    }


def test_protocol_constants() -> None:
    assert PROTOCOL_VERSION == 2
    assert m.MAX_TABLES_PAGE == 100 and m.SUMMARY_CHARS == 64
    assert m.MAX_NAME_CHARS == 24
    assert m.MAX_MOVE_CHARS == 64
    assert m.MAX_TOKEN_CHARS == 128


def test_wire_type_names() -> None:
    assert [_tag(c) for c in m.REQUEST_TYPES] == [
        "hello", "list_tables", "watch_lobby", "create_table", "join_table", "watch_table", "leave_table", "move", "resign",
        "abort", "offer", "answer", "say", "list_archive", "get_record", "ping", "hint", "set_password",
        "who", "challenge", "accept_challenge", "decline_challenge", "withdraw_challenge", "seek", "unseek", "list_seeks", "tell", "mute",
        "list_mutes", "finger", "leaderboard", "identify", "change_secret", "mute_guests",
    ]
    assert [_tag(c) for c in m.SERVER_TYPES] == [
        "welcome", "ok", "pong", "tables", "table_joined", "error",
        "table_updated", "table_closed", "moved", "game_started", "game_over",
        "resumed", "player_away", "player_back", "offered", "answered", "taken_back", "rematch_started",
        "chat", "archive", "record", "shutdown", "heartbeat", "hint",
        "players", "challenge_sent", "seek_posted", "seeks", "challenge_received", "challenge_ended", "paired", "seek_added",
        "seek_removed", "told", "mutes",
        "player", "ranking", "identity", "token_renewed",
    ]


def test_samples_cover_every_type() -> None:
    assert {type(r) for r in REQUESTS} == set(m.REQUEST_TYPES)
    assert {type(s) for s in SERVER_MESSAGES} == set(m.SERVER_TYPES)


# --- to_wire: golden maps -----------------------------------------------------------------


def test_hello_wire_map_golden() -> None:
    wire = to_wire(m.Hello(id=1, version=1, name="ann"))
    assert wire == {"type": "hello", "id": 1, "version": 1, "name": "ann"}
    assert list(wire) == ["type", "id", "version", "name"]  # type first, then declaration order


def test_defaults_are_omitted_on_the_wire() -> None:
    assert to_wire(m.CreateTable(id=1, game="othello")) == {"type": "create_table", "id": 1, "game": "othello"}
    assert to_wire(m.JoinTable(id=1, table=2)) == {"type": "join_table", "id": 1, "table": 2}
    assert to_wire(m.PlayMove(id=1, table=2, move="d3")) == {"type": "move", "id": 1, "table": 2, "move": "d3"}
    assert to_wire(m.Error(code="bad_frame", message="x")) == {"type": "error", "code": "bad_frame", "message": "x"}
    assert "forced" not in to_wire(m.Moved(table=1, seat=0, move="d3", ply=1, view={}))
    assert "resumed" not in to_wire(m.Welcome(id=1, protocol=1, server="s", version="v", name="n", token="t", games=[]))


def test_non_default_none_is_sent_as_nil() -> None:
    # create_table's seat defaults to 0, so "do not sit" must be sent explicitly as nil.
    wire = to_wire(m.CreateTable(id=1, game="othello", seat=None))
    assert wire == {"type": "create_table", "id": 1, "game": "othello", "seat": None}
    # table_joined.seat and TableInfo fields have no default: always present.
    joined = to_wire(m.TableJoined(id=1, table=TABLE, seat=None, view={}, moves=[]))
    assert joined["seat"] is None
    assert joined["table"]["outcome"] is None and "seed" in joined["table"]


def test_error_wire_map_golden() -> None:
    wire = to_wire(m.Error(id=7, code=Code.NO_SUCH_TABLE, message="there is no table 9", field="table"))
    assert wire == {"type": "error", "code": "no_such_table", "message": "there is no table 9", "id": 7, "field": "table"}
    assert list(wire) == ["type", "code", "message", "id", "field"]


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: _tag(type(r)))
def test_every_request_round_trips(request_: m.Message) -> None:
    wire = to_wire(request_)
    assert wire["type"] == _tag(type(request_))
    assert parse_request(wire) == request_


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda s: _tag(type(s)))
def test_every_server_message_round_trips(message: m.Message) -> None:
    wire = to_wire(message)
    assert wire["type"] == _tag(type(message))
    assert parse_server_message(wire) == message


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: _tag(type(r)))
def test_a_request_is_not_a_server_message(request_: m.Message) -> None:
    with pytest.raises(MessageError) as info:
        parse_server_message(to_wire(request_))
    if _tag(type(request_)) == "hint":  # the reply to ``hint`` is a ``hint`` too: the request lacks its fields
        assert info.value.field in ("ply", "move")
        return
    assert info.value.field == "type"
    assert "unknown message type" in info.value.message


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda s: _tag(type(s)))
def test_a_server_message_is_not_a_request(message: m.Message) -> None:
    if _tag(type(message)) == "hint":  # a request of the same name: the reply's extra fields are ignored
        assert parse_request(to_wire(message)) == m.AskHint(id=message.id, table=message.table)  # type: ignore[attr-defined]
        return
    with pytest.raises(MessageError) as info:
        parse_request(to_wire(message))
    assert info.value.field == "type"
    assert info.value.request_id == getattr(message, "id", None)


def test_unknown_fields_are_ignored() -> None:
    wire = {"type": "move", "id": 1, "table": 2, "move": "d3", "future": {"nested": [1, 2]}, "x": None}
    assert parse_request(wire) == m.PlayMove(id=1, table=2, move="d3")
    pushed = {"type": "table_closed", "table": 4, "reason": "empty"}
    assert parse_server_message(pushed) == m.TableClosed(table=4)


def test_nil_means_absent_for_optional_fields() -> None:
    wire = {"type": "hello", "id": 1, "version": 1, "name": "ann", "token": None, "password": None}
    assert parse_request(wire) == m.Hello(id=1, version=1, name="ann")
    assert parse_request({"type": "move", "id": 1, "table": 1, "move": "d3", "ply": None}).ply is None
    assert parse_request({"type": "join_table", "id": 1, "table": 1, "seat": None}).seat is None
    assert parse_request({"type": "create_table", "id": 1, "game": "g", "seed": None}).seed is None


def test_create_table_seat_defaults_to_zero_and_nil_means_watch() -> None:
    assert parse_request({"type": "create_table", "id": 1, "game": "othello"}).seat == 0
    assert parse_request({"type": "create_table", "id": 1, "game": "othello", "seat": None}).seat is None


def test_bounds_are_inclusive() -> None:
    assert parse_request({"type": "ping", "id": 2**53 - 1}).id == 2**53 - 1
    assert parse_request({"type": "hello", "id": 0, "version": 1, "name": "n" * 256}).name == "n" * 256
    assert parse_request({"type": "move", "id": 1, "table": 1, "move": "m" * 64, "ply": 0}).move == "m" * 64
    created = parse_request({"type": "create_table", "id": 1, "game": "g" * 32, "seed": 2**63 - 1,
                             "options": {str(i): i for i in range(32)}})
    assert created.seed == 2**63 - 1 and len(created.options) == 32
    assert parse_request({"type": "create_table", "id": 1, "game": "g", "seed": "s" * 256}).seed == "s" * 256


def test_name_limit_counts_characters_not_bytes() -> None:
    name = "é" * 256  # 512 bytes of UTF-8
    assert parse_request({"type": "hello", "id": 1, "version": 1, "name": name}).name == name


# --- refusals --------------------------------------------------------------------------------

HELLO = {"type": "hello", "id": 5, "version": 1, "name": "ann"}
CREATE = {"type": "create_table", "id": 5, "game": "othello"}
JOIN = {"type": "join_table", "id": 5, "table": 1}
MOVE = {"type": "move", "id": 5, "table": 1, "move": "d3"}


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


BAD_FIELDS = [
    # (map, field named, fragment of the explanation)
    # -- id
    (_with(HELLO, id="5"), "id", "Expected `int`, got `str`"),
    (_with(HELLO, id=True), "id", "Expected `int`, got `bool`"),
    (_with(HELLO, id=5.0), "id", "Expected `int`, got `float`"),
    (_with(HELLO, id=None), "id", "Expected `int`, got `null`"),
    (_with(HELLO, id=-1), "id", ">= 0"),
    (_with(HELLO, id=2**53), "id", "<= 9007199254740991"),
    # -- version
    (_with(HELLO, version="1"), "version", "Expected `int`, got `str`"),
    (_with(HELLO, version=True), "version", "Expected `int`, got `bool`"),
    (_with(HELLO, version=1.0), "version", "Expected `int`, got `float`"),
    # -- name
    (_with(HELLO, name=5), "name", "Expected `str`, got `int`"),
    (_with(HELLO, name=b"ann"), "name", "Expected `str`, got `bytes`"),
    (_with(HELLO, name=None), "name", "Expected `str`, got `null`"),
    (_with(HELLO, name="n" * 257), "name", "length <= 256"),
    # -- token / password
    (_with(HELLO, token=5), "token", "Expected `str | null`, got `int`"),
    (_with(HELLO, token="t" * 129), "token", "length <= 128"),
    (_with(HELLO, password="p" * 257), "password", "length <= 256"),
    # -- game
    (_with(CREATE, game=1), "game", "Expected `str`, got `int`"),
    (_with(CREATE, game=""), "game", "length >= 1"),
    (_with(CREATE, game="g" * 33), "game", "length <= 32"),
    # -- options
    (_with(CREATE, options=[]), "options", "Expected `object`, got `array`"),
    (_with(CREATE, options="size=8"), "options", "Expected `object`, got `str`"),
    (_with(CREATE, options=None), "options", "Expected `object`, got `null`"),
    (_with(CREATE, options={str(i): i for i in range(33)}), "options", "length <= 32"),
    # -- seed
    (_with(CREATE, seed=1.5), "seed", "got `float`"),
    (_with(CREATE, seed=True), "seed", "got `bool`"),
    (_with(CREATE, seed=[1]), "seed", "got `array`"),
    (_with(CREATE, seed="s" * 257), "seed", "length <= 256"),
    (_with(CREATE, seed=2**63), "seed", "<= 9223372036854775807"),
    # -- seat
    (_with(CREATE, seat=2), "seat", "<= 1"),
    (_with(CREATE, seat=-1), "seat", ">= 0"),
    (_with(CREATE, seat="0"), "seat", "got `str`"),
    (_with(JOIN, seat=True), "seat", "got `bool`"),
    (_with(JOIN, seat="1"), "seat", "got `str`"),
    # -- table
    (_with(JOIN, table="8"), "table", "Expected `int`, got `str`"),
    (_with(JOIN, table=True), "table", "Expected `int`, got `bool`"),
    (_with(JOIN, table=1.0), "table", "Expected `int`, got `float`"),
    (_with(JOIN, table=0), "table", ">= 1"),
    (_with(JOIN, table=None), "table", "got `null`"),
    ({"type": "watch_table", "id": 5, "table": "1"}, "table", "got `str`"),
    ({"type": "leave_table", "id": 5, "table": -3}, "table", ">= 1"),
    ({"type": "resign", "id": 5, "table": [1]}, "table", "got `array`"),
    # -- list_tables paging
    ({"type": "list_tables", "id": 5, "limit": 0}, "limit", ">= 1"),
    ({"type": "list_tables", "id": 5, "limit": 101}, "limit", "<= 100"),
    ({"type": "list_tables", "id": 5, "after": -1}, "after", ">= 0"),
    ({"type": "list_tables", "id": 5, "after": "3"}, "after", "got `str`"),
    # -- move / ply
    (_with(MOVE, move=4), "move", "Expected `str`, got `int`"),
    (_with(MOVE, move=""), "move", "length >= 1"),
    (_with(MOVE, move="m" * 65), "move", "length <= 64"),
    (_with(MOVE, move=["d3"]), "move", "got `array`"),
    (_with(MOVE, ply=-1), "ply", ">= 0"),
    (_with(MOVE, ply="8"), "ply", "got `str`"),
    (_with(MOVE, ply=False), "ply", "got `bool`"),
]


@pytest.mark.parametrize(("wire", "field", "fragment"), BAD_FIELDS, ids=[f"{w['type']}.{f}-{i}" for i, (w, f, _) in enumerate(BAD_FIELDS)])
def test_bad_field_is_named(wire: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(MessageError) as info:
        parse_request(wire)
    error = info.value
    assert error.code is Code.BAD_MESSAGE
    assert error.fatal is False
    assert error.field == field
    assert f"field {field!r}" in error.message
    assert fragment in error.message
    assert error.message.startswith(f"bad {wire['type']!r} message: ")
    expected_id = wire["id"] if type(wire["id"]) is int else None
    assert error.request_id == expected_id


@pytest.mark.parametrize(
    ("wire", "missing"),
    [
        ({"type": "hello", "id": 1, "version": 1}, "name"),
        ({"type": "hello", "id": 1, "name": "ann"}, "version"),
        ({"type": "hello", "version": 1, "name": "ann"}, "id"),
        ({"type": "list_tables"}, "id"),
        ({"type": "create_table", "id": 1}, "game"),
        ({"type": "join_table", "id": 1}, "table"),
        ({"type": "watch_table", "id": 1}, "table"),
        ({"type": "leave_table", "id": 1}, "table"),
        ({"type": "move", "id": 1, "table": 1}, "move"),
        ({"type": "move", "id": 1, "move": "d3"}, "table"),
        ({"type": "resign", "id": 1}, "table"),
        ({"type": "ping"}, "id"),
    ],
)
def test_missing_required_field_is_named(wire: dict[str, Any], missing: str) -> None:
    with pytest.raises(MessageError) as info:
        parse_request(wire)
    assert info.value.field == missing
    assert f"missing required field `{missing}`" in info.value.message
    assert info.value.request_id == wire.get("id")


def test_missing_field_of_a_server_message_is_named() -> None:
    with pytest.raises(MessageError) as info:
        parse_server_message({"type": "moved", "table": 1, "seat": 0, "move": "d3", "view": {}})
    assert info.value.field == "ply"


def test_nested_bad_field_has_a_path() -> None:
    table = {**to_wire(m.TableUpdated(table=TABLE))["table"], "spectators": "1"}
    with pytest.raises(MessageError) as info:
        parse_server_message({"type": "table_updated", "table": table})
    assert info.value.field == "table.spectators"
    bad = {**to_wire(m.Tables(id=9, tables=[TABLE], next=None))}
    bad["tables"] = [{**bad["tables"][0], "seats": [1, None]}]
    with pytest.raises(MessageError) as info:
        parse_server_message(bad)
    assert info.value.field == "tables[0].seats[0]"
    assert info.value.request_id == 9


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ({"id": 3}, "message has no 'type' field"),
        ({"type": None, "id": 3}, "message has no 'type' field"),
        ({"type": "launch_missiles", "id": 3}, "unknown message type 'launch_missiles'"),
        ({"type": "HELLO", "id": 3}, "unknown message type 'HELLO'"),
        ({"type": 1, "id": 3}, "unknown message type 1"),
        ({"type": ["hello"], "id": 3}, "unknown message type ['hello']"),
        ({"type": b"hello", "id": 3}, "unknown message type b'hello'"),
        ({"type": "welcome", "id": 3}, "unknown message type 'welcome'"),
    ],
)
def test_missing_or_unknown_type(wire: dict[str, Any], fragment: str) -> None:
    with pytest.raises(MessageError) as info:
        parse_request(wire)
    assert info.value.field == "type"
    assert info.value.message == fragment
    assert info.value.request_id == 3


def test_request_id_is_echoed_only_when_it_is_an_int() -> None:
    # -1 is out of range but readable, so it is echoed (the reply's id is then -1).
    cases = [(5, 5), (0, 0), ("5", None), (True, None), (5.0, None), (None, None), ([5], None), (-1, -1)]
    for given_id, echoed in cases:
        with pytest.raises(MessageError) as info:
            parse_request({"type": "move", "id": given_id, "table": 1})
        assert info.value.request_id == echoed, given_id


def test_unknown_type_still_echoes_the_id() -> None:
    with pytest.raises(MessageError) as info:
        parse_request({"type": "nope", "id": 77})
    assert info.value.request_id == 77


def test_non_text_keys_inside_options_are_refused() -> None:
    with pytest.raises(MessageError) as info:
        parse_request({**CREATE, "options": {b"size": 8}})
    assert info.value.code is Code.BAD_MESSAGE
    assert "options" in info.value.message
    assert info.value.request_id == 5


def test_bin_keys_at_the_top_are_a_message_error_not_a_crash() -> None:
    # decode_body lets bin keys through (see test_framing); the schema then refuses them.
    with pytest.raises(MessageError) as info:
        parse_request({"type": "ping", "id": 1, b"extra": 1})
    assert info.value.request_id == 1


def test_server_message_field_errors() -> None:
    with pytest.raises(MessageError) as info:
        parse_server_message({"type": "moved", "table": 1, "seat": 0, "move": "d3", "ply": 1, "view": {}, "forced": 1})
    assert info.value.field == "forced"
    with pytest.raises(MessageError) as info:
        parse_server_message({"type": "error", "code": 3, "message": "x"})
    assert info.value.field == "code"
    with pytest.raises(MessageError) as info:
        parse_server_message({"type": "game_over", "table": 1, "outcome": [0]})
    assert info.value.field == "outcome"


# --- properties --------------------------------------------------------------------------------

_ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
_leaves = st.none() | st.booleans() | _ints | st.floats() | st.text(max_size=30) | st.binary(max_size=10)
msgpack_values = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=12,
)
FIELD_NAMES = ["type", "id", "version", "name", "token", "password", "game", "options", "seed", "seat", "table", "move", "ply"]
TAGS = [_tag(c) for c in m.REQUEST_TYPES + m.SERVER_TYPES] + ["", "nope"]
field_values = msgpack_values | _ints | st.integers(min_value=-3, max_value=3) | st.sampled_from(TAGS)
candidate_maps = st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=5), field_values, max_size=8)
typed_maps = st.builds(lambda d, t: {**d, "type": t}, candidate_maps, st.sampled_from(TAGS))


@settings(max_examples=500, deadline=None)
@given(wire=candidate_maps | typed_maps)
def test_any_map_parses_or_raises_message_error(wire: dict[str, Any]) -> None:
    try:
        request = parse_request(wire)
    except MessageError as exc:
        assert exc.code is Code.BAD_MESSAGE
        assert exc.request_id is None or exc.request_id == wire.get("id")
        assert exc.field is None or isinstance(exc.field, str)
    else:
        assert isinstance(request, m.REQUEST_TYPES)
        assert request.id == wire["id"]
        assert to_wire(request)["type"] == wire["type"]


@settings(max_examples=300, deadline=None)
@given(wire=candidate_maps | typed_maps)
def test_any_map_parses_as_server_message_or_raises_message_error(wire: dict[str, Any]) -> None:
    try:
        message = parse_server_message(wire)
    except MessageError as exc:
        assert exc.code is Code.BAD_MESSAGE
    else:
        assert isinstance(message, m.SERVER_TYPES)


request_ids = st.integers(min_value=0, max_value=m.MAX_ID)
table_ids = st.integers(min_value=1, max_value=m.MAX_ID)
seats = st.none() | st.integers(min_value=0, max_value=1)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=10,
)
REQUEST_STRATEGIES: dict[type[m.Message], st.SearchStrategy[m.Message]] = {
    m.Hello: st.builds(m.Hello, id=request_ids, version=st.integers(min_value=-(2**63), max_value=2**64 - 1), name=st.text(max_size=256),
                       token=st.none() | st.text(max_size=128), password=st.none() | st.text(max_size=256), bot=st.booleans(),
                       secret=st.none() | st.text(max_size=256), claim=st.booleans()),
    m.WatchLobby: st.builds(m.WatchLobby, id=request_ids, watch=st.booleans()),
    m.ListTables: st.builds(m.ListTables, id=request_ids, after=st.none() | st.integers(min_value=0, max_value=m.MAX_ID),
                            limit=st.integers(min_value=1, max_value=100)),
    m.CreateTable: st.builds(
        m.CreateTable, id=request_ids, game=st.text(min_size=1, max_size=32),
        options=st.dictionaries(st.text(max_size=10), json_like, max_size=32),
        seed=st.none() | st.text(max_size=256) | st.integers(min_value=-(2**63), max_value=2**63 - 1), seat=seats,
        computer=st.lists(st.builds(m.ComputerSeat, seat=st.integers(-(2**31), 2**31), level=st.integers(-(2**31), 2**31)), max_size=2),
        hints=st.booleans(), rated=st.booleans()),
    m.JoinTable: st.builds(m.JoinTable, id=request_ids, table=table_ids, seat=seats),
    m.WatchTable: st.builds(m.WatchTable, id=request_ids, table=table_ids),
    m.LeaveTable: st.builds(m.LeaveTable, id=request_ids, table=table_ids),
    m.PlayMove: st.builds(m.PlayMove, id=request_ids, table=table_ids, move=st.text(min_size=1, max_size=64),
                          ply=st.none() | st.integers(min_value=0, max_value=2**63 - 1)),
    m.Resign: st.builds(m.Resign, id=request_ids, table=table_ids),
    m.AbortGame: st.builds(m.AbortGame, id=request_ids, table=table_ids),
    m.Offer: st.builds(m.Offer, id=request_ids, table=table_ids, kind=st.sampled_from(["draw", "takeback", "rematch"]),
                       plies=st.integers(min_value=1, max_value=10_000)),
    m.Answer: st.builds(m.Answer, id=request_ids, table=table_ids, kind=st.sampled_from(["draw", "takeback", "rematch"]),
                        accept=st.booleans()),
    m.Say: st.builds(m.Say, id=request_ids, text=st.text(min_size=1, max_size=500), table=st.none() | table_ids),
    m.ListArchive: st.builds(m.ListArchive, id=request_ids, limit=st.integers(min_value=1, max_value=200),
                             offset=st.integers(min_value=0, max_value=2**31)),
    m.GetRecord: st.builds(m.GetRecord, id=request_ids, table=table_ids, format=st.sampled_from(["text", "ggf"])),
    m.Ping: st.builds(m.Ping, id=request_ids),
    m.Identify: st.builds(m.Identify, id=request_ids),
    m.AskHint: st.builds(m.AskHint, id=request_ids, table=table_ids),
    m.SetPassword: st.builds(
        m.SetPassword, id=request_ids, password=st.none() | st.text(max_size=256), current=st.none() | st.text(max_size=256)
    ),
    m.ChangeSecret: st.builds(m.ChangeSecret, id=request_ids, current=st.text(max_size=256), secret=st.text(max_size=256)),
    m.MuteGuests: st.builds(m.MuteGuests, id=request_ids, mute=st.booleans()),
    m.Who: st.builds(m.Who, id=request_ids, game=st.none() | st.text(min_size=1, max_size=32), sort=st.sampled_from(["name", "rating"]),
                     offset=st.integers(min_value=0, max_value=2**31), limit=st.integers(min_value=1, max_value=100)),
    m.Challenge: st.builds(m.Challenge, id=request_ids, name=st.text(max_size=256), game=st.text(min_size=1, max_size=32),
                           options=st.dictionaries(st.text(max_size=10), json_like, max_size=32), seat=seats,
                           time_control=st.none() | st.text(max_size=32), rated=st.booleans()),
    m.AcceptChallenge: st.builds(m.AcceptChallenge, id=request_ids, challenge=table_ids),
    m.DeclineChallenge: st.builds(m.DeclineChallenge, id=request_ids, challenge=table_ids),
    m.WithdrawChallenge: st.builds(m.WithdrawChallenge, id=request_ids, challenge=table_ids),
    m.Seek: st.builds(m.Seek, id=request_ids, game=st.text(min_size=1, max_size=32),
                      options=st.dictionaries(st.text(max_size=10), json_like, max_size=32), time_control=st.none() | st.text(max_size=32),
                      rated=st.booleans(), rating_min=st.none() | st.integers(0, 10_000), rating_max=st.none() | st.integers(0, 10_000)),
    m.Unseek: st.builds(m.Unseek, id=request_ids, seek=st.none() | table_ids),
    m.ListSeeks: st.builds(m.ListSeeks, id=request_ids, after=st.none() | st.integers(min_value=0, max_value=m.MAX_ID),
                           limit=st.integers(min_value=1, max_value=100)),
    m.Tell: st.builds(m.Tell, id=request_ids, name=st.text(max_size=256), text=st.text(min_size=1, max_size=500)),
    m.Mute: st.builds(m.Mute, id=request_ids, name=st.text(max_size=256), mute=st.booleans()),
    m.ListMutes: st.builds(m.ListMutes, id=request_ids),
    m.Finger: st.builds(m.Finger, id=request_ids, name=st.text(max_size=256)),
    m.GetLeaderboard: st.builds(m.GetLeaderboard, id=request_ids, game=st.text(min_size=1, max_size=32),
                                family=st.none() | st.sampled_from(["bullet", "blitz", "rapid", "classical", "untimed"]),
                                limit=st.integers(min_value=1, max_value=50), offset=st.integers(min_value=0, max_value=10_000),
                                provisional=st.booleans()),
}
valid_requests = st.one_of(*REQUEST_STRATEGIES.values())


@settings(max_examples=300, deadline=None)
@given(request=valid_requests)
def test_any_valid_request_round_trips(request: m.Message) -> None:
    assert parse_request(to_wire(request)) == request


def test_valid_request_strategy_covers_every_type() -> None:
    assert set(REQUEST_STRATEGIES) == set(m.REQUEST_TYPES)


mutated_requests = st.builds(
    lambda request, key, value: {**to_wire(request), key: value},
    valid_requests,
    st.sampled_from(FIELD_NAMES) | st.text(max_size=5),
    field_values,
)


@settings(max_examples=500, deadline=None)
@given(wire=mutated_requests)
def test_a_valid_request_with_one_field_replaced_parses_or_names_an_error(wire: dict[str, Any]) -> None:
    try:
        request = parse_request(wire)
    except MessageError as exc:
        assert exc.code is Code.BAD_MESSAGE
        assert exc.field is not None, exc.message  # one bad field: it is always named
        assert exc.request_id == (wire["id"] if type(wire.get("id")) is int else None)
    else:
        assert to_wire(request)["type"] == wire["type"]
        assert request.id == wire["id"]


def test_a_hellos_repr_hides_its_password_and_secret() -> None:
    hello = m.Hello(id=1, version=PROTOCOL_VERSION, name="ann", password="server pass", secret="the secret", claim=True)
    text = repr(hello)
    assert "server pass" not in text and "the secret" not in text and str(hello) == text
    assert "name='ann'" in text and "secret=<hidden>" in text and "claim=True" in text
    assert "password=None" in repr(m.Hello(id=1, version=2, name="ann"))
