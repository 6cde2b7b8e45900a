"""The floor under a durable move on this machine: SQLite + fsync with nothing of Parlour around it.

Parlour's durable mode (``parlour serve --db FILE``) commits every move in
SQLite (WAL, ``synchronous=FULL``) before it answers ``ok``. Whatever it does
per move, it cannot cost less than the commit itself. This script measures
that floor with a bare loop in one thread, on a fresh Parlour database (the
real schema, the real move ``INSERT``):

- ``sqlite N/commit``: ``BEGIN IMMEDIATE``, ``N`` move ``INSERT`` s, ``COMMIT``,
  for N = 1, 2, 5, 10, 20 (a group commit carrying the moves of N tables);
- ``write+fsync`` and ``write+fdatasync``: ``os.write`` of a 200-byte append,
  then ``os.fsync`` / ``os.fdatasync`` (what one WAL commit must wait for at least);
- ``pwrite+fdatasync in place``: the same 200 bytes rewritten at one offset of a
  file that does not grow, then ``os.fdatasync`` (no size to update: the case of
  a WAL file being reused after a checkpoint).

For each it prints the latency of one commit (p50 and p99, wall time, in
milliseconds) and the CPU time per move (user + system of this process from
``resource.getrusage``, in microseconds; for the raw appends "per move" is per
append). The sum is exact; its split into user and system time is the
kernel's estimate and varies from run to run. Compare with the echo server: its one-game p99 (about 0.23 ms) and its
CPU per request at 10 games (about 17 us): a durable target under the floor is
not reachable on this disk.

The files live in a temporary directory under ``--dir`` (default: the
system's temporary directory; pick the disk the server's database would live
on). The machine's load average is printed before and after, since wall-time
latencies depend on it (CPU time per move much less).

Usage::

    python benchmarks/durable_floor.py                      # about 20 s
    python benchmarks/durable_floor.py --commits 2000 --dir /var/lib/parlour
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from server.storage.rows import MoveRow, TableRow  # noqa: E402
from server.storage.sqlite import SQLiteStore  # noqa: E402
from server.storage.statements import append_move_sql, create_table_sql  # noqa: E402

GROUP_SIZES = (1, 2, 5, 10, 20)
"""Moves per transaction measured (``N``)."""

APPEND = b"x" * 200
"""What one raw append writes: about the size of a WAL frame's share of one move."""


@dataclass(frozen=True, slots=True)
class Floor:
    """One measured way of making moves durable.

    Attributes:
        name: what was measured (``sqlite 5/commit``, ``write+fsync``).
        moves_per_commit: moves one commit (or one append) carries.
        p50_ms, p99_ms: wall time of one commit, in milliseconds.
        cpu_us_per_move: user + system CPU time per move, in microseconds.
        user_us_per_move, sys_us_per_move: its two parts.
    """

    name: str
    moves_per_commit: int
    p50_ms: float
    p99_ms: float
    cpu_us_per_move: float
    user_us_per_move: float
    sys_us_per_move: float


def _cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def _summarise(name: str, per_commit: int, latencies: list[float], cpu_before: tuple[float, float], moves: int) -> Floor:
    user, system = (after - before for after, before in zip(_cpu(), cpu_before))
    cuts = statistics.quantiles(latencies, n=100)
    return Floor(
        name=name,
        moves_per_commit=per_commit,
        p50_ms=statistics.median(latencies) * 1e3,
        p99_ms=cuts[98] * 1e3,
        cpu_us_per_move=(user + system) / moves * 1e6,
        user_us_per_move=user / moves * 1e6,
        sys_us_per_move=system / moves * 1e6,
    )


def sqlite_floor(directory: Path, per_commit: int, commits: int) -> Floor:
    """``commits`` transactions of ``per_commit`` move INSERTs each, on a fresh Parlour database in ``directory``.

    The connection is set up as the server's writer is: WAL, ``synchronous=FULL``,
    ``foreign_keys=ON``, no implicit transactions; each statement is the server's own
    (:func:`server.storage.statements.append_move_sql`), so SQLite's statement cache prepares it once.
    """
    path = directory / f"floor-{per_commit}.sqlite3"
    SQLiteStore.open(path).close_sync()  # the real schema, in WAL mode
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        tables = range(1, per_commit + 1)  # one table per move of a commit, as in a group commit of N tables
        for table_id in tables:
            sql, params = create_table_sql(TableRow(id=table_id, game="othello", options={"size": 8}, seed=None, created=time.time()))
            db.execute(sql, params)
        latencies: list[float] = []
        ply = 0
        cpu_before = _cpu()
        for _ in range(commits):
            ply += 1
            now = time.time()
            statements = [append_move_sql(table_id, MoveRow(ply, ply % 2, "d3", now)) for table_id in tables]
            start = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                db.execute(sql, params)
            db.execute("COMMIT")
            latencies.append(time.perf_counter() - start)
        return _summarise(f"sqlite {per_commit}/commit", per_commit, latencies, cpu_before, commits * per_commit)
    finally:
        db.close()


def append_floor(directory: Path, sync: str, appends: int) -> Floor:
    """``appends`` appends of :data:`APPEND` to one file, each followed by ``os.<sync>`` (``fsync`` or ``fdatasync``)."""
    flush = getattr(os, sync)
    fd = os.open(directory / f"append-{sync}", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        latencies: list[float] = []
        cpu_before = _cpu()
        for _ in range(appends):
            start = time.perf_counter()
            os.write(fd, APPEND)
            flush(fd)
            latencies.append(time.perf_counter() - start)
        return _summarise(f"write+{sync}", 1, latencies, cpu_before, appends)
    finally:
        os.close(fd)


def overwrite_floor(directory: Path, appends: int) -> Floor:
    """``appends`` rewrites of :data:`APPEND` at offset 0 of a 4 KiB file, each followed by ``os.fdatasync``."""
    fd = os.open(directory / "overwrite", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, bytes(4096))
        os.fsync(fd)
        latencies: list[float] = []
        cpu_before = _cpu()
        for _ in range(appends):
            start = time.perf_counter()
            os.pwrite(fd, APPEND, 0)
            os.fdatasync(fd)
            latencies.append(time.perf_counter() - start)
        return _summarise("pwrite+fdatasync in place", 1, latencies, cpu_before, appends)
    finally:
        os.close(fd)


def table(floors: list[Floor]) -> str:
    """The Markdown table of ``floors``."""
    lines = [
        "| what | moves/commit | p50 ms | p99 ms | CPU µs/move | user | sys |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in floors:
        lines.append(
            f"| {f.name} | {f.moves_per_commit} | {f.p50_ms:.3f} | {f.p99_ms:.3f} | "
            f"{f.cpu_us_per_move:.1f} | {f.user_us_per_move:.1f} | {f.sys_us_per_move:.1f} |"
        )
    return "\n".join(lines)


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SQLite + fsync floor under a durable move, without Parlour.")
    parser.add_argument("--commits", type=int, default=1000, help="commits (or appends) per row (default: 1000)")
    parser.add_argument("--dir", type=Path, default=None, help="where the scratch files go (default: the temporary directory)")
    args = parser.parse_args(argv)
    if args.commits < 100:
        parser.error("--commits must be at least 100 (for a p99)")
    print(f"load average {_load()}")
    with tempfile.TemporaryDirectory(prefix="parlour-floor-", dir=args.dir) as scratch:
        directory = Path(scratch)
        floors = [append_floor(directory, "fsync", args.commits), append_floor(directory, "fdatasync", args.commits)]
        floors.append(overwrite_floor(directory, args.commits))
        floors += [sqlite_floor(directory, n, args.commits) for n in GROUP_SIZES]
    print(table(floors))
    print(f"load average {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
