"""Only the player holding a seat can act for it: every refusal, tried from a second connection.

Over real sockets against the in-process server. The scene (:func:`scene`):
ann (Black) and bob (White) play Othello at one table, cat watches it, dan is
connected but at no table, and eve sits as White at another table (fay is
Black there) whose position mirrors the first: d3 played, White to move at
ply 1. So the intruder from the other table holds the very seat, and the very
turn, that he tries to use; only the table tells him apart.

After every refusal a test checks the exact error code and that nothing
changed: both tables look the same in ``list_tables``, no connection got a
push about either table or an error it did not ask for, and the real player
can still do what the intruder could not.

Covered elsewhere, so not repeated here: a move from a spectator, a stranger
or a player of another table, a resign from a spectator or a stranger, a
leave by a stranger (``test_play.py``: ``test_spectator_moving_is_not_seated``,
``test_player_of_another_table_moving_here_is_not_seated``,
``test_resign_by_spectator_is_not_seated``, ``test_refusals_change_nothing``);
moving out of turn (``test_play.py::test_move_out_of_turn``); offering a draw
or a takeback twice, a rematch before the end (``test_controls.py``); an
unknown token, a token resumed again and again, a lost ``welcome``, the
``signed_in_elsewhere`` notice of a takeover (``test_reconnect.py``); ``handshake_required`` for
``list_tables``, ``ping`` and a second ``hello`` (``test_lobby.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from typing import Any, Awaitable, Callable

import pytest

import games
from client import Client
from protocol import PROTOCOL_VERSION
from protocol import messages as m
from server.app import Server

from ..conftest import Connect
from .conftest import TIMEOUT_S, Raw, RawFactory, refused

BLACK_AFTER_D3_C3 = games.get("othello").new_state().play("d3").play("c3").legal_moves()[0]

ROLES = {"spectator": "cat", "stranger": "dan", "other_table": "eve", "offerer": "ann"}
INTRUDERS = ["spectator", "stranger", "other_table"]
KINDS = ["draw", "takeback", "rematch"]


# --- the scene ---------------------------------------------------------------------------


@dataclasses.dataclass
class Scene:
    ann: Client
    bob: Client
    cat: Client
    dan: Client
    eve: Client
    fay: Client
    table: int  # ann (Black) vs bob (White), watched by cat
    other: int  # fay (Black) vs eve (White)

    @property
    def everyone(self) -> list[Client]:
        """Every client still connected."""
        clients = [self.ann, self.bob, self.cat, self.dan, self.eve, self.fay]
        return [client for client in clients if not client.closed.is_set()]

    def actor(self, role: str) -> Client:
        return getattr(self, ROLES[role])


async def scene(connect: Connect, *, over: bool = False) -> Scene:
    """The scene above; ``over``: ann and fay have resigned, both games are over."""
    ann, bob, cat, dan, eve, fay = [await connect(name) for name in ("ann", "bob", "cat", "dan", "eve", "fay")]
    s = Scene(ann, bob, cat, dan, eve, fay, await _d3_played(ann, bob, cat), await _d3_played(fay, eve))
    if over:
        await ann.resign(s.table)
        await fay.resign(s.other)
    await settle_all(s)
    return s


async def _d3_played(black: Client, white: Client, *spectators: Client) -> int:
    table = (await black.create_table("othello")).table.id
    for spectator in spectators:
        await spectator.watch_table(table)
    await white.join_table(table)
    await black.move(table, "d3", ply=0)
    return table


# --- observing -----------------------------------------------------------------------------

_markers = itertools.count()


async def settle(client: Client) -> list[m.Message]:
    """Every push ``client`` got until now: it says a marker in the lobby and reads up to its own line."""
    marker = f"marker {next(_markers)}"
    await client.say(marker)
    events: list[m.Message] = []
    while True:
        event = await client.next_event(timeout_s=TIMEOUT_S)
        if isinstance(event, m.Chat) and event.text == marker:
            return events
        events.append(event)


async def settle_all(s: Scene) -> None:
    for client in s.everyone:
        await settle(client)


def _tables_of(event: m.Message) -> set[int]:
    ids = set()
    for name in ("table", "previous"):
        value = getattr(event, name, None)
        ids.add(value.id if isinstance(value, m.TableInfo) else value)
    return ids - {None}


def noise(events: list[m.Message], *tables: int) -> list[m.Message]:
    """The events about any of ``tables``, and any error that answers no request."""
    return [event for event in events if isinstance(event, m.Error) or _tables_of(event) & set(tables)]


async def next_about(client: Client, table: int) -> m.Message:
    """The next push about ``table`` (others skipped)."""
    while True:
        event = await client.next_event(timeout_s=TIMEOUT_S)
        if table in _tables_of(event):
            return event


async def lobby(client: Client) -> dict[int, m.TableInfo]:
    return {table.id: table for table in await client.list_tables()}


async def assert_untouched(s: Scene, before: dict[int, m.TableInfo]) -> None:
    """Both tables as they were, and nobody heard of either of them since the last settle."""
    assert await lobby(s.dan) == before
    for client in s.everyone:
        assert noise(await settle(client), s.table, s.other) == [], client.name


async def play_on(s: Scene) -> None:
    """bob plays c3 at ply 1, as he could before; the players still connected see it."""
    await s.bob.move(s.table, "c3", ply=1)
    for client in (s.ann, s.bob):
        if not client.closed.is_set():
            moved = await next_about(client, s.table)
            assert isinstance(moved, m.Moved) and (moved.seat, moved.move, moved.ply) == (1, "c3", 2), moved


def hello(conn: Raw, name: str, token: str) -> Awaitable[dict[str, Any]]:
    return conn.request("hello", version=PROTOCOL_VERSION, name=name, token=token)


async def resumed(client: Client) -> m.Resumed:
    """The ``resumed`` push a resuming client gets first."""
    event = await client.next_event(m.Resumed, timeout_s=TIMEOUT_S)
    assert isinstance(event, m.Resumed)
    return event


# --- offers and answers ----------------------------------------------------------------------


@pytest.mark.parametrize("role", INTRUDERS)
@pytest.mark.parametrize("kind", KINDS)
async def test_offer_without_a_seat_is_not_seated(connect: Connect, kind: str, role: str) -> None:
    s = await scene(connect, over=kind == "rematch")
    before = await lobby(s.dan)
    await refused(s.actor(role).offer(s.table, kind), "not_seated")
    await assert_untouched(s, before)
    # no offer was recorded for any seat: nothing for anyone to answer at either table
    for player, table in ((s.ann, s.table), (s.bob, s.table), (s.fay, s.other)):
        await refused(player.answer(table, kind, True), "bad_action")
    if kind != "rematch":
        await play_on(s)


@pytest.mark.parametrize("role", [*INTRUDERS, "offerer"])
@pytest.mark.parametrize("accept", [True, False], ids=["accept", "decline"])
@pytest.mark.parametrize("kind", KINDS)
async def test_only_the_opponent_answers_an_offer(connect: Connect, kind: str, accept: bool, role: str) -> None:
    s = await scene(connect, over=kind == "rematch")
    await s.ann.offer(s.table, kind)
    await settle_all(s)
    before = await lobby(s.dan)
    code = "bad_action" if role == "offerer" else "not_seated"
    await refused(s.actor(role).answer(s.table, kind, accept), code)
    await assert_untouched(s, before)
    await s.bob.answer(s.table, kind, False)  # the offer still waits for bob
    for client in (s.ann, s.bob, s.cat):
        assert await next_about(client, s.table) == m.Answered(table=s.table, kind=kind, accepted=False)
    if kind != "rematch":
        await play_on(s)


# --- resign, leave, chat ----------------------------------------------------------------------


@pytest.mark.parametrize(("action", "code"), [("resign", "not_seated"), ("leave_table", "not_at_table")])
async def test_a_player_of_another_table_cannot_resign_or_leave_here(connect: Connect, action: str, code: str) -> None:
    s = await scene(connect)
    before = await lobby(s.dan)
    await refused(getattr(s.eve, action)(s.table), code)
    await assert_untouched(s, before)
    await play_on(s)
    await s.eve.move(s.other, "c3", ply=1)  # her own seat is untouched too


async def test_a_spectator_leaving_takes_only_himself_away(connect: Connect) -> None:
    s = await scene(connect)
    await s.cat.leave_table(s.table)
    for client in (s.ann, s.bob):
        [update] = noise(await settle(client), s.table)
        assert isinstance(update, m.TableUpdated)
        info = update.table
        assert (info.seats, info.status, info.ply, info.spectators) == (["ann", "bob"], "playing", 1, 0)
    await refused(s.cat.leave_table(s.table), "not_at_table")
    await play_on(s)


@pytest.mark.parametrize("role", ["stranger", "other_table", "former_spectator"])
async def test_table_chat_from_outside_reaches_nobody(connect: Connect, role: str) -> None:
    s = await scene(connect)
    speaker = s.cat if role == "former_spectator" else s.actor(role)
    if role == "former_spectator":
        await s.cat.leave_table(s.table)
        await settle_all(s)
    before = await lobby(s.dan)
    await refused(speaker.say("psst", s.table), "not_at_table")
    await assert_untouched(s, before)


@pytest.mark.parametrize("way", ["left", "namesake"])
async def test_a_seat_given_up_is_nobodys(connect: Connect, way: str) -> None:
    """bob's seat at a finished game, once given up, is neither his nor a new "bob"'s."""
    s = await scene(connect, over=True)
    if way == "left":
        await s.bob.leave_table(s.table)
    else:
        await s.bob.close()  # a finished game's seat is given up at once, and the name freed
    assert isinstance(await next_about(s.ann, s.table), m.TableUpdated)
    if way == "namesake":
        s.bob = await connect("bob")
    await s.ann.offer(s.table, "rematch")
    await settle_all(s)
    before = await lobby(s.dan)
    assert before[s.table].seats == ["ann", "bob"]  # the name stays on the finished game
    attempts = [
        (s.bob.offer(s.table, "rematch"), "not_seated"),
        (s.bob.answer(s.table, "rematch", True), "not_seated"),
        (s.bob.answer(s.table, "rematch", False), "not_seated"),
        (s.bob.move(s.table, "c3"), "not_seated"),
        (s.bob.resign(s.table), "not_seated"),
        (s.bob.say("gg", s.table), "not_at_table"),
        (s.bob.leave_table(s.table), "not_at_table"),
        (s.bob.join_table(s.table), "game_over"),
    ]
    for attempt, code in attempts:
        await refused(attempt, code)
    await assert_untouched(s, before)


# --- tokens ----------------------------------------------------------------------------------

GUESSES: dict[str, Callable[[str], str]] = {
    "made up": lambda token: "A" * len(token),
    "last character changed": lambda token: token[:-1] + ("B" if token.endswith("A") else "A"),
    "one character short": lambda token: token[:-1],
    "one character more": lambda token: token + "A",
    "case swapped": str.swapcase,
}


@pytest.mark.parametrize("guess", list(GUESSES.values()), ids=list(GUESSES))
async def test_a_guessed_token_is_bad_token(connect: Connect, raw: RawFactory, guess: Callable[[str], str]) -> None:
    s = await scene(connect)
    token = s.ann.token
    assert guess(token) != token
    before = await lobby(s.dan)
    conn = await raw()
    reply = await hello(conn, "ann", guess(token))
    assert (reply["type"], reply["code"]) == ("error", "bad_token"), reply
    assert (await conn.hello("mallory"))["type"] == "welcome"  # the connection may still say hello
    await assert_untouched(s, before)
    await play_on(s)
    await s.ann.move(s.table, BLACK_AFTER_D3_C3, ply=2)
    back = await connect("ann", token=token)
    assert back.welcome is not None and back.welcome.resumed  # her token was not spent


@pytest.mark.parametrize("name", ["mallory", "bob"])
@pytest.mark.parametrize("owner", ["connected", "away"])
async def test_a_token_with_another_name_is_bad_token(connect: Connect, raw: RawFactory, server: Server, owner: str, name: str) -> None:
    s = await scene(connect)
    token = s.ann.token
    if owner == "away":
        server.config = dataclasses.replace(server.config, grace_s=30.0)
        await s.ann.close()
        assert isinstance(await next_about(s.bob, s.table), m.PlayerAway)
        await settle_all(s)
    before = await lobby(s.dan)
    conn = await raw()
    reply = await hello(conn, name, token)
    assert (reply["type"], reply["code"]) == ("error", "bad_token"), reply
    await assert_untouched(s, before)  # no player_back, no takeover notice
    assert s.ann.closed.is_set() == (owner == "away")
    await play_on(s)
    back = await resumed(await connect("ann", token=token))  # the real owner still can
    assert (back.table.id, back.seat, back.moves) == (s.table, 0, ["d3", "c3"])


async def test_a_resume_takes_over_only_its_own_session(connect: Connect, raw: RawFactory) -> None:
    s = await scene(connect)
    before = await lobby(s.dan)
    old_token, first = s.ann.token, s.ann
    s.ann = await connect("ann", token=old_token)
    assert s.ann.welcome is not None and s.ann.welcome.resumed and s.ann.token == old_token
    notice = await first.next_event(m.Error, timeout_s=TIMEOUT_S)
    assert isinstance(notice, m.Error) and (notice.code, notice.id) == ("signed_in_elsewhere", None)
    await asyncio.wait_for(first.closed.wait(), TIMEOUT_S)
    back = await resumed(s.ann)
    assert (back.table.id, back.seat, back.moves) == (s.table, 0, ["d3"])
    for client in (s.bob, s.cat):
        assert noise(await settle(client), s.table, s.other) == [m.PlayerBack(table=s.table, seat=0, name="ann")]
    for client in (s.ann, s.dan, s.eve, s.fay):  # one resumed only, and nobody else disturbed
        assert noise(await settle(client), s.table, s.other) == [], client.name
    assert await lobby(s.dan) == before
    await play_on(s)
    await s.ann.move(s.table, BLACK_AFTER_D3_C3, ply=2)
    conn = await raw()
    again = await hello(conn, "ann", old_token)  # the token lives as long as the session: it takes over again
    assert (again["type"], again["resumed"], again["token"]) == ("welcome", True, old_token), again
    notice = await s.ann.next_event(m.Error, timeout_s=TIMEOUT_S)
    assert (notice.code, notice.id) == ("signed_in_elsewhere", None)
    bob = await resumed(await connect("bob", token=s.bob.token))  # bob's token was not touched
    assert (bob.table.id, bob.seat) == (s.table, 1)


async def test_a_connection_cannot_switch_to_another_session(connect: Connect, raw: RawFactory) -> None:
    s = await scene(connect)
    conn = await raw()
    await conn.hello("mallory")
    before = await lobby(s.dan)
    assert (await hello(conn, "bob", s.bob.token))["code"] == "handshake_required"
    # still mallory: as bob, this move would be legal
    assert (await conn.request("move", table=s.table, move="c3", ply=1))["code"] == "not_seated"
    await assert_untouched(s, before)
    assert not s.bob.closed.is_set()
    await play_on(s)


# --- raw frames ------------------------------------------------------------------------------


def table_requests(table: int) -> list[dict[str, Any]]:
    """One well-formed request of every type that names a table."""
    return [
        {"type": "move", "table": table, "move": "c3", "ply": 1},
        {"type": "resign", "table": table},
        {"type": "offer", "table": table, "kind": "draw"},
        {"type": "answer", "table": table, "kind": "draw", "accept": True},
        {"type": "leave_table", "table": table},
        {"type": "say", "table": table, "text": "hi"},
        {"type": "join_table", "table": table},
        {"type": "watch_table", "table": table},
        {"type": "get_record", "table": table},
    ]


async def test_table_actions_before_hello_are_handshake_required(connect: Connect, raw: RawFactory) -> None:
    s = await scene(connect)
    conn = await raw()
    before = await lobby(s.dan)
    for request in [*table_requests(s.table), {"type": "create_table", "game": "othello"}]:
        reply = await conn.request(**request)
        assert (reply["type"], reply["code"]) == ("error", "handshake_required"), request
    await assert_untouched(s, before)


@pytest.mark.parametrize("table", [-1, 0, 2**53, 2**53 + 1, 2**64 - 1, -(2**63)])
async def test_table_id_out_of_range_is_bad_message(raw: RawFactory, table: int) -> None:
    conn = await raw()
    await conn.hello("mallory")
    for request in table_requests(table):
        reply = await conn.request(**request)
        assert (reply["code"], reply.get("field")) == ("bad_message", "table"), (request, reply)
    assert (await conn.request("list_tables"))["tables"] == []


@pytest.mark.parametrize("which", ["largest id", "closed"])
async def test_table_that_does_not_exist_is_no_such_table(connect: Connect, raw: RawFactory, which: str) -> None:
    ann = await connect("ann")
    table = 2**53 - 1  # the largest id a client may send (JavaScript's MAX_SAFE_INTEGER)
    if which == "closed":
        table = (await ann.create_table("othello")).table.id
        await ann.leave_table(table)
    conn = await raw()
    await conn.hello("mallory")
    for request in table_requests(table):
        reply = await conn.request(**request)
        assert reply["code"] == "no_such_table" and str(table) in reply["message"], (request, reply)
    assert await ann.list_tables() == []


@pytest.mark.parametrize("seat", [-1, 2, 2**32])
async def test_seat_out_of_range_is_bad_message(connect: Connect, raw: RawFactory, seat: int) -> None:
    ann = await connect("ann")
    table = (await ann.create_table("othello")).table.id
    await settle(ann)
    conn = await raw()
    await conn.hello("mallory")
    for request in ({"type": "join_table", "table": table, "seat": seat}, {"type": "create_table", "game": "othello", "seat": seat}):
        reply = await conn.request(**request)
        assert (reply["code"], reply.get("field")) == ("bad_message", "seat"), (request, reply)
    assert [(t.id, t.seats, t.status) for t in await ann.list_tables()] == [(table, ["ann", None], "waiting")]
    assert noise(await settle(ann), table) == []
    assert (await conn.request("join_table", table=table))["seat"] == 1  # the free seat was there to take


NO_USABLE_ID: dict[str, tuple[dict[str, Any], int | None]] = {
    "move, no id": ({"type": "move", "move": "c3", "ply": 1}, None),
    "resign, no id": ({"type": "resign"}, None),
    "offer, no id": ({"type": "offer", "kind": "draw"}, None),
    "leave, no id": ({"type": "leave_table"}, None),
    "move, id nil": ({"type": "move", "move": "c3", "id": None}, None),
    "move, id text": ({"type": "move", "move": "c3", "id": "1"}, None),
    "move, id true": ({"type": "move", "move": "c3", "id": True}, None),
    "move, id -1": ({"type": "move", "move": "c3", "id": -1}, -1),
    "move, id 2**53": ({"type": "move", "move": "c3", "id": 2**53}, 2**53),
    "move, id 2**53+1": ({"type": "move", "move": "c3", "id": 2**53 + 1}, 2**53 + 1),
}


def _raw_table(frame: dict[str, Any]) -> Any:
    table = frame.get("table")
    return table["id"] if isinstance(table, dict) else table


@pytest.mark.parametrize(("body", "echoed"), list(NO_USABLE_ID.values()), ids=list(NO_USABLE_ID))
async def test_a_request_without_a_usable_id_is_not_carried_out(
    connect: Connect, raw: RawFactory, body: dict[str, Any], echoed: int | None
) -> None:
    ann, cat = await connect("ann"), await connect("cat")
    table = (await ann.create_table("othello")).table.id
    await cat.watch_table(table)
    bob = await raw()
    await bob.hello("bob")
    await bob.request("join_table", table=table)
    await ann.move(table, "d3", ply=0)
    for client in (ann, cat):
        await settle(client)
    await bob.sync()  # after the others' markers: bob's next frame must be his reply
    before = await lobby(ann)
    await bob.send(table=table, **body)
    reply = await bob.recv()
    assert (reply["type"], reply["code"], reply.get("field"), reply.get("id")) == ("error", "bad_message", "id", echoed), reply
    assert [frame for frame in await bob.sync() if _raw_table(frame) == table] == []
    assert await lobby(ann) == before
    for client in (ann, cat):
        assert noise(await settle(client), table) == [], client.name
    assert (await bob.request("move", table=table, move="c3", ply=1))["type"] == "ok"
