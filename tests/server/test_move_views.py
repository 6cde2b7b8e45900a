"""What a move sends each receiver, over real sockets (issue 21's cuts must not change a byte).

Othello's views are built by the C accelerator (where it was built) and
shared between every receiver but the seat to move; each frame received must
be, byte for byte, the frame of the pure-Python engine's view for that
receiver. Tactego hides ranks: its seats' frames must never be shared.
"""

from __future__ import annotations

import asyncio
import random
import struct
from typing import Any, Iterator

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from games import othello
from protocol.codec import ENCODER
from protocol.messages import Moved
from server.app import Server
from server.tables import fanout, othello_views

from .conftest import Raw, RawFactory


async def raw_frames(connection: Raw, count: int, timeout_s: float = 10.0) -> list[bytes]:
    """Read the next ``count`` frames ``connection`` receives, each as its body's bytes (no header)."""
    assert not connection.inbox, "frames were already decoded"
    data, bodies = b"", []
    while len(bodies) < count:
        while len(data) >= 4 and len(data) >= 4 + struct.unpack(">I", data[:4])[0]:
            size = struct.unpack(">I", data[:4])[0]
            bodies.append(data[4:4 + size])
            data = data[4 + size:]
        if len(bodies) < count:
            chunk = await asyncio.wait_for(connection.reader.read(65536), timeout_s)
            assert chunk, "the server closed the connection"
            data += chunk
    assert not data and len(bodies) == count, "more frames came than expected"
    return bodies


@pytest.fixture
def pure_engine() -> Iterator[None]:
    """Run the Othello engine in pure Python in this process while the test builds its expected views."""
    yield
    othello.use_accelerator(True)


def expected_moved(body: bytes, view: dict[str, Any]) -> bytes:
    """The body of the ``moved`` ``body`` is, with ``view`` in place of its view, encoded as the server encodes."""
    sent = msgpack.unpackb(body)
    message = Moved(table=sent["table"], seat=sent["seat"], move=sent["move"], ply=sent["ply"],
                    view=view, forced=sent.get("forced", False), clock=sent.get("clock"))  # fmt: skip
    return ENCODER.encode(message)


async def test_every_othello_receiver_gets_the_pure_engines_frame_byte_for_byte(server: Server, raw: RawFactory, pure_engine: None) -> None:
    ann, bob, fan, fan2 = [await raw() for _ in range(4)]
    for connection, name in ((ann, "ann"), (bob, "bob"), (fan, "fan"), (fan2, "fan2")):
        await connection.hello(name)
    table = (await ann.request("create_table", game="othello", options={"size": 8}))["table"]["id"]
    for spectator in (fan, fan2):
        await spectator.request("watch_table", table=table)
    await bob.request("join_table", table=table)
    for connection in (ann, bob, fan, fan2):
        await connection.sync()
    state = server.tables[table].state
    assert othello.accelerated() == (othello._othello_accel is not None)
    rng, moves, received = random.Random(21), [], {name: [] for name in ("ann", "bob", "fan", "fan2")}
    players = (ann, bob)
    for _ in range(24):
        if state.outcome is not None:
            break
        move = rng.choice(state.legal_moves())
        mover = players[state.to_move]
        await mover.send(type="move", id=1000 + len(moves), table=table, move=move)
        for connection, name in ((ann, "ann"), (bob, "bob"), (fan, "fan"), (fan2, "fan2")):
            bodies = await raw_frames(connection, 2 if connection is mover else 1)
            received[name].append(bodies[-1])
        moves.append(move)
        state = server.tables[table].state
    assert len(moves) == 24
    othello.use_accelerator(False)
    pure = games.get("othello").new_state({"size": 8})
    for index, move in enumerate(moves):
        pure = pure.play(move)
        for name, seat in (("ann", 0), ("bob", 1), ("fan", None), ("fan2", None)):
            body = received[name][index]
            assert msgpack.unpackb(body)["type"] == "moved"
            assert body == expected_moved(body, pure.view(seat)), (name, index, move)
        assert received["fan"][index] == received["fan2"][index]
        other = ("ann", "bob")[1 - pure.to_move] if pure.to_move is not None else "ann"
        assert received[other][index] == received["fan"][index], "the seat not choosing shares the spectators' bytes"


TACTEGO = {"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n"}


async def test_tactego_seats_never_get_each_others_or_the_spectators_bytes(server: Server, raw: RawFactory) -> None:
    red, blue, fan, fan2 = [await raw() for _ in range(4)]
    for connection, name in ((red, "red"), (blue, "blue"), (fan, "fan"), (fan2, "fan2")):
        await connection.hello(name)
    table = (await red.request("create_table", game="tactego", options=TACTEGO))["table"]["id"]
    for spectator in (fan, fan2):
        await spectator.request("watch_table", table=table)
    await blue.request("join_table", table=table)
    for connection in (red, blue, fan, fan2):
        await connection.sync()
    assert not games.get("tactego").public_views
    rng, players = random.Random(5), (red, blue)
    for turn in range(6):
        state = server.tables[table].state
        if state.outcome is not None:
            break
        mover = players[state.to_move]
        await mover.send(type="move", id=2000 + turn, table=table, move=rng.choice(state.legal_moves()))
        frames = {}
        for connection, name in ((red, "red"), (blue, "blue"), (fan, "fan"), (fan2, "fan2")):
            frames[name] = (await raw_frames(connection, 2 if connection is mover else 1))[-1]
        after = server.tables[table].state
        for name, seat in (("red", 0), ("blue", 1), ("fan", None), ("fan2", None)):
            assert msgpack.unpackb(frames[name])["view"] == after.view(seat), (name, turn)
        assert frames["fan"] == frames["fan2"], "spectators share one encoding"
        assert len({frames["red"], frames["blue"], frames["fan"]}) == 3, "a seat got bytes made for another view"
    assert turn == 5


@pytest.mark.parametrize(("size", "seed", "passes", "time_control"), [(6, 1, 2, None), (8, 2, 2, None), (8, 2, 2, "5+3")])
async def test_a_whole_othello_game_with_forced_passes_gets_the_pure_engines_frames(
    server: Server, raw: RawFactory, pure_engine: None, size: int, seed: int, passes: int, time_control: str | None
) -> None:
    """To its end: the plies after which the server plays a pass, the passes, and the last move (issue 21's running path).

    On 8x8 the views of a game that goes on are written in C where it was built (:mod:`server.tables.othello_views`),
    the seat to move's spliced in (untimed) or encoded whole (timed: the clock follows the view).
    """
    ann, bob, fan = [await raw() for _ in range(3)]
    for connection, name in ((ann, "ann"), (bob, "bob"), (fan, "fan")):
        await connection.hello(name)
    timed = {} if time_control is None else {"time_control": time_control}
    table = (await ann.request("create_table", game="othello", options={"size": size}, **timed))["table"]["id"]
    assert (server.tables[table].view_map is not None) == (size == 8 and othello_views.view_map is not None)
    await fan.request("watch_table", table=table)
    await bob.request("join_table", table=table)
    for connection in (ann, bob, fan):
        await connection.sync()
    rng, moves, received = random.Random(seed), [], {name: [] for name in ("ann", "bob", "fan")}
    players, state = (ann, bob), server.tables[table].state
    while state.outcome is None:
        move = rng.choice(state.legal_moves())
        mover = players[state.to_move]
        await mover.send(type="move", id=3000 + len(moves), table=table, move=move)
        for _ in range(1000):  # the server applies the plies before it sends their frames
            if server.tables[table].state is not state:
                break
            await asyncio.sleep(0.005)
        after = server.tables[table].state
        count = after.ply - state.ply + (after.outcome is not None)  # each ply's moved, then game_over at the end
        for connection, name in ((ann, "ann"), (bob, "bob"), (fan, "fan")):
            bodies = await raw_frames(connection, count + (connection is mover))
            received[name].extend(body for body in bodies if msgpack.unpackb(body)["type"] == "moved")
        moves.append(move)
        state = after
    othello.use_accelerator(False)
    pure, index = games.get("othello").new_state({"size": size}), 0
    for move in moves:
        pure = pure.play(move)
        plies = [pure]
        while pure.outcome is None and pure.legal_moves() == ["pass"]:
            pure = pure.play("pass")
            plies.append(pure)
        for ply, position in enumerate(plies):
            view_of_seat = {seat: position.view(seat) for seat in (0, 1, None)}
            if ply < len(plies) - 1:  # the server plays the pass next: nobody's to choose
                for view in view_of_seat.values():
                    view.pop("legal_moves", None)
                    view["forced_pass"] = True
            for name, seat in (("ann", 0), ("bob", 1), ("fan", None)):
                body = received[name][index]
                assert body == expected_moved(body, view_of_seat[seat]), (name, index, move)
            index += 1
    assert pure.outcome is not None and index == len(received["fan"])
    assert sum(msgpack.unpackb(body).get("forced", False) for body in received["fan"]) == passes, "the seed's forced passes"
    if time_control is not None:
        assert all("clock" in msgpack.unpackb(body) for body in received["fan"])


@settings(max_examples=300, deadline=None)
@given(
    table=st.sampled_from([1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**40]),
    seat=st.sampled_from([0, 1]),
    ply=st.sampled_from([0, 1, 127, 128, 255, 256, 65535, 65536, 2**32]),
    move=st.one_of(st.sampled_from(["d3", "pass", "a10", "", "view", "x" * 31, "x" * 32, "é4", "\xa4view", "\xa4view\x85", "view" * 41]), st.text(max_size=40)),
    keys=st.integers(0, 16),
    forced=st.booleans(),
    clock=st.sampled_from([None, {"remaining_ms": [1000, 2000], "running": 0}]),
    legal=st.lists(st.text(max_size=4), max_size=20),
)
def test_the_seat_to_moves_frame_is_the_shared_one_with_its_legal_moves_spliced_in(
    table: int, seat: int, ply: int, move: str, keys: int, forced: bool, clock: Any, legal: list[str]
) -> None:
    view = {f"k{index}": index for index in range(keys)}
    shared = Moved(table=table, seat=seat, move=move, ply=ply, view=view, forced=forced, clock=clock)
    frame = fanout._with_legal_moves(ENCODER.encode(shared), shared, legal)
    whole = ENCODER.encode(Moved(table=table, seat=seat, move=move, ply=ply, view={**view, "legal_moves": legal}, forced=forced, clock=clock))
    ordinary = not forced and clock is None and keys < 15 and table < 2**32 and ply < 2**32 and b"\xa4view" not in ENCODER.encode(move)
    assert (frame is not None) == ordinary, "spliced exactly where the view is the body's last entry and a small map"
    if frame is not None:
        assert frame == struct.pack(">I", len(whole)) + whole
