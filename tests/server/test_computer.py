"""Computer seats at server tables, over real sockets, thinking in real worker processes.

A person plays a whole game against the computer; two computers play while
someone watches; the limits (``too_many_bots``, ``bad_request``), hints,
takebacks granted at once, the event loop answering while a bot thinks, and
the view the computer is given.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import time
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

import games
from server.app import Server
from server.net.limits import Limits
from server.play.workers import MIN_THINK_S, SLACK_S, WorkerPool, seconds_left

from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, Raw

LOSING_FOR_THE_FIRST = {"board": [0, 0, 0, 2]}
"""A Nimble setup whose nim-sum is 0 (two pawns on square 4): the first player loses against perfect play."""

Open = Callable[..., Awaitable[Raw]]


@pytest.fixture
async def bots(configured_server: ConfiguredServer) -> Server:
    """A server whose computer players think 0.02 s a move, in one worker process."""
    return await configured_server(bot_seconds=0.02, bot_workers=1)


@pytest.fixture
async def open_raw() -> AsyncIterator[Callable[..., Awaitable[Raw]]]:
    """Factory: ``await open_raw(server, "ann")`` opens a connection that has said hello as ``ann``."""
    opened: list[Raw] = []

    async def factory(server: Server, name: str, **hello: Any) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        conn = Raw(reader, writer)
        opened.append(conn)
        welcome = await conn.request("hello", version=2, name=name, **hello)
        assert welcome["type"] == "welcome", welcome
        return conn

    yield factory
    for conn in opened:
        await conn.close()


COMPUTER_WAIT_S = TIMEOUT_S + SLACK_S
"""How long a test waits for a push that may follow a computer's move: as long as the server waits for
the move (its budget plus :data:`SLACK_S`, for a worker starting at the lowest priority on a busy machine)."""


async def until(conn: Raw, kind: str, timeout_s: float = COMPUTER_WAIT_S) -> dict[str, Any]:
    """The next push of type ``kind`` (others skipped)."""
    while (frame := await conn.recv(timeout_s))["type"] != kind:
        pass
    return frame


async def play_to_the_end(conn: Raw, table: int, seat: int, view: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Play the last legal move at each of ``seat``'s turns until the game ends; return the outcome and every move seen."""
    moves: list[str] = []
    while True:
        if view.get("to_move") == seat and view.get("legal_moves"):
            reply = await conn.request("move", table=table, move=view["legal_moves"][-1])
            assert reply["type"] == "ok", reply
        frame = await conn.recv(COMPUTER_WAIT_S)
        if frame["type"] == "game_over":
            return frame["outcome"], moves
        if frame["type"] == "moved":
            moves.append(frame["move"])
            view = frame["view"]


# --- a whole game ------------------------------------------------------------------------------


async def test_a_person_plays_a_whole_nimble_game_against_the_strongest_computer_and_loses(
    bots: Server, open_raw: Open, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    ann = await open_raw(bots, "ann")
    joined = await ann.request("create_table", game="nimble", options=LOSING_FOR_THE_FIRST, seat=0, computer=[{"seat": 1, "level": 5}])
    assert joined["type"] == "table_joined", joined
    info = joined["table"]
    assert info["status"] == "playing" and info["seats"] == ["ann", "Computer 5"]
    assert info["computer"] == [None, 5] and info["hints"] is True and info["bots"] is None
    started = await until(ann, "game_started")
    outcome, moves = await play_to_the_end(ann, info["id"], 0, started["view"])
    assert outcome["winner"] == 1, (outcome, moves)  # perfect play wins a position lost for the first player
    assert len(moves) >= 4 and len(moves) % 2 == 0  # the computer answered every move, and made the last
    assert "random legal move" not in caplog.text  # every move was the chooser's own
    [table] = (await ann.request("list_tables"))["tables"]
    assert table["status"] == "over" and table["computer"] == [None, 5]


async def test_two_computers_play_a_game_a_spectator_watches_to_the_end(bots: Server, open_raw: Open) -> None:
    ann = await open_raw(bots, "ann")
    joined = await ann.request(
        "create_table", game="nimble", options={"board": [0, 1, 2, 1, 3]}, seat=None,
        computer=[{"seat": 0, "level": 1}, {"seat": 1, "level": 5}],
    )  # fmt: skip
    assert joined["seat"] is None and joined["table"]["seats"] == ["Computer 1", "Computer 5"]
    assert joined["table"]["status"] == "playing" and joined["table"]["computer"] == [1, 5]
    seats, plies = [], []
    while (frame := await ann.recv(COMPUTER_WAIT_S))["type"] != "game_over":
        if frame["type"] == "moved":
            seats.append(frame["seat"])
            plies.append(frame["ply"])
            assert "legal_moves" not in frame["view"] or frame["view"]["to_move"] is not None
    assert plies == list(range(1, len(plies) + 1)) and seats == [ply % 2 for ply in range(len(plies))]
    assert frame["outcome"]["winner"] in (0, 1)
    await ann.request("leave_table", table=joined["table"]["id"])
    assert (await ann.request("list_tables"))["tables"] == []  # played out and left: the table closes


# --- refusals ------------------------------------------------------------------------------------


async def test_more_computer_seats_than_max_bots_are_refused_with_the_limit(configured_server: ConfiguredServer, open_raw: Open) -> None:
    server = await configured_server(bot_seconds=0.02, bot_workers=1, limits=Limits(max_bots=2))
    ann, bob = await open_raw(server, "ann"), await open_raw(server, "bob")
    first = await ann.request("create_table", game="nimble", options={"board": [0, 0, 5]}, seat=0, computer=[{"seat": 1, "level": 2}])
    assert first["type"] == "table_joined"
    refused = await bob.request("create_table", game="nimble", seat=None, computer=[{"seat": 0, "level": 1}, {"seat": 1, "level": 1}])
    assert refused["code"] == "too_many_bots" and "at most 2 computer seats" in refused["message"], refused
    second = await bob.request("create_table", game="nimble", options={"board": [0, 0, 5]}, seat=1, computer=[{"seat": 0, "level": 1}])
    assert second["type"] == "table_joined"  # the limit is reached, not passed
    again = await bob.request("create_table", game="nimble", seat=0, computer=[{"seat": 1, "level": 1}])
    assert again["code"] == "too_many_bots"
    await ann.request("resign", table=first["table"]["id"])  # an ended game's computer seat no longer counts
    third = await bob.request("create_table", game="nimble", seat=0, computer=[{"seat": 1, "level": 1}])
    assert third["type"] == "table_joined", third


@pytest.mark.parametrize(
    ("computer", "seat", "field"),
    [
        ([{"seat": 1, "level": 0}], 0, "computer[0].level"),
        ([{"seat": 1, "level": 6}], 0, "computer[0].level"),
        ([{"seat": 2, "level": 3}], 0, "computer[0].seat"),
        ([{"seat": 0, "level": 3}], 0, "computer[0].seat"),
        ([{"seat": 1, "level": 3}, {"seat": 1, "level": 3}], None, "computer[1].seat"),
    ],
)
async def test_a_bad_computer_seat_or_level_is_a_bad_request_naming_the_field(
    bots: Server, open_raw: Open, computer: list[dict[str, int]], seat: int | None, field: str
) -> None:
    ann = await open_raw(bots, "ann")
    reply = await ann.request("create_table", game="nimble", seat=seat, computer=computer)
    assert reply["code"] == "bad_request" and reply["field"] == field, reply
    assert (await ann.request("list_tables"))["tables"] == []


async def test_every_game_seats_the_computer_and_it_moves(bots: Server, open_raw: Open) -> None:
    ann = await open_raw(bots, "ann")
    for name in games.names():
        joined = await ann.request("create_table", game=name, seat=1, computer=[{"seat": 0, "level": 1}])
        assert joined["type"] == "table_joined" and joined["table"]["computer"] == [1, None], joined
        moved = await until(ann, "moved")
        assert moved["table"] == joined["table"]["id"] and moved["seat"] == 0, moved
        await ann.request("leave_table", table=joined["table"]["id"])


async def test_computer_names_are_kept_from_players(bots: Server) -> None:
    for name in ("Computer 4", "computer", "COMPUTER 12", "Computer５"):
        reader, writer = await asyncio.open_connection("127.0.0.1", bots.port)
        conn = Raw(reader, writer)
        reply = await conn.hello(name)
        assert reply["code"] == "bad_name" and "computer players" in reply["message"], reply
        await conn.close()


# --- hints -------------------------------------------------------------------------------------------


async def test_hints_only_where_allowed_and_only_for_the_seat_to_move(bots: Server, open_raw: Open) -> None:
    ann, bob, cat = await open_raw(bots, "ann"), await open_raw(bots, "bob"), await open_raw(bots, "cat")
    plain = (await ann.request("create_table", game="nimble", options={"board": [0, 3, 1, 2]}, seat=0))["table"]["id"]
    await bob.request("join_table", table=plain)
    assert (await ann.request("hint", table=plain))["code"] == "hints_off"

    helped = await ann.request("create_table", game="nimble", options={"board": [0, 3, 1, 2]}, seat=0, hints=True)
    table = helped["table"]["id"]
    assert helped["table"]["hints"] is True and helped["table"]["computer"] is None
    assert (await ann.request("hint", table=table))["code"] == "not_started"
    joined = await bob.request("join_table", table=table)
    await cat.request("watch_table", table=table)
    hint = await ann.request("hint", table=table)
    assert hint["type"] == "hint" and hint["table"] == table and hint["ply"] == 0
    assert hint["move"] in games.get("nimble").new_state({"board": [0, 3, 1, 2]}, None).legal_moves()
    assert hint["move"] in ("4-1", "3-2")  # the heaps 1, 1, 1, 2, 3, 3 have nim-sum 3: only these make it 0
    assert (await bob.request("hint", table=table))["code"] == "not_your_turn"
    assert (await cat.request("hint", table=table))["code"] == "not_seated"
    assert (await cat.request("hint", table=999))["code"] == "no_such_table"
    assert joined["table"]["hints"] is True


# --- takebacks --------------------------------------------------------------------------------------


async def test_a_takeback_against_the_computer_is_granted_at_once_back_to_my_turn(bots: Server, open_raw: Open) -> None:
    ann = await open_raw(bots, "ann")
    joined = await ann.request("create_table", game="nimble", options={"board": [0, 0, 3, 2]}, seat=0, computer=[{"seat": 1, "level": 3}])
    table = joined["table"]["id"]
    await until(ann, "game_started")
    assert (await ann.request("offer", table=table, kind="takeback"))["code"] == "bad_action"  # nothing of mine to take back
    assert (await ann.request("move", table=table, move="4-1"))["type"] == "ok"
    reply = await until(ann, "moved")
    assert reply["seat"] == 0
    reply = await until(ann, "moved")
    assert reply["seat"] == 1 and reply["view"]["to_move"] == 0

    answer = await ann.request("offer", table=table, kind="takeback", plies=1)
    assert answer["type"] == "ok", answer
    offered, answered, taken = await ann.recv(), await ann.recv(), await ann.recv()
    assert offered["type"] == "offered" and offered["seat"] == 0
    assert answered["type"] == "answered" and answered["accepted"] is True
    assert taken["type"] == "taken_back" and taken["plies"] == 2 and taken["moves"] == []
    assert taken["view"]["to_move"] == 0 and taken["view"]["ply"] == 0
    draw = await ann.request("offer", table=table, kind="draw")
    assert draw["type"] == "ok"
    assert (await until(ann, "answered"))["accepted"] is False  # the computer plays on


# --- the event loop stays free ---------------------------------------------------------------------


THINKERS = ("morris", "mingmang", "hexapawn", "tactego", "othello")
"""Games whose strongest computer searches for its whole budget from the start (Nimble's answers at
once; Othello's level 5 plays its first moves from its opening book, so it comes last)."""


async def test_the_server_answers_pings_at_once_while_a_computer_thinks_for_a_second(
    configured_server: ConfiguredServer, open_raw: Open
) -> None:
    game = THINKERS[0]
    server = await configured_server(bot_seconds=1.0, bot_workers=1)
    ann = await open_raw(server, "ann")
    await ann.request("create_table", game=game, seat=1, computer=[{"seat": 0, "level": 5}])
    thinking_since = time.monotonic()
    await until(ann, "game_started")
    await asyncio.sleep(0.3)  # the worker has started and searches
    round_trips, pushes = [], []
    while server.computers.thinking:
        sent = time.monotonic()
        pushes += await ann.sync()  # ping; the pushes that came before the pong
        round_trips.append(time.monotonic() - sent)
        await asyncio.sleep(0.05)
    moved = next((push for push in pushes if push["type"] == "moved"), None) or await until(ann, "moved")
    assert moved["seat"] == 0 and time.monotonic() - thinking_since >= 0.9  # it did think about a second
    assert len(round_trips) >= 5
    # A search on the event loop would hold every ping for most of a second; one ping is allowed an
    # unlucky time slice of this shared machine (the test's clients run in the server's process).
    slow = sorted(round_trips)[-2]
    assert slow < 0.1, f"pings took {[round(t * 1000) for t in round_trips]} ms while the computer thought"


# --- what the computer is given ------------------------------------------------------------------


class RecordingPool(WorkerPool):
    """The real worker pool, noting each view it is asked to think about."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.views: list[dict[str, Any]] = []

    async def choose(self, game: str, level: int, view: Any, seconds: float, seed: int) -> str:
        self.views.append(dict(view))
        return await super().choose(game, level, view, seconds, seed)


async def test_the_computer_is_given_its_seat_view_not_the_state(bots: Server, open_raw: Open) -> None:
    game = "tactego"
    pool = RecordingPool(1)
    bots.computers.pool = pool
    ann = await open_raw(bots, "ann")
    joined = await ann.request("create_table", game=game, seat=0, computer=[{"seat": 1, "level": 1}])
    started = await until(ann, "game_started")
    if started["view"]["to_move"] == 0:
        await ann.request("move", table=joined["table"]["id"], move=started["view"]["legal_moves"][0])
    await until(ann, "moved")
    while not pool.views:
        await asyncio.sleep(0.01)
    table = bots.tables[joined["table"]["id"]]
    [view] = pool.views[:1]
    assert view["to_move"] == 1 and view["legal_moves"]
    state = games.get(game).new_state(table.options, table.seed)
    assert view["ply"] in (0, 1)
    expected = (state if view["ply"] == 0 else state.play(table.moves[0])).view(1)
    assert view == expected  # exactly seat 1's view
    if game == "tactego":  # the opponent's unfought pieces are unknown ranks to the computer
        opponent = [cell for row in view["board"] for cell in row if cell is not None and cell[0] == 0]
        assert opponent and all(rank == "?" for _, rank in opponent)


# --- worker processes ---------------------------------------------------------------------------------


async def test_a_killed_worker_is_replaced_and_the_game_goes_on(bots: Server, open_raw: Open, caplog: pytest.LogCaptureFixture) -> None:
    others = set(multiprocessing.active_children())
    ann = await open_raw(bots, "ann")
    joined = await ann.request("create_table", game="nimble", options={"board": [0, 0, 0, 4]}, seat=0, computer=[{"seat": 1, "level": 5}])
    table = joined["table"]["id"]
    await until(ann, "game_started")
    await ann.request("move", table=table, move="4-3")
    assert (await until(ann, "moved"))["seat"] == 0 and (await until(ann, "moved"))["seat"] == 1
    workers = set(multiprocessing.active_children()) - others
    assert workers, "the computer thinks in a worker process"
    for worker in workers:
        os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
        worker.join(TIMEOUT_S)
    caplog.set_level(logging.INFO)
    legal = games.get("nimble").new_state({"board": [0, 0, 0, 4]}, None)
    for move in bots.tables[table].moves:
        legal = legal.play(move)
    await ann.request("move", table=table, move=legal.legal_moves()[-1])
    assert (await until(ann, "moved"))["seat"] == 0 and (await until(ann, "moved"))["seat"] == 1
    assert "worker process died" in caplog.text and "random legal move" not in caplog.text
    assert set(multiprocessing.active_children()) - others - workers, "new workers think for the computer"


async def test_closing_the_server_stops_every_worker(configured_server: ConfiguredServer, open_raw: Open) -> None:
    others = set(multiprocessing.active_children())
    server = await configured_server(bot_seconds=0.02, bot_workers=2)
    ann = await open_raw(server, "ann")
    await ann.request("create_table", game="nimble", seat=None, computer=[{"seat": 0, "level": 5}, {"seat": 1, "level": 5}])
    await until(ann, "moved")
    assert set(multiprocessing.active_children()) - others
    await ann.close()
    await server.close()
    assert set(multiprocessing.active_children()) - others == set()  # joined: no worker left running, no zombie


# --- bots: programs that say so -------------------------------------------------------------------


async def test_a_bot_client_shows_as_a_bot_in_table_info(bots: Server, open_raw: Open) -> None:
    deep, ann = await open_raw(bots, "deep-nimble", bot=True), await open_raw(bots, "ann")
    created = await deep.request("create_table", game="nimble", seat=0)
    assert created["table"]["bots"] == [True, False] and created["table"]["computer"] is None
    table = created["table"]["id"]
    joined = await ann.request("join_table", table=table)
    assert joined["table"]["bots"] == [True, False] and joined["table"]["hints"] is False
    plain = await ann.request("create_table", game="nimble", seat=0)
    assert plain["table"]["bots"] is None


async def test_the_computer_accepts_a_rematch_at_once_with_seats_swapped(bots: Server, open_raw: Open) -> None:
    ann = await open_raw(bots, "ann")
    joined = await ann.request("create_table", game="nimble", options={"board": [0, 1]}, seat=0, computer=[{"seat": 1, "level": 2}])
    table = joined["table"]["id"]
    assert (await ann.request("offer", table=table, kind="rematch"))["code"] == "bad_action"  # not over yet
    await ann.request("move", table=table, move="2-1")
    assert (await until(ann, "game_over"))["outcome"]["winner"] == 0
    assert (await ann.request("offer", table=table, kind="rematch"))["type"] == "ok"
    assert (await until(ann, "answered"))["accepted"] is True
    rematch = await until(ann, "rematch_started")
    assert rematch["previous"] == table and rematch["seat"] == 1
    assert rematch["table"]["seats"] == ["Computer 2", "ann"] and rematch["table"]["computer"] == [2, None]
    moved = await until(ann, "moved")  # the computer now moves first, by itself
    assert moved["seat"] == 0 and moved["table"] == rematch["table"]["id"]
    assert (await ann.request("offer", table=table, kind="rematch"))["code"] == "bad_action"  # played once


async def test_a_table_with_one_computer_seat_waits_for_a_player_then_starts(bots: Server, open_raw: Open) -> None:
    ann, bob = await open_raw(bots, "ann"), await open_raw(bots, "bob")
    created = await ann.request("create_table", game="nimble", options={"board": [0, 2, 3]}, seat=None, computer=[{"seat": 0, "level": 4}])
    table = created["table"]["id"]
    assert created["table"]["status"] == "waiting" and created["table"]["seats"] == ["Computer 4", None]
    assert (await bob.request("join_table", table=table, seat=0))["code"] == "table_full"
    joined = await bob.request("join_table", table=table)
    assert joined["seat"] == 1 and joined["table"]["status"] == "playing"
    moved = await until(bob, "moved")
    assert moved["seat"] == 0 and moved["view"]["to_move"] == 1


async def test_workers_load_every_game_s_data_when_they_start_not_in_a_move() -> None:
    import games.bots

    pool = WorkerPool(1)
    try:
        state = games.get("nimble").new_state({}, 1)
        assert await pool.choose("nimble", 5, state.view(0), 0.02, 1) in state.legal_moves()
        assert pool._pool is not None
        in_worker = await asyncio.wrap_future(pool._pool.submit(games.bots.warmed))
        assert set(in_worker) == {"othello", "nimble", "mingmang", "morris", "tactego", "hexapawn"}
    finally:
        await pool.close()


def test_a_move_s_budget_is_what_is_left_of_it_when_the_worker_starts() -> None:
    assert seconds_left(ends_at=10.0, now=9.25) == 0.75  # 0.25 s went on sending the view
    assert seconds_left(ends_at=10.0, now=10.5) == MIN_THINK_S  # late: a move all the same


async def test_moves_wait_for_a_free_worker_outside_their_budget() -> None:
    pool = WorkerPool(1)
    handed: list[int] = []
    calls: list[int] = []
    original = pool._choose

    async def spy(*args: Any) -> str:
        calls.append(1)
        handed.append(1)
        assert len(handed) == 1, "a second move was handed to the one worker while it thought"
        try:
            return await original(*args)
        finally:
            handed.pop()

    pool._choose = spy  # type: ignore[method-assign]
    try:
        state = games.get("mingmang").new_state({"size": 6}, 1)
        moves = await asyncio.gather(*(pool.choose("mingmang", 5, state.view(0), 0.05, seed) for seed in range(3)))
        assert all(move in state.legal_moves() for move in moves) and len(calls) == 3
    finally:
        await pool.close()
