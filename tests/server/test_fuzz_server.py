"""Fuzzing a running server: hostile connections while real games are played.

A real in-process server (real sockets, a generous request rate so many cases
get through) takes six hostile connections at once. Each sends a seeded random
mix of random bytes; frames of every request type with mutated fields (wrong
types, huge and negative ints, unicode junk, deep nesting, extra and missing
keys, bytes values, NaN); bodies that are not one map; truncated frames and
lying length headers; moves, resignations and offers at tables it does not sit
at; hellos with junk. Meanwhile two well-behaved pairs of :class:`client.Client`
play Othello and Nimble to the end, with a spectator, then a rematch each.

Checked:

- every complete frame a hostile sends gets exactly one reply, in order, with
  the request's ``id`` (``error`` without one when the id is not an integer),
  or the connection is closed; a close always follows a fatal ``error``
  (``bad_frame``, ``unsupported_version``, ``rate_limited``, ...); nothing is
  answered after a framing error but the ``bad_frame`` itself. A connection
  *reset* before the closing error fails too: the server closes with a
  half-close and discards the client's unread bytes, so a reset cannot
  destroy what it sent (``PARLOUR_FUZZ_STRICT_CLOSE=0`` only counts them);
- a move, resignation, abort, offer, answer or join at a real game's table never
  succeeds for a hostile;
- every message the server sends is valid for its type;
- each game ends with the outcome the engine gives for the moves the spectator
  saw, every view's legal moves are the engine's, and no player is dropped;
- afterwards a fresh connection is welcomed and answered, every hostile
  connection is gone from the server, and nothing was logged at ERROR level.

What the server will make of each hostile byte stream is predicted with a
length-prefix tracker plus :func:`protocol.framing.decode_body` (is a complete
body one valid map?); how each request is judged is up to the server.

Seeded: ``PARLOUR_FUZZ_SEED`` (default 1) and ``PARLOUR_FUZZ_CASES`` (hostile
cases in all, default 6000; the hostiles go on while the games last). ``pytest
-s`` prints what was sent and received. The end has a hypothesis property for
the 32-level nesting rule, which ``tests/protocol`` does not cover (its
properties already cover ``parse_request`` on arbitrary maps).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import random
import struct
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from client import Client
from protocol import PROTOCOL_VERSION, FrameDecoder, FrameError, MessageError, encode_frame, parse_server_message
from protocol import messages as m
from protocol.framing import DEFAULT_MAX_FRAME_BYTES, MAX_NESTING, decode_body
from server.app import Server, ServerConfig
from server.net.limits import Limits

SEED = int(os.environ.get("PARLOUR_FUZZ_SEED", "1"))
CASES = int(os.environ.get("PARLOUR_FUZZ_CASES", "6000"))
HOSTILES = 6
TIME_CAP_S = 40.0
"""The hostiles stop after this long even if their quota is not sent (the case count check then fails)."""
STRICT_CLOSE = os.environ.get("PARLOUR_FUZZ_STRICT_CLOSE", "1") == "1"
"""Fail, rather than count, a reset that lost the error the server closed with (see the module docstring)."""
SETTLE_S = 5.0
"""How long a hostile waits for the replies to what it sent."""

REPLY_TYPES = frozenset({"welcome", "ok", "pong", "tables", "table_joined", "archive", "record", "error", "player", "ranking",
                         "players", "challenge_sent", "seek_posted", "seeks", "mutes", "identity"})
FATAL_CODES = frozenset({"bad_frame", "unsupported_version", "rate_limited", "timeout", "too_many_connections",
                         "shutting_down", "bad_password", "signed_in_elsewhere"})
"""Error codes after which the server closes the connection (``signed_in_elsewhere``: another connection took the session)."""
SERVER_TAGS = frozenset(cls.__struct_config__.tag for cls in m.SERVER_TYPES)
REQUEST_TAGS = [cls.__struct_config__.tag for cls in m.REQUEST_TYPES]
MUST_FAIL_AT_REAL_TABLES = frozenset({"move", "resign", "abort", "offer", "answer", "join_table"})
MAX_BODY = DEFAULT_MAX_FRAME_BYTES

# --- the shared state of one fuzz run -----------------------------------------------------------


@dataclass
class Stats:
    """What the hostiles sent and got back, over the whole run."""

    cases: collections.Counter[str] = field(default_factory=collections.Counter)
    requests: collections.Counter[str] = field(default_factory=collections.Counter)
    replies: collections.Counter[str] = field(default_factory=collections.Counter)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    frames_sent: int = 0
    bytes_sent: int = 0
    pushes: int = 0
    connections: int = 0
    closed_by_server: int = 0
    closed_by_us: int = 0
    unanswered_at_close: int = 0
    lost_to_reset: int = 0
    violations: list[str] = field(default_factory=list)

    def violation(self, text: str) -> None:
        if len(self.violations) < 50:
            self.violations.append(text)

    def report(self) -> str:
        return (
            f"fuzz seed={SEED}: {sum(self.cases.values())} cases, {self.frames_sent} complete frames, "
            f"{self.bytes_sent:,} bytes on {self.connections} connections; closed by the server "
            f"{self.closed_by_server}, by the hostile {self.closed_by_us}; {sum(self.errors.values())} errors "
            f"received, {self.pushes} pushes, {self.unanswered_at_close} frames unanswered at a close, "
            f"{self.lost_to_reset} resets that lost the closing error\n"
            f"  cases: {dict(sorted(self.cases.items()))}\n"
            f"  requests: {dict(sorted(self.requests.items()))}\n"
            f"  replies: {dict(sorted(self.replies.items()))}\n"
            f"  errors: {dict(sorted(self.errors.items()))}"
        )


@dataclass
class Context:
    """What the hostiles know of the world: the real games' tables, and when to stop."""

    port: int
    stats: Stats
    real_tables: set[int] = field(default_factory=set)
    games_done: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    deadline: float = 0.0


# --- junk ------------------------------------------------------------------------------------------

_CODE_POINT_RANGES = [(0, 0x1F), (0x20, 0x7E), (0x80, 0x24F), (0x300, 0x36F), (0x200B, 0x200F), (0x202A, 0x202E),
                      (0x2066, 0x2069), (0x3000, 0x3000), (0x4E00, 0x4E2F), (0xE000, 0xE00F), (0xFFF9, 0xFFFF),
                      (0x1F300, 0x1F64F), (0x10FFF0, 0x10FFFF)]


def junk_text(rng: random.Random, most: int = 40) -> str:
    """Text of control, format, combining, bidi, private-use and astral characters (never a surrogate)."""
    chars = []
    for _ in range(rng.randint(0, most)):
        low, high = rng.choice(_CODE_POINT_RANGES)
        chars.append(chr(rng.randint(low, high)))
    return "".join(chars)


def nested(rng: random.Random, depth: int) -> Any:
    """A list/map chain ``depth`` levels deep."""
    value: Any = rng.choice([1, "x", None, b"\x00"])
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def junk_value(rng: random.Random) -> Any:
    """A value of a random wrong (or right) type for any field."""
    choices: list[Callable[[], Any]] = [
        lambda: None, lambda: True, lambda: False, lambda: 0, lambda: -1, lambda: 1, lambda: 2,
        lambda: 2**53 + 1, lambda: 2**63 - 1, lambda: -(2**63), lambda: 2**64 - 1, lambda: rng.randint(-5, 100),
        lambda: 1.0, lambda: float("nan"), lambda: float("inf"), lambda: -0.0, lambda: 1e308,
        lambda: "", lambda: "1", lambda: "x" * rng.choice([64, 65, 257, 501, 5000]), lambda: junk_text(rng),
        lambda: rng.randbytes(rng.randint(0, 20)), lambda: [], lambda: [1, "2", None], lambda: {},
        lambda: {"size": 8, junk_text(rng, 5): junk_text(rng, 5)}, lambda: nested(rng, rng.randint(1, 31)),
        lambda: [junk_text(rng, 5) for _ in range(rng.randint(0, 40))],
    ]
    return rng.choice(choices)()


# --- hostile cases: each one is bytes to write ----------------------------------------------------


class Ids:
    """Request ids of one hostile: counting up, like a client would."""

    def __init__(self) -> None:
        self._next = 0

    def __call__(self) -> int:
        self._next += 1
        return self._next


def a_table(rng: random.Random, ctx: Context) -> Any:
    """A table id: usually one of the real games', else a plausible or absurd one."""
    roll = rng.random()
    if roll < 0.6 and ctx.real_tables:
        return rng.choice(sorted(ctx.real_tables))
    if roll < 0.9:
        return rng.randint(1, 40)
    return rng.choice([0, -1, 2**53 - 1, 2**53, 2**64 - 1])


_MOVES = ["d3", "c4", "f5", "e6", "a1", "pass", "2-1", "3-1", "12-11", "d3 ", "D3", "x" * 64, "😀", "1-0", "\x00"]
_GAMES = ["othello", "nimble", "hexapawn", "morris", "mingmang", "tactego", "chess", "", "OTHELLO"]
_OPTIONS = [{}, {"size": 6}, {"size": 7}, {"size": 99}, {"n": 5, "p": 2}, {"board": [0, 1, 2]}, {"board": list(range(100))},
            {"max_plies": 1}, {"nope": 1}, {"size": "8"}, {"board": [0] * 5}, {"pieces": "x"}, {"hidden": True}]


def request_map(kind: str, rng: random.Random, ctx: Context, rid: int, name: str) -> dict[str, Any]:
    """A valid-looking request of type ``kind`` (valid when nothing is mutated afterwards)."""
    table = a_table(rng, ctx)
    fields: dict[str, Callable[[], dict[str, Any]]] = {
        "hello": lambda: {"version": PROTOCOL_VERSION, "name": name},
        "list_tables": lambda: {"after": rng.choice([None, 0, 1, 2**53 - 1]), "limit": rng.choice([1, 2, 50, 100])},
        "create_table": lambda: {"game": rng.choice(_GAMES), "options": rng.choice(_OPTIONS),
                                 "seed": rng.choice([None, "s", 7, -(2**63)]), "seat": rng.choice([0, 1, None]),
                                 "time_control": rng.choice([None, "5+3", "0+0", "1441+0", "x"]), "rated": rng.random() < 0.2},
        "join_table": lambda: {"table": table, "seat": rng.choice([0, 1, None])},
        "watch_table": lambda: {"table": table},
        "leave_table": lambda: {"table": table},
        "move": lambda: {"table": table, "move": rng.choice(_MOVES), "ply": rng.randint(0, 80)},
        "resign": lambda: {"table": table},
        "abort": lambda: {"table": table},
        "offer": lambda: {"table": table, "kind": rng.choice(["draw", "takeback", "rematch"]), "plies": rng.randint(1, 3)},
        "answer": lambda: {"table": table, "kind": rng.choice(["draw", "takeback", "rematch"]), "accept": rng.random() < 0.5},
        "say": lambda: {"text": junk_text(rng) or "hi", "table": rng.choice([None, table])},
        "list_archive": lambda: {"limit": rng.randint(1, 200), "offset": rng.randint(0, 99)},
        "get_record": lambda: {"table": table},
        "watch_lobby": lambda: {"watch": rng.random() < 0.5},
        "ping": dict,
        "identify": dict,
        "hint": lambda: {"table": table},
        "who": lambda: {"game": rng.choice([None, *_GAMES[:2]]), "sort": rng.choice(["name", "rating"]), "offset": rng.randint(0, 5),
                        "limit": rng.choice([1, 100])},
        "challenge": lambda: {"name": rng.choice([name, "h0c0", "h1c1", "nobody", ""]), "game": rng.choice(_GAMES),
                              "options": rng.choice(_OPTIONS), "seat": rng.choice([0, 1, None]), "time_control": rng.choice([None, "5+3", "x"])},
        "accept_challenge": lambda: {"challenge": rng.randint(1, 20)},
        "decline_challenge": lambda: {"challenge": rng.randint(1, 20)},
        "withdraw_challenge": lambda: {"challenge": rng.randint(1, 20)},
        "seek": lambda: {"game": rng.choice(_GAMES), "options": rng.choice(_OPTIONS), "time_control": rng.choice([None, "5+3", "x"]),
                         "rating_min": rng.choice([None, 0, 1500]), "rating_max": rng.choice([None, 1400, 10_000])},
        "unseek": lambda: {"seek": rng.choice([None, rng.randint(1, 20)])},
        "list_seeks": lambda: {"after": rng.choice([None, 0, 3]), "limit": rng.choice([1, 100])},
        "tell": lambda: {"name": rng.choice([name, "h0c0", "h1c1", "nobody"]), "text": junk_text(rng) or "hi"},
        "mute": lambda: {"name": rng.choice([name, "h0c0", "nobody", ""]), "mute": rng.random() < 0.5},
        "list_mutes": lambda: {},
        "set_password": lambda: {"password": rng.choice([None, "short", "a long enough password"]), "current": rng.choice([None, "", "a guess at it"])},
        "change_secret": lambda: {"current": rng.choice(["", "a guess at the secret"]), "secret": rng.choice(["short", "a new secret of some length"])},
        "mute_guests": lambda: {"mute": rng.random() < 0.5},
        "finger": lambda: {"name": rng.choice([name, "ann", junk_text(rng) or "x", "Computer 1"])},
        "leaderboard": lambda: {"game": rng.choice(_GAMES) or "x", "family": rng.choice([None, "blitz", "untimed"]),
                                "limit": rng.randint(1, 50), "offset": rng.randint(0, 20), "provisional": rng.random() < 0.5},
    }
    return {"type": kind, "id": rid, **fields[kind]()}


def mutate(wire: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Replace, drop or add a few fields (``type`` and ``id`` included) with junk."""
    wire = dict(wire)
    for _ in range(rng.choice([1, 1, 2, 3])):
        roll = rng.random()
        keys = list(wire)
        if roll < 0.45 and keys:
            wire[rng.choice(keys)] = junk_value(rng)
        elif roll < 0.6 and keys:
            del wire[rng.choice(keys)]
        elif roll < 0.75:
            wire["type"] = rng.choice([*REQUEST_TAGS, "pong", "welcome", "", "PING", junk_text(rng, 8)])
        elif roll < 0.85:
            wire["id"] = rng.choice([-1, -(2**63), 2**53 + 1, 2**64 - 1, 0, None, "7", 7.0, True, float("nan")])
        else:
            for _ in range(rng.randint(1, 5)):
                wire[junk_text(rng, 12)] = junk_value(rng)
    return wire


def pack(wire: dict[str, Any]) -> bytes:
    return encode_frame(wire)


def frame_of(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def deep_frame(rid: int, depth: int) -> bytes:
    """A ping whose extra field nests so that the body is ``depth`` levels deep (33+ is refused)."""
    inner = b"\x91" * (depth - 1) + b"\x01"  # the body's map is level 1
    body = b"\x83" + msgpack.packb("type") + msgpack.packb("ping") + msgpack.packb("id") + msgpack.packb(rid)
    return frame_of(body + msgpack.packb("x") + inner)


def bad_body(rng: random.Random, rid: int) -> bytes:
    """A frame whose body is not exactly one map with text keys and no extension types."""
    ping = msgpack.packb({"type": "ping", "id": rid})
    return frame_of(rng.choice([
        b"", b"\xc1", msgpack.packb([1, 2]), msgpack.packb(rid), msgpack.packb("ping"), msgpack.packb(None),
        b"\x81\x01\x02", b"\x81\xc4\x04type\xa4ping", ping + b"\x00", ping + ping, ping[:-1],
        b"\x81\xa1x\xd6\x05data", msgpack.packb({"type": "ping", "id": rid, "t": msgpack.Timestamp(1, 0)}),
        b"\x82\xa4type\xa4ping\xa2id\xa2\xff\xfe", b"\xdf\xff\xff\xff\xff", rng.randbytes(rng.randint(1, 30)),
    ]))


def big_ping(rid: int, over: int) -> bytes:
    """A ping padded to exactly the size limit (``over`` = 0) or ``over`` bytes beyond it."""
    base = len(msgpack.packb({"type": "ping", "id": rid, "pad": "x" * 300}))  # str16, as the padded one
    return pack({"type": "ping", "id": rid, "pad": "x" * (300 + MAX_BODY + over - base)})


def lying_frame(rng: random.Random, wire: dict[str, Any]) -> bytes:
    """A frame whose length header is not its body's length."""
    body = msgpack.packb(wire, use_bin_type=True)
    length = rng.choice([0, 1, len(body) - 1, len(body) + 1, len(body) + rng.randint(2, 300), MAX_BODY + 1, 2**32 - 1])
    return struct.pack(">I", max(0, length)) + body


def junk_hello(rng: random.Random, rid: int, name: str) -> dict[str, Any]:
    """A hello with a junk name, version, token or password (sometimes all fine)."""
    wire: dict[str, Any] = {"type": "hello", "id": rid, "version": PROTOCOL_VERSION, "name": name}
    if rng.random() < 0.5:
        wire["name"] = rng.choice(["", " ", "a" * 25, "a" * 257, " x", "x  y", "ann\x00", "\u202eann", "ａｎｎ",
                                   junk_text(rng, 30), "x\ny", "\u200b"])
    if rng.random() < 0.3:
        wire["version"] = rng.choice([0, PROTOCOL_VERSION + 1, -1, 2**64 - 1, "1", 1.0, True, None])
    if rng.random() < 0.3:
        wire["token"] = rng.choice(["", "x" * 128, "x" * 129, junk_text(rng, 20), 5, None])
    if rng.random() < 0.2:
        wire["password"] = rng.choice(["", "x" * 257, junk_text(rng, 10), b"pw"])
    return wire


def make_case(rng: random.Random, ctx: Context, ids: Ids, name: str) -> tuple[str, bytes]:
    """One hostile case: (label, bytes to write)."""
    roll = rng.random()
    rid = ids()
    if roll < 0.40:
        wire = request_map(rng.choice(REQUEST_TAGS), rng, ctx, rid, name)
        return ("mutated", pack(mutate(wire, rng))) if rng.random() < 0.75 else ("valid", pack(wire))
    if roll < 0.55:
        wire = request_map(rng.choice(sorted(MUST_FAIL_AT_REAL_TABLES)), rng, ctx, rid, name)
        if ctx.real_tables:
            wire["table"] = rng.choice(sorted(ctx.real_tables))
        return "at_real_table", pack(wire)
    if roll < 0.62:
        return "junk_hello", pack(junk_hello(rng, rid, name))
    if roll < 0.68:
        return "deep", deep_frame(rid, rng.choice([MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 200, 5000]))
    if roll < 0.74:
        return "bad_body", bad_body(rng, rid)
    if roll < 0.80:
        frame = pack(request_map(rng.choice(REQUEST_TAGS), rng, ctx, rid, name))
        return "truncated", frame[: rng.randint(1, len(frame) - 1)]
    if roll < 0.86:
        return "lying_length", lying_frame(rng, request_map("ping", rng, ctx, rid, name))
    if roll < 0.92:
        data = rng.randbytes(rng.randint(1, 120))
        return "random_bytes", (b"\x00\x00" + data if rng.random() < 0.5 else data)
    if roll < 0.94:
        return "big", big_ping(rid, rng.choice([0, 0, 1]))
    burst = b"".join(pack({"type": "ping", "id": ids()}) for _ in range(rng.randint(20, 80)))
    return "ping_burst", burst


# --- what the server will make of a byte stream -----------------------------------------------------


class Framing:
    """Tracks the bytes a hostile sent the way the server's decoder reads them.

    ``feed`` returns the complete bodies decoded as the server would: a map, or
    ``None`` where the framing breaks (after which nothing more is read).
    """

    def __init__(self) -> None:
        self.tail = bytearray()
        self.broken = False

    def feed(self, data: bytes) -> list[dict[str, Any] | None]:
        out: list[dict[str, Any] | None] = []
        if self.broken:
            return out
        self.tail += data
        while len(self.tail) >= 4:
            (length,) = struct.unpack_from(">I", self.tail)
            if length > MAX_BODY:
                return self._break(out)
            if len(self.tail) < 4 + length:
                break
            body = bytes(self.tail[4 : 4 + length])
            del self.tail[: 4 + length]
            try:
                out.append(decode_body(body))
            except FrameError:
                return self._break(out)
        return out

    def _break(self, out: list[dict[str, Any] | None]) -> list[dict[str, Any] | None]:
        self.broken = True
        self.tail.clear()
        out.append(None)
        return out

    def filler(self) -> bytes:
        """Bytes that complete the frame in progress (its body then never decodes): b"" if none is."""
        if not self.tail:
            return b""
        if len(self.tail) < 4:
            return b"\x00" * (4 - len(self.tail))
        (length,) = struct.unpack_from(">I", self.tail)
        return b"\xc1" * (4 + length - len(self.tail))


@dataclass(frozen=True)
class Expected:
    """The reply one complete frame must get."""

    id: int | None
    label: str
    must_fail: bool


class Hostile(asyncio.Protocol):
    """One hostile connection: writes cases, reads and checks every frame the server sends."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.stats = ctx.stats
        self.framing = Framing()
        self.decoder = FrameDecoder(max_frame_bytes=1 << 22)
        self.expected: collections.deque[Expected] = collections.deque()
        self.fatal: str | None = None
        self.closed = asyncio.Event()
        self.closed_by_us = False
        self.changed = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self.transport: asyncio.Transport | None = None
        self.port = 0
        self.history: collections.deque[str] = collections.deque(maxlen=6)
        self.last_reply: str = "-"

    # asyncio.Protocol callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.port = transport.get_extra_info("sockname")[1]

    def data_received(self, data: bytes) -> None:
        try:
            frames = self.decoder.feed(data)
        except FrameError as exc:
            self.stats.violation(f"the server sent bad framing: {exc}")
            return
        for frame in frames:
            self._received(frame)
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed_by_us:
            self.stats.closed_by_server += 1
            self.stats.unanswered_at_close += len(self.expected)
            if self.fatal is None and isinstance(exc, ConnectionResetError) and not STRICT_CLOSE:
                self.stats.lost_to_reset += 1  # see STRICT_CLOSE
            elif self.fatal is None:
                self.stats.violation(
                    f"the server closed connection :{self.port} without a fatal error first ({exc!r}); last sent "
                    f"{list(self.history)}, last reply {self.last_reply}, {len(self.expected)} unanswered, "
                    f"framing broken: {self.framing.broken}"
                )
        self.closed.set()
        self._writable.set()
        self._wake()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # checking what arrives

    def _wake(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def _received(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind in SERVER_TAGS:
            try:
                parse_server_message(frame)
            except MessageError as exc:
                self.stats.violation(f"the server sent an invalid {kind!r}: {exc} in {frame!r:.300}")
        if kind not in REPLY_TYPES:
            self.stats.pushes += 1
            return
        self.stats.replies[str(kind)] += 1
        self.last_reply = f"{frame!r:.120}"
        code = frame.get("code") if kind == "error" else None
        if code is not None:
            self.stats.errors[str(code)] += 1
        if code in FATAL_CODES and not (code == "rate_limited" and frame.get("id") is not None):
            self.fatal = str(code)
        if kind == "error" and frame.get("id") is None and code != "bad_message":
            if code == "bad_frame" and self.expected:
                self.stats.violation(f"bad_frame came before the replies to {len(self.expected)} earlier frames")
            return  # about the connection, not an answer to one frame
        self._match(frame, code)

    def _match(self, frame: dict[str, Any], code: Any) -> None:
        if not self.expected:
            self.stats.violation(f"a reply to nothing: {frame!r:.300}")
            return
        want = self.expected.popleft()
        if frame.get("id") != want.id or type(frame.get("id")) is not type(want.id):
            self.stats.violation(f"reply {frame!r:.200} does not answer the {want.label} frame with id {want.id!r}")
        elif want.must_fail and frame.get("type") != "error":
            self.stats.violation(f"a hostile's {want.label} at a real game's table succeeded: {frame!r:.200}")

    # sending

    async def send(self, label: str, data: bytes) -> None:
        """Write ``data`` and expect a reply to every frame it completes."""
        self.stats.cases[label] += 1
        self.stats.bytes_sent += len(data)
        self.history.append(f"{label}:{len(data)}B")
        for body in self.framing.feed(data):
            if body is not None:
                self._expect(body, label)
        assert self.transport is not None
        if not self.closed.is_set():
            self.transport.write(data)
            await self._writable.wait()

    def _expect(self, body: dict[str, Any], label: str) -> None:
        self.stats.frames_sent += 1
        kind = body.get("type") if isinstance(body.get("type"), str) else None
        self.stats.requests[kind if kind in REQUEST_TAGS else "(other)"] += 1
        table = body.get("table")
        at_real = type(table) is int and table in self.ctx.real_tables
        must_fail = kind in MUST_FAIL_AT_REAL_TABLES and at_real
        rid = body.get("id") if type(body.get("id")) is int else None
        self.expected.append(Expected(rid, f"{label}/{kind!r:.40}", must_fail))

    async def settle(self) -> None:
        """Wait until every frame sent so far is answered, or the connection closed."""
        deadline = time.monotonic() + SETTLE_S
        while self.expected and not self.closed.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stats.violation(f"no reply within {SETTLE_S} s to {len(self.expected)} frames, first {self.expected[0]}")
                return
            await _wait(self.changed, remaining)

    async def wait_closed_by_server(self) -> None:
        """After a framing error: the server must close the connection."""
        await self.settle()
        try:
            await asyncio.wait_for(self.closed.wait(), SETTLE_S)
        except asyncio.TimeoutError:
            self.stats.violation("the connection stayed open after a framing error")

    async def close(self) -> None:
        if not self.closed.is_set():
            self.closed_by_us = True
            self.stats.closed_by_us += 1
            assert self.transport is not None
            self.transport.close()
            await self.closed.wait()


async def _wait(event: asyncio.Event, timeout_s: float) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout_s)
    except asyncio.TimeoutError:
        pass


async def open_hostile(ctx: Context) -> Hostile:
    loop = asyncio.get_running_loop()
    _, conn = await loop.create_connection(lambda: Hostile(ctx), "127.0.0.1", ctx.port)
    ctx.stats.connections += 1
    return conn


async def hostile_connection(conn: Hostile, rng: random.Random, ctx: Context, name: str, budget: int) -> int:
    """Send cases in small pipelined batches, checking the replies after each; return the cases sent."""
    ids = Ids()
    sent = 0
    if rng.random() < 0.75:
        await conn.send("hello", pack({"type": "hello", "id": ids(), "version": PROTOCOL_VERSION, "name": name}))
    while sent < budget and not conn.closed.is_set() and not conn.framing.broken:
        for _ in range(rng.randint(1, 6)):
            await conn.send(*make_case(rng, ctx, ids, name))
            sent += 1
            if conn.framing.broken or conn.framing.tail or conn.closed.is_set():
                break
        if conn.framing.tail and rng.random() < 0.2:
            await conn.settle()
            await conn.close()  # abandon a half-sent frame
            return sent
        while conn.framing.tail and not conn.closed.is_set():
            await conn.send("filler", conn.framing.filler())
        await conn.settle()
    if conn.framing.broken:
        await conn.wait_closed_by_server()
    else:
        await conn.settle()
    await conn.close()
    return sent


async def hostile(index: int, ctx: Context, quota: int) -> None:
    """Connect, misbehave, get dropped, reconnect: until the quota is sent and the games are over."""
    rng = random.Random(f"{SEED}-{index}")
    sent = connection = 0
    while (sent < quota or not ctx.games_done.is_set()) and time.monotonic() < ctx.deadline:
        connection += 1
        conn = await open_hostile(ctx)
        sent += await hostile_connection(conn, rng, ctx, f"h{index}c{connection}", rng.randint(5, 120))
        if sent >= 100:
            ctx.started.set()


# --- the well-behaved players ---------------------------------------------------------------------------


class Seen:
    """Every push one well-behaved client receives that concerns games, with a wake-up."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.views: dict[tuple[int, int], dict[str, Any]] = {}
        self.moved: dict[int, list[m.Moved]] = collections.defaultdict(list)
        self.over: dict[int, m.GameOver] = {}
        self.rematch: dict[int, m.RematchStarted] = {}
        self.changed = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for event in self.client.events():
            if isinstance(event, m.GameStarted):
                self.views[(event.table, event.view["ply"])] = event.view
            elif isinstance(event, m.Moved):
                self.views[(event.table, event.ply)] = event.view
                self.moved[event.table].append(event)
            elif isinstance(event, m.GameOver):
                self.over[event.table] = event
            elif isinstance(event, m.RematchStarted):
                self.rematch[event.previous] = event
                self.views[(event.table.id, event.view["ply"])] = event.view
            self.changed.set()
            self.changed = asyncio.Event()

    async def until(self, ready: Callable[[], Any], what: str, timeout_s: float = 20.0) -> Any:
        """Wait until ``ready()`` is truthy; return it."""
        deadline = time.monotonic() + timeout_s
        while not (value := ready()):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{self.client.name}: no {what} within {timeout_s} s"
            await _wait(self.changed, remaining)
        return value

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


@dataclass
class Pair:
    """Two players (by seat) and a spectator at one table, with everything they saw."""

    game: str
    options: dict[str, Any]
    players: list[Seen]
    spectator: Seen
    table: int
    seed: str | int | None
    results: list[tuple[list[str], dict[str, Any]]] = field(default_factory=list)


async def seat_pair(clients: list[Client], spectator: Seen, game: str, options: dict[str, Any], seed: Any) -> Pair:
    """Create a table, sit both players, and have the spectator watch it (all before any hostile runs)."""
    seen = [Seen(client) for client in clients]
    joined = await clients[0].create_table(game, options, seed=seed, seat=0)
    await clients[1].join_table(joined.table.id, seat=1)
    watching = await spectator.client.watch_table(joined.table.id)
    assert watching.moves == []
    return Pair(game, options, seen, spectator, joined.table.id, joined.table.seed)


async def play_to_the_end(pair: Pair, rng: random.Random) -> None:
    """Play the game at ``pair.table`` with moves chosen from each mover's view; check against the engine."""
    engine = games.get(pair.game)
    state = engine.new_state(pair.options, pair.seed)
    table = pair.table
    while state.outcome is None:
        mover = state.to_move
        assert mover is not None
        view = await pair.players[mover].until(lambda: pair.players[mover].views.get((table, state.ply)), f"view at ply {state.ply}")
        assert view["to_move"] == mover and view["legal_moves"] == state.legal_moves(), (view, state.legal_moves())
        move = rng.choice(view["legal_moves"])
        await asyncio.wait_for(pair.players[mover].client.move(table, move, ply=state.ply), SETTLE_S)
        state = state.play(move)
        while state.outcome is None and state.legal_moves() == ["pass"]:
            state = state.play("pass")
    expected = state.outcome.to_dict()
    for seen in [*pair.players, pair.spectator]:
        over = await seen.until(lambda: seen.over.get(table), "game_over")
        assert over.outcome == expected, (seen.client.name, over.outcome, expected)
    moves = [event.move for event in pair.spectator.moved[table]]
    assert [event.ply for event in pair.spectator.moved[table]] == list(range(1, len(moves) + 1))
    assert replay(engine, pair.options, pair.seed, moves) == expected
    pair.results.append((moves, expected))


def replay(engine: games.Game, options: dict[str, Any], seed: Any, moves: list[str]) -> dict[str, Any] | None:
    """The outcome the engine gives for ``moves`` played from the start."""
    state = engine.new_state(options, seed)
    for move in moves:
        state = state.play(move)
    return state.outcome.to_dict() if state.outcome is not None else None


async def rematch(pair: Pair, ctx: Context) -> None:
    """Both players offer a rematch; switch ``pair`` to the new table (seats swapped), watched again."""
    old = pair.table
    await pair.players[0].client.offer(old, "rematch")
    await pair.players[1].client.offer(old, "rematch")  # offering what the opponent offers accepts it
    started = [await seen.until(lambda: seen.rematch.get(old), "rematch_started") for seen in pair.players]
    new = started[0].table.id
    ctx.real_tables.add(new)
    assert started[0].seat == 1 and started[1].seat == 0 and started[1].table.id == new
    pair.players.reverse()
    pair.table, pair.seed = new, started[0].table.seed
    await pair.spectator.client.watch_table(new)


async def play_games(pair: Pair, ctx: Context, count: int) -> None:
    rng = random.Random(f"{SEED}-{pair.game}")
    await _wait(ctx.started, 10.0)  # let the hostiles get going first
    for number in range(count):
        if number:
            await rematch(pair, ctx)
        await play_to_the_end(pair, rng)


# --- the test -----------------------------------------------------------------------------------------------


@pytest.fixture
async def fuzz_server() -> AsyncIterator[Server]:
    limits = Limits(
        requests_per_s=100_000.0,
        request_burst=100_000,
        connections_per_address_per_s=100_000.0,  # every hostile connects from 127.0.0.1, and quickly
        connection_burst=100_000,
        max_tables_per_address=100_000,
    )
    srv = Server(ServerConfig(host="127.0.0.1", port=0, server_name="fuzz", grace_s=0.3, limits=limits))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()


async def connect_players(port: int) -> tuple[list[Client], Client]:
    names = ["ann-o", "bob-o", "cat-n", "dan-n"]
    players = [await Client.connect("127.0.0.1", port, name=name) for name in names]
    return players, await Client.connect("127.0.0.1", port, name="eve-watch")


async def run_fuzz(server: Server, ctx: Context) -> list[Pair]:
    players, spectator = await connect_players(server.port)
    watcher = Seen(spectator)
    pairs = [
        await seat_pair(players[:2], watcher, "othello", {"size": 8}, None),
        await seat_pair(players[2:], watcher, "nimble", {"n": 12, "p": 3}, f"fuzz-{SEED}"),
    ]
    ctx.real_tables.update(pair.table for pair in pairs)
    quota = max(1, CASES // HOSTILES)
    hostiles = [asyncio.create_task(hostile(i, ctx, quota)) for i in range(HOSTILES)]
    try:
        await asyncio.gather(*(play_games(pair, ctx, 2) for pair in pairs))
    finally:
        ctx.games_done.set()
        await asyncio.gather(*hostiles)
    for client in [*players, spectator]:
        assert not client.closed.is_set(), f"{client.name} was disconnected: {client.close_reason}"
    for seen in [*(s for pair in pairs for s in pair.players), watcher]:
        await seen.stop()
    for client in [*players, spectator]:
        await client.close()
    return pairs


async def check_still_serving(server: Server) -> None:
    fresh = await Client.connect("127.0.0.1", server.port, name="fresh")
    await asyncio.wait_for(fresh.ping(), SETTLE_S)
    assert isinstance(await asyncio.wait_for(fresh.list_tables(), SETTLE_S), list)
    deadline = time.monotonic() + 5.0
    while len(server.peers) > 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert len(server.peers) == 1, f"connections left behind: {server.peers}"
    await fresh.close()


def server_failures(records: list[logging.LogRecord]) -> list[str]:
    """Log records that show the server (or asyncio) failed rather than refused."""
    return [
        f"{r.name} {r.levelname}: {r.getMessage()}"
        for r in records
        if r.levelno >= logging.ERROR or r.exc_info or (r.name.startswith("server") and "failed" in r.getMessage())
    ]


async def test_hostile_connections_do_not_disturb_real_games(fuzz_server: Server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    stats = Stats()
    ctx = Context(port=fuzz_server.port, stats=stats, deadline=time.monotonic() + TIME_CAP_S)
    started = time.monotonic()
    pairs = await asyncio.wait_for(run_fuzz(fuzz_server, ctx), TIME_CAP_S + 30)
    print(f"\n{stats.report()}")
    print(f"  games: {[(p.game, len(moves), outcome) for p in pairs for moves, outcome in p.results]}")
    print(f"  {time.monotonic() - started:.1f} s")
    assert stats.violations == [], "\n".join(stats.violations)
    await check_still_serving(fuzz_server)
    assert server_failures(caplog.records) == []
    assert all(len(pair.results) == 2 for pair in pairs)
    assert sum(stats.cases.values()) >= CASES and stats.frames_sent >= CASES // 2
    assert sum(stats.errors.values()) >= CASES // 4 and stats.replies["pong"] > 0 and stats.replies["welcome"] > 0
    assert stats.closed_by_server >= HOSTILES and stats.connections > 2 * HOSTILES
    assert {"bad_frame", "bad_message", "not_seated", "handshake_required", "bad_name"} <= set(stats.errors)
    assert set(REQUEST_TAGS) <= set(stats.requests)


# --- nesting: the 32-level rule, as a property -------------------------------------------------------------


def nest_bytes(shape: list[bool], leaf: bytes = b"\x01") -> bytes:
    """MessagePack bytes for a chain of containers, outermost first: True a one-entry map, False a one-item array."""
    out = b""
    for is_map in shape:
        out += b"\x81\xa1k" if is_map else b"\x91"
    return out + leaf


@settings(max_examples=300, deadline=None)
@given(shape=st.lists(st.booleans(), min_size=0, max_size=80))
def test_nesting_up_to_32_levels_decodes_and_deeper_is_a_frame_error(shape: list[bool]) -> None:
    body = b"\x82\xa4type\xa4ping" + b"\xa1x" + nest_bytes(shape)  # the body's own map is level 1
    depth = 1 + len(shape)
    if depth <= MAX_NESTING:
        assert decode_body(body)["type"] == "ping"
    else:
        with pytest.raises(FrameError, match="deeper than 32 levels"):
            decode_body(body)


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_absurd_nesting_is_a_frame_error_not_a_crash(depth: int) -> None:
    body = b"\x81\xa1x" + b"\x91" * depth + b"\x01"
    with pytest.raises(FrameError):
        decode_body(body)
