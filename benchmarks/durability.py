"""Durability benchmark: accepted moves per second with the database on versus off.

In one run, for each mode -- ``--no-db`` (nothing on disk) and ``--db`` (a
fresh SQLite file in a temporary directory: WAL, ``synchronous=FULL``, every
accepted move committed before it is acknowledged) -- it starts a real Parlour
server in its own process on 127.0.0.1 and has ``--games`` pairs of clients
play seeded random Othello games at once (a pair opens a new table whenever its
game ends) until ``--moves`` moves in total have been accepted. For every move
it measures the round trip from writing the request to the mover's ``ok``.

The modes alternate (no-db, db, no-db, db for ``--rounds 2``) because the
machine may be shared and noisy: each round gives its own ratio, from two runs
taken seconds apart. Both modes play the same seeded games.

With ``--postgres`` a third mode runs in each round: ``pg``, the same server on
PostgreSQL (``--db postgresql://...``), a private PostgreSQL server started for
the run with ``initdb`` and ``pg_ctl`` as the tests start it (``tests/pgserver.py``:
Debian's ``postgresql`` package; its defaults, so ``fsync`` and
``synchronous_commit`` on: every acknowledged move is flushed, as with SQLite's
``FULL``). Its CPU per move counts the server and every PostgreSQL process
(the postmaster and its children: the server's two backends, the WAL writer,
the checkpointer, ...), and the pg / db lines compare it with SQLite's.

Usage::

    python benchmarks/durability.py                    # 8 games at once, 4000 moves per run
    python benchmarks/durability.py --postgres --rounds 1 --moves 2000
    python benchmarks/durability.py --games 1
    python benchmarks/durability.py --games 16 --moves 8000 --rounds 3

Per run it prints moves/s, the p50, p99 and mean of ``move -> ok`` in
milliseconds, and the CPU time per move of the clients' process and (on Linux,
from ``/proc``) of the server's: on a small machine both compete for the same
cores. Then the db / no-db ratios of throughput, p50, p99 and mean for each
round and for all rounds pooled. For the db runs it also prints what reached
the file (opened afterwards: client moves, the server's forced passes, tables)
and how many SQLite transactions the server committed for how many writes --
the server is started through a tiny wrapper that prints its store's
``commits``/``writes`` counters, and how many commits carried how many
writes, when it shuts down; nothing else differs from
``python -m client.cli serve``. Last, the median time of one ``fsync`` of a
small file in the database directory, the floor under any durable commit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
for _path in (ROOT, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from roundtrip import ONE_ADDRESS, UNTHROTTLED, ServerProcess, play_pair  # noqa: E402

_PORT_LINE = re.compile(r"listening on port (\d+)")
_STORE_LINE = re.compile(r"store: (\d+) commits, (\d+) writes; sizes (.*)")

# ``python -m client.cli serve ...``, plus a report of the store's counters when it closes:
# commits, writes, and how many commits carried how many writes ("writes x commits", ...).
_BOOT = """\
import collections, sys
import server.storage.sqlite as store
from client.cli import main
import server.storage.postgres as pg
sizes = collections.Counter()
def counting(kind, name):
    original = getattr(kind, name)
    if name == "_commit_batch":
        def commit_batch(self, jobs):
            sizes[len(jobs)] += 1
            original(self, jobs)
        return commit_batch
    async def commit_group(self, jobs):
        sizes[len(jobs)] += 1
        await original(self, jobs)
    return commit_group
def reporting(original):
    async def close(self):
        await original(self)
        spread = " ".join(f"{size}x{count}" for size, count in sorted(sizes.items()))
        print(f"store: {self.commits} commits, {self.writes} writes; sizes {spread}", flush=True)
    return close
store.SQLiteStore._commit_batch = counting(store.SQLiteStore, "_commit_batch")
pg.PostgresStore._commit_group = counting(pg.PostgresStore, "_commit_group")
store.SQLiteStore.close = reporting(store.SQLiteStore.close)
pg.PostgresStore.close = reporting(pg.PostgresStore.close)
main(sys.argv[1:])
"""


class BenchServer(ServerProcess):
    """``parlour serve`` in a child process, with or without a database, reporting its commits and CPU time."""

    def __init__(self, db_path: Path | str | None, postgres_pid: int | None = None) -> None:
        storage = ["--no-db"] if db_path is None else ["--db", str(db_path)]
        super().__init__(launcher=["-c", _BOOT], storage=storage, options=UNTHROTTLED + ONE_ADDRESS)
        self.db_path = db_path
        self.postgres_pid = postgres_pid  # PostgreSQL's postmaster, whose processes' CPU counts too
        self.postgres_cpu_s: float | None = None
        self._postgres_mark: dict[int, float] = {}
        self.commits: int | None = None
        self.writes: int | None = None
        self.group_sizes = ""  # "WRITES x COMMITS ...": how many commits carried how many writes
        self.cpu_s: float | None = None  # the server's CPU time between mark() and stop()
        self._cpu_mark: float | None = None

    def cpu_time(self) -> float | None:
        """The server process's user + system CPU seconds so far (Linux ``/proc``; ``None`` elsewhere)."""
        assert self.proc is not None
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def mark(self) -> None:
        """Start counting the server's CPU time (and PostgreSQL's) from now."""
        self._cpu_mark = self.cpu_time()
        self._postgres_mark = postgres_cpu(self.postgres_pid) if self.postgres_pid else {}

    def stop(self) -> None:
        """SIGTERM (the server closes its connections and flushes the store), then read what it printed."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            now = self.cpu_time()
            if now is not None and self._cpu_mark is not None:
                self.cpu_s = now - self._cpu_mark
            if self.postgres_pid:  # before the server closes its connections: their backends' time goes with them
                now_pg = postgres_cpu(self.postgres_pid)
                self.postgres_cpu_s = sum(cpu - self._postgres_mark.get(pid, 0.0) for pid, cpu in now_pg.items())
            self.proc.terminate()
        try:
            rest, _ = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rest, _ = self.proc.communicate()
        match = _STORE_LINE.search(rest or "")
        if match:
            self.commits, self.writes, self.group_sizes = int(match[1]), int(match[2]), match[3].strip()


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``), or ``None`` if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu(postmaster: int) -> dict[int, float]:
    """CPU seconds so far of PostgreSQL's postmaster and each of its children, by process id."""
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == postmaster:
                pids.append(int(entry.name))
    return {pid: cpu for pid in pids if (cpu := process_cpu(pid)) is not None}


@dataclass
class Run:
    """One server's run: its mode, its round and what was measured."""

    mode: str
    number: int
    elapsed_s: float
    ok_s: list[float]
    tables: int
    load: float
    client_cpu_s: float
    server_cpu_s: float | None
    db: dict[str, int] = field(default_factory=dict)
    postgres_cpu_s: float | None = None

    @property
    def storage_cpu_s(self) -> float | None:
        """The server's CPU time plus PostgreSQL's (``pg`` runs), or the server's alone."""
        if self.server_cpu_s is None:
            return None
        return self.server_cpu_s + (self.postgres_cpu_s or 0.0)

    @property
    def moves(self) -> int:
        return len(self.ok_s)


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile (as benchmarks/roundtrip.py computes it)."""
    ordered = sorted(samples)
    count = len(ordered)
    return ordered[max(0, min(count - 1, int(round(p / 100 * count + 0.5)) - 1))]


def line(label: str, moves: int, elapsed_s: float, ok_s: list[float]) -> str:
    ms = 1000.0
    return (
        f"{label:<14} {moves / elapsed_s:7,.0f} moves/s  ({moves} in {elapsed_s:6.2f} s)  "
        f"ok p50={percentile(ok_s, 50) * ms:7.3f}  p99={percentile(ok_s, 99) * ms:7.3f}  "
        f"mean={statistics.fmean(ok_s) * ms:7.3f} ms"
    )


async def drive(port: int, args: argparse.Namespace) -> tuple[float, list[float], int]:
    ok_s: list[float] = []
    moved_s: list[float] = []
    shares = [args.moves // args.games + (1 if i < args.moves % args.games else 0) for i in range(args.games)]
    start = time.perf_counter()
    tables = await asyncio.gather(
        *(play_pair("127.0.0.1", port, i, share, 8, args.seed, ok_s, moved_s) for i, share in enumerate(shares) if share)
    )
    return time.perf_counter() - start, ok_s, sum(tables)


def count_db(path: Path | str) -> dict[str, int]:
    """What the database holds after the run (opened read-only once the server has stopped)."""
    if str(path).startswith("postgresql://"):
        import psycopg

        with psycopg.connect(str(path)) as pg:
            moves, forced = pg.execute("SELECT count(*), coalesce(sum(forced), 0) FROM moves").fetchone()  # type: ignore[misc]
            tables = pg.execute("SELECT count(*) FROM tables").fetchone()[0]  # type: ignore[index]
            sessions = pg.execute("SELECT count(*) FROM sessions").fetchone()[0]  # type: ignore[index]
        return {"moves": moves - forced, "forced": forced, "tables": tables, "sessions": sessions}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        moves, forced = db.execute("SELECT count(*), coalesce(sum(forced), 0) FROM moves").fetchone()
        tables = db.execute("SELECT count(*) FROM tables").fetchone()[0]
        sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    finally:
        db.close()
    return {"moves": moves - forced, "forced": forced, "tables": tables, "sessions": sessions}


def one_run(mode: str, number: int, args: argparse.Namespace, workdir: Path, postgres: Any = None) -> Run:
    db_path: Path | str | None = workdir / f"round{number}.sqlite3" if mode == "db" else None
    if mode == "pg":
        db_path = postgres.create_database()
    server = BenchServer(db_path, postgres.postmaster_pid() if mode == "pg" else None)
    port = server.start()
    load = os.getloadavg()[0]
    try:
        server.mark()
        client_cpu = time.process_time()
        elapsed, ok_s, tables = asyncio.run(drive(port, args))
        client_cpu = time.process_time() - client_cpu
    finally:
        server.stop()
    run = Run(mode, number, elapsed, ok_s, tables, load, client_cpu, server.cpu_s, postgres_cpu_s=server.postgres_cpu_s)
    if db_path is not None:
        run.db = count_db(db_path)
        if server.commits is not None and server.writes is not None:
            run.db.update(commits=server.commits, writes=server.writes, group_sizes=server.group_sizes)
    return run


def fsync_ms(directory: Path, count: int = 50) -> float:
    """Median time of writing 4 KiB and ``fsync``-ing it, in ``directory``."""
    path = directory / "fsync.probe"
    times: list[float] = []
    with open(path, "wb") as handle:
        for _ in range(count):
            handle.write(b"\0" * 4096)
            handle.flush()
            start = time.perf_counter()
            os.fsync(handle.fileno())
            times.append(time.perf_counter() - start)
    path.unlink()
    return statistics.median(times) * 1000.0


def ratio_line(label: str, off: list[Run], on: list[Run]) -> str:
    def pooled(runs: list[Run]) -> tuple[float, list[float]]:
        return sum(r.moves for r in runs) / sum(r.elapsed_s for r in runs), [s for r in runs for s in r.ok_s]

    off_rate, off_ok = pooled(off)
    on_rate, on_ok = pooled(on)
    return (
        f"{label:<20} {on_rate / off_rate:10.2f}  {percentile(on_ok, 50) / percentile(off_ok, 50):5.2f}  "
        f"{percentile(on_ok, 99) / percentile(off_ok, 99):5.2f}  {statistics.fmean(on_ok) / statistics.fmean(off_ok):5.2f}"
    )



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare Parlour's accepted moves per second with the database on and off.")
    parser.add_argument("--games", type=int, default=8, help="pairs of clients playing at once (default: 8)")
    parser.add_argument("--moves", type=int, default=4000, help="moves per run, shared among the games (default: 4000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random moves (default: 1)")
    parser.add_argument("--rounds", type=int, default=2, help="times each mode runs, alternating (default: 2)")
    parser.add_argument("--dir", type=Path, help="where the databases go (default: a new temporary directory)")
    parser.add_argument("--postgres", action="store_true", help="also run each round on PostgreSQL (a private server: tests/pgserver.py)")
    args = parser.parse_args(argv)
    if args.moves < 1 or args.games < 1 or args.rounds < 1:
        parser.error("--moves, --games and --rounds must be at least 1")

    with tempfile.TemporaryDirectory(prefix="parlour-bench-", dir=args.dir) as tmp:
        workdir = Path(tmp)
        print(f"othello 8x8, {args.games} game(s) at once, {args.moves} moves per run, seed {args.seed}; "
              f"server in its own process on 127.0.0.1; {os.cpu_count()} CPU(s); databases in {workdir}")
        runs: list[Run] = []
        modes = ("no-db", "db", "pg") if args.postgres else ("no-db", "db")
        postgres = start_postgres() if args.postgres else None
        try:
            for number in range(1, args.rounds + 1):
                for mode in modes:
                    runs.append(report_run(one_run(mode, number, args, workdir, postgres)))
        finally:
            if postgres is not None:
                postgres.destroy()
        probe = fsync_ms(workdir)

    print()
    print("db / no-db           throughput   p50    p99    mean")
    by_key = {(run.mode, run.number): run for run in runs}
    for number in range(1, args.rounds + 1):
        off, on = by_key[("no-db", number)], by_key[("db", number)]
        print(ratio_line(f"round {number}", [off], [on]))
    if args.rounds > 1:
        print(ratio_line("all rounds", [r for r in runs if r.mode == "no-db"], [r for r in runs if r.mode == "db"]))
        for mode in modes:
            mine = [r for r in runs if r.mode == mode]
            print(line(f"pooled {mode}", sum(r.moves for r in mine), sum(r.elapsed_s for r in mine),
                       [s for r in mine for s in r.ok_s]))
    if args.postgres:
        print()
        print("pg / db (SQLite)     CPU/move (server + PostgreSQL)   p50    p99")
        for number in range(1, args.rounds + 1):
            print(engine_line(f"round {number}", by_key[("db", number)], by_key[("pg", number)]))
    print(f"fsync of 4 KiB in the database directory: median {probe:.3f} ms")
    return 0


def start_postgres() -> Any:
    """A private PostgreSQL server, started as the tests start theirs."""
    from tests.pgserver import PostgresServer, missing_reason

    reason = missing_reason()
    if reason is not None:
        raise SystemExit(f"--postgres: {reason}")
    postgres = PostgresServer()
    postgres.start()
    return postgres


def engine_line(label: str, sqlite_run: Run, pg_run: Run) -> str:
    """PostgreSQL's CPU per move (server + PostgreSQL) over SQLite's (server), and the p50 and p99 ratios."""
    if sqlite_run.storage_cpu_s is None or pg_run.storage_cpu_s is None:
        return f"{label:<20} (no CPU times: not Linux)"
    lite = sqlite_run.storage_cpu_s * 1000 / sqlite_run.moves
    pg = pg_run.storage_cpu_s * 1000 / pg_run.moves
    return (
        f"{label:<20} {pg / lite:5.2f}  ({pg:.3f} vs {lite:.3f} ms/move)     "
        f"{percentile(pg_run.ok_s, 50) / percentile(sqlite_run.ok_s, 50):5.2f}  "
        f"{percentile(pg_run.ok_s, 99) / percentile(sqlite_run.ok_s, 99):5.2f}"
    )


def report_run(run: Run) -> Run:
    """Print one run's lines; return it."""
    cpu = f"CPU ms/move: clients {run.client_cpu_s * 1000 / run.moves:.2f}"
    if run.server_cpu_s is not None:
        cpu += f", server {run.server_cpu_s * 1000 / run.moves:.2f}"
    if run.postgres_cpu_s is not None:
        cpu += f", PostgreSQL {run.postgres_cpu_s * 1000 / run.moves:.2f}"
    print(line(f"round {run.number} {run.mode}", run.moves, run.elapsed_s, run.ok_s) + f"  [{run.tables} tables, load {run.load:.2f}]")
    print(f"{'':<14} {cpu}")
    if run.db:
        stored = (f"{'':<14} stored: {run.db['moves']} client moves (+{run.db['forced']} forced passes), "
                  f"{run.db['tables']} tables, {run.db['sessions']} sessions")
        if "commits" in run.db:
            stored += (f"; {run.db['commits']} commits for {run.db['writes']} writes "
                       f"({run.db['writes'] / max(1, run.db['commits']):.2f} writes/commit; "
                       f"writes x commits: {run.db['group_sizes']})")
        print(stored)
        if run.db["moves"] != run.moves:
            print(f"{'':<14} WARNING: {run.moves} moves were acknowledged but {run.db['moves']} are stored")
    return run


if __name__ == "__main__":
    sys.exit(main())
