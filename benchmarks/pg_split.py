"""Where a durable move's CPU goes on PostgreSQL: the server, PostgreSQL's backends, its other processes; WAL a move.

One ``parlour serve --db postgresql://...`` reaching PostgreSQL over its unix socket, as
on one machine (``--tcp``: beside it, one over TCP on 127.0.0.1; and one on SQLite) under the
load of ``benchmarks/cluster_compare.py`` (``loadgen.py --scenario play``: ``--games``
Othello games at once, random legal moves, every move committed before its ``ok``),
processes pinned as there (servers on core 0, the load on core 1). Around each run it
reads every server process's CPU time (``/proc/<pid>/schedstat``; PostgreSQL's children
sorted by role from their process titles: the backends that serve connections, the WAL
writer, the checkpointer, the background writer, autovacuum, the rest; children that
ended meanwhile from the postmaster's ``cutime``/``cstime``), and PostgreSQL's
statistics: ``pg_stat_wal`` (WAL records, full-page images, bytes), commits of the
database (``pg_stat_database.xact_commit``) and checkpoints (``pg_stat_bgwriter``).
Moves are counted in the database, so the per-move figures hold the warm-up too.

``--floor`` adds the cheapest durable PostgreSQL move on this machine: a bare loop of one
prepared move ``INSERT`` in autocommit (one transaction, one WAL flush), through psycopg's
cursor and through libpq's prepared statement as the writer sends it
(``server/storage/pg_moves.py``), with its CPU split between this process and
PostgreSQL's.

``--statements`` loads ``pg_stat_statements`` (which costs CPU itself: its runs' CPU figures are
not comparable) and prints, for each ``pg`` run, the statements PostgreSQL ran a move (the
move ``INSERT``s of every row count as one) and the rows of each table inserted, updated (HOT
or not) and deleted a move (``pg_stat_user_tables``).

PostgreSQL runs with the settings every private instance gets (``tests/pgserver.py``,
:data:`tests.pgserver.SETTINGS`); ``--plain`` starts it with PostgreSQL's own defaults
instead, ``--set NAME=VALUE`` adds one, to compare.

Usage::

    python benchmarks/pg_split.py                       # 10 games, 5 s a run, 2 rounds: about a minute
    python benchmarks/pg_split.py --floor --plain --rounds 1
    python benchmarks/pg_split.py --statements --rounds 1  # what PostgreSQL runs, rows written, a move
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (ROOT, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import psycopg  # noqa: E402

from cluster_compare import Cluster, pin_postgres  # noqa: E402
from compare import LOADGEN, Servers, default_loop, taskset_prefix  # noqa: E402
from loadgen import children_of, server_cpu_ns  # noqa: E402
from tests.pgserver import SETTINGS, PostgresServer, missing_reason  # noqa: E402

ROLES = ("backend", "walwriter", "checkpointer", "bgwriter", "autovacuum", "other", "ended")
"""PostgreSQL's processes by role; ``ended``: children that exited during the run."""

_TICK_NS = 10**9 // 100  # USER_HZ


def role_of(pid: int) -> str:
    """The role of PostgreSQL's process ``pid``, from its title (``postgres: walwriter``, ``postgres: USER DB HOST(PORT) ...``,
    ``postgres: USER DB [local] ...``)."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    for role, marker in (("walwriter", "walwriter"), ("checkpointer", "checkpointer"), ("bgwriter", "background writer"),
                         ("autovacuum", "autovacuum")):  # fmt: skip
        if marker in title:
            return role
    return "backend" if "(" in title or "[local]" in title else "other"  # a client over TCP (HOST(PORT)) or the unix socket


def ended_children_ns(postmaster: int) -> int:
    """CPU ns of the postmaster's children that ended and were waited for (``cutime`` + ``cstime``)."""
    fields = Path(f"/proc/{postmaster}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[13]) + int(fields[14])) * _TICK_NS


def postgres_cpu(postmaster: int) -> dict[tuple[str, int], int]:
    """CPU ns so far of PostgreSQL's processes, by (role, pid); the postmaster itself is ``other``."""
    found = {(role_of(pid), pid): server_cpu_ns(pid) for pid in children_of(postmaster)}
    found[("other", postmaster)] = server_cpu_ns(postmaster)
    found[("ended", 0)] = ended_children_ns(postmaster)
    return found


STATS_SQL = """
SELECT (SELECT wal_records FROM pg_stat_wal), (SELECT wal_fpi FROM pg_stat_wal), (SELECT wal_bytes FROM pg_stat_wal),
       (SELECT wal_sync FROM pg_stat_wal), (SELECT wal_write FROM pg_stat_wal),
       (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter),
       (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
       (SELECT count(*) FROM moves)
"""
STATS = ("wal_records", "wal_fpi", "wal_bytes", "wal_sync", "wal_write", "checkpoints", "commits", "moves")


def pg_stats(url: str) -> dict[str, float]:
    """PostgreSQL's counters of :data:`STATS` now (the database's ``moves`` counted)."""
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(STATS_SQL).fetchone()
    assert row is not None
    return dict(zip(STATS, (float(value) for value in row)))


STATEMENTS_SQL = """
SELECT CASE WHEN query LIKE 'INSERT INTO moves %' THEN 'INSERT INTO moves (any rows)' ELSE left(regexp_replace(query, '\\s+', ' ', 'g'), 70) END,
       sum(calls)::float8, sum(rows)::float8
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
GROUP BY 1 ORDER BY 2 DESC
"""
"""What ``pg_stat_statements`` counted in this database: (statement, calls, rows), the move INSERTs as one."""

STATS_FLUSH_WAIT_S = 3.0
"""How long :func:`statements_report` waits for the server's backends to have reported their tables' counts (they do
as they end; an idle one may wait up to 10 s), until the counts hold every move row ``pg_stat_statements`` saw."""

TABLES_SQL = """
SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables
WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY relname
"""
"""Rows written by table since the statistics' reset: (table, inserted, updated, of which HOT, deleted)."""


def reset_statements(url: str) -> None:
    """Load ``pg_stat_statements`` into the database at ``url`` and zero it and the tables' statistics."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        connection.execute("SELECT pg_stat_statements_reset(), pg_stat_reset()")


def statements_report(url: str, moves: float) -> list[str]:
    """Lines of the report: statements a move (``moves`` counted in the table), rows a move by table (since
    :func:`reset_statements`; the tables' counters per move of their own count of inserted moves, as PostgreSQL may
    not have flushed the last second of them yet)."""
    with psycopg.connect(url, autocommit=True) as connection:
        statements = connection.execute(STATEMENTS_SQL).fetchall()
        inserted = sum(rows for query, _, rows in statements if query == "INSERT INTO moves (any rows)")
        for _ in range(int(STATS_FLUSH_WAIT_S / 0.1)):  # a backend reports its tables' counts at most once a second
            tables = connection.execute(TABLES_SQL).fetchall()
            if next((row[1] for row in tables if row[0] == "moves"), 0) >= inserted:
                break
            time.sleep(0.1)
            connection.execute("SELECT pg_stat_clear_snapshot()")
    counted = next((row[1] for row in tables if row[0] == "moves"), 0) or 1
    lines = ["| statement | calls a move | rows a call |", "|---|---|---|"]
    lines += [f"| `{query}` | {calls / moves:.3f} | {rows / calls:.2f} |" for query, calls, rows in statements if calls]
    lines += ["", "| table | inserted a move | updated a move (HOT) | deleted a move |", "|---|---|---|---|"]
    lines += [f"| {name} | {ins / counted:.3f} | {upd / counted:.3f} ({hot / counted:.3f}) | {gone / counted:.3f} |" for name, ins, upd, hot, gone in tables]
    return lines


@dataclass
class Split:
    """One run's CPU per move (µs) by process group, and PostgreSQL's counters per move (``pg`` only)."""

    setup: str
    moves: float
    cpu_us: dict[str, float] = field(default_factory=dict)
    per_move: dict[str, float] = field(default_factory=dict)
    statements: list[str] = field(default_factory=list)


def measure(cluster: Cluster, args: argparse.Namespace) -> Split:
    """One load generator run against ``cluster``, split by process."""
    cluster.start()
    try:
        parlour = cluster.nodes[0].proc
        assert parlour is not None
        url = cluster.nodes[0].storage[1]
        postmaster = cluster.postgres.postmaster_pid() if cluster.setup != "sqlite" else None
        if postmaster:
            pin_postgres(cluster.postgres)
        if postmaster and args.statements:
            reset_statements(url)
        before_stats = pg_stats(url) if postmaster else {}
        before_pg = postgres_cpu(postmaster) if postmaster else {}
        before_server = server_cpu_ns(parlour.pid)
        command = [
            *taskset_prefix(1), sys.executable, str(LOADGEN), "--scenario", "play", *cluster.loadgen_options(),
            "--games", str(args.games), "--seconds", str(args.seconds), "--warmup", str(args.warmup), "--quiet", "0.05",
        ]  # fmt: skip
        subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
        server_ns = server_cpu_ns(parlour.pid) - before_server
        after_pg = postgres_cpu(postmaster) if postmaster else {}
        after_stats = pg_stats(url) if postmaster else {}
        moves = after_stats["moves"] - before_stats["moves"] if postmaster else sqlite_moves(url)
    finally:
        cluster.stop()
    # Read once the server has gone: its backends report their tables' counts as they end (an idle one may wait 10 s).
    report = statements_report(url, moves) if postmaster and args.statements else []
    split = Split(cluster.setup, moves, {"parlour": server_ns / 1000 / moves}, statements=report)
    for role in ROLES:
        ns = sum(cpu - before_pg.get(key, 0) for key, cpu in after_pg.items() if key[0] == role)
        if postmaster:
            split.cpu_us[role] = ns / 1000 / moves
    split.cpu_us["total"] = sum(split.cpu_us.values())
    for name in STATS[:-1]:
        if postmaster:
            split.per_move[name] = (after_stats[name] - before_stats[name]) / moves
    return split


def sqlite_moves(path: str) -> float:
    """The moves in the SQLite database at ``path`` (the run began with none)."""
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        return float(connection.execute("SELECT count(*) FROM moves").fetchone()[0])
    finally:
        connection.close()


def floor(postgres: PostgresServer, commits: int, unix_socket: bool = True) -> list[str]:
    """The bare durable PostgreSQL move: one move ``INSERT`` a commit, in a loop, over the unix socket or TCP; lines of the report."""
    from server.storage.postgres import PostgresStore

    url = postgres.create_database(unix_socket=unix_socket)
    transport = "socket" if unix_socket else "TCP"
    PostgresStore.open(url).close_sync()  # the real schema
    lines = []
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("INSERT INTO tables (id, game, options, status, created) VALUES (1, 'othello', '{}', 'playing', 0)")
        backend = int(connection.execute("SELECT pg_backend_pid()").fetchone()[0])  # type: ignore[index]
        if taskset_prefix(0):
            subprocess.run(["taskset", "-p", "-c", "0", str(backend)], capture_output=True)
        sql = "INSERT INTO moves (table_id, ply, seat, move, forced, at) VALUES (1, $1, 0, 'd3', 0, 0)"
        pgconn = connection.pgconn
        pgconn.prepare(b"floor_move", sql.encode())
        for label, run in (
            ("psycopg cursor, prepared", lambda ply: connection.execute(sql.replace("$1", "%s"), (ply,), prepare=True)),
            ("libpq exec_prepared (pgconn)", lambda ply: pgconn.exec_prepared(b"floor_move", [b"%d" % ply])),
        ):
            start_ply = int(connection.execute("SELECT coalesce(max(ply), 0) FROM moves").fetchone()[0]) + 1  # type: ignore[index]
            own, theirs, wall = time.process_time_ns(), server_cpu_ns(backend), time.monotonic()
            for ply in range(start_ply, start_ply + commits):
                run(ply)
            own, theirs = time.process_time_ns() - own, server_cpu_ns(backend) - theirs
            wall = time.monotonic() - wall
            lines.append(f"| {label}, {transport} | {own / 1000 / commits:.1f} | {theirs / 1000 / commits:.1f} | "
                         f"{(own + theirs) / 1000 / commits:.1f} | {wall * 1000 / commits:.2f} |")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of sqlite then pg (default: 2)")
    parser.add_argument("--games", type=int, default=10, help="games at once (default: 10)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds measured per run (default: 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of play before measuring (default: 1)")
    parser.add_argument("--tcp", action="store_true", help="also measure one node reaching PostgreSQL over TCP (its default: the unix socket)")
    parser.add_argument("--floor", action="store_true", help="also measure the bare INSERT-and-COMMIT loop")
    parser.add_argument("--commits", type=int, default=2000, help="--floor: commits per way (default: 2000)")
    parser.add_argument("--plain", action="store_true", help="PostgreSQL's own defaults, not tests/pgserver.py's SETTINGS")
    parser.add_argument("--statements", action="store_true", help="load pg_stat_statements; print statements and rows written a move")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="one more PostgreSQL setting (repeatable)")
    args = parser.parse_args(argv)
    reason = missing_reason()
    if reason is not None:
        raise SystemExit(f"PostgreSQL: {reason}")
    print(f"load average before: {Path('/proc/loadavg').read_text().split()[:3]}")
    settings = {} if args.plain else dict(SETTINGS)
    settings.update(item.split("=", 1) for item in args.set)
    if args.statements:
        settings.update({"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all"})
    postgres = PostgresServer(settings=settings)
    postgres.start()
    servers = Servers("floor", default_loop())
    splits: list[Split] = []
    floor_lines: list[str] = []
    try:
        pin_postgres(postgres)
        with tempfile.TemporaryDirectory(prefix="pg-split-") as directory:
            for _ in range(args.rounds):
                for setup in ("sqlite", "pg", *(("pg, TCP",) if args.tcp else ())):
                    splits.append(measure(Cluster(setup, servers, Path(directory), postgres), args))
                    print(f"  {splits[-1]}", file=sys.stderr, flush=True)
        if args.floor:
            floor_lines = floor(postgres, args.commits) + (floor(postgres, args.commits, unix_socket=False) if args.tcp else [])
    finally:
        postgres.destroy()
    print(f"load average after: {Path('/proc/loadavg').read_text().split()[:3]}")
    print(f"PostgreSQL settings: {settings or 'its defaults'}")
    print("\n| run | moves | parlour | " + " | ".join(ROLES) + " | total µs/move |")
    print("|---" * (len(ROLES) + 4) + "|")
    for split in splits:
        cells = [f"{split.cpu_us.get(role, 0):.1f}" for role in ("parlour", *ROLES, "total")]
        print(f"| {split.setup} | {split.moves:.0f} | " + " | ".join(cells) + " |")
    print("\n| pg run | moves a commit | WAL bytes a move | full-page images a move | WAL records a move | WAL syncs a move | checkpoints |")
    print("|---|---|---|---|---|---|---|")
    for split in splits:
        if split.setup != "sqlite":
            per = split.per_move
            print(f"| {split.setup}, {split.moves:.0f} moves | {1 / per['commits']:.2f} | {per['wal_bytes']:.0f} | {per['wal_fpi']:.3f} | "
                  f"{per['wal_records']:.2f} | {per['wal_sync']:.3f} | {per['checkpoints'] * split.moves:.0f} |")  # fmt: skip
    for split in splits:
        if split.statements:
            print(f"\nWhat PostgreSQL ran, {split.setup} ({split.moves:.0f} moves; pg_stat_statements, pg_stat_user_tables)\n")
            print("\n".join(split.statements))
    if floor_lines:
        print(f"\nThe bare durable move: one move INSERT a commit, {args.commits} commits a way")
        print("\n| way | client CPU µs | backend CPU µs | total µs | wall ms a commit |\n|---|---|---|---|---|")
        print("\n".join(floor_lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
