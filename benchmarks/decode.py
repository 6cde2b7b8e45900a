"""Request decoding micro benchmark: the map path against typed decoding, side by side.

For each message it times, in microseconds per message:

- requests (server side): ``parse_request(decode_body(body))`` (decode to a map,
  then ``msgspec.convert`` into the 14-type ``Request`` union: the old path)
  against ``decode_request(body)`` (straight into the struct the ``type`` tag names);
- a whole ``move`` frame through the connection: ``FrameDecoder.feed`` and
  ``parse_request`` against ``ServerConnection.receive_data``;
- server messages (client side): the map path against ``decode_server_message``;
- encoding: ``encode_frame(to_wire(message))`` against ``encode_message(message)``.

Usage::

    python benchmarks/decode.py                # about 15 s
    python benchmarks/decode.py --number 20000 --repeat 7

Each figure is the best of ``--repeat`` runs of ``--number`` calls.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import games  # noqa: E402
from protocol import (  # noqa: E402
    FrameDecoder,
    ServerConnection,
    decode_request,
    decode_server_message,
    encode_frame,
    encode_message,
    parse_request,
    parse_server_message,
    to_wire,
)
from protocol import messages as m  # noqa: E402
from protocol.codec import SERVER_TAGS  # noqa: E402
from protocol.framing import decode_body  # noqa: E402

REQUESTS: list[m.Message] = [
    m.Hello(id=1, version=m.PROTOCOL_VERSION, name="ann", token="t" * 43),
    m.ListTables(id=2, after=40),
    m.CreateTable(id=3, game="othello", options={"size": 8}, seat=0, time_control="5+3"),
    m.JoinTable(id=4, table=17),
    m.WatchTable(id=5, table=17),
    m.LeaveTable(id=6, table=17),
    m.PlayMove(id=123, table=17, move="d3", ply=12),
    m.Resign(id=8, table=17),
    m.Offer(id=9, table=17, kind="draw"),
    m.Answer(id=10, table=17, kind="draw", accept=False),
    m.Say(id=11, text="good game, well played", table=17),
    m.ListArchive(id=12, limit=20),
    m.GetRecord(id=13, table=17),
    m.Ping(id=14),
]


def othello_view() -> dict[str, Any]:
    """A mid-game Othello view, as ``moved`` carries it."""
    state = games.get("othello").new_state({"size": 8})
    for _ in range(12):
        state = state.play(state.legal_moves()[0])
    return state.view(0)


def server_messages() -> list[m.Message]:
    """Typical replies and pushes: the hot ones first."""
    table = m.TableInfo(id=17, game="othello", options={"size": 8}, seats=["ann", "bob"], status="playing",
                        spectators=2, ply=12, seed=None, time_control="5+3")
    return [
        m.Ok(id=123),
        m.Moved(table=17, seat=0, move="d3", ply=13, view=othello_view(), clock={"remaining_ms": [290000, 301000], "running": 1}),
        m.Error(id=7, code="illegal_move", message="d4 is not a legal move", field="move"),
        m.Chat(name="ann", text="good game, well played", table=17),
        m.TableUpdated(table=table),
        m.Pong(id=14),
    ]


def by_map_server_message(body: bytes) -> m.Message | None:
    frame = decode_body(body)
    kind = frame.get("type")
    return parse_server_message(frame) if isinstance(kind, str) and kind in SERVER_TAGS else None


def old_connection_move(frame: bytes) -> Callable[[], Any]:
    decoder = FrameDecoder()
    return lambda: [parse_request(body) for body in decoder.feed(frame)]


def new_connection_move(frame: bytes) -> Callable[[], Any]:
    conn = ServerConnection()
    conn.accept_hello()
    return lambda: list(conn.receive_data(frame))


def per_call_us(call: Callable[[], Any], number: int, repeat: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def row(label: str, old: Callable[[], Any], new: Callable[[], Any], args: argparse.Namespace) -> float:
    assert old() == new(), label
    old_us, new_us = per_call_us(old, args.number, args.repeat), per_call_us(new, args.number, args.repeat)
    print(f"  {label:<28} {old_us:9.2f} {new_us:9.2f} {old_us / new_us:8.1f}x")
    return old_us / new_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=3000, help="calls per timing run (default 3000)")
    parser.add_argument("--repeat", type=int, default=5, help="timing runs; the best counts (default 5)")
    args = parser.parse_args()
    header = f"  {'':<28} {'old µs':>9} {'new µs':>9} {'ratio':>9}"

    print("requests, decode one body (server side)")
    print(header)
    for request in REQUESTS:
        body = encode_message(request)[4:]
        row(request.__struct_config__.tag, lambda: parse_request(decode_body(body)), lambda: decode_request(body), args)

    print("\na move frame through the connection")
    print(header)
    move = encode_message(REQUESTS[6])
    row("move (whole frame)", old_connection_move(move), new_connection_move(move), args)

    messages = server_messages()
    print("\nserver messages, decode one body (client side)")
    print(header)
    for message in messages:
        body = encode_message(message)[4:]
        row(message.__struct_config__.tag, lambda: by_map_server_message(body), lambda: decode_server_message(body), args)

    print("\nencode one frame (server side)")
    print(header)
    for message in messages:
        row(message.__struct_config__.tag, lambda: encode_frame(to_wire(message)), lambda: encode_message(message), args)


if __name__ == "__main__":
    main()
