"""Tactego's hidden strengths never reach a connection that may not see them.

Three raw TCP connections (Red, Blue, a spectator) record every byte the
server sends them while a whole game is played. Afterwards every frame is
decoded from those bytes and checked against the true position.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import games
from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame
from server.app import Server

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
    seed = server.tables[table].seed
    assert isinstance(seed, str) and len(seed) == 16
    await spectator.request("watch_table", table=table)
    await blue.request("join_table", table=table)

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
        views = _views(connection.frames)
        assert views, "the connection received no position at all"
        assert any(cell is not None and cell[1] == "?" for row in views[0]["board"] for cell in row)
        for view in views:
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
