"""Hostile-client benchmark: do misbehaving connections slow down everyone else's moves?

Starts a real ``parlour serve --no-db`` in its own process on 127.0.0.1, with
the server's default limits (``--unthrottled`` lifts the request rate limit,
for comparison) except those per IP address on connection attempts and tables,
which are lifted because players and hostiles all connect from 127.0.0.1, and has ``--pairs`` pairs of well-behaved clients play Othello
8x8 games of seeded random legal moves, a new table whenever a game ends, one
move per table every ``--interval-ms`` (default 40 ms: each client sends about
12 requests a second, well under the default limit of 50). Every move is
timed from writing the request to reading its ``ok``.

The run alternates phases of ``--seconds`` each: *alone* (only the players)
and *hostile* (the players plus three hostile clients), ``--rounds`` times:
alone, hostile, alone, hostile, ... so both are measured seconds apart on the
same server. The first second of each phase is not counted. The hostiles run
in a separate process (this script with ``--worker``), started for each
hostile phase, so that their own work does not delay the measuring clients'
event loop (on a small machine they still compete for the same cores):

- *flooder*: says hello, then pipelines pings and moves at the players' tables
  as fast as the socket takes them, never waiting for a reply (it reads and
  discards what comes back); reconnects whenever the server drops it.
- *non-reader*: SO_RCVBUF of 4 KiB; says hello, watches tables, stays in the
  lobby, asks for the table list and views about 40 times a second, and never
  reads its socket; reconnects whenever the server drops it.
- *garbage*: random bytes and malformed frames (not a map, bad keys,
  extension types, oversize headers, truncated bodies), now and then behind a
  hello; reconnects as soon as the server closes the connection.

Usage::

    python benchmarks/hostile.py                       # 3 rounds of 12 s phases, 4 pairs: about 1.5 minutes
    python benchmarks/hostile.py --rounds 5 --seconds 20 --pairs 8
    python benchmarks/hostile.py --unthrottled         # the same without the per-connection rate limit

Prints, per phase, the number of moves timed and the p50, p99 and max round
trip in milliseconds, with the server's CPU use and the whole machine's busy
and hypervisor-stolen share of CPU time (Linux ``/proc``); then both
kinds pooled over the rounds, the ratio p99(hostile) / p99(alone) pooled and
per round (the goal is below 2), and for each hostile how many connections it
opened, how often the server dropped it (and with which error), how much it
sent and how much of that the server answered.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import random
import socket
import statistics
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
for _path in (ROOT, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import games  # noqa: E402
from client import Client  # noqa: E402
from durability import BenchServer, percentile  # noqa: E402
from protocol import PROTOCOL_VERSION, FrameDecoder, FrameError, encode_frame  # noqa: E402
from roundtrip import ONE_ADDRESS, UNTHROTTLED, ServerProcess, close_table, skip_forced_passes  # noqa: E402

WARMUP_S = 1.0
"""The first this-many seconds of each phase are not counted (hostiles connecting or leaving)."""
OTHELLO = games.get("othello")

# --- the server ---------------------------------------------------------------------------------------


class MeasuredServer(ServerProcess):
    """``parlour serve --no-db`` in a child process, whose CPU time can be read."""

    cpu_time = BenchServer.cpu_time


def machine_cpu() -> tuple[int, int, int] | None:
    """The whole machine's CPU ticks so far: (total, idle, stolen by the hypervisor); ``None`` without ``/proc/stat``."""
    try:
        ticks = [int(t) for t in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    except (OSError, ValueError, IndexError):
        return None
    return sum(ticks), ticks[3] + ticks[4], ticks[7]


# --- well-behaved players -----------------------------------------------------------------------------


@dataclass
class Sample:
    """One move: when its request was written (``time.perf_counter()``) and how long its ``ok`` took."""

    at: float
    ok_s: float


async def play_pairs_forever(port: int, index: int, interval_s: float, seed: int, samples: list[Sample], stop: asyncio.Event) -> None:
    """Two clients play Othello games, a paced move at a time, until ``stop``; every move is timed."""
    rng = random.Random(seed * 1_000_003 + index)
    clients = [await Client.connect("127.0.0.1", port, name=f"good{index}a"), await Client.connect("127.0.0.1", port, name=f"good{index}b")]
    drains = [asyncio.create_task(_discard_events(client)) for client in clients]
    try:
        while not stop.is_set():
            await play_one_game(clients, rng, interval_s, samples, stop)
    finally:
        for client in clients:
            await client.close()
        for task in drains:
            task.cancel()


async def _discard_events(client: Client) -> None:
    async for _ in client.events():
        pass


async def play_one_game(clients: list[Client], rng: random.Random, interval_s: float, samples: list[Sample], stop: asyncio.Event) -> None:
    table = (await clients[0].create_table("othello", {"size": 8}, seat=0)).table.id
    await clients[1].join_table(table, seat=1)
    state = OTHELLO.new_state({"size": 8})
    next_at = time.perf_counter()
    while state.outcome is None and not stop.is_set():
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        next_at = max(next_at + interval_s, time.perf_counter())
        mover = state.to_move
        assert mover is not None
        move = rng.choice(state.legal_moves())
        start = time.perf_counter()
        await clients[mover].move(table, move, ply=state.ply)
        samples.append(Sample(start, time.perf_counter() - start))
        state = skip_forced_passes(state.play(move))
    await close_table(clients, table, state)


# --- hostiles (in the worker process) -----------------------------------------------------------------------


@dataclass
class HostileStats:
    """What one hostile did during a phase."""

    connections: int = 0
    dropped: int = 0
    drop_codes: collections.Counter[str] = field(default_factory=collections.Counter)
    requests: int = 0
    bytes_sent: int = 0
    replies: int = 0
    failures: collections.Counter[str] = field(default_factory=collections.Counter)

    def to_json(self) -> dict[str, Any]:
        return {"connections": self.connections, "dropped": self.dropped, "drop_codes": dict(self.drop_codes),
                "requests": self.requests, "bytes_sent": self.bytes_sent, "replies": self.replies,
                "failures": dict(self.failures)}


def frame(kind: str, rid: int, **fields: Any) -> bytes:
    return encode_frame({"type": kind, "id": rid, **fields})


def hello(rid: int, name: str) -> bytes:
    return frame("hello", rid, version=PROTOCOL_VERSION, name=name)


class Reader:
    """Reads and counts what the server sends on a connection; remembers the last connection-level error."""

    def __init__(self, reader: asyncio.StreamReader, stats: HostileStats) -> None:
        self.stats = stats
        self.last_code: str | None = None
        self.task = asyncio.create_task(self._run(reader))

    async def _run(self, reader: asyncio.StreamReader) -> None:
        decoder = FrameDecoder(max_frame_bytes=1 << 22)
        try:
            while data := await reader.read(65536):
                for message in decoder.feed(data):
                    self.stats.replies += 1
                    if message.get("type") == "error" and message.get("id") is None:
                        self.last_code = str(message.get("code"))
        except (ConnectionError, OSError, FrameError):
            pass


async def flooder(port: int, tables: list[int], stop: asyncio.Event, stats: HostileStats) -> None:
    """Pipelines pings and moves as fast as the socket takes them; reconnects when dropped."""
    number = 0
    while not stop.is_set():
        number += 1
        await _until_stopped(flood_once(port, tables, f"flood{number}", stats), stop, stats)


async def flood_once(port: int, tables: list[int], name: str, stats: HostileStats) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    stats.connections += 1
    replies = Reader(reader, stats)
    batch = b"".join(frame("ping", i) if i % 2 else frame("move", i, table=tables[i % len(tables)], move="d3", ply=0) for i in range(2, 66))
    try:
        writer.write(hello(1, name))
        while not replies.task.done() and not writer.transport.is_closing():
            writer.write(batch)
            stats.requests += 64
            stats.bytes_sent += len(batch)
            await writer.drain()  # blocks while the server does not read us: that is the rate limit at work
    except (ConnectionError, OSError):
        pass
    finally:
        await _closed_by_server(replies, writer, stats)


async def non_reader(port: int, tables: list[int], stop: asyncio.Event, stats: HostileStats) -> None:
    """Asks for tables and views, watches games, never reads; reconnects when dropped."""
    number = 0
    while not stop.is_set():
        number += 1
        await _until_stopped(mute_once(port, tables, f"mute{number}", stats), stop, stats)


class _Mute(asyncio.Protocol):
    """A connection that never reads: it only notices the end when a write fails."""

    def __init__(self) -> None:
        self.lost = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.pause_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(exc)


async def mute_once(port: int, tables: list[int], name: str, stats: HostileStats) -> None:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", port))
    transport, mute = await loop.create_connection(_Mute, sock=sock)
    stats.connections += 1
    rid = 1
    watching = b"".join(frame("watch_table", rid + i, table=t) for i, t in enumerate(tables, 1))
    first = hello(rid, name) + frame("watch_lobby", 0) + watching  # in the lobby: it gets every lobby push it never reads
    pending = [first]
    try:
        while not mute.lost.done():
            data = b"".join(pending)
            transport.write(data)
            stats.requests += len(pending)
            stats.bytes_sent += len(data)
            rid += 2
            table = rng_table(tables, rid)
            pending = [frame("list_tables", rid), frame("watch_table", rid + 1, table=table)]
            await asyncio.wait({mute.lost}, timeout=0.05)  # 40 requests a second: under the rate limit
    finally:
        if mute.lost.done():
            stats.dropped += 1
            stats.drop_codes["(never read)"] += 1
        transport.abort()


def rng_table(tables: list[int], rid: int) -> int:
    """A table to watch: the players' tables and the ids just after them (the next games')."""
    return max(1, max(tables) + rid % 12 - 4)


async def garbage(port: int, seed: int, stop: asyncio.Event, stats: HostileStats) -> None:
    """Malformed frames and random bytes; reconnects as soon as the server closes the connection."""
    rng = random.Random(seed)
    number = 0
    while not stop.is_set():
        number += 1
        await _until_stopped(garbage_once(port, rng, f"junk{number}", stats), stop, stats)


def garbage_bytes(rng: random.Random) -> bytes:
    """One piece of garbage: random bytes, or a frame whose body or header is wrong."""
    ping = msgpack.packb({"type": "ping", "id": 3})
    bodies = [b"\xc1", msgpack.packb([1, 2]), b"\x81\x01\x02", b"\x81\xa1x\xd6\x05data", ping + b"\x00",
              b"\x82\xa4type\xa4ping\xa2id\xa2\xff\xfe", rng.randbytes(rng.randint(1, 40))]
    choice = rng.random()
    if choice < 0.3:
        return rng.randbytes(rng.randint(1, 200))
    if choice < 0.4:
        return struct.pack(">I", rng.choice([65537, 2**32 - 1]))
    if choice < 0.5:
        return struct.pack(">I", 500) + rng.randbytes(rng.randint(0, 499))  # truncated: more garbage completes it
    body = rng.choice(bodies)
    return struct.pack(">I", len(body)) + body


async def garbage_once(port: int, rng: random.Random, name: str, stats: HostileStats) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    stats.connections += 1
    replies = Reader(reader, stats)
    try:
        if rng.random() < 0.5:
            writer.write(hello(1, name))
            stats.requests += 1
        while not replies.task.done() and not writer.transport.is_closing():
            data = garbage_bytes(rng)
            writer.write(data)
            stats.requests += 1
            stats.bytes_sent += len(data)
            await writer.drain()
            await asyncio.wait({replies.task}, timeout=0.002)
    except (ConnectionError, OSError):
        pass
    finally:
        await _closed_by_server(replies, writer, stats)


async def _closed_by_server(replies: Reader, writer: asyncio.StreamWriter, stats: HostileStats) -> None:
    if replies.task.done():
        stats.dropped += 1
        stats.drop_codes[replies.last_code or "(no error)"] += 1
    writer.close()
    replies.task.cancel()
    await asyncio.gather(replies.task, return_exceptions=True)


async def _until_stopped(coroutine: Any, stop: asyncio.Event, stats: HostileStats) -> None:
    """Run one connection until it ends or ``stop`` is set (then cancel it); count how it failed, if it did."""
    task = asyncio.ensure_future(coroutine)
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    for pending in (task, stopper):
        pending.cancel()
    results = await asyncio.gather(task, stopper, return_exceptions=True)
    if isinstance(results[0], Exception):
        stats.failures[type(results[0]).__name__] += 1
        await asyncio.sleep(0.05)  # could not connect (e.g. too many connections): do not spin


async def worker(port: int, tables: list[int], seconds: float, seed: int) -> dict[str, Any]:
    """Run the three hostiles for ``seconds``; return what each did."""
    stop = asyncio.Event()
    stats = {name: HostileStats() for name in ("flooder", "non_reader", "garbage")}
    tasks = [
        asyncio.create_task(flooder(port, tables, stop, stats["flooder"])),
        asyncio.create_task(non_reader(port, tables, stop, stats["non_reader"])),
        asyncio.create_task(garbage(port, seed, stop, stats["garbage"])),
    ]
    print("ready", flush=True)
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks)
    return {name: s.to_json() for name, s in stats.items()}


# --- phases -----------------------------------------------------------------------------------------------------


@dataclass
class Phase:
    """One phase of the run: its kind and round, its clock window, and what was measured in it."""

    kind: str
    round: int
    start: float
    end: float
    cpu_s: float | None
    machine: tuple[float, float] | None  # (busy, stolen) fractions of the machine's CPU time
    hostiles: dict[str, Any] | None = None
    samples: list[float] = field(default_factory=list)


async def hostile_phase(port: int, tables: list[int], args: argparse.Namespace, number: int) -> tuple[float, asyncio.subprocess.Process]:
    """Start the hostile worker; return when its hostiles are running."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--worker", str(port), "--tables", ",".join(map(str, tables)),
        "--seconds", str(args.seconds), "--seed", str(args.seed + number),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    line = await proc.stdout.readline()
    if line.strip() != b"ready":
        raise RuntimeError(f"the hostile worker did not start: {line!r}")
    return time.perf_counter(), proc


async def run_phase(server: MeasuredServer, kind: str, number: int, args: argparse.Namespace, tables: list[int]) -> Phase:
    proc = None
    cpu_before, machine_before = server.cpu_time(), machine_cpu()
    if kind == "hostile":
        start, proc = await hostile_phase(server.port, tables, args, number)
    else:
        start = time.perf_counter()
    await asyncio.sleep(args.seconds)
    end = time.perf_counter()
    cpu_after, machine_after = server.cpu_time(), machine_cpu()
    hostiles = None
    if proc is not None:
        out, _ = await proc.communicate()
        hostiles = json.loads(out.decode().strip().splitlines()[-1])
    cpu = cpu_after - cpu_before if cpu_before is not None and cpu_after is not None else None
    return Phase(kind, number, start, end, cpu, machine_share(machine_before, machine_after), hostiles)


def machine_share(before: tuple[int, int, int] | None, after: tuple[int, int, int] | None) -> tuple[float, float] | None:
    if before is None or after is None or after[0] == before[0]:
        return None
    total = after[0] - before[0]
    return 1 - (after[1] - before[1]) / total, (after[2] - before[2]) / total


async def run(args: argparse.Namespace, server: MeasuredServer) -> list[Phase]:
    samples: list[Sample] = []
    stop = asyncio.Event()
    players = [asyncio.create_task(play_pairs_forever(server.port, i, args.interval_ms / 1000, args.seed, samples, stop))
               for i in range(args.pairs)]
    await asyncio.sleep(1.0)
    probe = await Client.connect("127.0.0.1", server.port, name="probe")
    phases = []
    try:
        for number in range(1, args.rounds + 1):
            for kind in ("alone", "hostile"):
                tables = sorted(t.id for t in await probe.list_tables()) or [1]
                phases.append(await run_phase(server, kind, number, args, tables))
                print(phase_line(phases[-1], samples), flush=True)
    finally:
        stop.set()
        await probe.close()
        await asyncio.gather(*players)  # a well-behaved client refused or dropped is a finding: let it raise
    return phases


# --- report -----------------------------------------------------------------------------------------------------------


def assign(phase: Phase, samples: list[Sample]) -> list[float]:
    """The round trips of moves written in the counted part of ``phase``."""
    return [s.ok_s for s in samples if phase.start + WARMUP_S <= s.at < phase.end]


def stats_ms(values: list[float]) -> str:
    if not values:
        return "no samples"
    ms = 1000.0
    return (f"{len(values):5d} moves  p50 {percentile(values, 50) * ms:7.2f}  p99 {percentile(values, 99) * ms:7.2f}  "
            f"max {max(values) * ms:7.2f} ms  mean {statistics.fmean(values) * ms:6.2f}")


def phase_line(phase: Phase, samples: list[Sample]) -> str:
    phase.samples = assign(phase, samples)
    cpu = f"  server CPU {100 * phase.cpu_s / (phase.end - phase.start):3.0f}%" if phase.cpu_s is not None else ""
    if phase.machine is not None:
        cpu += f"  machine busy {100 * phase.machine[0]:3.0f}% steal {100 * phase.machine[1]:3.0f}%"
    return f"{phase.kind:<8}#{phase.round}  {stats_ms(phase.samples)}{cpu}"


def ratio(hostile: list[float], alone: list[float], p: float) -> float:
    return percentile(hostile, p) / percentile(alone, p)


def report(phases: list[Phase]) -> None:
    alone = [s for p in phases if p.kind == "alone" for s in p.samples]
    hostile = [s for p in phases if p.kind == "hostile" for s in p.samples]
    print(f"{'alone':<10} {stats_ms(alone)}")
    print(f"{'hostile':<10} {stats_ms(hostile)}")
    if not alone or not hostile:
        return
    rounds = sorted({p.round for p in phases})
    per_round = []
    for number in rounds:
        a = [s for p in phases if p.round == number and p.kind == "alone" for s in p.samples]
        h = [s for p in phases if p.round == number and p.kind == "hostile" for s in p.samples]
        if a and h:
            per_round.append(f"{ratio(h, a, 99):.2f}")
    verdict = "goal < 2: met" if ratio(hostile, alone, 99) < 2 else "goal < 2: MISSED"
    print(f"p99 hostile/alone: {ratio(hostile, alone, 99):.2f} pooled (per round {', '.join(per_round)}); {verdict}")
    print(f"p50 hostile/alone: {ratio(hostile, alone, 50):.2f} pooled; max {max(hostile) / max(alone):.2f}")
    print_hostiles(phases)


def print_hostiles(phases: list[Phase]) -> None:
    print("hostiles, per hostile phase: connections opened; dropped by the server (with the error it sent); requests or"
          " garbage pieces written (the server reads a flooder's only as its rate limit allows); bytes written; frames received")
    for phase in phases:
        if phase.hostiles is None:
            continue
        for name, s in phase.hostiles.items():
            codes = ", ".join(f"{code} {count}" for code, count in sorted(s["drop_codes"].items())) or "-"
            failures = f"  failures: {s['failures']}" if s["failures"] else ""
            print(f"  #{phase.round} {name:<10} {s['connections']:6d} conn  {s['dropped']:6d} dropped ({codes})  "
                  f"{s['requests']:9,d} sent  {s['bytes_sent'] / 1e6:8.2f} MB  {s['replies']:9,d} received{failures}")


# --- main -------------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Measure move round trips with and without hostile clients.")
    parser.add_argument("--rounds", type=int, default=3, help="alone/hostile phase pairs (default: 3)")
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each phase (default: 12)")
    parser.add_argument("--pairs", type=int, default=4, help="pairs of well-behaved clients (default: 4)")
    parser.add_argument("--interval-ms", type=float, default=40.0, help="time between moves at one table (default: 40)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the moves and the garbage (default: 1)")
    parser.add_argument("--unthrottled", action="store_true", help="lift the server's per-connection rate limit")
    parser.add_argument("--worker", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--tables", default="1", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.pairs < 1 or args.seconds <= WARMUP_S:
        parser.error(f"--rounds and --pairs must be at least 1 and --seconds more than {WARMUP_S:g}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        logging.getLogger("asyncio").setLevel(logging.ERROR)  # not "socket.send() raised exception" for every drop
        tables = [int(t) for t in args.tables.split(",")]
        print(json.dumps(asyncio.run(worker(args.worker, tables, args.seconds, args.seed))), flush=True)
        return 0
    server = MeasuredServer(options=ONE_ADDRESS + (UNTHROTTLED if args.unthrottled else []))
    port = server.start()
    limits = "rate limit lifted" if args.unthrottled else "default limits but per-address ones"
    print(f"server 127.0.0.1:{port} (separate process, --no-db, {limits}); {args.pairs} pairs playing Othello 8x8, "
          f"a move per table every {args.interval_ms:g} ms; {args.rounds} rounds of {args.seconds:g} s phases "
          f"(first {WARMUP_S:g} s of each not counted); seed {args.seed}")
    try:
        phases = asyncio.run(run(args, server))
    finally:
        server.stop()
    report(phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
