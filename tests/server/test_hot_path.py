"""The hot path's costs over real sockets: how many writes a move takes, and what a move sends."""

from __future__ import annotations

import asyncio
import collections
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import msgpack
import pytest

import games
import server as server_package
from protocol import codec, connection, encode_frame
from server.core.errors import RequestError
from server.net import peer as peer_module
from server.tables import fanout, othello_views
from server.tables.table import Table
from server.app import Server, ServerConfig

from .conftest import Raw, RawFactory

SelectorTransport = asyncio.selector_events._SelectorSocketTransport  # type: ignore[attr-defined]


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Iterator[collections.Counter[int]]:
    """Counts ``transport.write`` calls per transport (by ``id``) while the test runs."""
    counts: collections.Counter[int] = collections.Counter()
    original = SelectorTransport.write

    def counting_write(self: Any, data: Any) -> None:
        counts[id(self)] += 1
        original(self, data)

    monkeypatch.setattr(SelectorTransport, "write", counting_write)
    yield counts


def server_transport(server: Server, name: str) -> int:
    """The ``id`` of the server-side transport of the connection that said hello as ``name``."""
    (peer,) = [peer for peer in server.peers if peer.session is not None and peer.session.name == name]
    return id(peer.transport)


async def seated_pair(raw: RawFactory, names: tuple[str, str] = ("ann", "bob"), size: int = 6) -> tuple[Raw, Raw, int, str]:
    """Ann and Bob (or ``names``) at a new Othello table (``size``), play started; returns them, the table id and a legal first move."""
    ann, bob = await raw(), await raw()
    await ann.hello(names[0])
    await bob.hello(names[1])
    table = (await ann.request("create_table", game="othello", options={"size": size}))["table"]["id"]
    await bob.request("join_table", table=table)
    started = [push for push in await ann.sync() if push["type"] == "game_started"]
    await bob.sync()
    return ann, bob, table, started[0]["view"]["legal_moves"][0]


async def test_a_move_costs_each_player_one_write(server: Server, raw: RawFactory, writes: collections.Counter[int]) -> None:
    ann, bob, table, move = await seated_pair(raw)
    ann_transport, bob_transport = server_transport(server, "ann"), server_transport(server, "bob")
    writes.clear()
    await ann.send(type="move", id=99, table=table, move=move)
    ok = await ann.recv()
    moved = await ann.recv()
    assert ok == {"type": "ok", "id": 99} and moved["type"] == "moved" and moved["move"] == move
    assert (await bob.recv())["type"] == "moved"
    assert writes[ann_transport] == 1, "the reply and the push of one move go out in one write"
    assert writes[bob_transport] == 1


async def test_a_batch_of_requests_is_answered_in_one_write(server: Server, raw: RawFactory, writes: collections.Counter[int]) -> None:
    ann = await raw()
    await ann.hello("ann")
    transport = server_transport(server, "ann")
    writes.clear()
    await ann.send_bytes(b"".join(encode_frame({"type": "ping", "id": request_id}) for request_id in range(1, 6)))
    replies = [await ann.recv() for _ in range(5)]
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4, 5]
    assert writes[transport] == 1



async def test_moves_handled_in_one_turn_are_written_at_its_end(server: Server, raw: RawFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    ann, bob, first, ann_move = await seated_pair(raw)
    carol, dave, second, carol_move = await seated_pair(raw, ("carol", "dave"))
    tables = server.authority.tables
    written: list[tuple[int, int]] = []  # (transport id, moves applied at both tables when it was written to)
    original = SelectorTransport.write

    def recording_write(self: Any, data: Any) -> None:
        written.append((id(self), len(tables[first].moves) + len(tables[second].moves)))
        original(self, data)

    monkeypatch.setattr(SelectorTransport, "write", recording_write)
    before = len(tables[first].moves) + len(tables[second].moves)
    await ann.send(type="move", id=1, table=first, move=ann_move)  # both arrive before the server's next turn
    await carol.send(type="move", id=2, table=second, move=carol_move)
    assert [(await ann.recv())["type"], (await ann.recv())["type"]] == ["ok", "moved"]
    assert [(await carol.recv())["type"], (await carol.recv())["type"]] == ["ok", "moved"]
    assert (await bob.recv())["type"] == (await dave.recv())["type"] == "moved"
    movers = {id(server_transport_of(server, name)) for name in ("ann", "carol")}
    assert [applied for transport, applied in written if transport in movers] == [before + 2, before + 2], (
        "each mover's reply leaves after both moves of the turn were handled, not right after its own"
    )


def server_transport_of(server: Server, name: str) -> Any:
    """The server-side transport of the connection that said hello as ``name``."""
    (peer,) = [peer for peer in server.peers if peer.session is not None and peer.session.name == name]
    return peer.transport


async def test_a_spectator_gets_the_table_events_of_one_turn_in_one_write(server: Server, raw: RawFactory, writes: collections.Counter[int]) -> None:
    ann, bob, table, move = await seated_pair(raw)
    watcher = await raw()
    await watcher.hello("watcher")
    assert (await watcher.request("watch_table", table=table))["type"] == "table_joined"
    await watcher.sync()
    transport = server_transport(server, "watcher")
    writes.clear()
    batch = [encode_frame({"type": "say", "id": 7, "table": table, "text": text}) for text in ("one", "two")]
    await ann.send_bytes(b"".join([*batch, encode_frame({"type": "move", "id": 8, "table": table, "move": move})]))
    pushes = [await watcher.recv() for _ in range(3)]
    assert [push["type"] for push in pushes] == ["chat", "chat", "moved"] and "legal_moves" not in pushes[2]["view"]
    assert writes[transport] == 1, "the pushes of one batch reach a spectator in one write"


# --- the lobby is a subscription ------------------------------------------------------------


async def test_only_lobby_watchers_hear_of_tables(server: Server, raw: RawFactory) -> None:
    watcher, idle = await raw(), await raw()
    await watcher.hello("watcher")
    await idle.hello("idle")
    assert (await watcher.request("watch_lobby"))["type"] == "ok"
    ann, bob, table, move = await seated_pair(raw)  # a table created, joined and started
    await ann.request("say", text="hello lobby")
    await ann.request("move", table=table, move=move)
    await asyncio.sleep(0.1)  # past the lobby's tick
    pushes = await watcher.sync()
    assert [push["type"] for push in pushes] == ["table_updated", "chat"]
    assert pushes[0]["table"]["status"] == "playing", "created, joined and started within one tick: one delta"
    for connection in (idle, ann, bob):
        heard = [push["type"] for push in await connection.sync()]
        assert not {"table_updated", "table_closed"} & set(heard) and "chat" not in heard, heard


async def test_unwatching_the_lobby_stops_its_pushes(server: Server, raw: RawFactory) -> None:
    watcher, ann = await raw(), await raw()
    await watcher.hello("watcher")
    await ann.hello("ann")
    await watcher.request("watch_lobby", watch=True)
    created = await ann.request("create_table", game="nimble")
    assert (await watcher.recv())["type"] == "table_updated"
    assert (await watcher.request("watch_lobby", watch=False))["type"] == "ok"
    await ann.request("leave_table", table=created["table"]["id"])
    await ann.request("say", text="anyone?")
    await asyncio.sleep(0.1)
    assert await watcher.sync() == []


async def test_changes_within_a_tick_are_one_delta_per_table(configured_server: Any) -> None:
    server = await configured_server(lobby_tick_s=0.3)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    watcher = Raw(reader, writer)
    await watcher.hello("watcher")
    await watcher.request("watch_lobby")
    crowd = []
    for index in range(6):  # within the per-address connection burst
        r, w = await asyncio.open_connection("127.0.0.1", server.port)
        crowd.append(Raw(r, w))
        await crowd[-1].hello(f"fan{index}")
    table = (await crowd[0].request("create_table", game="othello", seat=None))["table"]["id"]
    for fan in crowd[1:]:
        await fan.request("watch_table", table=table)
    update = await watcher.recv()
    assert update["type"] == "table_updated" and update["table"]["spectators"] == 6
    await crowd[0].request("say", text="done")  # lobby chat comes after the changes before it
    assert (await watcher.recv())["type"] == "chat"
    for connection in [watcher, *crowd]:
        await connection.close()


# --- one encoding per view ------------------------------------------------------------------


async def test_a_move_is_encoded_once_per_view_however_many_watch(server: Server, raw: RawFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    ann, bob, table, move = await seated_pair(raw)
    spectators = []
    for index in range(6):  # within the per-address connection burst, with ann and bob
        spectator = await raw()
        await spectator.hello(f"fan{index}")
        await spectator.request("watch_table", table=table)
        spectators.append(spectator)
    await ann.sync()
    encoded: list[bytes] = []
    original = codec._encode

    def counting_encode(message: object) -> bytes:
        body = original(message)
        encoded.append(body)
        return body

    monkeypatch.setattr(codec, "_encode", counting_encode)
    monkeypatch.setattr(fanout, "_encode", counting_encode)  # send_moved encodes without encode_message()
    received = []
    await ann.request("move", table=table, move=move)
    for spectator in spectators:
        received.append(await spectator.recv())
    monkeypatch.undo()
    decoded = [msgpack.unpackb(body) for body in encoded]
    moved_encodings = [body for body in decoded if isinstance(body, dict) and body["type"] == "moved"]
    # Othello hides nothing (Game.public_views): one encoding for everyone; the seat to move gets that frame with
    # its legal moves spliced in (only they are encoded again).
    assert len(moved_encodings) == 1, "one encoding of the moved for both seats and all spectators"
    assert all(frame == received[0] and frame["type"] == "moved" for frame in received)
    chosen = await bob.recv()
    assert chosen == {**received[0], "view": {**received[0]["view"], "legal_moves": chosen["view"]["legal_moves"]}}
    assert chosen["view"]["legal_moves"] in decoded, "the legal moves encoded on their own"


@pytest.mark.parametrize("tick_s", [0.0, -1.0, 11.0, float("nan")])
def test_a_lobby_tick_that_cannot_work_is_refused(tick_s: float) -> None:
    with pytest.raises(ValueError, match="lobby_tick_s must be more than 0 and at most 10 seconds"):
        ServerConfig(lobby_tick_s=tick_s)


PROJECT_CODE = tuple(str(Path(package.__file__).parent) + os.sep for package in (server_package, games)) + (codec.__file__, connection.__file__)
"""The server's own code a move runs (the test's clients use only ``protocol/framing.py``)."""


C_CALLS_COUNTED = ("bytes.join", "Encoder.encode")
"""Calls into C that :func:`moves_work` counts besides ``isinstance`` (by name, not by caller)."""


async def moves_work(server: Server, raw: RawFactory, moves: int) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Play ``moves`` Othello moves of a new game, each waited for; the server's Python calls and its ``isinstance`` calls meanwhile.

    Counted with ``sys.setprofile`` (deterministic: the same moves make the same calls), by function name.
    """
    ann, bob, table, move = await seated_pair(raw, size=8)
    players = {0: ann, 1: bob}
    calls: collections.Counter[str] = collections.Counter()
    checks: collections.Counter[str] = collections.Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(PROJECT_CODE):
            calls[frame.f_code.co_qualname] += 1
        elif event == "c_call" and frame.f_code.co_filename.startswith(PROJECT_CODE):
            if arg is isinstance:
                checks[frame.f_code.co_qualname] += 1
            elif getattr(arg, "__qualname__", None) in C_CALLS_COUNTED:
                checks[arg.__qualname__] += 1

    state = server.tables[table].state
    for number in range(moves):
        mover, other = players[state.to_move], players[1 - state.to_move]  # type: ignore[index]
        move = state.legal_moves()[0]
        sys.setprofile(profile)
        try:
            await mover.send(type="move", id=100 + number, table=table, move=move)
            assert (await mover.recv())["type"] == "ok"
            mine, theirs = await mover.recv(), await other.recv()
        finally:
            sys.setprofile(None)
        assert mine["type"] == theirs["type"] == "moved" and not mine["view"].get("forced_pass")
        state = server.tables[table].state
    return calls, checks


async def test_a_move_asks_no_isinstance(server: Server, raw: RawFactory) -> None:
    calls, checks = await moves_work(server, raw, 4)
    assert sum(count for name, count in checks.items() if name not in C_CALLS_COUNTED) == 0, checks  # one that fails costs hundreds of instructions: a request is told by its type
    assert calls["ServerConnection._parse"] == 0 and calls["ServerConnection.receive_frame"] == 4, calls  # parsed in place
    assert calls["Connections.serve_now"] == 0 and calls["Connections._serve_frame"] == 4, calls  # from data_received itself


async def test_a_move_spends_its_token_and_joins_its_movers_frames_without_a_call(server: Server, raw: RawFactory) -> None:
    calls, c_calls = await moves_work(server, raw, 4)
    # A Python call costs hundreds of instructions: the throttle's token is spent in Connections._serve_frame itself
    # (its verdict asked only of a connection in debt), and the mover's moved is joined to its ok as it comes (no
    # list made, and none joined at the flush: the one join a move is the splice of the chooser's legal moves).
    assert calls["Throttle.take"] == calls["Throttle.verdict"] == 0 and calls["Connections._serve_frame"] == 4, calls
    assert c_calls["bytes.join"] == 4, c_calls
    # The shared moved, and the legal moves spliced (and an ok whose id no client used before): the request is not
    # encoded again. Where Othello's views are written in C (server.tables.othello_views) the chooser's view,
    # legal moves and all, is written there too: one encoding a move.
    encodings = 1 if othello_views.view_map is not None else 2
    assert c_calls["Encoder.encode"] - calls["ok_frame"] == 4 * encodings, (c_calls, calls["ok_frame"])


async def test_a_moves_announcement_is_called_by_the_dispatcher_not_through_a_partial(
    server: Server, raw: RawFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.play import authority

    made: list[Any] = []
    real_partial = authority.partial
    monkeypatch.setattr(authority, "partial", lambda *args: made.append(args[0]) or real_partial(*args))
    calls, _ = await moves_work(server, raw, 4)
    # A partial costs its creation and a call through C into a new interpreter frame (about 2,600 instructions):
    # play_move_now leaves (table, ply) and Requests._request calls send_moved itself.
    assert made == [] and calls["send_moved"] == 4 and calls["Requests._request"] == 4, (made, calls)


async def test_a_move_reads_no_property_of_the_position_it_made(server: Server, raw: RawFactory) -> None:
    calls, _ = await moves_work(server, raw, 4)
    # A property read is a Python call (hundreds of instructions): a played Othello position's last_move is a
    # plain attribute, and one turn() tells planning its outcome and whether a pass is forced.
    assert calls["OthelloState.last_move"] == calls["OthelloState.outcome"] == calls["_ShownState.legal_moves"] - 4 == 0, calls
    assert calls["OthelloState.turn"] == 4, calls
    assert calls["OthelloState._placing"] == calls["_ShownState._board"] == 0, calls  # turn() and view() call the accelerator


async def test_a_move_of_an_untimed_game_is_applied_and_announced_without_the_general_steps(server: Server, raw: RawFactory) -> None:
    calls, _ = await moves_work(server, raw, 4)
    # One ply, no clock, no offer, no computer: applied and announced in play_move_now itself, and each seat's
    # frame queued by the bus itself (a call costs hundreds of instructions).
    general = ("Authority._apply_moves", "Table.apply", "Authority._announce_moves", "TableLock.locked", "deliver")
    assert [calls[name] for name in general] == [0, 0, 0, 0, 0] and calls["send_moved"] == 4, calls
    made_once = calls.pop("ok_frame", 0)  # an ok's frame is made once per request id, then kept (ids shared by every client)
    calls["encode_message"] -= made_once  # the ok frame's own encoding
    # 18 a move and the first move's to_move; main before issue 21's fourth round: 19 a move, before its third: 31
    assert made_once <= 4 and sum(calls.values()) <= 4 * 18 + 1, sorted(calls.items())


def test_planning_knows_the_seat_to_move_from_its_last_plan_only_while_that_plan_is_the_position() -> None:
    table = Table.create(1, "othello", {"size": 6}, None)
    table.started = True
    start = table.state
    planned, outcome = table.plan_turn(0, "c2", None)
    assert outcome is None and planned[0].move == "c2"
    assert table.plan_turn(0, "c2", None)[0][0].state.ply == 1, "a plan not applied leaves black to move"
    table.apply(planned)
    with pytest.raises(RequestError) as refused:
        table.plan_turn(0, "b2", None)
    assert refused.value.code == "not_your_turn"
    white, _ = table.plan_turn(1, table.state.legal_moves()[0], None)
    table.state = start  # replaced otherwise (a takeback): the last plan no longer tells who moves
    with pytest.raises(RequestError) as refused:
        table.plan_turn(1, "c2", None)
    assert refused.value.code == "not_your_turn" and table.plan_turn(0, "c2", None)[0][0].move == "c2"


async def test_a_move_asks_no_property_of_the_position_it_is_played_in(server: Server, raw: RawFactory) -> None:
    calls, _ = await moves_work(server, raw, 4)
    assert calls["OthelloState.to_move"] == 1, calls  # the game's first move only: the previous move's turn() told the rest


async def test_an_ok_is_encoded_once_per_request_id(server: Server, raw: RawFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    ann = await raw()
    await ann.hello("ann")
    made: list[int] = []
    original = peer_module.ok_frame

    def counting_ok_frame(request_id: int) -> bytes:
        made.append(request_id)
        return original(request_id)

    monkeypatch.setattr(peer_module, "ok_frame", counting_ok_frame)
    kept, beyond = 3001, peer_module.OK_FRAMES_KEPT + 5
    for request_id in (kept, kept, beyond, beyond):
        await ann.send(type="watch_lobby", id=request_id)
        assert await ann.reply(request_id) == {"type": "ok", "id": request_id}
    assert made == [kept, beyond, beyond], "an ok's frame is kept for ids below OK_FRAMES_KEPT"
    assert peer_module.ok_frame(kept) == encode_frame({"type": "ok", "id": kept})


STORAGE_CODE = tuple(str(Path(server_package.__file__).parent / name) for name in ("storage/statements.py", "play/stored.py"))
"""Where the statements a database would commit are built."""


async def test_a_server_without_a_database_builds_no_statement_in_a_games_whole_life(server: Server, raw: RawFactory) -> None:
    """Without a database nothing is committed, so no statement is built: not for a move (as before), nor for a
    table's creation, its seats, its start, its end or its players leaving (each game's ends cost every move a share)."""
    assert server.store is None
    built: collections.Counter[str] = collections.Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename in STORAGE_CODE:
            built[frame.f_code.co_qualname] += 1

    ann, bob = await raw(), await raw()
    await ann.hello("ann")
    await bob.hello("bob")
    sys.setprofile(profile)
    try:
        table = (await ann.request("create_table", game="othello", options={"size": 6}))["table"]["id"]
        await bob.request("join_table", table=table)
        players = {0: ann, 1: bob} if server.tables[table].seat_names[0] == "ann" else {0: bob, 1: ann}
        state = server.tables[table].state
        while state.outcome is None:
            assert (await players[state.to_move].request("move", table=table, move=state.legal_moves()[0]))["type"] == "ok"  # type: ignore[index]
            state = server.tables[table].state
        for player in (ann, bob):
            assert (await player.request("leave_table", table=table))["type"] == "ok"
        await ann.sync()
    finally:
        sys.setprofile(None)
    assert table not in server.tables, "the game ended and both left: the table is gone"
    assert not built, built  # main before this: create_table_sql, table_row, seats_sql, update_table_sql...
