"""Instructions the server spends a group commit of moves on PostgreSQL, counted by callgrind: the writer's side, unmoved by the machine's load.

A private PostgreSQL (``tests/pgserver.py``, running normally) and, under ``valgrind
--tool=callgrind``, a Python process that opens a :class:`server.storage.postgres.PostgresStore`
on it (over the unix socket, as on one machine), creates ``--rows`` tables, then runs a loop of
cycles: each cycle one move of every table at once (``append_move`` gathered, as ``--rows``
games' moves arriving together), which the writer commits as one multi-row ``INSERT``. Two loops
of different lengths cancel Python's start, the imports and the set-up: instructions a commit =
(Ir(long) - Ir(short)) / (the cycles between). PostgreSQL's own instructions are not counted
(``pg_row_instructions.py --wire`` counts its backend's).

Usage::

    python benchmarks/pg_writer_instructions.py               # 10 moves a commit, 100 and 400 commits
    python benchmarks/pg_writer_instructions.py --rows 1      # one move a commit
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from server.storage.postgres import PostgresStore  # noqa: E402
from server.storage.rows import MoveRow, TableRow  # noqa: E402
from tests.pgserver import PostgresServer, missing_reason  # noqa: E402

T0 = 1_764_400_000.0
"""The tables' creation time and the first move's, Unix seconds."""


async def play(url: str, rows: int, commits: int) -> int:
    """``commits`` cycles of one move on each of ``rows`` new tables through a store on ``url``; the store's commits."""
    async with PostgresStore.open(url) as store:
        for table in range(1, rows + 1):
            await store.create_table(TableRow(id=table, game="othello", options={"size": 8}, seed=None, created=T0, status="playing"))
        before = store.commits
        for ply in range(1, commits + 1):
            moves = (store.append_move(table, MoveRow(ply=ply, seat=(ply - 1) % 2, move="d3", at=T0 + ply * 0.125)) for table in range(1, rows + 1))
            await asyncio.gather(*moves)
        return store.commits - before


def counted(url: str, rows: int, commits: int, out: Path) -> tuple[int, int]:
    """Callgrind's total for a child process that plays ``commits`` cycles (:func:`play`), and the commits it made.

    Raises:
        RuntimeError: the child failed, or callgrind wrote no total.
    """
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__, "--child", url, str(rows), str(commits)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"the writer's loop failed ({done.returncode}): {done.stderr[-800:]}")
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    made = re.search(r"^commits (\d+)$", done.stdout, re.M)
    if found is None or made is None:
        raise RuntimeError(f"callgrind wrote no total to {out}, or the loop no count of commits: {done.stdout[-300:]}")
    return int(found.group(1)), int(made.group(1))


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--child"]:
        url, rows, commits = arguments[1], int(arguments[2]), int(arguments[3])
        print(f"commits {asyncio.run(play(url, rows, commits))}")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10, help="moves a commit: tables playing at once (default: 10)")
    parser.add_argument("--commits", type=int, nargs=2, default=[100, 400], metavar=("SHORT", "LONG"), help="the two loops' cycles (default: 100 400)")
    args = parser.parse_args(arguments)
    reason = missing_reason() or (None if shutil.which("valgrind") else "valgrind is not installed (apt-get install -y valgrind)")
    if reason is not None:
        raise SystemExit(reason)
    short, long = args.commits
    if not 0 < short < long or args.rows < 1:
        raise SystemExit(f"--commits: the short loop must be shorter than the long one and not empty ({short}, {long}); --rows at least 1")
    postgres = PostgresServer()
    postgres.start()
    try:
        with tempfile.TemporaryDirectory(prefix="pg-writer-ir-") as directory:
            (short_ir, short_commits), (long_ir, long_commits) = (
                counted(postgres.create_database(unix_socket=True), args.rows, cycles, Path(directory) / f"{cycles}.out") for cycles in (short, long)
            )
    finally:
        postgres.destroy()
    if long_ir <= short_ir or long_commits <= short_commits:
        raise SystemExit(f"the long loop counted no more than the short one ({long_ir:,} against {short_ir:,} instructions, "
                         f"{long_commits} against {short_commits} commits): the run-to-run noise (the loop's waits for "
                         "PostgreSQL) is larger than the difference; run more cycles (--commits)")
    per_commit = (long_ir - short_ir) / (long_commits - short_commits)
    print(f"\n{args.rows} moves a cycle, {short} and {long} cycles ({short_commits} and {long_commits} commits); callgrind, the server's process\n")
    print("| moves a commit | instructions a commit | a move |\n|---|---|---|")
    moves = args.rows * (long - short) / (long_commits - short_commits)
    print(f"| {moves:.2f} | {per_commit:,.0f} | {per_commit / moves:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
