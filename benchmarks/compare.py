"""Parlour beside the floor echo: CPU per move, round trips, fan-out, joins and memory, as ratios.

For every measurement it starts a fresh server in its own process -- the
floor (``--floor``: by default ``benchmarks/floor_echo.py``, the cheapest
asyncio + MessagePack server that speaks Parlour's framing; ``--floor echo``:
the project's first echo, ``benchmarks/echo_server.py``) or ``parlour serve``
(through ``benchmarks/roundtrip.py``'s :class:`ServerProcess`, with its
:data:`UNTHROTTLED` and :data:`ONE_ADDRESS` flags and the connection limits
lifted), both on the same event loop (``--loop``: uvloop, Parlour's default,
when it is installed; else asyncio's own; ``echo_server.py`` runs on
asyncio's only) -- pinned to core 0 with ``taskset`` when it exists and the machine has
two cores or more, and runs ``benchmarks/loadgen.py`` in another process
pinned to core 1. Runs alternate echo, parlour, echo, parlour (``--rounds``
pairs), so both servers are measured seconds apart on a shared machine.

Measurements (the issue's targets in brackets):

- **play**: server CPU per accepted move (``/proc/PID/task/*/schedstat``)
  and the move round trip (write to ``ok``) at 10, 50, 100 and 200 games at
  once, no database [<= 3x the echo's CPU per request; 200 games within 1.2x
  of 10 games];
- **idle**: the same at 10 games with 5,000 more greeted connections idle in
  the lobby [a move costs at most 10 % more than without them];
- **durable**: Parlour with a fresh SQLite file (``--db``) at 1 and 10 games
  [<= 4x the echo's CPU per request at 10 games; one game's p99 <= 2x the
  echo's];
- **fanout**: server CPU per spectator receiving a move, 200 spectators
  [<= 1.2x the echo's CPU per receiver of a broadcast];
- **join**: 1,000 spectators send ``watch_table`` at once [all joined in
  under 1 s, with O(K) frames];
- **memory**: resident memory per greeted idle connection at 10,000
  connections [<= 1.2x the echo's].

``--split`` (play) also prints, per move (per request for the floor), the
server's user and system CPU, context switches, system calls by kind (with
``perf``: ``epoll_wait`` calls are the loop's wake-ups), TCP segments sent
in the server's context and how many of them are bare acknowledgements,
and the bytes and reads the players' connections received
(``benchmarks/kernel_split.py``). ``--against TREE`` (play) runs a second
Parlour from another source tree (a checkout of main, its C accelerator
built) in every round as well (floor, parlour, against), so a branch and main
are measured in the same minutes.

The open-file limit of every process is raised to its hard limit; when that
is too low for the connections asked for, the counts are scaled down and the
table says so. Prints Markdown tables (and the machine's load) and writes an
SVG plot of CPU per move and p99 against games (``--svg``; by default
``docs/benchmarks-cpu-per-move.svg``). ``--quick`` runs a small version in
about a minute and writes no plot unless ``--svg`` is given.

Usage::

    python benchmarks/compare.py                      # a few minutes
    python benchmarks/compare.py --only play --floor echo --loop asyncio   # the old floor
    python benchmarks/compare.py --quick              # a quick look, no plot
    python benchmarks/compare.py --only play,fanout
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
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

from roundtrip import ONE_ADDRESS, UNTHROTTLED, ServerProcess  # noqa: E402
from svgplot import Series, line_chart  # noqa: E402

LOADGEN = HERE / "loadgen.py"
DEFAULT_SVG = ROOT / "docs" / "benchmarks-cpu-per-move.svg"
ECHO_LAUNCHER = [str(HERE / "echo_server.py")]
FLOOR_LAUNCHER = [str(HERE / "floor_echo.py")]
FLOORS = {"floor": FLOOR_LAUNCHER, "echo": ECHO_LAUNCHER}
"""The servers ``--floor`` picks from: the cheapest echo (default) and the project's first echo."""
FLOOR_NAMES = {"floor": "benchmarks/floor_echo.py (the cheapest echo)", "echo": "benchmarks/echo_server.py (the first echo)"}

# ``python -m client.cli ...`` with the open-file limit raised to the hard limit first.
PARLOUR_BOOT = """\
import resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
from client.cli import main
main(sys.argv[1:])
"""

MANY_CONNECTIONS = [
    "--max-connections", "100000", "--max-connections-per-address", "100000",
    "--idle-timeout", "600", "--send-buffer-bytes", str(64 * 1024 * 1024),
]  # fmt: skip
"""Server flags for thousands of connections from 127.0.0.1 that stay idle for a while and
receive bursts of lobby updates (a ``--send-buffer-bytes`` large enough that a reader
that keeps up is never dropped)."""

SAME_LOOP = ["--loop", "asyncio"]
"""Parlour on asyncio's own loop, as ``echo_server.py`` runs (``--floor echo``)."""

PARLOUR_OPTIONS = UNTHROTTLED + ONE_ADDRESS + MANY_CONNECTIONS + SAME_LOOP


def default_loop() -> str:
    """``"uvloop"`` when it can be imported here (Parlour's default then), else ``"asyncio"``."""
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


@dataclass(frozen=True)
class Servers:
    """Which floor Parlour is compared with, and the event loop both run on.

    Attributes:
        floor: a key of :data:`FLOORS`.
        loop: ``"asyncio"`` or ``"uvloop"``; ``echo_server.py`` runs on asyncio's loop only.

    Raises:
        ValueError: an unknown floor or loop, or ``echo`` on uvloop.
    """

    floor: str = "floor"
    loop: str = "asyncio"

    def __post_init__(self) -> None:
        if self.floor not in FLOORS or self.loop not in ("asyncio", "uvloop"):
            raise ValueError(f"unknown floor {self.floor!r} or loop {self.loop!r}")
        if self.floor == "echo" and self.loop != "asyncio":
            raise ValueError("echo_server.py runs on asyncio's loop only: use --loop asyncio with --floor echo")

    def floor_launcher(self) -> list[str]:
        """The launcher of the floor server for :class:`ServerProcess`."""
        return FLOORS[self.floor] + (["--loop", self.loop] if self.floor == "floor" else [])

    def parlour_options(self) -> list[str]:
        """``parlour serve`` flags: limits lifted, on :attr:`loop`."""
        return UNTHROTTLED + ONE_ADDRESS + MANY_CONNECTIONS + ["--loop", self.loop]

    @property
    def label(self) -> str:
        """What the tables and the plot call the floor: ``"floor"`` or ``"echo"``."""
        return self.floor

    def describe(self) -> str:
        """One line for the report: the floor and the loop."""
        return f"floor: `{FLOOR_NAMES[self.floor]}`; both servers on {self.loop}'s loop"

LOADGEN_TIMEOUT_S = 300.0
"""Longest one load generator run may take before it is killed."""


@dataclass
class Plan:
    """What one invocation measures; :func:`plan_for` builds the full or the quick one."""

    games: list[int]
    seconds: float
    warmup: float
    idle: int
    idle_games: int
    durable_games: list[int]
    fanout_spectators: int
    fanout_moves: int
    join_spectators: int
    memory_connections: int
    rounds: int
    servers: Servers = field(default_factory=Servers)
    split: bool = False
    against: Path | None = None
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def plan_for(quick: bool, rounds: int | None, servers: Servers | None = None, games: list[int] | None = None) -> Plan:
    """The full plan (a few minutes) or the quick one; ``rounds`` overrides the plan's echo/parlour pairs.

    ``servers`` (default: :class:`Servers`' defaults) says which floor and loop; ``games``, if given,
    replaces the play measurement's games counts.
    """
    if quick:
        plan = Plan([10, 50], 1.0, 0.3, 500, 10, [1, 10], 50, 20, 200, 1000, 1)
    else:
        plan = Plan([10, 50, 100, 200], 2.0, 0.5, 5000, 10, [1, 10], 200, 30, 1000, 10000, 2)
    if rounds is not None:
        plan.rounds = rounds
    if servers is not None:
        plan.servers = servers
    if games:
        plan.games = games
    fit_to_open_files(plan)
    return plan


def fit_to_open_files(plan: Plan) -> None:
    """Scale the plan's connection counts down to what the hard open-file limit allows, noting it."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return
    room = hard - 200
    for name in ("idle", "join_spectators", "memory_connections"):
        wanted = getattr(plan, name)
        if wanted + 2 * max(plan.games) > room:
            setattr(plan, name, max(1, room - 2 * max(plan.games)))
            plan.notes.append(f"{name} scaled from {wanted} to {getattr(plan, name)}: hard open-file limit {hard}")


def taskset_prefix(core: int) -> list[str]:
    """``["taskset", "-c", core]`` when ``taskset`` exists and the machine has 2+ cores, else nothing."""
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        return ["taskset", "-c", str(core)]
    return []


def pin(pid: int, core: int) -> None:
    """Pin every thread of process ``pid`` to ``core`` with ``taskset -a -p`` (nothing without taskset)."""
    if taskset_prefix(core):
        subprocess.run(["taskset", "-a", "-p", "-c", str(core), str(pid)], check=True, capture_output=True)


def start_server(kind: str, servers: Servers, db_path: Path | None = None, tree: Path | None = None) -> ServerProcess:
    """Start the ``kind`` ("echo": the floor, or "parlour") server, pinned to core 0; Parlour with ``db_path`` if given,
    from source tree ``tree`` if given (default: this one)."""
    if kind == "echo":
        server = ServerProcess(launcher=servers.floor_launcher())
    else:
        storage = ["--no-db"] if db_path is None else ["--db", str(db_path)]
        server = ServerProcess(launcher=["-c", PARLOUR_BOOT], storage=storage, options=servers.parlour_options(), tree=tree or ROOT)
    server.start()
    assert server.proc is not None
    pin(server.proc.pid, 0)
    return server


def run_loadgen(
    kind: str, servers: Servers, scenario: str, options: list[str], db_path: Path | None = None, tree: Path | None = None
) -> dict[str, Any]:
    """One measurement: a fresh ``kind`` server (from source ``tree`` if given), ``loadgen.py --scenario scenario *options`` against it.

    Raises:
        RuntimeError: the load generator failed (its message included) or ran out of time.
    """
    server = start_server(kind, servers, db_path, tree)
    assert server.proc is not None
    command = [
        *taskset_prefix(1), sys.executable, str(LOADGEN), "--port", str(server.port), "--target", kind,
        "--scenario", scenario, "--server-pid", str(server.proc.pid), *options,
    ]  # fmt: skip
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=LOADGEN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"loadgen {scenario} against {kind} took longer than {LOADGEN_TIMEOUT_S} s") from None
    finally:
        server.stop()
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"loadgen exited with status {done.returncode}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  {kind:<8} {scenario:<8} {' '.join(options):<40} {_brief(result)}", file=sys.stderr, flush=True)
    return result


def _brief(result: dict[str, Any]) -> str:
    keys = ("moves", "loadgen_cpu_share", "cpu_us_per_move", "cpu_us_per_receiver", "p99_ms", "join_s", "frames", "bytes_per_connection")
    return " ".join(f"{key}={result[key]:.4g}" for key in keys if isinstance(result.get(key), (int, float)))


Results = dict[str, list[dict[str, Any]]]
"""Runs by a key such as ``"play/10/echo"``, in the order they ran."""


def interleaved(results: Results, plan: Plan, key: str, runs: dict[str, tuple[str, list[str], Path | None]]) -> None:
    """Run each of ``runs`` (label -> kind, scenario options, db) once per round of ``plan``, alternating.

    The label ``"against"`` runs Parlour from ``plan.against``.

    Appends each result to ``results`` and each failed run's message to ``plan.failures``.
    """
    for _ in range(plan.rounds):
        for label, (kind, options, db_path) in runs.items():
            scenario, *rest = options
            fresh_db = None
            if db_path is not None:
                fresh_db = db_path / f"bench-{time.monotonic_ns()}.sqlite3"
            try:
                result = run_loadgen(kind, plan.servers, scenario, rest, fresh_db, plan.against if label == "against" else None)
            except RuntimeError as exc:
                plan.failures.append(f"{key}/{label}: {exc}")
                print(f"  {kind:<8} {scenario:<8} FAILED: {exc}", file=sys.stderr, flush=True)
                continue
            results.setdefault(f"{key}/{label}", []).append(result)


def measure(plan: Plan, only: set[str], workdir: Path) -> Results:
    """Run every measurement of ``plan`` named in ``only``; return the runs."""
    results: Results = {}
    timing = ["--warmup", str(plan.warmup), "--seconds", str(plan.seconds)]

    def cycles(games: int) -> list[str]:  # a window holding about one whole game per table
        return ["--min-games", str(games)]

    if "play" in only:
        for games in plan.games:
            play = ["play", "--games", str(games), *timing, *cycles(games), *(["--split"] if plan.split else [])]
            runs = {"echo": ("echo", play, None), "parlour": ("parlour", play, None)}
            if plan.against is not None:
                runs["against"] = ("parlour", play, None)
            interleaved(results, plan, f"play/{games}", runs)
    if "idle" in only:
        play = ["play", "--games", str(plan.idle_games), *timing, *cycles(plan.idle_games)]
        idle = [*play, "--idle", str(plan.idle)]
        interleaved(results, plan, "idle", {
            "echo": ("echo", idle, None), "parlour": ("parlour", idle, None), "parlour-alone": ("parlour", play, None),
        })  # fmt: skip
    if "durable" in only:
        for games in plan.durable_games:
            play = ["play", "--games", str(games), *timing, *cycles(games)]
            interleaved(results, plan, f"durable/{games}", {"echo": ("echo", play, None), "parlour": ("parlour", play, workdir)})
    if "fanout" in only:
        fanout = ["fanout", "--spectators", str(plan.fanout_spectators), "--moves", str(plan.fanout_moves)]
        interleaved(results, plan, "fanout", {"echo": ("echo", fanout, None), "parlour": ("parlour", fanout, None)})
    if "join" in only:
        join = ["join", "--spectators", str(plan.join_spectators)]
        interleaved(results, plan, "join", {"echo": ("echo", join, None), "parlour": ("parlour", join, None)})
    if "memory" in only:
        memory = ["memory", "--connections", str(plan.memory_connections)]
        interleaved(results, plan, "memory", {"echo": ("echo", memory, None), "parlour": ("parlour", memory, None)})
    return results


def pooled(runs: list[dict[str, Any]], total: str, per: str) -> float | None:
    """``sum(total) / sum(per)`` over ``runs`` (e.g. CPU ns per move); ``None`` when nothing was counted."""
    numerator = sum(run[total] for run in runs)
    denominator = sum(run[per] for run in runs)
    return numerator / denominator if denominator and numerator else None


def mean_of(runs: list[dict[str, Any]], key: str) -> float | None:
    """The mean of ``key`` over the runs that have it (``None``: none has)."""
    values = [run[key] for run in runs if run.get(key) is not None]
    return statistics.fmean(values) if values else None


def ratio(top: float | None, bottom: float | None) -> float | None:
    """``top / bottom``, or ``None`` when either is missing (or ``bottom`` is 0)."""
    return top / bottom if top is not None and bottom else None


def fmt(value: float | None, digits: int = 1) -> str:
    """``value`` with thousands separators and ``digits`` decimals; ``"n/a"`` for ``None``."""
    return "n/a" if value is None else f"{value:,.{digits}f}"


def per_round_ratios(top: list[dict[str, Any]], bottom: list[dict[str, Any]], total: str, per: str) -> str:
    """The ratio ``total / per`` of ``top`` to that of ``bottom``, round by round, as text ("7.72, 7.25")."""
    values = [ratio(pooled([a], total, per), pooled([b], total, per)) for a, b in zip(top, bottom)]
    return ", ".join(fmt(value, 2) for value in values)


@dataclass
class PlayRow:
    """One games count of the play table (CPU per move in µs, round trips in ms)."""

    games: int
    echo_us: float | None
    parlour_us: float | None
    echo_p50: float | None
    echo_p99: float | None
    parlour_p50: float | None
    parlour_p99: float | None
    rounds: str


def play_rows(results: Results, plan: Plan, prefix: str = "play") -> list[PlayRow]:
    """One row per games count measured under ``prefix`` ("play" or "durable") with both servers."""
    rows = []
    for games in plan.games if prefix == "play" else plan.durable_games:
        echo, parlour = results.get(f"{prefix}/{games}/echo"), results.get(f"{prefix}/{games}/parlour")
        if not echo or not parlour:
            continue
        rows.append(PlayRow(
            games, us_per(echo, "moves"), us_per(parlour, "moves"),
            mean_of(echo, "p50_ms"), mean_of(echo, "p99_ms"), mean_of(parlour, "p50_ms"), mean_of(parlour, "p99_ms"),
            per_round_ratios(parlour, echo, "server_cpu_ns", "moves"),
        ))  # fmt: skip
    return rows


def us_per(runs: list[dict[str, Any]], per: str) -> float | None:
    """The servers' CPU microseconds per ``per`` (e.g. ``"moves"``), pooled over ``runs``."""
    ns = pooled(runs, "server_cpu_ns", per)
    return ns / 1000 if ns is not None else None


def report(results: Results, plan: Plan, load: str) -> str:
    """The Markdown tables of ``results``; ``load`` is ``/proc/loadavg`` as it was at the start."""
    lines = [f"Load at the start: `{load}`; {os.cpu_count()} cores; "
             f"pinning: {'taskset, server core 0, load core 1' if taskset_prefix(0) else 'none'}; "
             f"{plan.rounds} round(s) of echo, parlour; {plan.servers.describe()}."]  # fmt: skip
    lines += [f"Note: {note}" for note in plan.notes]
    lines += [f"FAILED (left out): {failure}" for failure in plan.failures]
    rows = play_rows(results, plan)
    if rows:
        floor = plan.servers.label
        lines += ["", f"| games | {floor} µs/request | parlour µs/move | ratio (≤ 3) | per round | {floor} p50 / p99 ms | parlour p50 / p99 ms |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        for row in rows:
            lines.append(
                f"| {row.games} | {fmt(row.echo_us)} | {fmt(row.parlour_us)} | **{fmt(ratio(row.parlour_us, row.echo_us), 2)}** "
                f"| {row.rounds} | {fmt(row.echo_p50, 2)} / {fmt(row.echo_p99, 2)} | {fmt(row.parlour_p50, 2)} / {fmt(row.parlour_p99, 2)} |"
            )
        lines.append("")
        first, last = rows[0], rows[-1]
        lines.append(f"Flatness: parlour µs/move at {last.games} games / at {first.games} games = "
                     f"**{fmt(ratio(last.parlour_us, first.parlour_us), 2)}** (target ≤ 1.2); "
                     f"{plan.servers.label}: {fmt(ratio(last.echo_us, first.echo_us), 2)}.")  # fmt: skip
    beside = against_rows(results, plan)
    if beside:
        lines += ["", *beside]
    split = split_rows(results, plan)
    if split:
        lines += ["", *split]
    others = other_rows(results, plan)
    if others:
        lines += ["", f"| measure | {plan.servers.label} | parlour | ratio | target |", "|---|---|---|---|---|", *others]
    return "\n".join(lines)


SPLIT_COLUMNS = (
    ("user µs", "user_ns", 1e-3), ("sys µs", "system_ns", 1e-3), ("sys share", None, 1.0),
    ("switches (vol/invol)", None, 1.0), ("syscalls", "syscalls", 1.0), ("epoll waits", "epoll_wait+epoll_pwait", 1.0),
    ("reads", "read+recvfrom+recvmsg", 1.0), ("writes", "write+writev+sendto+sendmsg", 1.0),
    ("segments", "segments", 1.0), ("of them bare ACKs", "acks", 1.0), ("bytes to players", "client_bytes", 1.0),
    ("player reads", "client_reads", 1.0),
)  # fmt: skip
"""The columns of the ``--split`` table: header, the ``split`` key (``a+b``: summed; ``None``: worked out), scale."""


def split_total(runs: list[dict[str, Any]], key: str) -> float | None:
    """``key`` (``"a+b"`` sums several) of the runs' ``split`` results, summed over the runs; system calls
    from its ``syscalls`` counts; ``None`` when a run has no split or no such count."""
    total = 0.0
    for run in runs:
        split = run.get("split")
        if not split:
            return None
        for part in key.split("+"):
            if part in split and part != "syscalls":
                total += split[part]
            elif split.get("syscalls") is not None and part in split["syscalls"]:
                total += split["syscalls"][part]
            else:
                return None
    return total


def split_cells(runs: list[dict[str, Any]]) -> list[str]:
    """The ``--split`` table's cells for ``runs`` (one server at one games count), per accepted move."""
    moves = sum(run["moves"] for run in runs)
    cells = []
    for _, key, scale in SPLIT_COLUMNS:
        if key is None:
            continue
        total = split_total(runs, key)
        cells.append(fmt(total / moves * scale, 2) if total is not None and moves else "n/a")
    user, system = split_total(runs, "user_ns"), split_total(runs, "system_ns")
    share = fmt(system / (user + system), 2) if user is not None and system is not None and user + system else "n/a"
    voluntary, involuntary = split_total(runs, "voluntary_switches"), split_total(runs, "involuntary_switches")
    switches = f"{fmt(voluntary / moves, 3)} / {fmt(involuntary / moves, 3)}" if voluntary is not None and involuntary is not None and moves else "n/a"
    return [*cells[:2], share, switches, *cells[2:]]


def against_rows(results: Results, plan: Plan) -> list[str]:
    """``--against``: the Markdown table of this tree's Parlour beside the other tree's, per games count."""
    rows = []
    for games in plan.games:
        echo, parlour, other = (results.get(f"play/{games}/{label}") for label in ("echo", "parlour", "against"))
        if not (echo and parlour and other):
            continue
        p, o, e = us_per(parlour, "moves"), us_per(other, "moves"), us_per(echo, "moves")
        rows.append(f"| {games} | {fmt(p)} | {fmt(o)} | **{fmt(ratio(p, o), 2)}** "
                    f"({per_round_ratios(parlour, other, 'server_cpu_ns', 'moves')}) | {fmt(ratio(o, e), 2)} |")  # fmt: skip
    if not rows:
        return []
    return [f"Beside `{plan.against}` (against), the same rounds:", "",
            "| games | parlour µs/move | against µs/move | parlour / against (per round) | against / floor |",
            "|---|---|---|---|---|", *rows]  # fmt: skip


def split_rows(results: Results, plan: Plan) -> list[str]:
    """The Markdown table of ``--split``: per move (floor: per request), each server at each games count."""
    rows = []
    names = {"echo": plan.servers.label, "parlour": "parlour", "against": "against"}
    for games in plan.games:
        for label, name in names.items():
            runs = results.get(f"play/{games}/{label}")
            if runs and all(run.get("split") for run in runs):
                rows.append(f"| {games} | {name} | {fmt(us_per(runs, 'moves'))} | " + " | ".join(split_cells(runs)) + " |")
    if not rows:
        return []
    header = " | ".join(column for column, _, _ in SPLIT_COLUMNS)
    return [f"Per move (the floor: per request), over the same windows (`--split`; n/a: perf cannot count here):", "",
            f"| games | server | CPU µs | {header} |", "|---" * (3 + len(SPLIT_COLUMNS)) + "|", *rows]  # fmt: skip


def other_rows(results: Results, plan: Plan) -> list[str]:
    """The Markdown rows of the idle, durable, fan-out, join and memory measurements that were run."""
    rows = []
    idle = {label: results.get(f"idle/{label}") for label in ("echo", "parlour", "parlour-alone")}
    if all(idle.values()):
        us = {label: us_per(runs, "moves") for label, runs in idle.items()}  # type: ignore[arg-type]
        lobby = pooled(idle["parlour"], "idle_frames", "moves")  # type: ignore[arg-type]
        rows.append(f"| µs/move, {plan.idle_games} games + {plan.idle} idle in the lobby | {fmt(us['echo'])} | "
                    f"{fmt(us['parlour'])} (alone: {fmt(us['parlour-alone'])}) | "
                    f"**{fmt(ratio(us['parlour'], us['parlour-alone']), 2)}** with / without idle; "
                    f"{fmt(ratio(us['parlour'], us['echo']), 2)} vs echo | ≤ 1.10 with / without |")  # fmt: skip
        rows.append(f"| … frames pushed to the idle lobby per accepted move | 0 | {fmt(lobby)} | | |")
    for row in play_rows(results, plan, "durable"):
        rows.append(f"| durable (`--db`), {row.games} game(s): µs/move | {fmt(row.echo_us)} | {fmt(row.parlour_us)} | "
                    f"**{fmt(ratio(row.parlour_us, row.echo_us), 2)}** ({row.rounds}) | ≤ 4 at 10+ games |")  # fmt: skip
        rows.append(f"| durable, {row.games} game(s): p50 / p99 ms | {fmt(row.echo_p50, 2)} / {fmt(row.echo_p99, 2)} | "
                    f"{fmt(row.parlour_p50, 2)} / {fmt(row.parlour_p99, 2)} | "
                    f"p99 **{fmt(ratio(row.parlour_p99, row.echo_p99), 2)}** | p99 ≤ 2 for one game |")  # fmt: skip
    echo, parlour = results.get("fanout/echo"), results.get("fanout/parlour")
    if echo and parlour:
        e, p = us_per(echo, "deliveries"), us_per(parlour, "deliveries")
        rows.append(f"| fan-out, {plan.fanout_spectators} spectators: µs per receiver | {fmt(e, 2)} | {fmt(p, 2)} | **{fmt(ratio(p, e), 2)}** "
                    f"({per_round_ratios(parlour, echo, 'server_cpu_ns', 'deliveries')}) | ≤ 1.2 |")  # fmt: skip
    echo, parlour = results.get("join/echo"), results.get("join/parlour")
    if echo and parlour:
        rows.append(f"| {plan.join_spectators} spectators join one table: s | {fmt(mean_of(echo, 'join_s'), 3)} | "
                    f"{fmt(mean_of(parlour, 'join_s'), 3)} | {fmt(ratio(mean_of(parlour, 'join_s'), mean_of(echo, 'join_s')), 0)} | < 1 s |")  # fmt: skip
        rows.append(f"| … server CPU meanwhile, s | {fmt(mean_of(echo, 'join_server_cpu_s'), 3)} | "
                    f"{fmt(mean_of(parlour, 'join_server_cpu_s'), 3)} | | |")  # fmt: skip
        rows.append(f"| … frames received meanwhile (until quiet) | {fmt(mean_of(echo, 'frames'), 0)} | "
                    f"{fmt(mean_of(parlour, 'frames'), 0)} | {fmt(ratio(mean_of(parlour, 'frames'), mean_of(echo, 'frames')), 0)} | O(K) |")  # fmt: skip
    echo, parlour = results.get("memory/echo"), results.get("memory/parlour")
    if echo and parlour:
        e, p = mean_of(echo, "bytes_per_connection"), mean_of(parlour, "bytes_per_connection")
        rows.append(f"| idle memory per connection at {plan.memory_connections}: KiB | {fmt(e and e / 1024, 2)} | "
                    f"{fmt(p and p / 1024, 2)} | **{fmt(ratio(p, e), 2)}** | ≤ 1.2 |")  # fmt: skip
    return rows


def write_svg(path: Path, results: Results, plan: Plan) -> None:
    """Plot CPU per move and p99 against games, echo beside Parlour, to ``path``."""
    rows = play_rows(results, plan)
    if not rows:
        return
    games = [row.games for row in rows]

    def series(name: str, values: list[float | None], colour: str) -> Series:
        return Series(name, [(g, v) for g, v in zip(games, values) if v is not None], colour)

    floor = plan.servers.label
    cpu = [series(f"{floor} µs/request", [r.echo_us for r in rows], "#4477aa"),
           series("parlour µs/move", [r.parlour_us for r in rows], "#cc6633")]  # fmt: skip
    p99 = [series(f"{floor} p99 ms", [r.echo_p99 for r in rows], "#4477aa"),
           series("parlour p99 ms", [r.parlour_p99 for r in rows], "#cc6633")]  # fmt: skip
    capacity = [f"{g} games {1e6 / r.parlour_us:,.0f}" for g, r in zip(games, rows) if r.parlour_us]
    svg = line_chart(
        [("server CPU per move (µs)", cpu), ("move round trip p99 (ms)", p99)],
        x_label="games at once (no database)",
        title=f"Parlour vs the {plan.servers.floor} echo on {plan.servers.loop}, {time.strftime('%Y-%m-%d')}",
        footnote="Moves/s one core holds (1 s / parlour CPU per move): " + ", ".join(capacity),
    )
    path.write_text(svg, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure Parlour against the cheapest asyncio + MessagePack echo server.")
    parser.add_argument("--quick", action="store_true", help="small counts and short windows, one round, no plot (about a minute)")
    parser.add_argument("--rounds", type=int, help="echo/parlour pairs per measurement (default: 2; quick: 1)")
    parser.add_argument("--only", default="play,idle,durable,fanout,join,memory",
                        help="comma-separated measurements to run (default: all)")  # fmt: skip
    parser.add_argument("--svg", help="where to write the plot ('' for none; default: "
                        "docs/benchmarks-cpu-per-move.svg, none with --quick)")  # fmt: skip
    parser.add_argument("--games", help="comma-separated games counts of play (default: 10,50,100,200; quick: 10,50)")
    parser.add_argument("--seconds", type=float, help="each play window's least length in seconds (default: 2; quick: 1)")
    parser.add_argument("--json", help="also write every run's raw result to this file")
    parser.add_argument("--against", type=Path,
                        help="play: also run Parlour from this source tree (e.g. a checkout of main) in every round")
    parser.add_argument("--split", action="store_true",
                        help="play: also print user/system CPU, context switches, system calls by kind (perf) "
                        "and bytes per move (benchmarks/kernel_split.py)")
    parser.add_argument("--floor", choices=sorted(FLOORS), default="floor",
                        help="the server Parlour is compared with: floor (benchmarks/floor_echo.py, the cheapest; default) "
                        "or echo (benchmarks/echo_server.py, the first echo, asyncio only)")  # fmt: skip
    parser.add_argument("--loop", choices=["asyncio", "uvloop"],
                        help="the event loop of both servers (default: uvloop when installed, else asyncio; "
                        "asyncio with --floor echo)")  # fmt: skip
    args = parser.parse_args(argv)
    known = {"play", "idle", "durable", "fanout", "join", "memory"}
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if not only or only - known:
        parser.error(f"--only takes some of {', '.join(sorted(known))}; got {args.only!r}")
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.svg is None:
        args.svg = "" if args.quick else str(DEFAULT_SVG)
    loop = args.loop or ("asyncio" if args.floor == "echo" else default_loop())
    try:
        servers = Servers(args.floor, loop)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        games = [int(count) for count in args.games.split(",")] if args.games else None
    except ValueError:
        parser.error(f"--games takes comma-separated counts, e.g. 10,100,200; got {args.games!r}")
    if any(count < 1 for count in games or ()) or (args.seconds is not None and args.seconds <= 0):
        parser.error("--games counts and --seconds must be positive")
    plan = plan_for(args.quick, args.rounds, servers, games)
    if args.seconds is not None:
        plan.seconds = args.seconds
    plan.split = args.split
    plan.against = args.against.resolve() if args.against else None
    load = Path("/proc/loadavg").read_text().strip()
    with tempfile.TemporaryDirectory(prefix="parlour-compare-") as workdir:
        results = measure(plan, only, Path(workdir))
    print(report(results, plan, load))
    print(f"\nLoad at the end: `{Path('/proc/loadavg').read_text().strip()}`")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.svg:
        write_svg(Path(args.svg), results, plan)
    return 1 if plan.failures else 0


if __name__ == "__main__":
    sys.exit(main())
