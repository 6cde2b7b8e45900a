"""Instructions PostgreSQL's backend spends a move row, counted by callgrind: a measure the machine's load does not move.

For each schema version asked (default: the one before the newest and the newest,
``server/storage/pg_schema.py``), a database of a private PostgreSQL (``tests/pgserver.py``)
gets that schema and ``--rows`` tables; then PostgreSQL runs in single-user mode under
``valgrind --tool=callgrind`` a loop of commits, each the writer's multi-row move ``INSERT``
of ``--rows`` rows (one a table, as a group commit of that many games sends it; the
statement ``server.storage.statements.APPEND_MOVES`` gives the server, prepared once with
``PREPARE``, each commit an ``EXECUTE``), with ``fsync`` on. Two loops of different
lengths cancel the start and the end: instructions a row = (Ir(long) - Ir(short)) /
(the rows between), its commit's share included. Only user-space instructions count: the
kernel's side of a commit's WAL flush is not in the figure (``pg_split.py`` measures CPU
time, flush included).

Single-user mode reads each ``EXECUTE`` as SQL text: parsing it and planning its literal
parameters is about half of that count, work the server's writer never asks for. With
``--wire`` PostgreSQL runs as a server (its postmaster under callgrind, which follows
every backend it forks) and each loop is the writer's own code on its own connection over
the unix socket (:class:`server.storage.pg_moves.MovesPath`: a prepared statement, each
commit one Bind and Execute with the server's parameters): the count is the writer
backend's, by its process id, and it moves with what the server sends.

Usage::

    python benchmarks/pg_row_instructions.py                      # 10 rows a commit, 50 and 250 commits: about a minute
    python benchmarks/pg_row_instructions.py --versions 10 11 12  # the schema at each of these versions
    python benchmarks/pg_row_instructions.py --wire               # the writer's protocol path, as the server runs it
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from server.storage import postgres as pg_module  # noqa: E402
from server.storage.pg_schema import PG_MIGRATIONS  # noqa: E402
from server.storage.postgres import PostgresStore  # noqa: E402
from server.storage.pg_moves import MovesPath  # noqa: E402
from server.storage.statements import APPEND_MOVES, append_ply_sql  # noqa: E402
from tests.pgserver import PostgresServer, missing_reason  # noqa: E402

COLUMN_TYPES = ("bigint", "bigint", "integer", "text", "integer", "double precision")
"""The types of an untimed move's parameters: table_id, ply, seat, move, forced, at."""


def database_at(postgres: PostgresServer, version: int, tables: int) -> str:
    """A new database of ``postgres`` with the schema at ``version`` and tables 1 to ``tables`` playing; its name.

    Raises:
        ValueError: no schema step has that version.
    """
    steps = tuple(step for step in PG_MIGRATIONS if step.version <= version)
    if not steps or steps[-1].version != version:
        raise ValueError(f"no PostgreSQL schema step has version {version} (they are {[step.version for step in PG_MIGRATIONS]})")
    url = postgres.create_database()
    newest, pg_module.PG_MIGRATIONS = pg_module.PG_MIGRATIONS, steps
    try:
        PostgresStore.open(url).close_sync()
    finally:
        pg_module.PG_MIGRATIONS = newest
    with psycopg.connect(url, autocommit=True) as connection:
        for table_id in range(1, tables + 1):
            connection.execute("INSERT INTO tables (id, game, options, status, created) VALUES (%s, 'othello', '{}', 'playing', 0)", (table_id,))
        return str(connection.execute("SELECT current_database()").fetchone()[0])  # type: ignore[index]


def script(rows: int, commits: int, first_ply: int) -> str:
    """Single-user mode's input: the move INSERT of ``rows`` rows prepared, then ``commits`` EXECUTEs (one a line, each a commit)."""
    untimed = next(shapes for sql, shapes in APPEND_MOVES.items() if "clock_ms" not in sql)
    parts = untimed[rows - 1].split("?")
    numbered = "".join(f"{part}${index}" for index, part in enumerate(parts[:-1], 1)) + parts[-1]
    lines = [f"PREPARE parlour_moves({', '.join(COLUMN_TYPES * rows)}) AS {numbered}"]
    for ply in range(first_ply, first_ply + commits):
        lines.append("EXECUTE parlour_moves(" + ", ".join(f"{table}, {ply}, 0, 'd3', 0, 1.5" for table in range(1, rows + 1)) + ")")
    return "\n".join(lines) + "\n"


def instructions(postgres: PostgresServer, database: str, text: str, out: Path) -> int:
    """Callgrind's count of the instructions single-user PostgreSQL runs for ``text`` on ``database`` (stopped server).

    Raises:
        RuntimeError: PostgreSQL reported an error, or callgrind wrote no total.
    """
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(postgres.bin / "postgres"), "--single",
               "-D", str(postgres.data), "-c", "fsync=on", database]  # fmt: skip
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    done = subprocess.run(command, input=text, capture_output=True, text=True, timeout=1800)
    errors = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR:" in line]
    if done.returncode != 0 or errors:
        raise RuntimeError(f"single-user PostgreSQL failed ({done.returncode}): {errors[:3] or done.stderr[-500:]}")
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    if found is None:
        raise RuntimeError(f"callgrind wrote no total to {out}")
    return int(found.group(1))


def _total(path: Path) -> int | None:
    """Callgrind's total in ``path``, or ``None`` while the file is not complete."""
    found = re.search(r"^(?:summary|totals): (\d+)", path.read_text(), re.M) if path.exists() else None
    return int(found.group(1)) if found else None


async def _writer_loop(url: str, rows: int, first_ply: int, commits: int) -> int:
    """``commits`` commits of ``rows`` untimed moves (tables 1 to ``rows``) through the writer's :class:`MovesPath` on a
    new connection; the process id of its backend."""
    connection = await psycopg.AsyncConnection.connect(url, autocommit=True)
    try:
        pid = int((await (await connection.execute("SELECT pg_backend_pid()")).fetchone())[0])  # type: ignore[index]
        moves = MovesPath()
        for ply in range(first_ply, first_ply + commits):
            params = [value for table in range(1, rows + 1) for value in append_ply_sql(table, ply, ply % 2, "d3", 1764400000.25 + ply)[1]]
            sql = APPEND_MOVES[append_ply_sql(1, 1, 0, "d3", 0.0)[0]][rows - 1]
            if not await moves.execute(connection, [(sql, params)]):
                raise RuntimeError("the writer's short way did not take its own move INSERT")
        return pid
    finally:
        await connection.close()


def wire_instructions(postgres: PostgresServer, database: str, rows: int, loops: tuple[int, int], directory: Path) -> tuple[int, int]:
    """Callgrind's counts of the writer backends of two loops (``loops`` commits each) on ``database`` of ``postgres``
    (stopped), its postmaster run under callgrind; the server is stopped again at the end.

    Raises:
        RuntimeError: PostgreSQL did not start, or a backend's count did not appear.
    """
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/{database}.%p", str(postgres.bin / "postgres"),
               "-D", str(postgres.data), "-p", str(postgres.port), "-k", str(postgres.directory),
               "-c", "listen_addresses=", "-c", "autovacuum=off", "-c", "fsync=on"]  # fmt: skip
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = postgres.url(database, unix_socket=True)
    try:
        for _ in range(600):
            try:
                psycopg.connect(url, connect_timeout=5).close()
                break
            except psycopg.OperationalError:
                if server.poll() is not None:
                    raise RuntimeError(f"PostgreSQL under callgrind ended ({server.returncode})") from None
                time.sleep(0.5)
        counts = []
        first_ply = 1
        for commits in loops:
            pid = asyncio.run(_writer_loop(url, rows, first_ply, commits))
            first_ply += commits
            out = directory / f"{database}.{pid}"
            for _ in range(600):
                if (total := _total(out)) is not None:
                    counts.append(total)
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError(f"callgrind wrote no total for backend {pid} to {out}")
        return counts[0], counts[1]
    finally:
        if server.poll() is None:
            os.kill(postgres.postmaster_pid(), signal.SIGINT)
            server.wait(300)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    newest = PG_MIGRATIONS[-1].version
    parser.add_argument("--versions", type=int, nargs="+", default=[newest - 1, newest], help="schema versions to measure (default: the last two)")
    parser.add_argument("--rows", type=int, default=10, help="move rows a commit (default: 10)")
    parser.add_argument("--commits", type=int, nargs=2, default=[50, 250], metavar=("SHORT", "LONG"), help="the two loops' commits (default: 50 250)")
    parser.add_argument("--wire", action="store_true", help="PostgreSQL as a server, each loop the writer's own protocol path (MovesPath)")
    args = parser.parse_args(argv)
    reason = missing_reason() or (None if shutil.which("valgrind") else "valgrind is not installed (apt-get install -y valgrind)")
    if reason is not None:
        raise SystemExit(reason)
    short, long = args.commits
    if not 0 < short < long:
        raise SystemExit(f"--commits: the short loop must be shorter than the long one and not empty, not {short} and {long}")
    if not 1 <= args.rows <= len(next(iter(APPEND_MOVES.values()))):
        raise SystemExit(f"--rows must be 1 to {len(next(iter(APPEND_MOVES.values())))}, not {args.rows}")
    postgres = PostgresServer()
    postgres.start()
    results: list[tuple[int, float]] = []
    try:
        databases = {version: database_at(postgres, version, args.rows) for version in args.versions}
        postgres.stop()
        with tempfile.TemporaryDirectory(prefix="pg-row-ir-") as directory:
            os.chmod(directory, 0o777)  # callgrind writes there as PostgreSQL's user
            for version, database in databases.items():
                if args.wire:
                    counts = list(wire_instructions(postgres, database, args.rows, (short, long), Path(directory)))
                else:
                    counts = [
                        instructions(postgres, database, script(args.rows, commits, first_ply), Path(directory) / f"{database}-{commits}.out")
                        for commits, first_ply in ((short, 1), (long, short + 1))
                    ]
                results.append((version, (counts[1] - counts[0]) / ((long - short) * args.rows)))
                print(f"  schema {version}: Ir {counts[0]:,} ({short} commits), {counts[1]:,} ({long})", file=sys.stderr, flush=True)
    finally:
        postgres.destroy()
    way = "PostgreSQL as a server, the writer's MovesPath over the unix socket" if args.wire else "single-user PostgreSQL, EXECUTE as text"
    print(f"\n{args.rows} move rows a commit, {short} and {long} commits; callgrind, {way}, fsync on\n")
    print("| schema version | instructions a move row | a commit | × the first |\n|---|---|---|---|")
    for version, per_row in results:
        print(f"| {version} | {per_row:,.0f} | {per_row * args.rows:,.0f} | {per_row / results[0][1]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
