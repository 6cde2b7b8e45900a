"""Parlour across machines beside one machine and the floor echo: CPU per move and move round trip, in one run.

Six setups, each freshly started, measured one after another by the same
load generator (``benchmarks/loadgen.py``, scenario ``play``: ``--games``
Othello games at once, random legal moves, every move committed where there
is a database):

- **floor**: the cheapest echo that speaks the framing (``benchmarks/floor_echo.py``);
- **sqlite**: one ``parlour serve --db FILE``;
- **pg**: one ``parlour serve --db postgresql://...`` reaching PostgreSQL over its unix
  socket (``postgresql://USER@/DB?host=SOCKETDIR&port=PORT``), as a one-machine operator would;
- **pg, TCP**: the same over TCP on 127.0.0.1 (``postgresql://USER@127.0.0.1:PORT/DB``);
  ``--no-pg-tcp`` leaves it out;
- **2 nodes, local**: ``parlour serve --db <one PostgreSQL database> --bus <Redis> --node a`` and ``--node b``,
  players connected to node a, which holds their tables;
- **2 nodes, relayed**: the same two nodes, every table created on node a and
  both its players connected to node b (every move relayed through Redis).
  The nodes reach PostgreSQL over TCP, as nodes on several machines do.

PostgreSQL (``tests/pgserver.py``: Debian's ``postgresql``, its defaults, so
``fsync`` and ``synchronous_commit`` are on) and ``redis-server``
(``tests/cluster/redis_server.py``) are private instances started for the run.
CPU per move counts every server process: the node(s), PostgreSQL's
postmaster and its children (backends, WAL writer ...) and Redis; not the load
generator's. Server processes are pinned to core 0, the load generator to core 1
(``taskset``, when the machine has two cores). Runs ``--rounds`` rounds of the
six; prints each run and the ratios of the pooled runs: PostgreSQL ÷ SQLite
CPU [target <= 1.5], relayed ÷ local CPU and p99 [<= 2], each ÷ floor.
``--only`` measures some of the setups (the ratios of those measured);
``--against TREE`` also runs the two-node setups from another checkout
(``TREE``, say a detached checkout of main) in every round, right after this
tree's, as ``2 nodes, local (against)`` and ``2 nodes, relayed (against)``.

Usage::

    python benchmarks/cluster_compare.py                          # 2 rounds, 10 games, 5 s a run
    python benchmarks/cluster_compare.py --rounds 1 --games 2 --seconds 1 --warmup 0.2
    python benchmarks/cluster_compare.py --only "2 nodes, local" --only "2 nodes, relayed" --against ../main
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (ROOT, HERE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from compare import LOADGEN, PARLOUR_BOOT, Servers, default_loop, pin, taskset_prefix  # noqa: E402
from loadgen import children_of  # noqa: E402
from roundtrip import ServerProcess  # noqa: E402
from tests.cluster.redis_server import RedisServer  # noqa: E402

SETUPS = ("floor", "sqlite", "pg", "pg, TCP", "2 nodes, local", "2 nodes, relayed")
AGAINST = " (against)"
"""The suffix of a setup run from ``--against TREE``."""
LOADGEN_TIMEOUT_S = 300.0
"""Longest one load generator run may take before it is killed."""


@dataclass
class Run:
    """One setup's measurement: moves, CPU per move of all its server processes (µs), round trip p50/p99 (ms)."""

    setup: str
    moves: int
    cpu_us: float
    p50_ms: float
    p99_ms: float


class Cluster:
    """The processes of one setup: server(s), and where they use PostgreSQL or Redis, those.

    Args:
        setup: one of :data:`SETUPS`.
        servers: the floor and event loop (:class:`compare.Servers`).
        workdir: where SQLite files and Redis's directory go.
        postgres: the private PostgreSQL (``tests.pgserver.PostgresServer``), for ``pg`` and the two-node setups.
    """

    def __init__(self, setup: str, servers: Servers, workdir: Path, postgres: Any, tree: Path | None = None) -> None:
        self.label = setup + (AGAINST if tree is not None else "")
        self.tree = tree or ROOT
        self.setup = setup
        self.servers = servers
        self.workdir = workdir
        self.postgres = postgres
        self.nodes: list[ServerProcess] = []
        self.redis: RedisServer | None = None

    def start(self) -> None:
        """Start the setup's processes, each server process pinned to core 0."""
        if self.setup == "floor":
            self.nodes = [ServerProcess(launcher=self.servers.floor_launcher())]
        elif self.setup == "sqlite":
            self.nodes = [self._parlour(["--db", str(self.workdir / f"sqlite-{len(list(self.workdir.iterdir()))}.sqlite3")])]
        elif self.setup in ("pg", "pg, TCP"):
            self.nodes = [self._parlour(["--db", self.postgres.create_database(unix_socket=self.setup == "pg")])]
        else:
            binary = shutil.which("redis-server")
            if binary is None:
                raise SystemExit("redis-server is not installed (apt-get install -y redis-server)")
            redis_dir = Path(tempfile.mkdtemp(prefix="redis-", dir=self.workdir))
            self.redis = RedisServer(binary, redis_dir)
            self.redis.start()
            assert self.redis.process is not None
            pin(self.redis.process.pid, 0)
            database = self.postgres.create_database()
            self.nodes = [self._parlour(["--db", database], ["--bus", self.redis.url, "--node", node]) for node in ("a", "b")]
        for node in self.nodes:
            node.start()
            assert node.proc is not None
            pin(node.proc.pid, 0)

    def _parlour(self, storage: list[str], more: list[str] | None = None) -> ServerProcess:
        return ServerProcess(launcher=["-c", PARLOUR_BOOT], storage=storage, options=self.servers.parlour_options() + (more or []), tree=self.tree)

    def loadgen_options(self) -> list[str]:
        """``loadgen.py`` flags: where the players connect, where tables are made, which processes' CPU counts."""
        first = self.nodes[0]
        assert first.proc is not None
        options = ["--target", "echo" if self.setup == "floor" else "parlour", "--server-pid", str(first.proc.pid)]
        if self.setup == "2 nodes, relayed":
            options += ["--port", str(self.nodes[1].port), "--table-port", str(first.port)]
        else:
            options += ["--port", str(first.port)]
        for other in self.nodes[1:]:
            assert other.proc is not None
            options += ["--count-pid", str(other.proc.pid)]
        if self.redis is not None and self.redis.process is not None:
            options += ["--count-pid", str(self.redis.process.pid)]
        if self.setup not in ("floor", "sqlite"):
            options += ["--count-children-of", str(self.postgres.postmaster_pid())]
        return options

    def stop(self) -> None:
        """Stop every process of the setup."""
        for node in self.nodes:
            node.stop()
        if self.redis is not None:
            self.redis.stop()


def pin_postgres(postgres: Any) -> None:
    """Pin PostgreSQL's postmaster and its children to core 0 (the backends it forks later inherit it)."""
    postmaster = postgres.postmaster_pid()
    for pid in (postmaster, *children_of(postmaster)):
        try:
            pin(pid, 0)
        except subprocess.CalledProcessError:
            pass  # a child that ended meanwhile


def measure(cluster: Cluster, args: argparse.Namespace) -> Run:
    """One load generator run against ``cluster`` (started here and stopped after).

    Raises:
        RuntimeError: the load generator failed (its message included) or ran out of time.
    """
    cluster.start()
    try:
        command = [
            *taskset_prefix(1), sys.executable, str(LOADGEN), "--scenario", "play", *cluster.loadgen_options(),
            "--games", str(args.games), "--seconds", str(args.seconds), "--warmup", str(args.warmup),
            "--min-games", str(args.min_games), "--quiet", "0.05",
        ]  # fmt: skip
        try:
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=LOADGEN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"loadgen against {cluster.setup} took longer than {LOADGEN_TIMEOUT_S} s") from None
    finally:
        cluster.stop()
    if done.returncode != 0:
        raise RuntimeError(f"{cluster.label}: {done.stderr.strip() or f'loadgen exited with status {done.returncode}'}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["moves"]:
        raise RuntimeError(f"{cluster.label}: no move was measured in {args.seconds:g} s (a loaded machine: give more --seconds)")
    run = Run(cluster.label, result["moves"], result["cpu_us_per_move"], result["p50_ms"], result["p99_ms"])
    print(f"  {run.setup:<28} {run.moves:6} moves {run.cpu_us:8.1f} µs/move  p50 {run.p50_ms:6.2f} ms  p99 {run.p99_ms:6.2f} ms", file=sys.stderr, flush=True)
    return run


def pooled(runs: list[Run], setup: str) -> Run:
    """The runs of ``setup`` together: CPU per move over all their moves; the median of their p50s and p99s."""
    mine = [run for run in runs if run.setup == setup]
    moves = sum(run.moves for run in mine)
    cpu = sum(run.cpu_us * run.moves for run in mine) / moves
    return Run(setup, moves, cpu, statistics.median(r.p50_ms for r in mine), statistics.median(r.p99_ms for r in mine))


def report(runs: list[Run], args: argparse.Namespace, load: str) -> Iterator[str]:
    """The Markdown lines of the report: one row per setup (pooled rounds), then the ratios the issue sets targets for
    (those whose setups were measured)."""
    labels = [label for setup in SETUPS for label in (setup, setup + AGAINST)]
    rows = {label: pooled(runs, label) for label in labels if any(run.setup == label for run in runs)}
    floor = rows.get("floor")
    yield f"{args.games} games at once, {args.rounds} round(s) of {args.seconds:g} s per setup; load average before: {load}"
    yield ""
    yield "| setup | moves | CPU µs/move (all server processes) | × floor CPU | p50 ms | p99 ms | × floor p99 |"
    yield "|---|---|---|---|---|---|---|"
    for setup, row in rows.items():
        times_floor = (f"{row.cpu_us / floor.cpu_us:.2f}", f"{row.p99_ms / floor.p99_ms:.2f}") if floor else ("—", "—")
        yield f"| {setup} | {row.moves} | {row.cpu_us:.1f} | {times_floor[0]} | {row.p50_ms:.2f} | {row.p99_ms:.2f} | {times_floor[1]} |"
    yield ""
    yield "| ratio | CPU | p50 | p99 | target |"
    yield "|---|---|---|---|---|"
    tcp = "pg, TCP" if "pg, TCP" in rows else "pg"
    for label, top, bottom, target in (
        ("pg ÷ sqlite", "pg", "sqlite", "CPU <= 1.5"),
        ("pg, TCP ÷ sqlite", "pg, TCP", "sqlite", ""),
        ("pg, TCP ÷ pg (socket)", "pg, TCP", "pg", ""),
        ("2 nodes local ÷ " + tcp, "2 nodes, local", tcp, ""),
        ("relayed ÷ local", "2 nodes, relayed", "2 nodes, local", "CPU and p99 <= 2"),
        ("relayed ÷ local" + AGAINST, "2 nodes, relayed" + AGAINST, "2 nodes, local" + AGAINST, "CPU and p99 <= 2"),
    ):
        if top in rows and bottom in rows:
            high, low = rows[top], rows[bottom]
            yield f"| {label} | {high.cpu_us / low.cpu_us:.2f} | {high.p50_ms / low.p50_ms:.2f} | {high.p99_ms / low.p99_ms:.2f} | {target} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the setups (default: 2)")
    parser.add_argument("--games", type=int, default=10, help="games at once (default: 10)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds measured per run (default: 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of play before measuring (default: 1)")
    parser.add_argument("--min-games", type=int, default=0, help="measure until this many games ended (default: 0)")
    parser.add_argument("--no-pg-tcp", action="store_true", help="leave out 'pg, TCP' (one node reaching PostgreSQL over TCP)")
    parser.add_argument("--only", action="append", choices=SETUPS, help="measure only this setup (repeat for several; default: all)")
    parser.add_argument("--against", type=Path, metavar="TREE", help="also run the two-node setups from this checkout, after this tree's")
    args = parser.parse_args(argv)
    if args.against is not None and not (args.against / "server").is_dir():
        parser.error(f"--against {args.against}: no Parlour checkout there (no server/)")
    from tests.pgserver import PostgresServer, missing_reason

    reason = missing_reason()
    if reason is not None:
        raise SystemExit(f"PostgreSQL: {reason}")
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    servers = Servers("floor", default_loop())
    postgres = PostgresServer()
    postgres.start()
    runs: list[Run] = []
    try:
        pin_postgres(postgres)
        with tempfile.TemporaryDirectory(prefix="cluster-compare-") as directory:
            for number in range(1, args.rounds + 1):
                print(f"round {number} of {args.rounds}", file=sys.stderr, flush=True)
                for setup in SETUPS:
                    if (setup == "pg, TCP" and args.no_pg_tcp) or (args.only and setup not in args.only):
                        continue
                    runs.append(measure(Cluster(setup, servers, Path(directory), postgres), args))
                    if args.against is not None and setup.startswith("2 nodes"):
                        runs.append(measure(Cluster(setup, servers, Path(directory), postgres, args.against.resolve()), args))
    except RuntimeError as exc:
        print(f"cluster_compare: {exc}", file=sys.stderr)
        return 1
    finally:
        postgres.destroy()
    print(f"{servers.describe()}")
    for line in report(runs, args, " ".join(load)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
