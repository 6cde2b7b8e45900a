"""Tactego's hidden strengths never reach a connection that may not see them.

Raw TCP connections record every byte the server sends them while games are
played (a whole game; the seat hop before the start). Afterwards every frame
is decoded from those bytes and checked against the true position. A secret
setup is dealt only when the game starts; the tests at the end check how the
seed and ``seed_chosen`` are stored in and restored from a real SQLite file.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import games
from client import Client
from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame
from protocol import messages as m
from server.app import Server, ServerConfig

from .conftest import refused

SEED = "hidden-bytes"
OPTIONS = {"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n"}


class RawConnection:
    """A client that speaks the protocol by hand and keeps every byte it received."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.received = bytearray()
        self.decoder = FrameDecoder(max_frame_bytes=1 << 20)
        self.frames: list[dict[str, Any]] = []
        self.next_id = 1

    async def request(self, type_: str, **fields: Any) -> dict[str, Any]:
        request_id, self.next_id = self.next_id, self.next_id + 1
        self.writer.write(encode_frame({"type": type_, "id": request_id, **fields}))
        await self.writer.drain()
        while True:
            for frame in self.frames:
                if frame.get("id") == request_id:
                    assert frame["type"] != "error", frame
                    return frame
            await self._read()

    async def _read(self) -> None:
        data = await asyncio.wait_for(self.reader.read(65536), 10)
        assert data, "server closed the connection"
        self.received += data
        self.frames.extend(self.decoder.feed(data))

    async def until(self, predicate: Any) -> None:
        while not any(predicate(frame) for frame in self.frames):
            await self._read()


async def _connect(server: Server, name: str) -> RawConnection:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    connection = RawConnection(reader, writer)
    await connection.request("hello", version=PROTOCOL_VERSION, name=name)
    return connection


def _views(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [frame["view"] for frame in frames if "view" in frame]


def _waiting(frame: dict[str, Any]) -> bool:
    """Whether ``frame`` shows a table whose game has not started."""
    return isinstance(frame.get("table"), dict) and frame["table"].get("status") == "waiting"


def _waiting_views(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _views([frame for frame in frames if _waiting(frame)])


def _ranks_seen(view: dict[str, Any]) -> set[tuple[int, int, int, str]]:
    return {
        (view["ply"], r, c, cell[1])
        for r, row in enumerate(view["board"])
        for c, cell in enumerate(row)
        if cell is not None and cell[1] != "?"
    }


async def test_no_hidden_strength_reaches_the_opponent_or_a_spectator(server: Server) -> None:
    red, blue, spectator = [await _connect(server, name) for name in ("red", "blue", "watcher")]
    joined = await red.request("create_table", game="tactego", options=OPTIONS)  # the server draws the seed
    table = joined["table"]["id"]
    assert joined["table"]["seed"] is None, "the setup seed would reveal the hidden board"
    assert server.tables[table].seed is None, "the setup is dealt only when the game starts"
    await spectator.request("watch_table", table=table)
    await blue.request("join_table", table=table)
    seed = server.tables[table].seed
    assert isinstance(seed, str) and len(seed) == 16

    engine = games.get("tactego").new_state(OPTIONS, seed)
    open_engine = games.get("tactego").new_state({**OPTIONS, "hidden": False}, seed)
    states, open_views = [engine], {0: open_engine.view(None)}
    rng = random.Random(7)
    players = {0: red, 1: blue}
    while engine.outcome is None:
        move = rng.choice(engine.legal_moves())
        await players[engine.to_move].request("move", table=table, move=move)
        engine = engine.play(move)
        open_engine = open_engine.play(move)
        states.append(engine)
        open_views[open_engine.ply] = open_engine.view(None)
    for connection in (red, blue, spectator):
        await connection.until(lambda frame: frame.get("type") == "game_over")

    by_ply = {state.ply: state for state in states}
    for connection, seat in ((red, 0), (blue, 1), (spectator, None)):
        assert FrameDecoder(max_frame_bytes=1 << 20).feed(bytes(connection.received)) == connection.frames
        for view in _waiting_views(connection.frames):
            assert not _ranks_seen(view), "a rank was sent before the game started"
        views = _views([frame for frame in connection.frames if not _waiting(frame)])
        assert views, "the connection received no position at all"
        assert any(cell is not None and cell[1] == "?" for row in views[0]["board"] for cell in row)
        final = [view for view in views if view["outcome"] is not None]
        assert [view["ply"] for view in final] == [engine.ply], "only the last move's view shows the end"
        for view in final:  # the game is over: the setup is public, every strength shown to everyone
            assert view == engine.revealed().view(seat)
            assert view["board"] == open_views[engine.ply]["board"]
        for view in views[: len(views) - len(final)]:
            # Every view sent is exactly the engine's view for this seat, whose
            # hiding is proven in the engine's own tests ...
            assert view == by_ply[view["ply"]].view(seat)
            # ... and, checked directly: every strength shown is the viewer's own
            # piece, a piece that has fought, or hidden is off.
            truth = open_views[view["ply"]]["board"]
            for _ply, r, c, rank in _ranks_seen(view):
                owner = view["board"][r][c][0]
                square = f"{chr(ord('a') + c)}{r + 1}"
                assert owner == seat or square in view["revealed"], (seat, square, rank)
                assert truth[r][c][1] == rank
        unfinished = [frame for frame in connection.frames if frame.get("type") in ("table_updated", "table_joined")]
        for frame in unfinished:
            if frame["table"]["status"] != "over":
                assert frame["table"].get("seed") is None
    # The secret seed's bytes reach nobody before the game is over.
    for connection in (red, blue, spectator):
        over_at = next(i for i, f in enumerate(connection.frames) if f.get("type") == "game_over")
        before = connection.frames[:over_at]
        assert seed not in repr(before)
    for connection in (red, blue, spectator):
        connection.writer.close()


async def test_a_seed_chosen_by_a_player_is_shown_to_everyone(server: Server) -> None:
    """Whoever chooses the seed can work out the whole hidden setup, so the others must be able to as well."""
    red, blue = [await _connect(server, name) for name in ("red", "blue")]
    joined = await red.request("create_table", game="tactego", options=OPTIONS, seed=SEED)
    table = joined["table"]["id"]
    assert joined["table"]["seed"] == SEED
    listed = await blue.request("list_tables")
    assert [t["seed"] for t in listed["tables"] if t["id"] == table] == [SEED]
    started = await blue.request("join_table", table=table)
    assert started["table"]["seed"] == SEED and started["table"]["status"] == "playing"
    for connection in (red, blue):
        connection.writer.close()


# --- nothing is dealt before the game starts ----------------------------------------------------


def _all_views(value: Any) -> list[dict[str, Any]]:
    """Every position map anywhere inside a decoded frame (any key, any depth)."""
    if isinstance(value, dict):
        found = [value] if "board" in value and "revealed" in value else []
        return found + [view for item in value.values() for view in _all_views(item)]
    if isinstance(value, list):
        return [view for item in value for view in _all_views(item)]
    return []


def _decoded(connection: RawConnection) -> list[dict[str, Any]]:
    """Every frame in the bytes the connection received, decoded afresh from those bytes."""
    frames = FrameDecoder(max_frame_bytes=1 << 20).feed(bytes(connection.received))
    assert frames == connection.frames
    return frames


async def test_seat_hopping_before_the_start_reveals_nothing_of_the_victims_setup(server: Server) -> None:
    """The attack: sit as Red, keep the table open with a second connection, hop to Blue, wait for a Red victim.

    Every byte the attacker's two connections receive is decoded; no Red
    strength may be in it unless a combat revealed that piece, and before the
    game starts nobody (the victim included) receives any strength at all.
    """
    mallory = await _connect(server, "mallory")
    lookout = await _connect(server, "lookout")  # the attacker's second connection
    victim = await _connect(server, "victim")
    created = await mallory.request("create_table", game="tactego", options=OPTIONS, seat=0)
    table = created["table"]["id"]
    await lookout.request("watch_table", table=table)
    await mallory.request("leave_table", table=table)
    await mallory.request("join_table", table=table, seat=1)
    assert server.tables[table].status == "waiting"
    started = await victim.request("join_table", table=table, seat=0)
    assert started["table"]["status"] == "playing" and started["seat"] == 0
    for connection in (mallory, lookout, victim):
        await connection.until(lambda frame: frame.get("type") == "game_started")
    seed = server.tables[table].seed
    assert isinstance(seed, str)

    engine = games.get("tactego").new_state(OPTIONS, seed)
    truth = {0: games.get("tactego").new_state({**OPTIONS, "hidden": False}, seed)}
    rng = random.Random(3)
    players = {0: victim, 1: mallory}
    while engine.outcome is None and engine.ply < 60:
        move = rng.choice(engine.legal_moves())
        await players[engine.to_move].request("move", table=table, move=move)
        engine = engine.play(move)
        truth[engine.ply] = truth[engine.ply - 1].play(move)
    for connection in (mallory, lookout, victim):
        await connection.until(lambda frame: frame.get("type") == "moved" and frame["ply"] == engine.ply)

    for connection in (mallory, lookout, victim):
        frames = _decoded(connection)
        start = next(i for i, frame in enumerate(frames) if frame.get("type") == "game_started")
        for frame in frames[:start]:
            if frame.get("type") == "table_joined" and frame["table"]["status"] == "playing":
                continue  # the reply that started the game, sent just before game_started
            for view in _all_views(frame):
                assert not _ranks_seen(view), f"a strength was sent before the game started: {frame}"
    for connection in (mallory, lookout):
        frames = _decoded(connection)
        for view in (view for frame in frames for view in _all_views(frame)):
            board = truth[view["ply"]].view(None)["board"]
            if view["outcome"] is not None:  # the game is over: the setup is public now
                assert view["board"] == board
                continue
            for _ply, r, c, rank in _ranks_seen(view):
                if view["board"][r][c][0] != 0:
                    continue
                square = f"{chr(ord('a') + c)}{r + 1}"
                assert square in view["revealed"], f"Red's unrevealed {square} ({rank}) reached the attacker"
                assert board[r][c] == [0, rank]
        over_at = next((i for i, frame in enumerate(frames) if frame.get("type") == "game_over"), len(frames))
        assert seed not in repr(frames[:over_at]), "the secret seed reached the attacker before the game was over"
    for connection in (mallory, lookout, victim):
        connection.writer.close()


async def test_a_resumed_seat_at_a_waiting_table_gets_no_strengths(configured_server: Any) -> None:
    server = await configured_server(grace_s=5.0)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    table = (await ann.create_table("tactego", OPTIONS, seat=0)).table.id
    token = ann.token
    await ann.close()
    back = await Client.connect("127.0.0.1", server.port, name="ann", token=token)
    try:
        resumed = await back.next_event(m.Resumed, timeout_s=5.0)
        assert resumed.table.id == table and resumed.seat == 0 and resumed.table.status == "waiting"
        assert not _ranks_seen(resumed.view), "a waiting seat's own setup is not dealt yet"
        assert resumed.view["board"][0][0] == [0, "?"]
    finally:
        await back.close()


# --- the seed in the database --------------------------------------------------------------------


async def _running(db: Path) -> Server:
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_path=str(db), grace_s=5.0))
    await server.start()
    return server


def _stored_seed(db: Path, table: int) -> Any:
    """The table's seed as the database file holds it (read with a connection of its own)."""
    connection = sqlite3.connect(db)
    try:
        return connection.execute("SELECT seed FROM tables WHERE id = ?", (table,)).fetchone()[0]
    finally:
        connection.close()


async def test_a_chosen_seed_stays_public_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    first = await _running(db)
    ann = await Client.connect("127.0.0.1", first.port, name="ann")
    table = (await ann.create_table("tactego", OPTIONS, seed=SEED, seat=0)).table.id
    await ann.close()
    await first.close()

    second = await _running(db)
    try:
        bob = await Client.connect("127.0.0.1", second.port, name="bob")
        listed = {info.id: info for info in await bob.list_tables()}
        assert listed[table].seed == SEED, "a seed a player chose is public, before and after a restart"
        await bob.close()
    finally:
        await second.close()


async def test_a_drawn_secret_setup_is_stored_as_the_game_starts_and_restored_from_the_row(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    first = await _running(db)
    ann = await Client.connect("127.0.0.1", first.port, name="ann")
    table = (await ann.create_table("tactego", OPTIONS, seat=0)).table.id
    assert _stored_seed(db, table) is None, "no setup is dealt while the table waits"
    await ann.close()
    await first.close()

    second = await _running(db)  # the waiting table comes back, still not dealt
    bob = await Client.connect("127.0.0.1", second.port, name="bob")
    await bob.join_table(table)
    seed = second.tables[table].seed
    assert isinstance(seed, str) and _stored_seed(db, table) == seed
    engine = games.get("tactego").new_state(OPTIONS, seed)
    started = second.tables[table].view_for(1)
    assert started == engine.view(1)
    await bob.close()
    await second.close()

    third = await _running(db)  # the game in play comes back with the seed of its row
    try:
        assert third.tables[table].seed == seed and third.tables[table].status == "playing"
        assert third.tables[table].view_for(0) == engine.view(0)
    finally:
        await third.close()


STUCK = {"rows": 4, "cols": 2, "pieces": "F 3\n5 1\n"}
"""Tactego options under which many setups leave Red no legal move (seed ``"stuck-0"`` does)."""


async def test_a_chosen_setup_that_is_already_decided_is_over_from_the_start(connect) -> None:
    ann = await connect("ann")
    error = await refused(ann.create_table("tactego", STUCK, seed="stuck-0", seat=0), "game_over")
    assert "Red has no legal move" in error.message
    watched = await ann.create_table("tactego", STUCK, seed="stuck-0", seat=None)
    assert watched.table.status == "over"


async def test_a_game_decided_by_its_setup_waits_then_ends_as_it_starts(tmp_path: Path) -> None:
    assert games.get("tactego").new_state(STUCK, "stuck-0").outcome is not None
    db = tmp_path / "parlour.sqlite3"
    server = await _running(db)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        for _attempt in range(40):  # about half of the drawn setups leave Red no move
            created = await ann.create_table("tactego", STUCK, seat=0)
            table = created.table.id
            assert created.table.status == "waiting"
            assert [info.status for info in await bob.list_tables()] == ["waiting"]
            await bob.join_table(table)
            started = [await player.next_event(m.GameStarted, timeout_s=5.0) for player in (ann, bob)]
            if started[0].view.get("outcome") is not None:
                break
            await ann.resign(table)
            for player in (ann, bob):
                await _game_over(player, table)
                await player.leave_table(table)
        else:
            pytest.fail("no drawn setup left Red without a move")
        for player in (ann, bob):
            over = await _game_over(player, table)
            assert over.outcome == {"winner": 1, "reason": "Red has no legal move", "score": None}
        connection = sqlite3.connect(db)
        stored = connection.execute("SELECT status, outcome FROM tables WHERE id = ?", (table,)).fetchall()
        connection.close()
        assert stored == [("over", '{"winner":1,"reason":"Red has no legal move","score":null}')]
    finally:
        await ann.close()
        await bob.close()
        await server.close()


async def _game_over(player: Client, table: int) -> m.GameOver:
    while (over := await player.next_event(m.GameOver, timeout_s=5.0)).table != table:
        pass
    return over


async def test_a_rematch_decided_by_its_fresh_setup_ends_as_it_starts(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    server = await _running(db)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        table = (await ann.create_table("tactego", STUCK, seat=0)).table.id
        await bob.join_table(table)
        if (await ann.next_event(m.GameStarted, timeout_s=5.0)).view.get("outcome") is None:
            await ann.resign(table)
        for _attempt in range(40):  # about half of the fresh setups leave Red no move
            await ann.offer(table, "rematch")
            await bob.answer(table, "rematch", True)
            rematch = (await ann.next_event(m.RematchStarted, timeout_s=5.0)).table.id
            for player in (ann, bob):
                await player.leave_table(table)
            table = rematch
            if server.tables[table].state.outcome is not None:
                break
            await ann.resign(table)
        else:
            pytest.fail("no rematch setup left Red without a move")
        for player in (ann, bob):
            over = await _game_over(player, table)
            assert over.outcome["reason"] == "Red has no legal move"
        connection = sqlite3.connect(db)
        status = connection.execute("SELECT status FROM tables WHERE id = ?", (table,)).fetchone()
        connection.close()
        assert status == ("over",)
    finally:
        await ann.close()
        await bob.close()
        await server.close()
