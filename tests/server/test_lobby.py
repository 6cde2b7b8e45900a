"""The handshake and the lobby, over real sockets against a real server.

Clients are either the async client library (:class:`client.Client`, through
the ``connect`` fixture) or raw asyncio connections speaking frames directly
(:class:`Raw`), for what the library cannot send (other versions, pipelined
requests, a second ``hello``).
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
from typing import Any, Awaitable, Callable

import pytest

import games
from client import Client
from client.connection import ServerError
from protocol import MAX_SERVER_FRAME_BYTES, PROTOCOL_VERSION, FrameDecoder, encode_frame
from protocol import messages as m
from server.app import Server
from server.net.limits import Limits

from .conftest import TIMEOUT_S, refused



# --- helpers ----------------------------------------------------------------------


async def events_until(client: Client, kind: type[m.Message], *, timeout_s: float = TIMEOUT_S) -> list[m.Message]:
    """Return every push up to and including the first of class ``kind``."""
    seen: list[m.Message] = []

    async def collect() -> None:
        async for event in client.events():
            seen.append(event)
            if isinstance(event, kind):
                return
        raise AssertionError(f"connection closed before a {kind.__name__}; got {seen}")

    await asyncio.wait_for(collect(), timeout_s)
    return seen


async def table_update(client: Client, table_id: int, predicate: Callable[[m.TableInfo], bool] = lambda t: True) -> m.TableInfo:
    """Return the first ``table_updated`` push about ``table_id`` that satisfies ``predicate``."""
    while True:
        event = await client.next_event((m.TableUpdated,), timeout_s=TIMEOUT_S)
        assert isinstance(event, m.TableUpdated)
        if event.table.id == table_id and predicate(event.table):
            return event.table


async def table_info(client: Client, table_id: int) -> m.TableInfo | None:
    for table in await client.list_tables():
        if table.id == table_id:
            return table
    return None


async def eventually(check: Callable[[], Awaitable[bool]], timeout_s: float = TIMEOUT_S) -> None:
    """Poll ``check`` until it holds (the server notices a disconnect asynchronously)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition never held")
        await asyncio.sleep(0.01)


# --- handshake ----------------------------------------------------------------------


async def test_welcome_lists_games_with_options_and_a_token(connect) -> None:
    ann = await connect("ann")
    welcome = ann.welcome
    assert welcome is not None
    assert welcome.protocol == PROTOCOL_VERSION
    assert welcome.server == "test"
    assert welcome.name == "ann" == ann.name
    assert isinstance(welcome.token, str) and welcome.token
    assert welcome.version
    names = [game["name"] for game in welcome.games]
    assert names == games.names()
    othello = next(game for game in welcome.games if game["name"] == "othello")
    assert othello["seats"] == ["Black", "White"]
    assert othello["uses_seed"] is False
    size = next(option for option in othello["options"] if option["name"] == "size")
    assert size == {"name": "size", "label": "Size", "type": "int", "default": 8, "min": 6, "max": 16, "doc": size["doc"]}
    assert size["doc"]


async def test_tokens_differ_between_sessions(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    assert ann.token != bob.token


async def test_unsupported_version_is_refused_and_the_connection_closes(raw) -> None:
    conn = await raw()
    await conn.send(type="hello", id=1, version=PROTOCOL_VERSION + 1, name="ann")
    frames = await conn.expect_closed()
    assert len(frames) == 1, frames
    assert frames[0]["type"] == "error"
    assert frames[0]["code"] == "unsupported_version"
    assert frames[0]["id"] == 1
    assert str(PROTOCOL_VERSION) in frames[0]["message"]


async def test_unsupported_version_does_not_take_the_name(raw, connect) -> None:
    conn = await raw()
    await conn.send(type="hello", id=1, version=99, name="ann")
    await conn.expect_closed()
    ann = await connect("ann")
    assert ann.name == "ann"


async def test_duplicate_name_is_refused(connect, server: Server) -> None:
    await connect("ann")
    with pytest.raises(ServerError) as info:
        await Client.connect("127.0.0.1", server.port, name="ann")
    assert info.value.code == "name_taken"
    assert "ann" in info.value.message


async def test_name_taken_leaves_the_connection_open_for_another_name(raw, connect) -> None:
    await connect("ann")
    conn = await raw()
    refused_reply = await conn.hello("ann")
    assert refused_reply["type"] == "error" and refused_reply["code"] == "name_taken"
    welcome = await conn.hello("ann2")
    assert welcome["type"] == "welcome" and welcome["name"] == "ann2"


async def test_name_is_freed_when_its_holder_disconnects(connect, server: Server) -> None:
    ann = await connect("ann")
    await ann.close()

    async def name_free() -> bool:
        try:
            again = await Client.connect("127.0.0.1", server.port, name="ann")
        except ServerError as exc:
            assert exc.code == "name_taken"
            return False
        await again.close()
        return True

    await eventually(name_free)


async def test_request_before_hello_needs_the_handshake(raw) -> None:
    conn = await raw()
    reply = await conn.request("list_tables")
    assert reply["type"] == "error"
    assert reply["code"] == "handshake_required"
    assert reply["id"] == 1
    # the connection stays usable: hello still works
    welcome = await conn.hello("ann")
    assert welcome["type"] == "welcome"
    tables = await conn.request("list_tables")
    assert tables["type"] == "tables" and tables["tables"] == []


async def test_ping_before_hello_needs_the_handshake(raw) -> None:
    conn = await raw()
    reply = await conn.request("ping")
    assert reply["code"] == "handshake_required"


async def test_second_hello_is_refused(raw, connect) -> None:
    conn = await raw()
    assert (await conn.hello("ann"))["type"] == "welcome"
    reply = await conn.hello("bob")
    assert reply["type"] == "error"
    assert reply["code"] == "handshake_required"
    assert reply["id"] == 2
    # still known as ann: "bob" is free, "ann" is not
    bob = await connect("bob")
    assert bob.name == "bob"
    with pytest.raises(ServerError) as info:
        await connect("ann")
    assert info.value.code == "name_taken"
    pong = await conn.request("ping")
    assert pong["type"] == "pong"


@pytest.mark.parametrize(
    "name",
    [
        "ann\x00",
        "a\tb",
        "ann\n",
        "\x1b[31mann",
        "ann\x7f",
        " ann",
        "ann ",
        "  ",
        "ann\u200b",  # zero-width space
        "ann\u00a0",  # no-break space
    ],
)
async def test_bad_names_are_refused(raw, name: str) -> None:
    conn = await raw()
    reply = await conn.hello(name)
    assert reply["type"] == "error", reply
    assert reply["code"] == "bad_name"
    # the handshake can be retried on the same connection
    assert (await conn.hello("fine name"))["type"] == "welcome"


@pytest.mark.parametrize("name", ["", "x" * 25])
async def test_empty_or_overlong_name_is_bad_name(raw, name: str) -> None:
    conn = await raw()
    reply = await conn.hello(name)
    assert reply["code"] == "bad_name"


async def test_empty_or_overlong_name_is_refused(raw) -> None:
    conn = await raw()
    for name in ("", "x" * 25):
        reply = await conn.hello(name)
        assert reply["type"] == "error" and reply["code"] in ("bad_name", "bad_message")
    assert (await conn.hello("x" * 24))["type"] == "welcome"


async def test_request_pipelined_behind_hello_is_answered(raw) -> None:
    conn = await raw()
    await conn.send_bytes(
        encode_frame({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "ann"})
        + encode_frame({"type": "ping", "id": 2})
    )
    assert (await conn.reply(1))["type"] == "welcome"
    assert (await conn.reply(2))["type"] == "pong"


async def test_second_pipelined_hello_is_refused(raw, connect) -> None:
    conn = await raw()
    await conn.send_bytes(
        encode_frame({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "ann"})
        + encode_frame({"type": "hello", "id": 2, "version": PROTOCOL_VERSION, "name": "bob"})
    )
    assert (await conn.reply(1))["type"] == "welcome"
    second = await conn.reply(2)
    assert second["type"] == "error" and second["code"] == "handshake_required"


# --- lobby: tables -----------------------------------------------------------------------


async def test_list_tables_is_empty_at_first(connect) -> None:
    ann = await connect("ann")
    assert await ann.list_tables() == []


async def test_create_table_with_options(connect) -> None:
    ann = await connect("ann")
    joined = await ann.create_table("othello", {"size": 10})
    assert joined.seat == 0
    assert joined.moves == []
    info = joined.table
    assert info.game == "othello"
    assert info.options == {"size": 10}
    assert info.seats == ["ann", None]
    assert info.status == "waiting"
    assert info.spectators == 0
    assert info.ply == 0
    assert joined.view["size"] == 10
    assert len(joined.view["board"]) == 10
    assert joined.view["ply"] == 0 and joined.view["to_move"] == 0
    assert joined.view == games.get("othello").new_state({"size": 10}).view(None)  # no moves before the game starts


async def test_list_tables_shows_every_table(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    cat = await connect("cat")
    first = (await ann.create_table("othello")).table.id
    second = (await bob.create_table("othello", {"size": 6}, seat=1)).table.id
    await cat.watch_table(first)
    tables = {table.id: table for table in await cat.list_tables()}
    assert set(tables) == {first, second}
    one, two = tables[first], tables[second]
    assert (one.game, one.options, one.seats, one.status, one.spectators, one.ply) == (
        "othello", {"size": 8}, ["ann", None], "waiting", 1, 0,
    )
    assert (two.game, two.options, two.seats, two.status, two.spectators, two.ply) == (
        "othello", {"size": 6}, [None, "bob"], "waiting", 0, 0,
    )
    assert one.outcome is None and two.outcome is None


async def test_create_without_sitting_makes_a_spectator(connect) -> None:
    ann = await connect("ann")
    joined = await ann.create_table("othello", seat=None)
    assert joined.seat is None
    assert joined.table.seats == [None, None]
    assert joined.table.spectators == 1
    assert "legal_moves" not in joined.view


async def test_unknown_game_lists_the_known_games(connect) -> None:
    ann = await connect("ann")
    error = await refused(ann.create_table("chess"), "unknown_game")
    assert "chess" in error.message
    for name in games.names():
        assert name in error.message
    assert await ann.list_tables() == []


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"colour": "red"}, ["colour"]),
        ({"size": "8"}, ["size", "'8'"]),
        ({"size": 8.0}, ["size"]),
        ({"size": True}, ["size"]),
        ({"size": 4}, ["size", "4"]),
        ({"size": 18}, ["size", "18"]),
        ({"size": 7}, ["size", "7"]),
        ({"size": 9}, ["size", "even"]),
    ],
)
async def test_bad_option_names_the_option(connect, options: dict[str, Any], words: list[str]) -> None:
    ann = await connect("ann")
    error = await refused(ann.create_table("othello", options), "bad_option")
    for word in words:
        assert word in error.message, error.message
    assert await ann.list_tables() == []


async def test_join_free_seat_starts_the_game(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    joined = await bob.join_table(table_id)
    assert joined.seat == 1
    assert joined.table.seats == ["ann", "bob"]
    assert joined.table.status == "playing"
    assert "legal_moves" not in joined.view  # Black moves first
    for client, seat in ((ann, 0), (bob, 1)):
        started = await client.next_event(m.GameStarted, timeout_s=TIMEOUT_S)
        assert isinstance(started, m.GameStarted)
        assert started.table == table_id
        assert started.seats == ["ann", "bob"]
        assert ("legal_moves" in started.view) == (seat == 0)


async def test_join_with_explicit_seat(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello", seat=1)).table.id
    joined = await bob.join_table(table_id, seat=0)
    assert joined.seat == 0
    assert joined.table.seats == ["bob", "ann"]
    assert "legal_moves" in joined.view


async def test_join_explicit_free_seat_on_an_empty_table(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello", seat=None)).table.id
    assert (await bob.join_table(table_id, seat=1)).seat == 1
    info = await table_info(ann, table_id)
    assert info is not None and info.seats == [None, "bob"] and info.status == "waiting"


async def test_join_a_taken_seat_is_table_full(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    error = await refused(bob.join_table(table_id, seat=0), "table_full")
    assert "Black" in error.message or "0" in error.message
    info = await table_info(bob, table_id)
    assert info is not None and info.seats == ["ann", None] and info.status == "waiting"


async def test_join_a_full_table_is_table_full(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    cat = await connect("cat")
    table_id = (await ann.create_table("othello")).table.id
    await bob.join_table(table_id)
    await refused(cat.join_table(table_id), "table_full")
    await refused(cat.join_table(table_id, seat=1), "table_full")
    info = await table_info(cat, table_id)
    assert info is not None and info.seats == ["ann", "bob"] and info.spectators == 0


async def test_join_twice_is_already_seated(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    await refused(ann.join_table(table_id), "already_seated")
    await refused(ann.join_table(table_id, seat=1), "already_seated")
    await bob.join_table(table_id)
    await refused(bob.join_table(table_id), "already_seated")
    info = await table_info(ann, table_id)
    assert info is not None and info.seats == ["ann", "bob"]


async def test_no_such_table(connect) -> None:
    ann = await connect("ann")
    for action in (ann.join_table(42), ann.watch_table(42), ann.leave_table(42), ann.move(42, "d3"), ann.resign(42)):
        error = await refused(action, "no_such_table")
        assert "42" in error.message


async def test_watch_a_table(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    joined = await bob.watch_table(table_id)
    assert joined.seat is None
    assert joined.table.spectators == 1
    assert joined.table.seats == ["ann", None]
    assert joined.moves == []
    assert "legal_moves" not in joined.view
    assert joined.view["board"] == games.get("othello").new_state().view(None)["board"]


async def test_watch_while_seated_is_already_seated(connect) -> None:
    ann = await connect("ann")
    table_id = (await ann.create_table("othello")).table.id
    await refused(ann.watch_table(table_id), "already_seated")
    info = await table_info(ann, table_id)
    assert info is not None and info.spectators == 0


async def test_spectator_may_take_a_seat(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    await bob.watch_table(table_id)
    joined = await bob.join_table(table_id)
    assert joined.seat == 1
    assert joined.table.spectators == 0
    await bob.leave_table(table_id)  # one leave takes bob away entirely
    await refused(bob.leave_table(table_id), "not_at_table")


async def test_leave_is_ok_and_frees_the_seat(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    await bob.watch_table(table_id)
    assert await ann.leave_table(table_id) is None
    info = await table_info(bob, table_id)
    assert info is not None and info.seats == [None, None] and info.status == "waiting"
    await refused(ann.leave_table(table_id), "not_at_table")


async def test_leave_a_table_you_are_not_at(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    error = await refused(bob.leave_table(table_id), "not_at_table")
    assert str(table_id) in error.message
    info = await table_info(bob, table_id)
    assert info is not None and info.seats == ["ann", None]


# --- lobby pushes ---------------------------------------------------------------------------


async def test_create_is_pushed_to_other_clients(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello", {"size": 6})).table.id
    info = await table_update(bob, table_id)
    assert info.game == "othello" and info.options == {"size": 6}
    assert info.seats == ["ann", None] and info.status == "waiting" and info.spectators == 0


async def test_join_and_watch_are_pushed_to_other_clients(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    cat = await connect("cat")
    dan = await connect("dan")
    table_id = (await ann.create_table("othello")).table.id
    await table_update(dan, table_id, lambda t: t.seats == ["ann", None])
    await bob.join_table(table_id)
    info = await table_update(dan, table_id, lambda t: t.seats == ["ann", "bob"])
    assert info.status == "playing"
    await cat.watch_table(table_id)
    info = await table_update(dan, table_id, lambda t: t.spectators == 1)
    assert info.seats == ["ann", "bob"]
    # the seated players hear it too
    await table_update(ann, table_id, lambda t: t.spectators == 1)
    await table_update(bob, table_id, lambda t: t.spectators == 1)


async def test_table_closed_when_the_last_person_leaves_a_waiting_table(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    cat = await connect("cat")
    table_id = (await ann.create_table("othello")).table.id
    await bob.watch_table(table_id)
    await ann.leave_table(table_id)
    info = await table_update(cat, table_id, lambda t: t.seats == [None, None])
    assert info.spectators == 1
    await bob.leave_table(table_id)
    closed = await cat.next_event(m.TableClosed, timeout_s=TIMEOUT_S)
    assert isinstance(closed, m.TableClosed) and closed.table == table_id
    assert await cat.list_tables() == []
    await refused(cat.join_table(table_id), "no_such_table")


async def test_table_closed_when_its_only_player_disconnects(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    table_id = (await ann.create_table("othello")).table.id
    await ann.close()
    closed = await bob.next_event(m.TableClosed, timeout_s=TIMEOUT_S)
    assert isinstance(closed, m.TableClosed) and closed.table == table_id
    assert await bob.list_tables() == []


async def test_pushes_go_only_to_clients_that_said_hello(raw, connect) -> None:
    conn = await raw()
    ann = await connect("ann")
    await ann.create_table("othello")
    await ann.ping()
    # a raw connection without hello gets nothing unprompted: its first frame is its own reply
    reply = await conn.request("ping")
    assert conn.inbox == collections.deque()
    assert reply["code"] == "handshake_required"


async def test_spectator_count(connect) -> None:
    ann = await connect("ann")
    bob = await connect("bob")
    cat = await connect("cat")
    table_id = (await ann.create_table("othello")).table.id

    async def spectators() -> int:
        info = await table_info(ann, table_id)
        assert info is not None
        return info.spectators

    assert await spectators() == 0
    await bob.watch_table(table_id)
    assert await spectators() == 1
    assert (await cat.watch_table(table_id)).table.spectators == 2
    await bob.watch_table(table_id)  # watching twice counts once
    assert await spectators() == 2
    await bob.leave_table(table_id)
    assert await spectators() == 1
    await cat.close()

    async def no_spectators() -> bool:
        return await spectators() == 0

    await eventually(no_spectators)


async def test_leave_reply_comes_before_its_pushes(raw) -> None:
    conn = await raw()
    await conn.hello("ann")
    await conn.request("watch_lobby")
    created = await conn.request("create_table", game="othello", options={}, seat=0)
    table_id = created["table"]["id"]
    assert (await conn.recv())["type"] == "table_updated"  # the create's own push
    await conn.send(type="leave_table", id=99, table=table_id)
    first = await conn.recv()
    assert first == {"type": "ok", "id": 99}


# --- a lobby that cannot be flooded ------------------------------------------------------

LONG_PIECES = "0" * 9993 + "5 3\nF 1"
"""A legal Tactego pieces file of 10,000 characters: leading zeros are dropped."""


async def test_long_option_texts_cannot_make_the_table_list_too_large(connect) -> None:
    honest = await connect("honest")
    flooders = [await connect("flood1"), await connect("flood2")]
    created = []
    for flooder in flooders:  # each within every per-client limit
        for _ in range(16):
            created.append(await flooder.create_table("tactego", {"pieces": LONG_PIECES}))
    assert created[0].table.options["pieces"] == LONG_PIECES  # those at the table get the full text
    tables = await honest.list_tables()  # every frame must fit the client's 262,144 bytes
    assert sorted(table.id for table in tables) == sorted(joined.table.id for joined in created)
    digest = hashlib.sha256(LONG_PIECES.encode()).hexdigest()[:16]
    assert all(table.options["pieces"] == {"length": 10000, "sha256": digest} for table in tables)
    await honest.ping()


async def test_tables_held_for_absent_players_cannot_make_the_table_list_too_large(configured_server) -> None:
    server = await configured_server(grace_s=30.0)  # tables outlive their creators for the grace period
    honest = await Client.connect("127.0.0.1", server.port, name="honest")
    created: set[int] = set()
    for number in range(45):
        try:
            flooder = await Client.connect("127.0.0.1", server.port, name=f"flood{number}")
        except ServerError as exc:
            assert exc.code == "too_many_connections" and "too many connection attempts" in exc.message, exc
            continue
        for _ in range(16):
            try:
                created.add((await flooder.create_table("nimble", seed="s" * 256)).table.id)
            except ServerError as exc:
                assert exc.code == "too_many_tables", exc
                break
        await flooder.close()
    tables = await honest.list_tables()  # every frame must fit the client's 262,144 bytes
    assert sorted(table.id for table in tables) == sorted(created)
    await honest.ping()
    await honest.close()


async def test_list_tables_pages_return_every_table_exactly_once(raw, connect) -> None:
    players = [await connect(f"p{number}") for number in range(4)]
    created = [(await players[n % 4].create_table("nimble")).table.id for n in range(23)]
    await players[1].leave_table(created[5])  # closed: gone from every page
    expected = sorted(set(created) - {created[5]})
    conn = await raw()
    conn.decoder = FrameDecoder(max_frame_bytes=MAX_SERVER_FRAME_BYTES)  # what every client must accept, and no more
    await conn.hello("lister")
    seen: list[int] = []
    after = None
    for _ in range(10):
        page = await conn.request("list_tables", after=after, limit=5)
        assert page["type"] == "tables" and len(page["tables"]) <= 5
        seen += [table["id"] for table in page["tables"]]
        if page["next"] is None:
            break
        assert page["next"] == seen[-1]
        after = page["next"]
    assert seen == expected
    first = await conn.request("list_tables")  # default: 50 a page, so all of them, and no next page
    assert [table["id"] for table in first["tables"]] == expected and first["next"] is None
    past_the_end = await conn.request("list_tables", after=expected[-1])
    assert past_the_end["tables"] == [] and past_the_end["next"] is None
    too_many = await conn.request("list_tables", limit=101)
    assert too_many["code"] == "bad_message" and too_many["field"] == "limit"
    assert sorted(t.id for t in await players[1].list_tables()) == expected  # the library pages for us


async def test_the_client_library_pages_through_a_large_lobby(configured_server) -> None:
    server = await configured_server(limits=Limits(max_tables_per_address=1000))
    players = [await Client.connect("127.0.0.1", server.port, name=f"p{number}") for number in range(8)]
    created = [(await players[n % 8].create_table("nimble")).table.id for n in range(120)]
    assert [t.id for t in await players[0].list_tables()] == created  # 100 a page: two pages
    page = await players[0].list_tables_page(after=created[99], limit=100)
    assert [t.id for t in page.tables] == created[100:] and page.next is None
    for player in players:
        await player.close()
