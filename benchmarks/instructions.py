"""Instructions per move, Parlour beside the floor echo, counted by callgrind: deterministic where CPU time is not.

CPU time on a shared machine moves by tens of percent from run to run;
instruction counts barely move. This script starts each server -- the floor
(``--floor floor``, the default: ``benchmarks/floor_echo.py``, the cheapest
echo that speaks the framing; ``--floor echo``: ``benchmarks/echo_server.py``)
or ``parlour serve`` -- on the same event loop (``--loop``, default asyncio;
``echo_server.py`` runs on asyncio's only) under ``valgrind --tool=callgrind
--instr-atstart=no``, runs ``benchmarks/loadgen.py --callgrind`` against it,
which switches counting on for the measured window only (warm-up, start-up
and shutdown are not counted), and reads the instructions of that window from
the dump. It prints, per scenario, instructions per move (or per receiver)
for both servers and the ratio Parlour / echo, beside the machine's load.

Scenarios (``--only``):

- ``play``: ``--games`` Othello games at once without a database, ``--moves``
  moves (the echo: the same requests, each answered ``ok``);
- ``durable``: the same with a fresh SQLite file (``--db``: WAL,
  ``synchronous=FULL``, every move committed before its ``ok``);
- ``timed``: ``play`` with every table on a clock (``60+1``), the path of a
  timed move (the echo: the same requests as for ``play``);
- ``fanout``: one table with ``--spectators`` watchers, ``--fanout-moves``
  moves; per receiver (the echo: a ``broadcast`` written to every receiver).

The move count of a window may be off by up to ``--games`` (moves under way
when counting starts), about 1 % at the defaults. Needs ``valgrind`` and
``callgrind_control``.

Usage::

    python benchmarks/instructions.py                  # about a minute or two
    python benchmarks/instructions.py --only play --moves 2000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOADGEN = HERE / "loadgen.py"
ECHO = HERE / "echo_server.py"
FLOOR = HERE / "floor_echo.py"

PARLOUR_FLAGS = [
    "--requests-per-s", "1000000", "--request-burst", "1000000",
    "--connections-per-address-per-s", "1000000", "--connection-burst", "1000000",
    "--max-tables-per-address", "1000000", "--max-connections-per-address", "100000",
    "--idle-timeout", "600",
]  # fmt: skip
"""Parlour's limits lifted for one address playing many games (the loop is added: ``--loop``)."""

_PORT_LINE = re.compile(r"port (\d+)")
START_TIMEOUT_S = 120.0
"""Longest wait for a server under valgrind to report its port."""


def server_command(kind: str, out_file: Path, db_path: Path | None, floor: str = "floor", loop: str = "asyncio") -> list[str]:
    """The command line of the ``kind`` ("echo": the ``floor``, or "parlour") server under callgrind, counting nothing at first.

    ``floor`` is ``"floor"`` (``floor_echo.py``) or ``"echo"`` (``echo_server.py``, asyncio only); ``loop`` the event loop.
    """
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_file}"]
    if kind == "echo" and floor == "echo":
        return [*valgrind, sys.executable, str(ECHO), "--port", "0"]
    if kind == "echo":
        return [*valgrind, sys.executable, str(FLOOR), "--port", "0", "--loop", loop]
    storage = ["--no-db"] if db_path is None else ["--db", str(db_path)]
    return [
        *valgrind, sys.executable, "-m", "client.cli", "serve", *storage, "--host", "127.0.0.1", "--port", "0",
        "--name", "bench", "--log-level", "WARNING", "--no-advertise", *PARLOUR_FLAGS, "--loop", loop,
    ]  # fmt: skip


def window_instructions(out_file: Path) -> int:
    """The instructions of the measured window: the ``summary``/``totals`` of the first dump part (``<out_file>.1``)."""
    text = Path(f"{out_file}.1").read_text()
    match = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no totals in {out_file}.1")
    return int(match[1])


def measure(
    kind: str, scenario: str, loadgen_args: list[str], durable: bool, keep: Path | None = None, floor: str = "floor", loop: str = "asyncio"
) -> dict[str, Any]:
    """One run: the ``kind`` server under callgrind, loadgen ``scenario``; the load generator's JSON plus ``instructions``.

    ``floor`` and ``loop`` as for :func:`server_command`. With ``keep``, the window's profile is copied to
    ``keep/<kind>-<scenario>.callgrind`` (for ``callgrind_annotate``).
    """
    with tempfile.TemporaryDirectory(prefix="parlour-instr-") as scratch:
        out_file = Path(scratch) / "callgrind.out"
        db_path = Path(scratch) / "bench.db" if durable and kind == "parlour" else None
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        server = subprocess.Popen(
            server_command(kind, out_file, db_path, floor, loop), cwd=ROOT, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            port = _wait_for_port(server)
            command = [
                sys.executable, str(LOADGEN), "--port", str(port), "--target", kind, "--scenario", scenario,
                "--server-pid", str(server.pid), "--callgrind", *loadgen_args,
            ]  # fmt: skip
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                raise RuntimeError(done.stderr.strip() or f"loadgen exited with status {done.returncode}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result["instructions"] = window_instructions(out_file)
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f"{out_file}.1", keep / f"{kind}-{'durable' if durable else scenario}.callgrind")
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return result


def _wait_for_port(server: subprocess.Popen[str]) -> int:
    assert server.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        match = _PORT_LINE.search(line)
        if match:
            return int(match[1])
    raise RuntimeError("the server did not report its port")


def per_unit(result: dict[str, Any], scenario: str) -> float:
    """Instructions per move (play, durable) or per receiver (fanout)."""
    count = result["deliveries"] if scenario == "fanout" else result["moves"]
    return result["instructions"] / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Instructions per move (callgrind), Parlour beside the floor echo.")
    parser.add_argument("--only", default="play,durable,fanout", help="comma-separated scenarios: play, durable, fanout, timed (default: the first three)")
    parser.add_argument("--games", type=int, default=10, help="play, durable: games at once (default: 10)")
    parser.add_argument("--moves", type=int, default=1000, help="play, durable: moves counted (default: 1000)")
    parser.add_argument("--spectators", type=int, default=100, help="fanout: watchers (default: 100)")
    parser.add_argument("--fanout-moves", type=int, default=20, help="fanout: moves (default: 20)")
    parser.add_argument("--keep", type=Path, help="copy each window's callgrind profile into this directory")
    parser.add_argument("--floor", choices=["floor", "echo"], default="floor",
                        help="floor: benchmarks/floor_echo.py, the cheapest (default); echo: benchmarks/echo_server.py (asyncio only)")  # fmt: skip
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio", help="the event loop of both servers (default: asyncio)")
    args = parser.parse_args(argv)
    if args.floor == "echo" and args.loop != "asyncio":
        parser.error("--floor echo runs on asyncio's loop only: use --loop asyncio")
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        print("instructions.py needs valgrind and callgrind_control", file=sys.stderr)
        return 1
    play = ["--games", str(args.games), "--max-moves", str(args.moves), "--seconds", "100000", "--warmup", "0.5"]
    fanout = ["--spectators", str(args.spectators), "--moves", str(args.fanout_moves)]
    timed = [*play, "--time-control", "60+1"]
    plans = {
        "play": ("play", play, False), "durable": ("play", play, True), "fanout": ("fanout", fanout, False),
        "timed": ("play", timed, False),
    }  # fmt: skip
    names = args.only.split(",")
    unknown = [name for name in names if name not in plans]
    if unknown:
        parser.error(f"unknown scenario {unknown[0]!r} in --only (choose from {', '.join(plans)})")
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; floor {args.floor}, loop {args.loop}")
    print("| scenario | unit | echo instr | parlour instr | ratio |")
    print("|---|---|---|---|---|")
    for name in names:
        scenario, loadgen_args, durable = plans[name]
        echo = per_unit(measure("echo", scenario, loadgen_args, durable, args.keep, args.floor, args.loop), scenario)
        parlour = per_unit(measure("parlour", scenario, loadgen_args, durable, args.keep, args.floor, args.loop), scenario)
        unit = "receiver" if scenario == "fanout" else "move"
        print(f"| {name} | {unit} | {echo:,.0f} | {parlour:,.0f} | {parlour / echo:.2f} |", flush=True)
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
