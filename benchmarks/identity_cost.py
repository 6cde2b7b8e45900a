"""What one node on SQLite pays for identity: server CPU per ``hello`` and per move, two source trees side by side.

Identity read through to a shared database (issue 21) must cost a server on
its own nothing. This script runs two versions of Parlour -- ``--before``, a
git revision checked out into a temporary worktree (default ``main``), and
this tree -- alternately (``--rounds`` pairs, seconds apart on a shared
machine), each as ``parlour serve --db`` with a fresh SQLite file, pinned to
core 0 with ``taskset`` when there are two cores. Against each:

- **hello**: ``--hellos`` connections one after the other, each saying a guest
  ``hello``, reading ``welcome`` and closing (the session's row is written,
  then deleted when it is forgotten): server CPU per hello (all threads,
  ``/proc/PID/task/*/schedstat``), connection set-up included;
- **move**: ``benchmarks/loadgen.py --scenario play`` (pinned to core 1) with
  ``--games`` games at once for ``--seconds``: server CPU per accepted (durable) move.

Prints a Markdown table: the median of each version's rounds, the ratio
after/before, and the load average measured under.

Usage::

    python benchmarks/identity_cost.py                       # main beside this tree
    python benchmarks/identity_cost.py --before HEAD~3 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (ROOT, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from compare import PARLOUR_BOOT, pin, taskset_prefix  # noqa: E402
from loadgen import encode, server_cpu_ns  # noqa: E402
from roundtrip import ONE_ADDRESS, UNTHROTTLED, ServerProcess  # noqa: E402

import msgpack  # noqa: E402

LOADGEN = HERE / "loadgen.py"
OPTIONS = UNTHROTTLED + ONE_ADDRESS


def start_parlour(tree: Path, db: Path) -> ServerProcess:
    """``parlour serve --db DB`` from the source tree ``tree``, started and pinned to core 0.

    Raises:
        RuntimeError: it did not report its port.
    """
    server = ServerProcess(launcher=["-c", PARLOUR_BOOT], storage=["--db", str(db)], options=OPTIONS, tree=tree)
    server.start(timeout_s=30.0)
    assert server.proc is not None
    pin(server.proc.pid, 0)
    return server


async def _one_hello(port: int, name: str) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(encode({"type": "hello", "id": 1, "version": 2, "name": name}))
    header = await reader.readexactly(4)
    reply = msgpack.unpackb(await reader.readexactly(int.from_bytes(header, "big")))
    if reply.get("type") != "welcome":
        raise RuntimeError(f"hello was refused: {reply}")
    writer.close()
    await writer.wait_closed()


def measure_hellos(server: ServerProcess, count: int) -> float:
    """Server CPU per guest ``hello`` (µs), ``count`` connections one after the other."""

    async def run() -> None:
        for n in range(count):
            await _one_hello(server.port, f"guest{n}")
        await asyncio.sleep(0.3)  # the forgotten sessions' rows are deleted in the background

    assert server.proc is not None
    before = server_cpu_ns(server.proc.pid)
    asyncio.run(run())
    return (server_cpu_ns(server.proc.pid) - before) / count / 1000


def measure_moves(server: ServerProcess, games: int, seconds: float) -> float:
    """Server CPU per durable move (µs), ``loadgen.py --scenario play`` pinned to core 1."""
    assert server.proc is not None
    command = [
        *taskset_prefix(1), sys.executable, str(LOADGEN), "--port", str(server.port), "--target", "parlour",
        "--server-pid", str(server.proc.pid), "--games", str(games), "--seconds", str(seconds),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"loadgen exited with {done.returncode}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu_us_per_move"])


def checkout(revision: str, where: Path) -> Path:
    """A detached worktree of ``revision`` at ``where``."""
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(where), revision], cwd=ROOT, check=True)
    return where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the git revision to compare against (default: main)")
    parser.add_argument("--rounds", type=int, default=3, help="before/after pairs (default: 3)")
    parser.add_argument("--hellos", type=int, default=400, help="hellos per round (default: 400)")
    parser.add_argument("--games", type=int, default=10, help="games at once while moves are measured (default: 10)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of moves per round (default: 2)")
    args = parser.parse_args()
    if taskset_prefix(1):
        os.sched_setaffinity(0, {1})
    results: dict[str, dict[str, list[float]]] = {"before": {"hello": [], "move": []}, "after": {"hello": [], "move": []}}
    loads: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        before_tree = checkout(args.before, Path(tmp) / "before")
        try:
            for round_ in range(args.rounds):
                for label, tree in (("before", before_tree), ("after", ROOT)):
                    server = start_parlour(tree, Path(tmp) / f"{label}{round_}.sqlite3")
                    try:
                        results[label]["hello"].append(measure_hellos(server, args.hellos))
                        results[label]["move"].append(measure_moves(server, args.games, args.seconds))
                    finally:
                        server.stop()
                    loads.append(Path("/proc/loadavg").read_text().split()[0])
                    print(f"  round {round_ + 1} {label:<6} hello {results[label]['hello'][-1]:.0f} µs  move {results[label]['move'][-1]:.0f} µs", file=sys.stderr)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before_tree)], cwd=ROOT, check=False)
    print(f"| server CPU on SQLite | {args.before} | this tree | ratio |")
    print("|---|---|---|---|")
    for what in ("hello", "move"):
        old, new = statistics.median(results["before"][what]), statistics.median(results["after"][what])
        print(f"| per {what} (µs, median of {args.rounds}) | {old:.0f} | {new:.0f} | {new / old:.2f} |")
    print(f"\nload average (1 min) during the rounds: {', '.join(loads)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
