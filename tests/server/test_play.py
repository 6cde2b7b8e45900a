"""Playing at a table, and the server's robustness, over real sockets.

Games are Othello, driven with moves computed by the engine itself
(``games.get("othello")``): the test keeps its own copy of the position and
checks that every client sees the same thing the engine says.
"""

from __future__ import annotations

import asyncio
import random
import struct
from typing import Any

import msgpack
import pytest

import games
from client import Client
from protocol import PROTOCOL_VERSION, encode_frame
from protocol import messages as m

from ..conftest import GRACE_S
from .conftest import TIMEOUT_S, Raw, refused

OTHELLO = games.get("othello")


# --- helpers ----------------------------------------------------------------------


async def next_of(client: Client, kind: type[m.Message] | tuple[type[m.Message], ...]) -> Any:
    """The next push of ``kind``; fails if a push of another table-level kind comes first."""
    table_level = (m.Moved, m.GameOver, m.GameStarted)
    while True:
        event = await client.next_event(timeout_s=TIMEOUT_S)
        if isinstance(event, kind):
            return event
        assert not isinstance(event, table_level), f"expected {kind}, got {event}"


def random_game(seed: int, size: int = 8) -> list[str]:
    """Every move of a game of random legal moves (passes included)."""
    rng = random.Random(seed)
    state = OTHELLO.new_state({"size": size})
    moves: list[str] = []
    while state.outcome is None:
        move = rng.choice(state.legal_moves())
        moves.append(move)
        state = state.play(move)
    return moves


def sent_view(state: Any, seat: int | None) -> dict[str, Any]:
    """The engine's view as PROTOCOL.md §9 says the server sends it: a pass the server will play is flagged, not offered."""
    view = state.view(seat)
    if state.outcome is None and state.legal_moves() == ["pass"]:
        view.pop("legal_moves", None)
        view["forced_pass"] = True
    return view


def game_with_pass(size: int = 6) -> tuple[int, list[str]]:
    """The first seed (from 0) whose random game has a forced pass; fails if none in 500."""
    for seed in range(500):
        moves = random_game(seed, size)
        if "pass" in moves:
            return seed, moves
    raise AssertionError("no random game with a pass")


class Game:
    """A table with two seated clients and any spectators, and the engine's copy of the position."""

    def __init__(self, table_id: int, players: list[Client], spectators: list[Client], size: int) -> None:
        self.id = table_id
        self.players = players
        self.spectators = spectators
        self.state = OTHELLO.new_state({"size": size})
        self.moves: list[str] = []

    @property
    def everyone(self) -> list[tuple[Client, int | None]]:
        return [(client, seat) for seat, client in enumerate(self.players)] + [(c, None) for c in self.spectators]

    @classmethod
    async def start(cls, black: Client, white: Client, *spectators: Client, size: int = 8) -> "Game":
        table_id = (await black.create_table("othello", {"size": size}, seat=0)).table.id
        for spectator in spectators:
            await spectator.watch_table(table_id)
        await white.join_table(table_id, seat=1)
        for client in (black, white, *spectators):
            started = await next_of(client, m.GameStarted)
            assert started.table == table_id
        return cls(table_id, [black, white], list(spectators), size)

    async def play(self, move: str) -> list[str]:
        """Have the seat to move play ``move`` (with the ply); check every client's ``moved`` pushes.

        Returns the plies applied: the move, then any forced passes.
        """
        mover = self.state.to_move
        assert mover is not None
        ply = self.state.ply
        await self.players[mover].move(self.id, move, ply=ply)
        expected: list[tuple[int, str, bool, Any]] = []
        state = self.state.play(move)
        expected.append((mover, state.last_move, False, state))
        while state.outcome is None and state.legal_moves() == ["pass"]:
            passer = state.to_move
            state = state.play("pass")
            expected.append((passer, "pass", True, state))
        for client, seat in self.everyone:
            for passer, notation, forced, after in expected:
                moved = await next_of(client, m.Moved)
                assert (moved.table, moved.seat, moved.move, moved.ply, moved.forced) == (
                    self.id, passer, notation, after.ply, forced,
                ), (client.name, moved)
                assert moved.view == sent_view(after, seat), (client.name, moved.view)
        self.state = state
        self.moves.extend(notation for _, notation, _, _ in expected)
        return [notation for _, notation, _, _ in expected]

    async def play_out(self, moves: list[str]) -> None:
        """Play the rest of ``moves`` (the passes are the server's to play)."""
        assert moves[: len(self.moves)] == self.moves
        for move in moves[len(self.moves) :]:
            if move != "pass":
                await self.play(move)
        assert self.moves == moves

    async def outcomes(self) -> list[dict[str, Any]]:
        """Every client's ``game_over`` outcome."""
        result = []
        for client, _ in self.everyone:
            over = await next_of(client, m.GameOver)
            assert over.table == self.id
            result.append(over.outcome)
        return result


async def table_info(client: Client, table_id: int) -> m.TableInfo:
    for table in await client.list_tables():
        if table.id == table_id:
            return table
    raise AssertionError(f"no table {table_id}")


async def assert_no_table_push(client: Client) -> None:
    """Nothing table-level (moved, game_over) is waiting for ``client``: ping, then look."""
    await client.ping()
    while True:
        try:
            event = await client.next_event(timeout_s=0.05)
        except (asyncio.TimeoutError, TimeoutError):
            return
        assert not isinstance(event, (m.Moved, m.GameOver, m.GameStarted)), event


@pytest.fixture
async def trio(connect) -> tuple[Client, Client, Client]:
    """Three connected clients: ann (Black), bob (White), cat (spectator)."""
    return await connect("ann"), await connect("bob"), await connect("cat")


# --- refusals ------------------------------------------------------------------------


async def test_move_before_the_opponent_joined_is_not_started(connect) -> None:
    ann = await connect("ann")
    table_id = (await ann.create_table("othello")).table.id
    error = await refused(ann.move(table_id, "d3"), "not_started")
    assert str(table_id) in error.message
    await refused(ann.resign(table_id), "not_started")
    info = await table_info(ann, table_id)
    assert (info.ply, info.status) == (0, "waiting")


async def test_move_out_of_turn(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    error = await refused(bob.move(game.id, "c4"), "not_your_turn")
    assert "Black" in error.message
    await game.play("d3")
    await refused(ann.move(game.id, "c3"), "not_your_turn")
    await assert_no_table_push(cat)


async def test_spectator_moving_is_not_seated(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    error = await refused(cat.move(game.id, "d3"), "not_seated")
    assert str(game.id) in error.message
    assert (await table_info(cat, game.id)).ply == 0


async def test_player_of_another_table_moving_here_is_not_seated(connect) -> None:
    ann, bob, cat, dan = [await connect(name) for name in ("ann", "bob", "cat", "dan")]
    here = await Game.start(ann, bob)
    there = await Game.start(cat, dan)
    await refused(cat.move(here.id, "d3"), "not_seated")
    await refused(dan.move(here.id, "d3"), "not_seated")
    await refused(ann.move(there.id, "d3"), "not_seated")
    assert (await table_info(ann, here.id)).ply == 0
    assert (await table_info(ann, there.id)).ply == 0
    await here.play("d3")
    await there.play("f5")


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("a1", "a1 flips nothing"),
        ("d4", "d4 is occupied"),
        ("pass", "pass is allowed only when no disc can be placed"),
        ("z9", "z9 is off the 8x8 board"),
        ("a99", "a99 is off the 8x8 board"),
    ],
)
async def test_illegal_move_gives_the_engines_reason(trio, move: str, reason: str) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    error = await refused(ann.move(game.id, move), "illegal_move")
    assert reason in error.message
    with pytest.raises(games.IllegalMove) as engine:
        game.state.play(move)
    assert error.message == engine.value.reason
    await assert_no_table_push(cat)
    await game.play("d3")  # still Black's turn, same position


@pytest.mark.parametrize("move", ["xyz", "d", "33", "dd3", "\x00", "é4"])
async def test_unparseable_move_is_illegal(trio, move: str) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    error = await refused(ann.move(game.id, move), "illegal_move")
    assert "not a square" in error.message or "off the" in error.message
    assert (await table_info(cat, game.id)).ply == 0


async def test_forgiving_notation_is_stored_canonically(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await ann.move(game.id, " D 3 ")
    for client in (ann, bob, cat):
        moved = await next_of(client, m.Moved)
        assert moved.move == "d3"


async def test_stale_ply(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await game.play("d3")
    error = await refused(bob.move(game.id, "c3", ply=0), "stale_ply")
    assert "1" in error.message
    await refused(bob.move(game.id, "c3", ply=2), "stale_ply")
    assert (await table_info(cat, game.id)).ply == 1
    await game.play("c3")  # with the right ply
    await ann.move(game.id, game.state.legal_moves()[0])  # no ply: accepted


async def test_mover_gets_ok_before_the_moved_push(raw, connect) -> None:
    conn = await raw()
    await conn.hello("ann")
    bob = await connect("bob")
    created = await conn.request("create_table", game="othello", options={}, seat=0)
    table_id = created["table"]["id"]
    await bob.join_table(table_id)
    pushes = await conn.sync()
    assert [p["type"] for p in pushes if p["type"] == "game_started"] == ["game_started"]
    await conn.send(type="move", id=500, table=table_id, move="d3", ply=0)
    first, second = await conn.recv(), await conn.recv()
    assert first == {"type": "ok", "id": 500}
    assert second["type"] == "moved" and second["move"] == "d3" and second["ply"] == 1
    assert "id" not in second


async def test_everyone_gets_moved_with_their_own_view(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await ann.move(game.id, "d3", ply=0)
    after = OTHELLO.new_state().play("d3")
    views = {}
    for client, seat in game.everyone:
        moved = await next_of(client, m.Moved)
        assert (moved.seat, moved.move, moved.ply, moved.forced) == (0, "d3", 1, False)
        views[seat] = moved.view
    assert views[0] == after.view(0) and "legal_moves" not in views[0]
    assert views[1] == after.view(1) and views[1]["legal_moves"] == after.legal_moves()
    assert views[None] == after.view(None) and "legal_moves" not in views[None]
    assert views[None]["board"] == after.rows()
    assert views[None]["to_move"] == 1 and views[None]["ply"] == 1 and views[None]["last_move"] == "d3"


async def test_full_game_to_the_end(trio, connect) -> None:
    ann, bob, cat = trio
    moves = random_game(seed=3)
    game = await Game.start(ann, bob, cat)
    await game.play_out(moves)
    outcomes = await game.outcomes()
    expected = game.state.outcome
    assert expected is not None
    assert outcomes == [expected.to_dict()] * 3
    info = await table_info(cat, game.id)
    assert info.status == "over" and info.ply == len(moves) and info.outcome == expected.to_dict()
    # a latecomer sees the whole game
    dan_view = await (await connect("dan")).watch_table(game.id)
    assert dan_view.moves == moves
    assert dan_view.view["outcome"] == expected.to_dict()


async def test_forced_pass_is_played_by_the_server(trio) -> None:
    ann, bob, cat = trio
    seed, moves = game_with_pass(size=6)
    game = await Game.start(ann, bob, cat, size=6)
    sent: list[str] = []
    passes_seen = 0
    for move in moves:
        if move == "pass":
            continue
        sent.append(move)
        applied = await game.play(move)  # checks every client's moved pushes, forced flag included
        passes_seen += applied.count("pass")
    assert "pass" not in sent
    assert passes_seen == moves.count("pass") >= 1, seed
    assert game.moves == moves
    outcomes = await game.outcomes()
    assert outcomes == [game.state.outcome.to_dict()] * 3  # type: ignore[union-attr]


async def test_resign_makes_the_opponent_win(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await game.play("d3")
    await ann.resign(game.id)  # Black resigns on White's turn
    outcomes = await game.outcomes()
    assert all(outcome["winner"] == 1 for outcome in outcomes)
    assert all("resign" in outcome["reason"] for outcome in outcomes)
    assert len({repr(outcome) for outcome in outcomes}) == 1
    info = await table_info(cat, game.id)
    assert info.status == "over" and info.outcome == outcomes[0]


async def test_resign_by_white_on_blacks_turn(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await bob.resign(game.id)
    assert [outcome["winner"] for outcome in await game.outcomes()] == [0, 0, 0]


async def test_resign_by_spectator_is_not_seated(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await refused(cat.resign(game.id), "not_seated")
    info = await table_info(cat, game.id)
    assert info.status == "playing" and info.outcome is None
    await assert_no_table_push(ann)


async def test_after_game_over_moves_and_resigns_are_refused(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await bob.resign(game.id)
    await game.outcomes()
    for client in (ann, bob):
        error = await refused(client.move(game.id, "d3"), "game_over")
        assert str(game.id) in error.message
        await refused(client.resign(game.id), "game_over")
    await refused(cat.move(game.id, "d3"), "not_seated")
    await assert_no_table_push(cat)


async def test_move_after_a_natural_end_is_game_over(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    game = await Game.start(ann, bob, size=6)
    await game.play_out(random_game(seed=0, size=6))
    await game.outcomes()
    await refused(ann.move(game.id, "a1"), "game_over")
    await refused(bob.move(game.id, "a1"), "game_over")


async def test_disconnect_mid_game_forfeits_once_the_grace_period_lapses(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await game.play("d3")
    await game.play("c3")
    await bob.close()
    for client in (ann, cat):
        away = await next_of(client, m.PlayerAway)
        assert (away.table, away.seat, away.name) == (game.id, 1, "bob") and away.forfeit_in_s == GRACE_S
        over = await next_of(client, m.GameOver)
        assert over.table == game.id
        assert over.outcome["winner"] == 0
        assert over.outcome["reason"] == "White abandoned the game"
    info = await table_info(cat, game.id)
    assert info.status == "over" and info.seats == ["ann", "bob"] and info.ply == 2
    await refused(ann.move(game.id, game.state.legal_moves()[0]), "game_over")


async def test_leaving_mid_game_forfeits(trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await game.play("d3")
    await game.play("c3")  # both sides have moved: leaving now forfeits (before, it aborts: test_abort.py)
    await ann.leave_table(game.id)
    for client in (bob, cat):
        over = await next_of(client, m.GameOver)
        assert over.outcome["winner"] == 1 and "forfeit" in over.outcome["reason"]


async def test_spectator_joining_mid_game_gets_view_and_moves(connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    game = await Game.start(ann, bob)
    for move in random_game(seed=5)[:7]:
        await game.play(move)
    cat = await connect("cat")
    joined = await cat.watch_table(game.id)
    assert joined.seat is None
    assert joined.moves == game.moves
    assert joined.view == game.state.view(None)
    assert joined.table.ply == game.state.ply == 7 and joined.table.status == "playing"
    game.spectators.append(cat)
    await game.play(game.state.legal_moves()[0])  # the newcomer now gets moved too


# --- robustness ------------------------------------------------------------------------


async def _bad_frame_closes(conn: Raw, payload: bytes) -> None:
    await conn.send_bytes(payload)
    frames = await conn.expect_closed()
    errors = [frame for frame in frames if frame["type"] == "error"]
    assert len(errors) == 1, frames
    assert errors[0]["code"] == "bad_frame"
    assert errors[0].get("id") is None
    assert frames[-1] is errors[0]  # nothing after the error, then the close


BAD_FRAMES = {
    "oversize length": struct.pack(">I", 0xFFFFFFFF),
    "just over the limit": struct.pack(">I", 65537) + b"\x80" * 100,
    "reserved byte 0xc1": struct.pack(">I", 3) + b"\xc1\xc1\xc1",
    "truncated map": struct.pack(">I", 2) + b"\x82\xa1",
    "not a map": encode_frame([1, 2, 3]),  # type: ignore[arg-type]
    "two objects": struct.pack(">I", 2) + b"\x80\x80",
    "integer keys": struct.pack(">I", 3) + msgpack.packb({1: 2}),
    "ext type": struct.pack(">I", 3) + b"\xd4\x05\x00",
}


@pytest.mark.parametrize("payload", list(BAD_FRAMES.values()), ids=list(BAD_FRAMES))
async def test_bad_frame_closes_the_connection_and_other_games_go_on(connect, raw, payload: bytes) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    moves = random_game(seed=11, size=6)
    game = await Game.start(ann, bob, size=6)
    for move in moves[:6]:
        await game.play(move)
    conn = await raw()
    await conn.hello("eve")
    own = await conn.request("create_table", game="othello", options={}, seat=0)
    watched = await conn.request("watch_table", table=game.id)
    assert watched["type"] == "table_joined"
    await conn.sync()
    await _bad_frame_closes(conn, payload)
    # eve's own waiting table closes; the game she watched goes on to its end
    closed = await next_of(ann, m.TableClosed)
    assert closed.table == own["table"]["id"]
    await game.play_out(moves)
    outcomes = await game.outcomes()
    assert outcomes[0] == outcomes[1] == game.state.outcome.to_dict()  # type: ignore[union-attr]
    assert (await table_info(ann, game.id)).spectators == 0


async def test_bad_frame_before_hello(raw, connect) -> None:
    conn = await raw()
    await _bad_frame_closes(conn, b"\x00\x00\x00\x01\xc1")
    ann = await connect("ann")
    await ann.ping()


async def test_bad_frame_split_across_writes(raw) -> None:
    conn = await raw()
    await conn.hello("eve")
    await conn.send_bytes(b"\xff\xff")
    await asyncio.sleep(0.02)
    await _bad_frame_closes(conn, b"\xff\xff")


async def test_frames_split_byte_by_byte_are_fine(raw) -> None:
    conn = await raw()
    frame = encode_frame({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "ann"})
    for i in range(len(frame)):
        await conn.send_bytes(frame[i : i + 1])
    assert (await conn.reply(1))["type"] == "welcome"


async def test_good_request_before_garbage_is_still_answered(raw) -> None:
    conn = await raw()
    await conn.hello("eve")
    await conn.send_bytes(encode_frame({"type": "ping", "id": 7}) + b"\x00\x00\x00\x01\xc1")
    frames = await conn.expect_closed()
    assert [f["type"] for f in frames] == ["pong", "error"], frames


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"type": "move", "id": 7, "table": "one", "move": "d3"}, "table"),
        ({"type": "move", "id": 7, "table": 1, "move": 33}, "move"),
        ({"type": "move", "id": 7, "table": 1, "move": ""}, "move"),
        ({"type": "move", "id": 7, "table": 1, "move": "d3", "ply": -1}, "ply"),
        ({"type": "join_table", "id": 7, "table": 1, "seat": 2}, "seat"),
        ({"type": "join_table", "id": 7, "table": 0}, "table"),
        ({"type": "create_table", "id": 7, "game": "othello", "options": [8]}, "options"),
        ({"type": "create_table", "id": 7, "game": "othello", "seed": 1.5}, "seed"),
        ({"type": "teleport", "id": 7}, "type"),
        ({"id": 7}, "type"),
    ],
)
async def test_bad_message_keeps_the_connection(raw, connect, message: dict[str, Any], field: str) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    game = await Game.start(ann, bob)
    conn = await raw()
    await conn.hello("eve")
    await conn.send(**message)
    error = await conn.reply(7)
    assert error["type"] == "error" and error["code"] == "bad_message", error
    assert error.get("field") == field, error
    assert field in error["message"]
    # still usable
    assert (await conn.request("list_tables"))["type"] == "tables"
    watched = await conn.request("watch_table", table=game.id)
    assert watched["type"] == "table_joined" and watched["moves"] == []
    await game.play("d3")


async def test_missing_field_is_bad_message(raw) -> None:
    conn = await raw()
    await conn.hello("eve")
    await conn.send(type="move", id=7, table=1)
    error = await conn.reply(7)
    assert error["type"] == "error" and error["code"] == "bad_message"
    assert "move" in error["message"]
    assert (await conn.request("ping"))["type"] == "pong"


async def test_missing_field_is_named_in_field(raw) -> None:
    conn = await raw()
    await conn.hello("eve")
    await conn.send(type="move", id=7, table=1)
    error = await conn.reply(7)
    assert error.get("field") == "move"


async def test_bad_message_without_a_readable_id(raw) -> None:
    conn = await raw()
    await conn.hello("eve")
    await conn.send(type="ping", id="seven")
    error = await conn.recv()
    assert error["type"] == "error" and error["code"] == "bad_message"
    assert error.get("id") is None and error.get("field") == "id"
    assert (await conn.request("ping"))["type"] == "pong"


async def test_refusals_change_nothing(trio, connect) -> None:
    ann, bob, cat = trio
    dan = await connect("dan")
    game = await Game.start(ann, bob, cat)
    for move in ("d3", "c3"):
        await game.play(move)
    before = await table_info(dan, game.id)
    black_move = game.state.legal_moves()[0]
    attempts = [
        (ann.move(game.id, "a1"), "illegal_move"),
        (ann.move(game.id, "pass"), "illegal_move"),
        (ann.move(game.id, "nowhere"), "illegal_move"),
        (ann.move(game.id, black_move, ply=1), "stale_ply"),
        (bob.move(game.id, "c4"), "not_your_turn"),
        (bob.move(game.id, black_move), "not_your_turn"),
        (cat.move(game.id, black_move), "not_seated"),
        (dan.move(game.id, black_move), "not_seated"),
        (cat.resign(game.id), "not_seated"),
        (dan.resign(game.id), "not_seated"),
        (dan.join_table(game.id), "table_full"),
        (dan.join_table(game.id, seat=0), "table_full"),
        (cat.join_table(game.id), "table_full"),
        (ann.join_table(game.id), "already_seated"),
        (ann.watch_table(game.id), "already_seated"),
        (dan.leave_table(game.id), "not_at_table"),
        (dan.create_table("othello", {"size": 5}), "bad_option"),
        (dan.create_table("go"), "unknown_game"),
    ]
    for attempt, code in attempts:
        await refused(attempt, code)
    after = await table_info(dan, game.id)
    assert after == before
    assert [t.id for t in await dan.list_tables()] == [game.id]
    for client in (ann, bob, cat):
        await assert_no_table_push(client)
    late = await dan.watch_table(game.id)
    assert late.moves == game.moves and late.view == game.state.view(None)
    # the game continues normally from exactly where it was
    await game.play(black_move)


async def test_raw_bad_requests_change_nothing(raw, trio) -> None:
    ann, bob, cat = trio
    game = await Game.start(ann, bob, cat)
    await game.play("d3")
    before = await table_info(cat, game.id)
    conn = await raw()
    await conn.hello("eve")
    for message in (
        {"type": "move", "id": 1, "table": game.id, "move": "c3", "ply": "1"},
        {"type": "move", "id": 2, "table": game.id, "move": "c3", "extra": True},
        {"type": "join_table", "id": 3, "table": game.id, "seat": -1},
        {"type": "resign", "id": 4, "table": game.id},
        {"type": "leave_table", "id": 5, "table": game.id},
    ):
        await conn.send(**message)
        reply = await conn.reply(message["id"])
        assert reply["type"] == "error", reply
    assert await table_info(cat, game.id) == before
    await assert_no_table_push(cat)
    await game.play("c3")


async def test_ping(connect) -> None:
    ann = await connect("ann")
    reply = await ann.request(m.Ping)
    assert isinstance(reply, m.Pong)
