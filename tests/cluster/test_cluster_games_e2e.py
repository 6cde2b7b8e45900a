"""Every game across a cluster: three real ``parlour serve`` nodes on one PostgreSQL and one Redis.

For each of the six games, in turn on the same cluster, ann on node a and bob
on node b play a recorded game while cy watches from node c, at a table that
comes about across the nodes: ann's challenge to bob (bob's node holds the
table), a seek of each paired by the node holding ann's seek, or ann's ``new``
and bob's ``join``. The requests and frames of whoever is not on the table's
node cross through the relay. All three see the engine's result.

Then a Tactego game across the nodes leaks nothing: raw connections keep
every byte each player and spectator receives, a Redis subscriber keeps
every message on every channel, and no hidden strength reaches a connection,
or Redis, that may not see it before the game is over.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from pathlib import Path
from typing import Any, Iterator

import msgpack
import pytest
import redis.asyncio as aioredis

import games
from protocol import PROTOCOL_VERSION, FrameDecoder
from protocol.framing import HEADER_BYTES
from server.cluster.relay import BATCH, read_batch

from ..e2e.harness import Process, player_scripts, read_record, read_record_headers, start_server
from ..e2e.test_games_e2e import _expected_result, _new_command, _passing_seats
from ..server.test_hidden_information import RawConnection, _ranks_seen, _views, _waiting, _waiting_views
from .redis_server import RedisServer
from .test_cluster_e2e import _drain, _until_listed

pytestmark = pytest.mark.slow

NODES = ("a", "b", "c")


@pytest.fixture
def cluster(redis_server: RedisServer, postgres_url: str) -> Iterator[dict[str, int]]:
    """Three nodes sharing one PostgreSQL database and one Redis: node name -> game port."""
    servers: list[Process] = []
    ports: dict[str, int] = {}
    try:
        for node in NODES:
            server, port = start_server("--db", postgres_url, "--bus", redis_server.url, "--node", node)
            servers.append(server)
            ports[node] = port
        yield ports
    finally:
        for server in servers:
            server.kill()


def _expected_line(game: str, options: dict[str, Any], seed: str | None, moves: list[str]) -> str:
    final = _expected_result(game, options, seed, moves)
    assert final.outcome is not None
    seat_names = games.get(game).seats
    winner, score = final.outcome.winner, final.outcome.score
    expected = f"Result: {seat_names[winner]} wins — {final.outcome.reason}" if winner is not None else "Result: draw"
    return expected + (f" ({score[0]}–{score[1]})" if score is not None else "")


HOW = {"hexapawn": "challenge", "mingmang": "challenge", "morris": "seek", "othello": "seek", "nimble": "new", "tactego": "new"}
"""How each game's table comes about: ann's challenge to bob, a seek of each paired across the nodes, or ann's
``new`` and bob's ``join`` (the games whose record needs its seed: a challenge or seek draws its own)."""


def test_each_of_the_six_games_is_played_across_nodes_and_watched_from_a_third(cluster: dict[str, int], tmp_path: Path) -> None:
    address = {node: f"127.0.0.1:{port}" for node, port in cluster.items()}
    assert sorted(HOW) == sorted(games.names())
    for number, game in enumerate(games.names()):
        headers = read_record_headers(f"{game}.txt")
        options, seed, moves = json.loads(headers["options"]), headers.get("seed"), read_record(f"{game}.txt")
        expected = _expected_line(game, options, seed, moves)
        forced_passes = [games.get(game).seats[seat] for seat in _passing_seats(game, options, seed, moves)]
        scripts = player_scripts(game, options, moves, seed)
        ann = Process("play", address["a"], "--name", f"ann{number}")
        bob = Process("play", address["b"], "--name", f"bob{number}")
        watcher = Process("play", address["c"], "--name", f"cy{number}")
        clients = [ann, bob, watcher]
        try:
            for client in clients:
                client.expect(r"(?i)connected|welcome", timeout_s=20)
            table, seats = _table_across_nodes(HOW[game], game, ann, bob, f"bob{number}", _new_command(game, options, seed, tmp_path)[4:])
            _until_listed(watcher, rf"^#{table} {game}")
            watcher.send(f"watch {table}\nwait end\nquit\n")
            watcher.expect(rf"At table {table}, watching")
            for player, seat in seats.items():
                player.send("\n".join(["wait start", *scripts[seat], "wait end", "quit", ""]))
            for client in clients:
                assert client.expect(r"^Result: .*", timeout_s=90)[0].startswith(expected), (game, client.lines[-5:])
                assert client.finish() == 0, (game, client.lines)
                assert not any(line.startswith("error") for line in client.lines), (game, client.lines)
            passes = [line.removesuffix(" must pass.") for line in watcher.lines if line.endswith(" must pass.")]
            assert passes == forced_passes, game
        finally:
            for client in clients:
                client.kill()


def _table_across_nodes(how: str, game: str, ann: Process, bob: Process, bob_name: str, terms: str) -> tuple[str, dict[Process, int]]:
    """Bring ann (node a) and bob (node b) to one table ``how`` says; return its id and each one's seat."""
    if how == "new":
        ann.send(f"new {terms}\n")
        table = ann.expect(r"Created table (\d+)")[1]
        _until_listed(bob, rf"^#{table} {game}")
        bob.send(f"join {table}\n")
        bob.expect(rf"(?i)table {table}")
        return table, {ann: 0, bob: 1}
    if how == "challenge":  # held by bob's node: ann plays through the relay
        ann.send(f"challenge {bob_name} {terms} seat=0\n")
        challenge = bob.expect(rf"challenges you to .* type accept (\d+)")[1]
        bob.send(f"accept {challenge}\n")
    else:  # ann's seek is held by node a; bob's matches it there
        ann.send(f"seek {terms}\n")
        ann.expect(r"^Seek \d+ posted")
        _until_seen(bob, "seeks", rf"^seek \d+: ann")
        bob.send(f"seek {terms}\n")
    names = games.get(game).seats
    paired = {player: player.expect(r"^Paired with .* at table (\d+): you play (.+)\.$") for player in (ann, bob)}
    assert paired[ann][1] == paired[bob][1], paired
    return paired[ann][1], {player: names.index(match[2]) for player, match in paired.items()}


def _until_seen(player: Process, command: str, pattern: str, timeout_s: float = 20.0) -> None:
    """Send ``command`` until a line it prints matches ``pattern``."""
    regex = re.compile(pattern)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        seen = len(player.lines)
        player.send(f"{command}\n")
        _drain(player, 0.3)
        if any(regex.search(line) for line in player.lines[seen:]):
            return
    raise AssertionError(f"{command} never printed {pattern!r}; output:\n" + "\n".join(player.lines))


OPTIONS = {"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n"}


async def _connect(port: int, name: str) -> RawConnection:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = RawConnection(reader, writer)
    await connection.request("hello", version=PROTOCOL_VERSION, name=name)
    return connection


async def _until_listed_raw(connection: RawConnection, table: int) -> None:
    for _ in range(200):
        listed = await connection.request("list_tables")
        if any(line["id"] == table for line in listed["tables"]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"table {table} was never listed")


class Wiretap:
    """A Redis subscriber to every channel, keeping each message's channel and bytes."""

    def __init__(self, url: str) -> None:
        self._redis = aioredis.Redis.from_url(url)
        self._pubsub = self._redis.pubsub()
        self.messages: list[tuple[str, bytes]] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._pubsub.psubscribe("*")
        self._task = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        async for message in self._pubsub.listen():
            if message["type"] == "pmessage":
                self.messages.append((bytes(message["channel"]).decode(), bytes(message["data"])))

    async def close(self) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._pubsub.aclose()
        await self._redis.aclose()


def _frames_in(value: Any) -> list[dict[str, Any]]:
    """Every protocol frame found in the bytes of a Redis message, however it is wrapped (the bus's envelope, the relay's batches)."""
    found: list[dict[str, Any]] = []
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        if data[:1] == BATCH:  # a relay batch: each record's payload (frames, a request body, a MessagePack message)
            try:
                _, records = read_batch(data)
            except ValueError:
                records = []
            for _, _, payload in records:
                found.extend(_frames_in(payload))
            if records:
                return found
        if len(data) > HEADER_BYTES and int.from_bytes(data[:HEADER_BYTES], "big") <= len(data) - HEADER_BYTES:
            try:
                found.extend(FrameDecoder(max_frame_bytes=1 << 22).feed(data))
                return found
            except Exception:  # noqa: BLE001 - not a run of frames: maybe a MessagePack envelope
                pass
        try:
            inner = msgpack.unpackb(data, strict_map_key=False)
        except Exception:  # noqa: BLE001 - neither: plain bytes
            return found
        if not isinstance(inner, (bytes, int, str, float)) and inner is not None:
            found.extend(_frames_in(inner))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(_frames_in(item))
    elif isinstance(value, dict):
        for item in value.values():
            found.extend(_frames_in(item))
    return found


async def test_a_tactego_game_across_nodes_leaks_no_hidden_strength_to_a_connection_or_to_redis(
    cluster: dict[str, int], redis_server: RedisServer
) -> None:
    tap = Wiretap(redis_server.url)
    await tap.start()
    red = await _connect(cluster["a"], "red")  # on the node that holds the table
    blue = await _connect(cluster["b"], "blue")  # through the relay from node b
    spectator = await _connect(cluster["c"], "watcher")  # through the relay from node c
    try:
        table = (await red.request("create_table", game="tactego", options=OPTIONS, seat=0))["table"]["id"]
        await _until_listed_raw(spectator, table)
        await spectator.request("watch_table", table=table)
        await _until_listed_raw(blue, table)
        await blue.request("join_table", table=table, seat=1)
        await red.until(lambda frame: frame.get("type") == "game_started")
        plies = await _play_at_random(table, {0: red, 1: blue}, random.Random(21))
        for connection in (red, blue, spectator):
            await connection.until(lambda frame: frame.get("type") == "game_over")
        seed = str(next(line for line in (await red.request("list_tables"))["tables"] if line["id"] == table)["seed"])  # public now
        await asyncio.sleep(0.5)  # the last messages on Redis reach the wiretap
    finally:
        for connection in (red, blue, spectator):
            connection.writer.close()
        await tap.close()

    engine = games.get("tactego").new_state(OPTIONS, seed)
    states = {0: engine}
    for move in _moves_of(spectator.frames):
        engine = engine.play(move)
        states[engine.ply] = engine
    assert engine.outcome is not None and engine.ply >= plies >= 1
    for connection, seat in ((red, 0), (blue, 1), (spectator, None)):
        assert FrameDecoder(max_frame_bytes=1 << 20).feed(bytes(connection.received)) == connection.frames
        _assert_only_own_views(connection.frames, seat, states, engine.ply)
        assert seed not in repr(connection.frames[: _game_over_at(connection.frames)])

    # On Redis: seat 0's frames never cross (its player is on the table's node); seat 1's go only to node b's inbox,
    # the spectators' only to node c's; the seed crosses nowhere before the end.
    crossed = {"a": [], "b": [], "c": [], "other": []}  # type: dict[str, list[dict[str, Any]]]
    for channel, data in tap.messages:
        node = channel.split(":")[2] if channel.startswith("parlour:node:") else "other"
        crossed[node if node in crossed else "other"].extend(frame for frame in _frames_in(data) if "view" in frame)
    assert crossed["b"] and crossed["c"], "the test saw no relayed frame on Redis at all"
    assert not crossed["a"] and not crossed["other"], "a table's view crossed Redis to a node with no viewer of it"
    _assert_only_own_views(crossed["b"], 1, states, engine.ply)
    _assert_only_own_views(crossed["c"], None, states, engine.ply)
    over_at = next(i for i, (_, data) in enumerate(tap.messages) if b"game_over" in data)
    leaked = [(channel, data) for channel, data in tap.messages[:over_at] if seed.encode() in data]
    assert not leaked, leaked


async def _play_at_random(table: int, players: dict[int, RawConnection], rng: random.Random) -> int:
    """Play random legal moves from the players' own views until the game is over; return the moves played."""
    played, ply = 0, 0
    while True:
        for connection in players.values():
            await connection.until(lambda frame, ply=ply: _at_ply(frame, ply))
        views = {seat: _views(connection.frames)[-1] for seat, connection in players.items()}
        ply = max(view["ply"] for view in views.values())
        if any(view["ply"] < ply for view in views.values()):
            continue  # one side has heard of a forced pass the other has not yet
        if views[0]["outcome"] is not None:
            return played
        mover = views[0]["to_move"]
        await players[mover].request("move", table=table, move=rng.choice(views[mover]["legal_moves"]))
        played += 1
        ply += 1


def _at_ply(frame: dict[str, Any], ply: int) -> bool:
    return isinstance(frame.get("view"), dict) and frame["view"]["ply"] >= ply


def _game_over_at(frames: list[dict[str, Any]]) -> int:
    return next(i for i, frame in enumerate(frames) if frame.get("type") == "game_over")


def _moves_of(frames: list[dict[str, Any]]) -> list[str]:
    return [frame["move"] for frame in frames if frame.get("type") == "moved"]


def _assert_only_own_views(frames: list[dict[str, Any]], seat: int | None, states: dict[int, Any], final_ply: int) -> None:
    """Every view in ``frames`` before the end is exactly the engine's view for ``seat``: no other side's hidden strength."""
    for view in _waiting_views(frames):
        assert not _ranks_seen(view), "a strength was sent before the game started"
    views = _views([frame for frame in frames if not _waiting(frame)])
    assert views, "no position at all"
    for view in views:
        if view["outcome"] is not None:
            assert view["ply"] == final_ply, "only the last move's view shows the end"
            continue
        assert view == states[view["ply"]].view(seat), (seat, view["ply"])
        for _ply, r, c, _rank in _ranks_seen(view):
            square = f"{chr(ord('a') + c)}{r + 1}"
            assert view["board"][r][c][0] == seat or square in view["revealed"], (seat, square)
