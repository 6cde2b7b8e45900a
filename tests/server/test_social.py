"""Finding an opponent (PROTOCOL.md §17) over real sockets: who, challenges, seeks, tells, mutes, spam limits."""

from __future__ import annotations

import asyncio
import secrets
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from client import Client
from protocol import messages as m
from server.app import Server
from server.net.limits import Limits
from server.core.names import name_key
from server.storage.sqlite import SQLiteStore

from ..conftest import ConfiguredServer, Connect
from .conftest import TIMEOUT_S, refused

NIMBLE = {"board": [1, 2, 3]}
"""A small Nimble setup: play starts at once and lasts a few moves."""


async def _next(client: Client, kind: type[m.Message]) -> Any:
    return await client.next_event(kind, timeout_s=TIMEOUT_S)


async def _quiet(client: Client, kind: type[m.Message], wait_s: float = 0.15) -> None:
    """Assert that no push of ``kind`` arrives within ``wait_s`` (the server had time to send it)."""
    await client.ping()
    with pytest.raises(asyncio.TimeoutError):
        await client.next_event(kind, timeout_s=wait_s)


async def rated_database(tmp_path: Path, ratings: dict[str, int]) -> str:
    """A database file in which each named player has an Othello blitz rating (deviation 60)."""
    path = str(tmp_path / "parlour.sqlite3")
    store = SQLiteStore.open(path)
    await store.start()
    insert = (
        "INSERT INTO ratings (name_key, name, game, family, rating, deviation, volatility, games, wins, draws, losses, updated)"
        " VALUES (?, ?, 'othello', 'blitz', ?, 60, 0.06, 20, 10, 0, 10, ?)"
    )
    await store.write(*[(insert, (name_key(name), name, rating, time.time())) for name, rating in ratings.items()])
    await store.close()
    return path


async def player(server: Server, name: str, *, claimed: bool = False, secret: str | None = None) -> Client:
    """A client connected as ``name``; ``claimed``: claiming the name (with ``secret``, or a new one)."""
    if claimed:
        return await Client.connect("127.0.0.1", server.port, name=name, claim=True, secret=secret or secrets.token_urlsafe(32))
    return await Client.connect("127.0.0.1", server.port, name=name)


# --- who ---------------------------------------------------------------------------------


@asynccontextmanager
async def _ann_and_bob(server: Server) -> AsyncIterator[tuple[Client, Client]]:
    """Two clients, "ann" and "bob", said hello to ``server``; both closed on the way out."""
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        yield ann, bob
    finally:
        await ann.close()
        await bob.close()


async def test_who_lists_every_status_sorted_and_paged(connect: Connect, server: Server) -> None:
    ann, bob, cat, dan = [await connect(n, watch_lobby=False) for n in ("ann", "Bob", "cat", "dan")]
    joined = await ann.create_table("nimble", NIMBLE)
    await bob.join_table(joined.table.id)
    await cat.watch_table(joined.table.id)
    players = await dan.who()
    assert [(p.name, p.status) for p in players.players] == [("ann", "playing"), ("Bob", "playing"), ("cat", "watching"), ("dan", "idle")]
    assert players.total == 4 and players.next is None
    assert all(not p.claimed and p.rating is None for p in players.players)
    first = await dan.who(limit=3)
    assert [p.name for p in first.players] == ["ann", "Bob", "cat"] and first.next == 3 and first.total == 4
    rest = await dan.who(offset=first.next, limit=3)
    assert [p.name for p in rest.players] == ["dan"] and rest.next is None
    await bob.close()  # seated at a running game: away for the grace period
    for _ in range(50):
        statuses = {p.name: p.status for p in (await dan.who()).players}
        if statuses["Bob"] == "away":
            break
        await asyncio.sleep(0.01)
    assert statuses == {"ann": "playing", "Bob": "away", "cat": "watching", "dan": "idle"}
    await refused(dan.who(game="chess"), "unknown_game")


async def test_who_sorts_by_rating_highest_first_unrated_last(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(db_path=await rated_database(tmp_path, {"ann": 1400, "bob": 1720, "cat": 1900}))
    clients = [await player(server, n, claimed=n in ("ann", "bob")) for n in ("ann", "bob", "cat", "dan")]
    try:  # cat's rating is not shown: the name is not claimed
        players = (await clients[3].who(sort="rating", game="othello")).players
        assert [(p.name, p.rating, p.rating_game, p.claimed) for p in players] == [
            ("bob", 1720, "othello", True), ("ann", 1400, "othello", True), ("cat", None, None, False), ("dan", None, None, False)
        ]
        assert [p.rating for p in (await clients[3].who(sort="rating", game="nimble")).players] == [None] * 4
    finally:
        for client in clients:
            await client.close()


async def test_who_pages_are_bounded(connect: Connect) -> None:
    ann = await connect("ann", watch_lobby=False)
    with pytest.raises(Exception) as info:
        await ann.who(limit=m.MAX_PLAYERS_PAGE + 1)
    assert getattr(info.value, "code", None) == "bad_message" and info.value.field == "limit"  # type: ignore[attr-defined]


# --- challenges ----------------------------------------------------------------------------


async def test_a_declined_challenge_tells_the_challenger(connect: Connect) -> None:
    ann, bob = await connect("ann", watch_lobby=False), await connect("bob", watch_lobby=False)
    sent = await ann.challenge("BOB", "nimble", NIMBLE, seat=1, time_control="5+3")
    assert (sent.challenger, sent.challenged, sent.game, sent.seat, sent.time_control) == ("ann", "bob", "nimble", 1, "5+3")
    assert 59 < sent.expires_in_s <= 60
    received = await _next(bob, m.ChallengeReceived)
    assert received.challenge.id == sent.id and received.challenge.options["board"] == [1, 2, 3]
    await refused(ann.decline_challenge(sent.id), "no_such_challenge")  # not hers to answer
    await bob.decline_challenge(sent.id)
    assert (await _next(ann, m.ChallengeEnded)) == m.ChallengeEnded(challenge=sent.id, reason="declined")
    assert (await _next(bob, m.ChallengeEnded)).reason == "declined"
    await refused(bob.accept_challenge(sent.id), "no_such_challenge")
    assert await ann.list_tables() == []


async def test_an_accepted_challenge_seats_both_and_the_game_starts(connect: Connect, server: Server) -> None:
    ann, bob = await connect("ann", watch_lobby=False), await connect("bob", watch_lobby=False)
    sent = await ann.challenge("bob", "nimble", NIMBLE, seat=1)
    await _next(bob, m.ChallengeReceived)
    await bob.accept_challenge(sent.id)
    for client, seat in ((ann, 1), (bob, 0)):
        assert (await _next(client, m.ChallengeEnded)).reason == "accepted"
        paired = await _next(client, m.Paired)
        assert paired.seat == seat and paired.challenge == sent.id and paired.table.seats == ["bob", "ann"]
        started = await _next(client, m.GameStarted)
        assert started.table == paired.table.id and started.seats == ["bob", "ann"]
    table = server.tables[paired.table.id]
    assert table.status == "playing" and table.game.name == "nimble"
    await bob.move(table.id, started.view["legal_moves"][0])  # seat 0 moves first: a real game
    assert (await _next(ann, m.Moved)).seat == 0
    assert {p.name: p.status for p in (await ann.who()).players} == {"ann": "playing", "bob": "playing"}


async def test_a_random_seat_challenge_gives_each_player_one_seat(connect: Connect, server: Server) -> None:
    ann, bob = await connect("ann", watch_lobby=False), await connect("bob", watch_lobby=False)
    sent = await ann.challenge("bob", "nimble", NIMBLE)
    assert sent.seat is None
    await bob.accept_challenge(sent.id)
    seats = {(await _next(ann, m.Paired)).seat, (await _next(bob, m.Paired)).seat}
    assert seats == {0, 1}


async def test_a_challenge_is_withdrawn_expires_and_ends_when_a_player_leaves(configured_server: ConfiguredServer) -> None:
    server = await configured_server(limits=Limits(challenge_expiry_s=0.2))
    async with _ann_and_bob(server) as (ann, bob):
        withdrawn = await ann.challenge("bob", "othello")
        await ann.withdraw_challenge(withdrawn.id)
        for client in (bob, ann):
            assert (await _next(client, m.ChallengeEnded)) == m.ChallengeEnded(challenge=withdrawn.id, reason="withdrawn")
        await refused(bob.accept_challenge(withdrawn.id), "no_such_challenge")
        lapsing = await ann.challenge("bob", "othello")
        assert (await _next(ann, m.ChallengeEnded)) == m.ChallengeEnded(challenge=lapsing.id, reason="expired")
        assert (await _next(bob, m.ChallengeEnded)).challenge == lapsing.id
        left = await bob.challenge("ann", "othello")
        await _next(ann, m.ChallengeReceived)
        await bob.close()  # no seat: the session ends at once
        assert (await _next(ann, m.ChallengeEnded)) == m.ChallengeEnded(challenge=left.id, reason="gone")
        await refused(ann.accept_challenge(left.id), "no_such_challenge")


async def test_bad_challenges_are_refused_naming_what_is_wrong(connect: Connect) -> None:
    ann, bob = await connect("ann", watch_lobby=False), await connect("bob", watch_lobby=False)
    assert (await refused(ann.challenge("nobody", "othello"), "no_such_player")).field == "name"
    await refused(ann.challenge("ann", "othello"), "bad_request")
    await refused(ann.challenge("bob", "chess"), "unknown_game")
    assert (await refused(ann.challenge("bob", "othello", {"size": 5}), "bad_option")).field == "options.size"
    assert (await refused(ann.challenge("bob", "othello", time_control="soon"), "bad_option")).field == "time_control"
    assert "'ann' is a guest name" in (await refused(ann.challenge("bob", "othello", rated=True), "rated_needs_claim")).message
    await _quiet(bob, m.ChallengeReceived)


async def test_open_challenges_per_player_are_capped(configured_server: ConfiguredServer) -> None:
    server = await configured_server(limits=Limits(max_challenges_per_player=2))
    async with _ann_and_bob(server) as (ann, bob):
        first = await ann.challenge("bob", "othello")
        await ann.challenge("bob", "nimble")
        error = await refused(ann.challenge("bob", "morris"), "too_many_challenges")
        assert "2 open challenges" in error.message
        await ann.withdraw_challenge(first.id)
        await ann.challenge("bob", "morris")


# --- mutes and tells -------------------------------------------------------------------------


async def test_a_tell_is_delivered_as_sent_and_a_muted_one_dropped(connect: Connect) -> None:
    ann, bob, cat = [await connect(n, watch_lobby=False) for n in ("ann", "bob", "cat")]
    text = "hi \x1b[2J\u202e there"  # the receiving terminal makes it printable (client/sanitize.py), as chat
    await ann.tell("BOB", text)
    assert (await _next(bob, m.Told)) == m.Told(name="ann", text=text)
    await bob.mute("Ann")
    await ann.tell("bob", "are you there?")  # dropped, and ann is not told so
    await cat.tell("bob", "cat here")
    assert (await _next(bob, m.Told)) == m.Told(name="cat", text="cat here")
    await bob.mute("ann", False)
    await ann.tell("bob", "again")
    assert (await _next(bob, m.Told)).text == "again"
    await refused(ann.tell("nobody", "hello"), "no_such_player")
    await refused(ann.tell("ann", "me"), "bad_request")
    await refused(bob.mute("bob"), "bad_request")
    await refused(bob.mute("a\x00b"), "bad_name")


async def test_list_mutes_answers_the_muted_names_sorted_in_their_compared_form(connect: Connect) -> None:
    ann, bob = await connect("ann", watch_lobby=False), await connect("bob", watch_lobby=False)
    assert await ann.list_mutes() == []
    await ann.mute("Zed")
    await ann.mute("BOB")
    await ann.mute("carl")
    await ann.mute("carl", False)
    assert await ann.list_mutes() == ["bob", "zed"]  # case-folded, as they are compared
    assert await bob.list_mutes() == []  # each player's own


async def test_a_tell_longer_than_the_chat_limit_is_refused(configured_server: ConfiguredServer) -> None:
    server = await configured_server(limits=Limits(max_chat_chars=10))
    async with _ann_and_bob(server) as (ann, bob):
        assert (await refused(ann.tell("bob", "x" * 11), "bad_message")).field == "text"
        await ann.tell("bob", "x" * 10)
        assert (await _next(bob, m.Told)).text == "x" * 10


async def test_a_muter_cannot_be_challenged_by_the_muted(connect: Connect) -> None:
    ann, bob = await connect("ann", watch_lobby=False), await connect("bob", watch_lobby=False)
    await bob.mute("ann")
    error = await refused(ann.challenge("bob", "othello"), "muted")
    assert "bob" in error.message
    await bob.challenge("ann", "othello")  # the muter may still challenge
    await _quiet(bob, m.ChallengeReceived)


# --- spam limits ------------------------------------------------------------------------------


async def test_tells_challenges_and_seeks_per_minute_are_limited_with_the_wait(configured_server: ConfiguredServer) -> None:
    limits = Limits(tells_per_minute=3, challenges_per_minute=2, seeks_per_minute=2, max_challenges_per_player=10)
    server = await configured_server(limits=limits)
    async with _ann_and_bob(server) as (ann, bob):
        for _ in range(3):
            await ann.tell("bob", "hi")
        error = await refused(ann.tell("bob", "hi"), "rate_limited")
        assert "3 tells a minute" in error.message and "wait 20 s" in error.message
        await bob.tell("ann", "bob's own bucket is full")
        for _ in range(2):
            await ann.challenge("bob", "othello")
        assert "2 challenges a minute" in (await refused(ann.challenge("bob", "othello"), "rate_limited")).message
        for _ in range(2):
            await ann.seek("othello")
        assert "wait 30 s" in (await refused(ann.seek("othello"), "rate_limited")).message
        assert not ann.closed.is_set()  # refused, not disconnected


# --- seeks ------------------------------------------------------------------------------------


async def test_two_compatible_seeks_are_paired(connect: Connect, server: Server) -> None:
    ann, bob, cat = [await connect(n) for n in ("ann", "bob", "cat")]
    posted = await ann.seek("nimble", NIMBLE, time_control="5+3")
    assert not posted.paired and posted.seek.name == "ann"
    added = await _next(cat, m.SeekAdded)
    assert added.seek == posted.seek
    assert [s.id for s in (await cat.list_seeks()).seeks] == [posted.seek.id]
    answer = await bob.seek("nimble", {"board": [1, 2, 3]}, time_control="5 + 3")  # the same game, written otherwise
    assert answer.paired
    ann_paired, bob_paired = await _next(ann, m.Paired), await _next(bob, m.Paired)
    assert {ann_paired.seat, bob_paired.seat} == {0, 1} and ann_paired.table.id == bob_paired.table.id
    assert (ann_paired.seek, bob_paired.seek) == (posted.seek.id, answer.seek.id)
    assert (await _next(ann, m.GameStarted)).table == ann_paired.table.id
    table = server.tables[ann_paired.table.id]
    assert table.status == "playing" and table.info().time_control is not None
    assert (await _next(cat, m.SeekRemoved)).seek == posted.seek.id
    assert (await cat.list_seeks()).seeks == []


async def test_incompatible_seeks_are_not_paired(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(db_path=await rated_database(tmp_path, {"ann": 1500, "bob": 1500, "cat": 1900}))
    ann, bob, cat, dan = clients = [await player(server, n, claimed=n != "dan") for n in ("ann", "bob", "cat", "dan")]
    try:
        await ann.seek("othello", time_control="5+0", rating_min=1400, rating_max=1600)
        assert not (await bob.seek("nimble", time_control="5+0")).paired  # another game
        assert not (await bob.seek("othello", time_control="3+2")).paired  # another time control
        assert not (await bob.seek("othello", {"size": 6}, time_control="5+0")).paired  # other options
        assert not (await cat.seek("othello", time_control="5+0")).paired  # cat's 1900 is outside ann's range
        seeks = (await ann.list_seeks()).seeks
        assert [(s.name, s.game, s.time_control) for s in seeks] == [
            ("ann", "othello", "5+0"), ("bob", "nimble", "5+0"), ("bob", "othello", "3+2"), ("bob", "othello", "5+0"), ("cat", "othello", "5+0")
        ]
        assert seeks[3].options["size"] == 6 and (seeks[0].rating, seeks[4].rating) == (1500, 1900)
        assert not (await dan.seek("othello", time_control="5+0", rating_max=1450)).paired  # the others are above dan's range
        assert not server.tables
        paired = await dan.seek("othello", time_control="5+0", rating_min=1800)  # cat's seek, and cat takes dan (unrated: 1500)
        assert paired.paired
        assert (await _next(cat, m.Paired)).seek == seeks[4].id
    finally:
        for client in clients:
            await client.close()


async def test_a_seek_vanishes_when_its_player_disconnects_or_sits_down(connect: Connect) -> None:
    ann, bob, cat = [await connect(n) for n in ("ann", "bob", "cat")]
    gone = (await ann.seek("othello")).seek
    await _next(cat, m.SeekAdded)
    await ann.close()
    assert (await _next(cat, m.SeekRemoved)).seek == gone.id
    seated = (await bob.seek("morris")).seek
    await _next(cat, m.SeekAdded)
    await bob.create_table("othello")
    assert (await _next(cat, m.SeekRemoved)).seek == seated.id
    assert (await cat.list_seeks()).seeks == []
    assert "sit at table" in (await refused(bob.seek("othello"), "bad_request")).message


async def test_unseek_and_the_seek_cap(configured_server: ConfiguredServer) -> None:
    server = await configured_server(limits=Limits(max_seeks_per_player=2))
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    try:
        first = (await ann.seek("othello")).seek
        await ann.seek("nimble")
        await refused(ann.seek("morris"), "too_many_seeks")
        await ann.unseek(first.id)
        await refused(ann.unseek(first.id), "no_such_seek")
        await ann.seek("morris")
        await ann.unseek()
        assert (await ann.list_seeks()).seeks == []
        await refused(ann.seek("othello", rating_min=1600, rating_max=1500), "bad_request")
    finally:
        await ann.close()


async def test_a_claimed_name_keeps_its_mutes_across_a_restart(configured_server: ConfiguredServer, any_db: str) -> None:
    path = any_db
    server = await configured_server(db_path=path)
    secret = secrets.token_urlsafe(32)
    ann = await player(server, "ann", claimed=True, secret=secret)
    guest = await player(server, "gus")
    await ann.mute("Bob")
    await ann.mute("cat")
    await ann.mute("cat", False)
    await guest.mute("bob")  # a guest's mute lives as long as the session
    await ann.close()
    await guest.close()
    await server.close()
    server = await configured_server(db_path=path)
    ann = await Client.connect("127.0.0.1", server.port, name="ann", secret=secret)  # the claimed name, proven again
    guest = await player(server, "gus")
    bob = await player(server, "bob")
    cat = await player(server, "cat")
    try:
        assert await ann.list_mutes() == ["bob"]
        assert await guest.list_mutes() == []  # the guest's mute ended with its session
        await refused(bob.challenge("ann", "othello"), "muted")
        await bob.tell("ann", "dropped")
        await cat.tell("ann", "delivered")
        assert (await _next(ann, m.Told)) == m.Told(name="cat", text="delivered")
        await bob.challenge("gus", "othello")
        assert (await _next(guest, m.ChallengeReceived)).challenge.challenger == "bob"
    finally:
        for client in (ann, guest, bob, cat):
            await client.close()


async def test_a_player_seated_by_a_challenge_loses_their_seeks(connect: Connect) -> None:
    ann, bob, cat = [await connect(n) for n in ("ann", "bob", "cat")]
    await ann.seek("othello")
    await bob.seek("morris")
    await _next(cat, m.SeekAdded)
    await _next(cat, m.SeekAdded)
    sent = await ann.challenge("bob", "nimble", NIMBLE)
    await bob.accept_challenge(sent.id)
    await _next(ann, m.Paired)
    assert (await cat.list_seeks()).seeks == []
    removed = {(await _next(cat, m.SeekRemoved)).seek, (await _next(cat, m.SeekRemoved)).seek}
    assert removed == {1, 2}


async def test_a_resumed_player_is_shown_the_challenges_waiting_for_them(connect: Connect, server: Server) -> None:
    ann, bob, cat = [await connect(n, watch_lobby=False) for n in ("ann", "bob", "cat")]
    joined = await bob.create_table("nimble", NIMBLE)
    await cat.join_table(joined.table.id)  # bob's seat at a running game keeps his session while he is away
    sent = await ann.challenge("bob", "othello")
    await _next(bob, m.ChallengeReceived)
    token = bob.token
    await bob.close()
    bob = await Client.connect("127.0.0.1", server.port, name="bob", token=token)
    try:
        assert (await _next(bob, m.ChallengeReceived)).challenge.id == sent.id
        await bob.decline_challenge(sent.id)
        assert (await _next(ann, m.ChallengeEnded)).reason == "declined"
    finally:
        await bob.close()


async def test_a_seek_posted_and_taken_back_within_a_tick_is_not_sent_to_the_lobby(connect: Connect) -> None:
    ann, cat = await connect("ann"), await connect("cat")
    first = (await ann.seek("othello")).seek
    await ann.unseek(first.id)
    second = (await ann.seek("nimble")).seek
    assert (await _next(cat, m.SeekAdded)).seek == second
    await ann.unseek()
    assert (await _next(cat, m.SeekRemoved)).seek == second.id


async def test_a_rated_challenge_between_claimed_names_makes_a_rated_table(configured_server: ConfiguredServer, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))
    ann, bob, gus = [await player(server, n, claimed=n != "gus") for n in ("ann", "bob", "gus")]
    try:
        await refused(ann.challenge("gus", "othello", rated=True), "rated_needs_claim")
        await refused(gus.seek("othello", rated=True), "rated_needs_claim")
        sent = await ann.challenge("bob", "othello", time_control="5+3", rated=True)
        assert sent.rated
        await bob.accept_challenge(sent.id)
        paired = await _next(ann, m.Paired)
        assert server.tables[paired.table.id].rated
        await refused(ann.seek("nimble", rated=True), "bad_request")  # seated at a running game: no seeking
    finally:
        for client in (ann, bob, gus):
            await client.close()


async def test_rated_challenges_and_seeks_are_refused_when_the_server_rates_no_games(configured_server: ConfiguredServer) -> None:
    server = await configured_server(rated=False)
    ann, bob = await player(server, "ann"), await player(server, "bob")
    try:
        assert (await refused(ann.challenge("bob", "othello", rated=True), "rated_off")).field == "rated"
        await refused(ann.seek("othello", rated=True), "rated_off")
    finally:
        await ann.close()
        await bob.close()
