"""Lean load generator: raw frames over :class:`asyncio.Protocol`, for Parlour or the echo baseline.

It uses no Parlour client code: each connection packs and unpacks frames
itself (4-byte big-endian length + one MessagePack map), so its own cost per
request stays small and it can hold thousands of connections in one process.
Against Parlour (``--target parlour``) it speaks just enough of the protocol --
``hello``, ``create_table``, ``join_table``, ``leave_table``, ``move``,
``watch_table`` -- to play real Othello 8x8 games, choosing each move at random
from the ``legal_moves`` of the mover's latest view. Against the echo
(``--target echo``, ``benchmarks/echo_server.py``) it sends the same requests
in the same pattern (a ``hello`` per connection; ``create_table`` and
``join_table``, 60 alternating ``move`` requests and two ``leave_table`` per
game), each answered by a bare ``ok``.

Scenarios (``--scenario``), each bounded in time and count:

- ``play``: ``--games`` games at once, each two connections playing one move
  at a time (write, wait for the ``ok`` and, at Parlour, for the next mover's
  view), each pair's first game left after a random number of moves so that
  the games do not all end at once; before them, ``--idle`` more connections say ``hello`` and then
  only count the frames they receive (without decoding them). Once every
  pair is past that first game (at most ``--drain-limit`` s) and the idle
  connections have received the lobby updates it caused (at most
  :data:`IDLE_SETTLE_S`), and ``--warmup`` seconds later, it measures for
  ``--seconds`` and until ``--min-games`` games have ended and been left
  (so the lobby updates of whole games are in it; or until
  ``--max-moves`` moves were accepted): moves accepted, how the games
  ended, the server's CPU time, every move's round trip (write to
  ``ok``), the frames the idle connections received meanwhile, and the
  share of one core the load generator itself used (near 1.0: it, not the
  server, may be the limit).
- ``fanout``: ``--spectators`` connections watch one table (echo: join its
  group); then one table's moves (echo: ``broadcast`` requests carrying an
  Othello view) are played ``--moves`` times, each waited for until every
  spectator has received it. Measures the server's CPU per move and per
  receiver.
- ``join``: ``--spectators`` connections that said ``hello`` all send
  ``watch_table`` for one playing table at once. Measures the time until
  every reply arrived, and every frame the load generator's connections
  received from the first request until the server fell quiet.
- ``memory``: ``--connections`` connections connect and say ``hello``; the
  server's resident memory (``VmRSS``) before and after, per connection.

The server's CPU time is the sum of the first field (ns on a CPU) of
``/proc/<--server-pid>/task/*/schedstat``: every thread, read at the start
and end of the measured window (Linux only; without ``--server-pid`` it is
not measured). In ``play``, the processes of ``--count-pid`` (another node,
Redis) and ``--count-children-of`` (PostgreSQL's postmaster: it and its
children, listed at both ends of the window) count as the server's too
(``counted_cpu_ns``; ``cpu_us_per_move`` includes them).

``--split`` (``play``) also reads, over the same window, the server's user and
system CPU, its context switches and (with ``perf``, where it may count
tracepoints) its system calls by kind (``benchmarks/kernel_split.py``), and
counts the bytes and the reads (``data_received`` calls) of the players'
connections: the result's ``split``.

``--table-port`` (``play``, Parlour) opens each game's table from another
connection, on that port (another node of a cluster): it creates the table
without a seat, the two players (on ``--port``) join seats 0 and 1 once
their node lists it, and it leaves. So every move of the players is played
on a table their own node does not hold (every move relayed). The result is printed as one JSON object on stdout; a
server error or a deadline missed ends the run with a message on stderr and
exit status 1. Only 127.0.0.1 (``--host``) is connected to.

Usage::

    python benchmarks/loadgen.py --port 7420 --target parlour --scenario play --games 10 --server-pid 1234
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import msgpack

from kernel_split import ProcessCounters, SyscallCount

_HEADER = struct.Struct(">I")
PROTOCOL_VERSION = 2
"""The Parlour protocol version this generator speaks (PROTOCOL.md)."""

ECHO_PLIES = 60
"""Moves per echo "game" (an Othello 8x8 game lasts about 60 plies)."""

REPLY_TIMEOUT_S = 30.0
"""Longest wait for any one reply or push before the run is abandoned."""

IDLE_SETTLE_S = 5.0
"""Longest wait, before a play window, for the idle connections to stop receiving lobby updates."""

CONNECT_CONCURRENCY = 200
"""Connections opened (and greeted) at once when many are needed."""

_SAMPLE_VIEW = {
    "size": 8, "board": ["........", "........", "..X.....", "..XXX...", "..XXO...", "........", "........", "........"],
    "discs": [6, 1], "must_pass": False, "last_move": "c3", "game": "othello", "ply": 3, "to_move": 1, "outcome": None,
}  # fmt: skip
"""An Othello view like the ones Parlour pushes, the payload of the echo's broadcasts."""


class BenchError(Exception):
    """The server answered with an error, or a wait passed its deadline."""


def encode(payload: dict[str, Any]) -> bytes:
    """``payload`` as one frame: 4-byte big-endian length, then the MessagePack map."""
    body = msgpack.packb(payload, use_bin_type=True)
    return _HEADER.pack(len(body)) + body


def server_cpu_ns(pid: int | None) -> int:
    """Nanoseconds all threads of process ``pid`` have spent on a CPU (0 when ``pid`` is ``None``).

    Reads the first field of ``/proc/<pid>/task/*/schedstat`` (Linux). A
    thread that ends between the listing and the read is skipped.
    """
    if pid is None:
        return 0
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return total


def children_of(parent: int) -> list[int]:
    """The process ids whose parent is ``parent`` (Linux ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == parent:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def counted_cpu_ns(pids: list[int], parents: list[int]) -> dict[int, int]:
    """CPU ns so far of each of ``pids``, of each of ``parents`` and of their children now, by process id."""
    every = {*pids, *parents, *(child for parent in parents for child in children_of(parent))}
    return {pid: server_cpu_ns(pid) for pid in every}


def callgrind_window(pid: int | None, start: bool) -> None:
    """Start (``start``) or end the measured window of a server run under ``valgrind --tool=callgrind --instr-atstart=no``.

    Start: instrumentation on and the counters zeroed; end: the counts dumped
    (a new ``callgrind.out`` part, which ``benchmarks/instructions.py`` reads)
    and instrumentation off. Blocks until callgrind has done it. Does nothing
    without ``pid``.
    """
    if pid is None:
        return
    steps = (["-i", "on"], ["-z"]) if start else (["-d"], ["-i", "off"])
    for step in steps:
        subprocess.run(["callgrind_control", *step, str(pid)], check=True, capture_output=True, timeout=600)


def server_rss_bytes(pid: int | None) -> int:
    """Resident memory of process ``pid`` in bytes, from ``/proc/<pid>/status`` ``VmRSS`` (0 without ``pid``)."""
    if pid is None:
        return 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def raise_open_files_limit(wanted: int) -> int:
    """Raise the soft limit of open files towards ``wanted`` (capped by the hard limit); return the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


class Conn(asyncio.Protocol):
    """One raw connection: numbered requests matched with their replies, pushes handed to ``on_push``.

    Attributes:
        frames: how many frames it has received.
        skim: when true, frames are only counted, not decoded (for connections that just listen).
        on_push: called with every map that has no ``id`` (a push); default: nothing.
    """

    def __init__(self) -> None:
        self.frames = 0
        self.bytes_in = 0
        self.reads = 0
        self.skim = False
        self.on_push: Callable[[dict[str, Any]], None] | None = None
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self.closed = asyncio.get_running_loop().create_future()

    @classmethod
    async def open(cls, host: str, port: int) -> "Conn":
        """Connect to ``host``:``port``."""
        _, conn = await asyncio.get_running_loop().create_connection(cls, host, port)
        return conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(BenchError("the server closed the connection"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.bytes_in += len(data)
        self.reads += 1
        buffer = self._buffer
        buffer += data
        if self.skim:
            self._skim(buffer)
            return
        while len(buffer) >= 4:
            (length,) = _HEADER.unpack_from(buffer)
            end = 4 + length
            if len(buffer) < end:
                return
            message = msgpack.unpackb(bytes(buffer[4:end]), raw=False)
            del buffer[:end]
            self.frames += 1
            request_id = message.get("id")
            if request_id is None:
                if self.on_push is not None:
                    self.on_push(message)
                continue
            future = self._pending.pop(request_id, None)
            if future is not None and not future.done():
                future.set_result(message)

    def _skim(self, buffer: bytearray) -> None:
        """Count and drop the complete frames in ``buffer`` without decoding them."""
        offset = 0
        while len(buffer) - offset >= 4:
            (length,) = _HEADER.unpack_from(buffer, offset)
            if len(buffer) - offset < 4 + length:
                break
            offset += 4 + length
            self.frames += 1
        del buffer[:offset]

    def send(self, kind: str, **fields: Any) -> asyncio.Future[dict[str, Any]]:
        """Write request ``kind`` with ``fields``; return a future of its reply."""
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        assert self._transport is not None, "not connected"
        self._transport.write(encode({"type": kind, "id": self._next_id, **fields}))
        return future

    async def request(self, kind: str, timeout_s: float = REPLY_TIMEOUT_S, **fields: Any) -> dict[str, Any]:
        """Send a request and return its reply.

        Raises:
            BenchError: the reply is an ``error``, or none came within ``timeout_s`` seconds.
        """
        try:
            reply = await asyncio.wait_for(self.send(kind, **fields), timeout_s)
        except asyncio.TimeoutError:
            raise BenchError(f"no reply to {kind} within {timeout_s} s") from None
        if reply.get("type") == "error":
            raise BenchError(f"{kind} refused: {reply.get('code')}: {reply.get('message')}")
        return reply

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class Window:
    """The measured window of a run: counts only while :attr:`measuring`, and when to stop.

    Args:
        max_moves: stop measuring once this many moves were counted (``None``: no cap).
    """

    def __init__(self, max_moves: int | None = None) -> None:
        self.measuring = False
        self.stopping = False
        self.moves = 0
        self.endings: dict[str, int] = {}
        self.games_ended = 0
        self.round_trips_s: list[float] = []
        self.max_moves = max_moves
        self.full = asyncio.Event()

    def game_over(self, reason: str) -> bool:
        """Count a game that ended by ``reason``; whether the window counted it (it is measuring)."""
        if self.measuring:
            self.endings[reason] = self.endings.get(reason, 0) + 1
        return self.measuring

    def game_left(self) -> None:
        """Count a game whose end was counted and whose players have now left its table."""
        if self.measuring:
            self.games_ended += 1

    def record(self, started: float, finished: float) -> None:
        """Count one accepted move written at ``started`` and acknowledged at ``finished`` (perf_counter s)."""
        if not self.measuring:
            return
        self.moves += 1
        self.round_trips_s.append(finished - started)
        if self.max_moves is not None and self.moves >= self.max_moves:
            self.measuring = False
            self.full.set()


async def open_many(host: str, port: int, count: int, hello: Callable[[Conn, int], Any]) -> list[Conn]:
    """Open ``count`` connections, at most :data:`CONNECT_CONCURRENCY` at a time, each greeted by ``hello(conn, i)``."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def one(index: int) -> Conn:
        async with gate:
            conn = await Conn.open(host, port)
            await hello(conn, index)
            return conn

    return list(await asyncio.gather(*(one(i) for i in range(count))))


class Target:
    """How to greet and play against one kind of server; see :class:`ParlourTarget` and :class:`EchoTarget`."""

    tag = f"{os.getpid():x}"
    """Prefix of every name this process says ``hello`` with, so runs against one server never collide."""

    async def hello(self, conn: Conn, name: str) -> None:
        """Say ``hello`` on ``conn`` as ``name`` and wait for the answer (Parlour: ``welcome``; echo: ``ok``)."""
        await conn.request("hello", version=PROTOCOL_VERSION, name=self.tag + name)


class ParlourGame:
    """One Othello table of two raw connections, following each player's latest view.

    Args:
        players: the connections of seat 0 and seat 1 (both already greeted).

    Attributes:
        time_control: the ``time_control`` of every table opened (``--time-control``; ``None``: untimed).
    """

    time_control: str | None = None

    def __init__(self, players: list[Conn], host: Conn | None = None) -> None:
        self.players = players
        self.host = host
        self.table = 0
        self.ply = -1
        self._views: list[dict[str, Any] | None] = [None, None]
        self._changed = asyncio.Event()
        for seat, conn in enumerate(players):
            conn.on_push = self._watcher(seat)

    def _watcher(self, seat: int) -> Callable[[dict[str, Any]], None]:
        def on_push(message: dict[str, Any]) -> None:
            if "view" in message and message.get("table") == self.table:
                self._views[seat] = message["view"]
                self._changed.set()

        return on_push

    async def open(self) -> int:
        """Create the table (seat 0; or, with a :attr:`host`, from it without a seat) and fill seat 1 (and 0); return the table id."""
        timed = {} if self.time_control is None else {"time_control": self.time_control}
        creator = self.players[0] if self.host is None else self.host
        reply = await creator.request("create_table", game="othello", options={"size": 8}, seat=None if self.host else 0, **timed)
        self.table = reply["table"]["id"]
        if self.host is not None:
            await self._join(self.players[0], 0)
        joined = await self._join(self.players[1], 1)
        self._views[1] = joined["view"]
        if self.host is not None:
            await self.host.request("leave_table", table=self.table)
        return self.table

    async def _join(self, conn: Conn, seat: int) -> dict[str, Any]:
        """Join seat ``seat``; a table of another node is asked for again until this node lists it."""
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            reply = await asyncio.wait_for(conn.send("join_table", table=self.table, seat=seat), REPLY_TIMEOUT_S)
            if reply.get("code") != "no_such_table" or self.host is None or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.005)
        if reply.get("type") == "error":
            raise BenchError(f"join_table refused: {reply.get('code')}: {reply.get('message')}")
        return reply

    async def next_turn(self) -> tuple[int, dict[str, Any]]:
        """The seat to move and its view, once a view after :attr:`ply` can be played from or the game is over.

        Raises:
            BenchError: no such view arrived within :data:`REPLY_TIMEOUT_S`.
        """
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            for seat, view in enumerate(self._views):
                if view is None or view["ply"] <= self.ply or view.get("forced_pass"):
                    continue
                if "legal_moves" in view or view["outcome"] is not None:
                    return seat, view
            self._changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BenchError(f"no playable view after ply {self.ply} within {REPLY_TIMEOUT_S} s")
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def move(self, seat: int, view: dict[str, Any], rng: random.Random) -> None:
        """Play a random legal move of ``view`` for ``seat`` and wait for its ``ok``."""
        self.ply = view["ply"]
        await self.players[seat].request("move", table=self.table, move=rng.choice(view["legal_moves"]), ply=self.ply)

    async def close(self) -> None:
        """Both players leave the table (a running game is forfeited)."""
        for conn in self.players:
            await conn.request("leave_table", table=self.table)


class ParlourTarget(Target):
    """Real Othello 8x8 games on a Parlour server, moves picked from the views' ``legal_moves``."""

    async def play_game(self, players: list[Conn], window: Window, rng: random.Random, limit: int | None = None) -> int:
        """Play one game at a new table until it ends, the window stops or ``limit`` moves; return the moves played.

        ``players``: seat 0, seat 1 and, optionally, the table's host on another node (``--table-port``)."""
        game = ParlourGame(players[:2], players[2] if len(players) > 2 else None)
        await game.open()
        played, ended = 0, False
        while not window.stopping and (limit is None or played < limit):
            seat, view = await game.next_turn()
            if view["outcome"] is not None:
                ended = window.game_over(view["outcome"]["reason"])
                break
            started = time.perf_counter()
            await game.move(seat, view, rng)
            window.record(started, time.perf_counter())
            played += 1
        await game.close()
        if ended:
            window.game_left()
        return played


class EchoTarget(Target):
    """The same requests against the echo server: every one answered by ``ok``."""

    def __init__(self) -> None:
        self._tables = 0

    async def create_table(self, players: list[Conn]) -> int:
        """Send ``create_table`` and ``join_table`` as Parlour's players would; return a new group number."""
        self._tables += 1
        await players[0].request("create_table", game="othello", options={"size": 8}, seat=0)
        await players[1].request("join_table", table=self._tables, seat=1)
        return self._tables

    async def play_game(self, players: list[Conn], window: Window, rng: random.Random, limit: int | None = None) -> int:
        """Send one game's requests (:data:`ECHO_PLIES` moves, at most ``limit``) unless the window stops; return the moves sent."""
        table = await self.create_table(players)
        played = 0
        plies = ECHO_PLIES if limit is None else min(limit, ECHO_PLIES)
        while not window.stopping and played < plies:
            started = time.perf_counter()
            await players[played % 2].request("move", table=table, move="d3", ply=played)
            window.record(started, time.perf_counter())
            played += 1
        ended = played == ECHO_PLIES and window.game_over(f"{ECHO_PLIES} requests")
        for conn in players:
            await conn.request("leave_table", table=table)
        if ended:
            window.game_left()
        return played


def make_target(kind: str) -> ParlourTarget | EchoTarget:
    return ParlourTarget() if kind == "parlour" else EchoTarget()


def percentile_ms(samples_s: list[float], p: float) -> float | None:
    """Nearest-rank percentile ``p`` (0-100) of ``samples_s``, in ms; ``None`` without samples."""
    if not samples_s:
        return None
    ordered = sorted(samples_s)
    rank = max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))
    return ordered[rank] * 1000.0


async def scenario_play(args: argparse.Namespace, target: ParlourTarget | EchoTarget) -> dict[str, Any]:
    """``--games`` games at once (plus ``--idle`` readers); moves, server CPU and round trips in the window."""
    idle = await open_many(args.host, args.port, args.idle, lambda c, i: target.hello(c, f"idle{i}"))
    for conn in idle:
        conn.skim = True
    window = Window(args.max_moves)
    pairs = await open_many(args.host, args.port, 2 * args.games, lambda c, i: target.hello(c, f"p{i}"))
    hosts = []
    if args.table_port is not None and isinstance(target, ParlourTarget):
        hosts = await open_many(args.host, args.table_port, args.games, lambda c, i: target.hello(c, f"h{i}"))

    started = [0]

    async def keep_playing(index: int) -> None:
        rng = random.Random(args.seed * 1_000_003 + index)
        players = pairs[2 * index : 2 * index + 2] + hosts[index : index + 1]
        # A first game cut short at a random ply (its players leave), so that the games do not all
        # end, and fill the lobby with updates, at the same moment.
        await target.play_game(players, window, rng, limit=rng.randrange(ECHO_PLIES))
        started[0] += 1
        while not window.stopping:
            await target.play_game(players, window, rng)

    players = [asyncio.create_task(keep_playing(i)) for i in range(args.games)]
    try:
        await _all_started(started, args.games, args.drain_limit, players)
        await _until_quiet(idle, args.quiet, min(IDLE_SETTLE_S, args.drain_limit))  # the opening lobby updates
        await _sleep_unless_failed(args.warmup, players)
        if args.callgrind:
            callgrind_window(args.server_pid, start=True)
        split = WindowSplit(args.server_pid, pairs) if args.split else None
        counted_start = counted_cpu_ns(args.count_pid, args.count_children_of)
        cpu_start, wall_start, own_start = server_cpu_ns(args.server_pid), time.perf_counter(), time.process_time()
        idle_start = sum(conn.frames for conn in idle)
        window.measuring = True
        await _wait_window(window, args.seconds, players)
        while (
            window.measuring
            and window.games_ended < args.min_games
            and time.perf_counter() - wall_start < args.drain_limit
        ):
            await _wait_window(window, 0.05, players)
        window.measuring = False
        cpu_ns, wall_s = server_cpu_ns(args.server_pid) - cpu_start, time.perf_counter() - wall_start
        split_result = split.stop() if split is not None else None
        counted_ns = sum(ns - counted_start.get(pid, 0) for pid, ns in counted_cpu_ns(args.count_pid, args.count_children_of).items())
        if args.callgrind:
            callgrind_window(args.server_pid, start=False)
        own_s = time.process_time() - own_start
        idle_frames = sum(conn.frames for conn in idle) - idle_start
        window.stopping = True
        await asyncio.wait_for(asyncio.gather(*players), REPLY_TIMEOUT_S)
    finally:
        for task in players:
            task.cancel()
        for conn in idle + pairs + hosts:
            conn.close()
    return {
        "games": args.games, "idle": args.idle, "moves": window.moves, "games_ended": window.games_ended, "seconds": wall_s,
        "server_cpu_ns": cpu_ns, "counted_cpu_ns": counted_ns,
        "cpu_us_per_move": (cpu_ns + counted_ns) / 1000 / window.moves if window.moves and args.server_pid else None,
        "p50_ms": percentile_ms(window.round_trips_s, 50), "p99_ms": percentile_ms(window.round_trips_s, 99),
        "idle_frames": idle_frames, "loadgen_cpu_share": own_s / wall_s if wall_s else None, "endings": window.endings,
        "split": split_result,
    }  # fmt: skip


class WindowSplit:
    """``--split``: the server's CPU split, switches and system calls, and the players' bytes, over one window.

    Made at the window's start (reads every counter, starts ``perf`` when it can count here);
    :meth:`stop` at its end.

    Args:
        pid: the server's process id.
        conns: the players' connections, whose received bytes and reads are counted.

    Raises:
        OSError: there is no process ``pid``.
    """

    def __init__(self, pid: int, conns: list[Conn]) -> None:
        self.pid, self.conns = pid, conns
        self.perf = SyscallCount(pid) if SyscallCount.available() else None
        if self.perf is not None:
            self.perf.start()
        self.bytes_in, self.reads = self._client_counts()
        self.start = ProcessCounters.read(pid)

    def _client_counts(self) -> tuple[int, int]:
        return sum(conn.bytes_in for conn in self.conns), sum(conn.reads for conn in self.conns)

    def stop(self) -> dict[str, Any]:
        """What changed since the start: ``user_ns``, ``system_ns``, switches, ``client_bytes``,
        ``client_reads`` and ``syscalls`` (counts by kind; ``None`` without perf)."""
        end = ProcessCounters.read(self.pid)
        bytes_in, reads = self._client_counts()
        syscalls = self.perf.stop() if self.perf is not None else None
        return {**end.since(self.start), "client_bytes": bytes_in - self.bytes_in, "client_reads": reads - self.reads, "syscalls": syscalls}


async def _all_started(started: list[int], games: int, limit_s: float, tasks: list[asyncio.Task[None]]) -> None:
    """Wait until ``started[0]`` reaches ``games`` (every game past its shortened first one), at most ``limit_s`` s.

    Raises:
        BenchError: not all had started in time; or the error of a failed task.
    """
    deadline = time.monotonic() + limit_s
    while started[0] < games:
        if time.monotonic() > deadline:
            raise BenchError(f"only {started[0]} of {games} games were under way after {limit_s} s")
        await _sleep_unless_failed(0.02, tasks)


async def _sleep_unless_failed(seconds: float, tasks: list[asyncio.Task[None]]) -> None:
    """Sleep ``seconds``, but raise at once the error of any of ``tasks`` that fails meanwhile."""
    done, _ = await asyncio.wait(tasks, timeout=seconds, return_when=asyncio.FIRST_EXCEPTION)
    for task in done:
        task.result()


async def _wait_window(window: Window, seconds: float, tasks: list[asyncio.Task[None]]) -> None:
    """Wait until ``window`` is full or ``seconds`` have passed; raise the error of a failed task."""
    full = asyncio.create_task(window.full.wait())
    try:
        done, _ = await asyncio.wait([full, *tasks], timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        full.cancel()
    for task in done:
        if task is not full:
            task.result()


async def _until_quiet(conns: list[Conn], quiet_s: float, limit_s: float) -> bool:
    """Wait until ``conns`` received no frame for ``quiet_s`` seconds; False if still busy after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    last = -1
    while time.monotonic() < deadline:
        now = sum(conn.frames for conn in conns)
        if now == last:
            return True
        last = now
        await asyncio.sleep(quiet_s)
    return False


async def scenario_fanout(args: argparse.Namespace, target: ParlourTarget | EchoTarget) -> dict[str, Any]:
    """``--spectators`` watchers of one table; server CPU per move and per receiver over ``--moves`` moves."""
    players = await open_many(args.host, args.port, 2, lambda c, i: target.hello(c, f"p{i}"))
    spectators = await open_many(args.host, args.port, args.spectators, lambda c, i: target.hello(c, f"s{i}"))
    parlour = ParlourGame(players) if isinstance(target, ParlourTarget) else None
    table = await parlour.open() if parlour else await target.create_table(players)
    received = [0]
    arrived = asyncio.Event()

    def on_push(message: dict[str, Any]) -> None:
        if message.get("type") == "moved":
            received[0] += 1
            arrived.set()

    try:
        await asyncio.gather(*(conn.request("watch_table", table=table) for conn in spectators))
        for conn in spectators:
            conn.on_push = on_push
        if not await _until_quiet(players + spectators, args.quiet, args.drain_limit):
            raise BenchError(f"the server still sent lobby updates {args.drain_limit} s after the watchers joined")
        window = Window()
        rng = random.Random(args.seed)
        if args.callgrind:
            callgrind_window(args.server_pid, start=True)
        cpu_start, wall_start = server_cpu_ns(args.server_pid), time.perf_counter()
        window.measuring = True
        moves = 0
        while moves < args.moves:
            base = received[0]
            started = time.perf_counter()
            if parlour is not None:
                seat, view = await parlour.next_turn()
                if view["outcome"] is not None:
                    break
                await parlour.move(seat, view, rng)
                window.record(started, time.perf_counter())
                before = parlour.ply
                _, after = await parlour.next_turn()
                expected = base + len(spectators) * (after["ply"] - before)
            else:
                expected = base + len(spectators)
                await players[0].request("broadcast", table=table, ply=moves, move="c3", view=_SAMPLE_VIEW)
                window.record(started, time.perf_counter())
            await _wait_count(received, expected, arrived)
            moves += 1
        cpu_ns = server_cpu_ns(args.server_pid) - cpu_start
        wall_s = time.perf_counter() - wall_start
        if args.callgrind:
            callgrind_window(args.server_pid, start=False)
    finally:
        for conn in players + spectators:
            conn.close()
    deliveries = received[0]
    return {
        "spectators": len(spectators), "moves": moves, "deliveries": deliveries, "seconds": wall_s,
        "server_cpu_ns": cpu_ns,
        "cpu_us_per_move": cpu_ns / 1000 / moves if moves and args.server_pid else None,
        "cpu_us_per_receiver": cpu_ns / 1000 / deliveries if deliveries and args.server_pid else None,
        "p50_ms": percentile_ms(window.round_trips_s, 50), "p99_ms": percentile_ms(window.round_trips_s, 99),
    }  # fmt: skip


async def _wait_count(counter: list[int], expected: int, arrived: asyncio.Event) -> None:
    """Wait until ``counter[0]`` reaches ``expected``, ``arrived`` being set on every increment."""
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    while counter[0] < expected:
        arrived.clear()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BenchError(f"only {counter[0]} of {expected} broadcast frames arrived within {REPLY_TIMEOUT_S} s")
        try:
            await asyncio.wait_for(arrived.wait(), remaining)
        except asyncio.TimeoutError:
            pass


async def scenario_join(args: argparse.Namespace, target: ParlourTarget | EchoTarget) -> dict[str, Any]:
    """``--spectators`` greeted connections watch one table at once; the time and the frames it takes."""
    players = await open_many(args.host, args.port, 2, lambda c, i: target.hello(c, f"p{i}"))
    table = await (ParlourGame(players).open() if isinstance(target, ParlourTarget) else target.create_table(players))
    spectators = await open_many(args.host, args.port, args.spectators, lambda c, i: target.hello(c, f"s{i}"))
    everyone = players + spectators
    try:
        await _until_quiet(everyone, args.quiet, args.drain_limit)
        frames_before = sum(conn.frames for conn in everyone)
        cpu_start, started = server_cpu_ns(args.server_pid), time.perf_counter()
        await asyncio.gather(*(conn.request("watch_table", args.drain_limit, table=table) for conn in spectators))
        join_s = time.perf_counter() - started
        frames_at_join = sum(conn.frames for conn in everyone) - frames_before
        quiet = await _until_quiet(everyone, args.quiet, args.drain_limit)
        cpu_ns = server_cpu_ns(args.server_pid) - cpu_start
        frames = sum(conn.frames for conn in everyone) - frames_before
    finally:
        for conn in everyone:
            conn.close()
    return {
        "spectators": len(spectators), "join_s": join_s, "frames_by_last_reply": frames_at_join,
        "frames": frames, "drained": quiet, "server_cpu_ns": cpu_ns, "join_server_cpu_s": cpu_ns / 1e9,
    }  # fmt: skip


async def scenario_memory(args: argparse.Namespace, target: ParlourTarget | EchoTarget) -> dict[str, Any]:
    """``--connections`` greeted idle connections; the server's resident memory before and after."""
    await asyncio.sleep(args.warmup)
    rss_before = server_rss_bytes(args.server_pid)
    conns = await open_many(args.host, args.port, args.connections, lambda c, i: target.hello(c, f"m{i}"))
    try:
        await _until_quiet(conns, args.quiet, args.drain_limit)
        rss_after = server_rss_bytes(args.server_pid)
    finally:
        for conn in conns:
            conn.close()
    return {
        "connections": len(conns), "rss_before": rss_before, "rss_after": rss_after,
        "bytes_per_connection": (rss_after - rss_before) / len(conns) if conns and args.server_pid else None,
    }  # fmt: skip


SCENARIOS = {"play": scenario_play, "fanout": scenario_fanout, "join": scenario_join, "memory": scenario_memory}


def connections_needed(args: argparse.Namespace) -> int:
    """How many sockets a scenario opens at most."""
    if args.scenario == "play":
        return args.idle + 2 * args.games
    if args.scenario == "memory":
        return args.connections
    return 2 + args.spectators


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Lean load generator for Parlour and the echo baseline (JSON on stdout).")
    parser.add_argument("--host", default="127.0.0.1", help="server address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, required=True, help="server port")
    parser.add_argument("--target", choices=["parlour", "echo"], required=True, help="which server is listening")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="play", help="what to measure (default: play)")
    parser.add_argument("--server-pid", type=int, help="the server's process id, to read its CPU time and memory")
    parser.add_argument("--count-pid", type=int, action="append", default=[],
                        help="play: another process whose CPU counts as the server's (another node, Redis); repeatable")
    parser.add_argument("--count-children-of", type=int, action="append", default=[],
                        help="play: a process whose CPU and whose children's count as the server's (PostgreSQL's postmaster); repeatable")
    parser.add_argument("--table-port", type=int,
                        help="play, Parlour: open each table from a connection to this port (another node), players join it")
    parser.add_argument("--games", type=int, default=10, help="play: games at once (default: 10)")
    parser.add_argument("--idle", type=int, default=0, help="play: greeted connections that only read (default: 0)")
    parser.add_argument("--warmup", type=float, default=1.0, help="play, memory: seconds before measuring (default: 1)")
    parser.add_argument("--seconds", type=float, default=3.0, help="play: seconds measured at most (default: 3)")
    parser.add_argument("--max-moves", type=int, help="play: stop after this many measured moves")
    parser.add_argument("--min-games", type=int, default=0,
                        help="play: measure at least until this many games have ended, so that the window holds "
                             "whole games, their lobby updates included (at most --drain-limit s; default: 0)")
    parser.add_argument("--spectators", type=int, default=100, help="fanout, join: watchers (default: 100)")
    parser.add_argument("--moves", type=int, default=30, help="fanout: moves broadcast at most (default: 30)")
    parser.add_argument("--connections", type=int, default=1000, help="memory: connections (default: 1000)")
    parser.add_argument("--drain-limit", type=float, default=60.0,
                        help="longest wait in s for every table to open (play) or the server to fall quiet (default: 60)")
    parser.add_argument("--quiet", type=float, default=0.3,
                        help="seconds without a frame after which the server counts as quiet (default: 0.3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random moves (default: 1)")
    parser.add_argument("--time-control", help="Parlour: the time control of every table, e.g. 60+1 (default: untimed)")
    parser.add_argument("--split", action="store_true",
                        help="play: also measure the server's user/system CPU, context switches and system calls "
                        "(perf), and the players' received bytes, over the window")
    parser.add_argument("--callgrind", action="store_true",
                        help="play, fanout: the server runs under callgrind; switch its counting on and off around the window")
    args = parser.parse_args(argv)
    for name in ("games", "spectators", "moves", "connections"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    for name in ("idle", "warmup", "seconds", "min_games", "quiet"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must not be negative")
    if args.max_moves is not None and args.max_moves < 1:
        parser.error("--max-moves must be at least 1")
    if args.split and args.server_pid is None:
        parser.error("--split needs --server-pid")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ParlourGame.time_control = args.time_control
    wanted = connections_needed(args) + 64
    limit = raise_open_files_limit(wanted)
    if limit < wanted:
        print(f"loadgen: needs {wanted} open files, the hard limit allows {limit}", file=sys.stderr)
        return 1
    try:
        result = asyncio.run(SCENARIOS[args.scenario](args, make_target(args.target)))
    except (BenchError, OSError) as exc:
        print(f"loadgen: {args.scenario} against {args.target} failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"target": args.target, "scenario": args.scenario, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
