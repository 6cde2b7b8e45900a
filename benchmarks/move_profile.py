"""Where a move's work goes: Python bytecodes per move, function by function, counted, not timed.

``instructions.py`` counts a move's machine instructions but cannot say
which Python function spent them; a profiler's times are mostly its own
overhead. This script runs a Parlour server in-process (asyncio's loop, no
database, limits lifted) and two players in a thread, over real TCP on
127.0.0.1, playing Othello 8x8 games move by move (each mover plays its
first legal move, waiting for its ``ok`` and both ``moved`` pushes). While
the moves are played it counts every bytecode the server's thread executes
(``sys.settrace`` with opcode events) and every call into C
(``sys.setprofile``), and prints them per move: the project's functions
(``server/``, ``protocol/``, ``games/``) one by one, the event loop's and
the rest's as totals. The counts do not depend on the machine's load; the
moves of a game are the same from run to run.

A bytecode is not a fixed number of instructions (a call or a big-int
operation costs many), but functions that run more of them cost more, and a
change that removes bytecodes or C calls from every move shows here exactly.

Usage::

    python benchmarks/move_profile.py                 # 300 moves, the top 30 functions
    python benchmarks/move_profile.py --moves 1000 --top 60 --json /tmp/profile.json
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import socket
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame  # noqa: E402
from server.app import Server, ServerConfig  # noqa: E402
from server.net.limits import Limits  # noqa: E402

PROJECT = ("server", "protocol", "games")
"""The top-level packages whose functions are listed one by one."""

TIMEOUT_S = 30.0


class Counts:
    """Bytecodes by function and C calls by name, counted only while :attr:`on` is set."""

    def __init__(self) -> None:
        self.on = threading.Event()
        self.bytecodes: collections.Counter[str] = collections.Counter()
        self.c_calls: collections.Counter[str] = collections.Counter()

    def trace(self, frame: Any, event: str, arg: Any) -> Any:
        """``sys.settrace``'s function: every frame traced opcode by opcode, counted under its function."""
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        code = frame.f_code
        key = f"{_where(code.co_filename)}:{code.co_name}"
        counted, on = self.bytecodes, self.on

        def opcode(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode" and on.is_set():
                counted[key] += 1
            return opcode

        return opcode

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        """``sys.setprofile``'s function: counts calls into C by name."""
        if event == "c_call" and self.on.is_set():
            self.c_calls[getattr(arg, "__qualname__", repr(arg))] += 1


def _where(filename: str) -> str:
    """``server/net/peer.py`` for a file of this checkout; ``asyncio/...`` or the full path otherwise."""
    path = Path(filename)
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return f"{path.parent.name}/{path.name}" if "asyncio" in path.parts else filename


class Player:
    """One blocking connection that speaks frames (the players run in their own thread)."""

    def __init__(self, port: int, name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.decoder = FrameDecoder(max_frame_bytes=1 << 22)
        self.inbox: collections.deque[dict[str, Any]] = collections.deque()
        self.last_id = 0
        assert self.request("hello", version=PROTOCOL_VERSION, name=name)["type"] == "welcome"

    def send(self, **message: Any) -> int:
        self.last_id += 1
        self.sock.sendall(encode_frame({**message, "id": self.last_id}))
        return self.last_id

    def next(self, kind: str | None = None) -> dict[str, Any]:
        """The next frame (of type ``kind``, skipping others)."""
        while True:
            while not self.inbox:
                data = self.sock.recv(65536)
                if not data:
                    raise EOFError("the server closed the connection")
                self.inbox.extend(self.decoder.feed(data))
            frame = self.inbox.popleft()
            if kind is None or frame["type"] == kind:
                return frame

    def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        request_id = self.send(type=kind, **fields)
        while True:
            frame = self.next()
            if frame.get("id") == request_id:
                return frame


def play(port: int, moves: int, counts: Counts, failed: list[BaseException]) -> None:
    """Play Othello games until ``moves`` moves were counted (the players' thread)."""
    try:
        ann, bob = Player(port, "ann"), Player(port, "bob")
        played = 0
        while played < moves:
            table = ann.request("create_table", game="othello")["table"]["id"]
            bob.request("join_table", table=table)
            started = {player: player.next("game_started") for player in (ann, bob)}
            seats = {started[ann]["seats"].index(name): player for name, player in (("ann", ann), ("bob", bob))}
            chooser_view = _chooser(started[ann]["view"], started[bob]["view"])
            while chooser_view.get("to_move") is not None and played < moves:
                mover, other = seats[chooser_view["to_move"]], seats[1 - chooser_view["to_move"]]
                legal = chooser_view["legal_moves"]
                counts.on.set()
                mover.send(type="move", table=table, move=legal[0])
                assert mover.next()["type"] == "ok"
                while True:  # a forced pass follows as a second moved to both
                    mine, theirs = mover.next("moved"), other.next("moved")
                    if not mine["view"].get("forced_pass"):
                        break
                counts.on.clear()
                played += 1
                chooser_view = _chooser(mine["view"], theirs["view"])
            for player in (ann, bob):
                player.request("leave_table", table=table)
                player.inbox.clear()
    except BaseException as exc:  # noqa: BLE001 - reported by the main thread
        failed.append(exc)
        counts.on.clear()


def _chooser(*views: dict[str, Any]) -> dict[str, Any]:
    """The one of ``views`` that lists legal moves (the seat to move's), or the first once the game is over."""
    return next((view for view in views if "legal_moves" in view), views[0])


async def run(moves: int) -> Counts:
    """Serve in this thread while the players play ``moves`` moves in another; return the counts."""
    limits = Limits(requests_per_s=1e6, request_burst=1_000_000)
    server = Server(ServerConfig(host="127.0.0.1", port=0, server_name="profile", limits=limits))
    await server.start()
    counts, failed = Counts(), []  # type: ignore[var-annotated]
    players = threading.Thread(target=play, args=(server.port, moves, counts, failed), daemon=True)
    sys.settrace(counts.trace)
    sys.setprofile(counts.profile)
    try:
        players.start()
        while players.is_alive():
            await asyncio.sleep(0.001)
    finally:
        sys.settrace(None)
        sys.setprofile(None)
        await server.close()
    if failed:
        raise failed[0]
    return counts


def report(counts: Counts, moves: int, top: int) -> dict[str, Any]:
    """Per-move figures: the project's functions, the totals by part, and the C calls."""
    own = {key: count / moves for key, count in counts.bytecodes.items() if key.split("/")[0] in PROJECT}
    loop = sum(count for key, count in counts.bytecodes.items() if key.startswith("asyncio/")) / moves
    total = sum(counts.bytecodes.values()) / moves
    return {
        "moves": moves,
        "project_bytecodes": sum(own.values()),
        "event_loop_bytecodes": loop,
        "other_bytecodes": total - sum(own.values()) - loop,
        "c_calls": sum(counts.c_calls.values()) / moves,
        "functions": dict(sorted(own.items(), key=lambda item: -item[1])[:top]),
        "c_calls_by_name": {name: count / moves for name, count in counts.c_calls.most_common(top)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Python bytecodes per move, function by function (counted, not timed).")
    parser.add_argument("--moves", type=int, default=300, help="moves counted (default: 300)")
    parser.add_argument("--top", type=int, default=30, help="functions and C calls listed (default: 30)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.moves < 1:
        parser.error("--moves must be at least 1")
    figures = report(asyncio.run(run(args.moves)), args.moves, args.top)
    print(f"{args.moves} moves, Othello 8x8, no database, asyncio's loop; per move:")
    print(f"  bytecodes in server/, protocol/, games/: {figures['project_bytecodes']:,.0f}")
    print(f"  bytecodes in asyncio's loop: {figures['event_loop_bytecodes']:,.0f}; elsewhere: {figures['other_bytecodes']:,.0f}")
    print(f"  calls into C: {figures['c_calls']:.1f}")
    print("\n| function | bytecodes a move | share of the project's |\n|---|---|---|")
    for name, count in figures["functions"].items():
        print(f"| `{name}` | {count:,.1f} | {count / figures['project_bytecodes']:.1%} |")
    print("\n| C call | calls a move |\n|---|---|")
    for name, count in figures["c_calls_by_name"].items():
        print(f"| `{name}` | {count:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
