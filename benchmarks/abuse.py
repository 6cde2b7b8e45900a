"""How well claimed names and the abuse limits hold against a hostile client, measured over raw sockets.

Starts a real ``parlour serve`` process on 127.0.0.1 (a SQLite file in a
temporary directory; the connection limits raised so that they do not hide
the limits measured here) and attacks it from several loopback source
addresses (127.0.0.x), speaking MessagePack frames directly. Prints JSON:

- ``look_alikes``: of a list of names that look like the claimed ``alice``
  (invisible characters of each class before, inside and after it; confusable
  letters; case games), how many were tried and admitted, as guests and as claims;
- ``guesses_one_address``: wrong secrets sent from one address, ``--burst`` at
  once every half second, for ``--seconds`` (default 65: over a whole window of
  the address's limit): sent and checked (answered ``name_claimed``, not
  ``rate_limited``);
- ``guesses_one_name``: wrong secrets against one name from ``--addresses``
  addresses, two at once from each: sent and checked, then again: checked;
- ``lockout``: after that, whether the owner's right secret from an address that
  did not guess is admitted, and from a guessing address;
- ``tells_one_address``: tells from fresh guest sessions on one address (five
  each, one session after another) to one player for ``--tell-seconds``: sent,
  accepted and delivered;
- ``tells_many_addresses``: the same from ``--addresses`` addresses to another
  player (the recipient's budget for guests), and ``..._guests_muted`` to a
  third player who muted guests.

Usage: ``python benchmarks/abuse.py [--seconds 65] [--tell-seconds 60] [--addresses 40]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from protocol import PROTOCOL_VERSION, FrameDecoder, encode_frame  # noqa: E402
from roundtrip import ServerProcess  # noqa: E402

OPEN_CONNECTIONS = ["--connection-burst", "100000", "--connections-per-address-per-s", "100000", "--max-connections-per-address", "5000"]
"""The connection limits out of the way: each guess and each guest is a fresh connection here."""

INVISIBLE = [
    "\u034f", "\ufe00", "\ufe01", "\ufe0e", "\ufe0f", "\U000e0100", "\U000e01ef", "\u3164", "\u115f", "\u1160", "\uffa0",
    "\u17b4", "\u17b5", "\u2800", "\u180b", "\u180c", "\u180d", "\u180f", "\u200b", "\u200c", "\u200d", "\u2060",
    "\u00ad", "\ufeff", "\u2061", "\u2063", "\U0001d159", "\U0001d173", "\u061c", "\u115f\u1160",
]  # fmt: skip
"""Characters that show nothing: grapheme joiner, variation selectors, Hangul fillers, Khmer and Mongolian ones, format characters."""
CONFUSABLE = [
    "AIice", "aIice", "ALlCE", "Alice", "ALICE", "\u0430lice", "\u0251lice", "al\u0456ce", "a1ice", "alic\u0435",
    "\u0430l\u0456c\u0435", "\uff41lice", "\u24d0lice", "a\u217cice", "a|ice", "ALIC\u0395", "\u0391LICE", "al\u0131ce",
    "ali\u03f2e", "\u0251\u04cf\u0456\u0441\u0435",
]  # fmt: skip
"""Letters that look like alice's: capital i, Cyrillic and Greek letters, fullwidth, circled, Roman numerals, case."""


class Raw:
    """A plain connection from one source address that speaks frames directly."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = FrameDecoder(max_frame_bytes=1 << 22)
        self.inbox: collections.deque[dict[str, Any]] = collections.deque()
        self.ids = iter(range(1, 1 << 30))

    @classmethod
    async def open(cls, port: int, source: str) -> "Raw":
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        return cls(reader, writer)

    async def recv(self, timeout_s: float = 10.0) -> dict[str, Any]:
        while not self.inbox:
            data = await asyncio.wait_for(self.reader.read(65536), timeout_s)
            if not data:
                raise EOFError("closed")
            self.inbox.extend(self.decoder.feed(data))
        return self.inbox.popleft()

    async def request(self, type: str, **fields: Any) -> dict[str, Any]:
        request_id = next(self.ids)
        self.writer.write(encode_frame({"type": type, "id": request_id, **fields}))
        await self.writer.drain()
        while True:
            frame = await self.recv()
            if frame.get("id") == request_id:
                return frame

    async def pushes(self) -> list[dict[str, Any]]:
        """The pushes received before the reply to a ``ping`` sent now."""
        request_id = next(self.ids)
        self.writer.write(encode_frame({"type": "ping", "id": request_id}))
        await self.writer.drain()
        found = []
        while (frame := await self.recv()).get("id") != request_id:
            found.append(frame)
        return found

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


async def hello(port: int, name: str, source: str = "127.0.0.1", **fields: Any) -> tuple[str, Raw]:
    """Say hello as ``name`` from ``source``; the outcome (``welcome`` or the error code) and the connection."""
    raw = await Raw.open(port, source)
    reply = await raw.request("hello", version=PROTOCOL_VERSION, name=name, **fields)
    return (reply["type"] if reply["type"] == "welcome" else reply["code"]), raw


async def once(port: int, name: str, source: str = "127.0.0.1", **fields: Any) -> str:
    outcome, raw = await hello(port, name, source, **fields)
    await raw.close()
    return outcome


def look_alike_names() -> list[str]:
    names = []
    for char in INVISIBLE:
        names += ["alice" + char, char + "alice", "al" + char + "ice"]
    return names + CONFUSABLE


async def look_alikes(port: int) -> dict[str, Any]:
    names = look_alike_names()
    guests = [await once(port, name, "127.0.0.200") for name in names]
    claims = [await once(port, name, "127.0.0.201", claim=True, secret=secrets.token_urlsafe(32)) for name in names]
    admitted = [name for name, g, c in zip(names, guests, claims) if "welcome" in (g, c)]
    return {
        "tried": len(names),
        "admitted_as_guest": guests.count("welcome"),
        "admitted_as_claim": claims.count("welcome"),
        "admitted": [ascii(name) for name in admitted],
    }


async def guesses_one_address(port: int, seconds: float, burst: int) -> dict[str, Any]:
    outcomes: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        results = await asyncio.gather(*(once(port, "alice", "127.0.0.2", secret=f"wrong guess {i} {time.time()}") for i in range(burst)))
        outcomes.update(results)
        await asyncio.sleep(0.5)
    return {"seconds": seconds, "sent": sum(outcomes.values()), "checked": outcomes["name_claimed"]}


async def guesses_one_name(port: int, addresses: list[str], secret: str) -> dict[str, Any]:
    first = await asyncio.gather(*(once(port, "alice", source, secret=f"guess {source} {n}") for source in addresses for n in range(2)))
    again = await asyncio.gather(*(once(port, "alice", source, secret=f"again {source}") for source in addresses))
    owner_elsewhere = await once(port, "alice", "127.0.1.1", secret=secret)
    owner_at_guesser = await once(port, "alice", addresses[0], secret=secret)
    return {
        "guesses": {"addresses": len(addresses), "sent": len(first), "checked": first.count("name_claimed"), "then_sent": len(again),
                    "then_checked": again.count("name_claimed")},
        "lockout": {"owner_from_an_address_that_did_not_guess": owner_elsewhere, "owner_from_a_guessing_address": owner_at_guesser},
    }  # fmt: skip


async def tell_flood(port: int, sources: list[str], seconds: float, target: Raw, name: str, per_session: int = 5) -> dict[str, Any]:
    """Fresh guest sessions from ``sources`` (round robin) tell ``name`` (``target``) ``per_session`` times each until ``seconds`` pass."""
    sent = replies_ok = 0
    deadline = time.monotonic() + seconds
    delivered = 0
    n = 0
    while time.monotonic() < deadline:
        source = sources[n % len(sources)]
        outcome, raw = await hello(port, f"spam{n}", source)
        n += 1
        if outcome == "welcome":
            for _ in range(per_session):
                reply = await raw.request("tell", name=name, text="buy now")
                sent += 1
                replies_ok += reply["type"] == "ok"
        await raw.close()
        if n % 20 == 0:
            delivered += sum(push["type"] == "told" for push in await target.pushes())
            await asyncio.sleep(0.05)
    delivered += sum(push["type"] == "told" for push in await target.pushes())
    return {"seconds": seconds, "sessions": n, "sent": sent, "accepted": replies_ok, "delivered": delivered}


async def measure(args: argparse.Namespace, port: int) -> dict[str, Any]:
    secret = secrets.token_urlsafe(32)
    outcome, owner = await hello(port, "alice", "127.0.0.1", claim=True, secret=secret)
    assert outcome == "welcome", outcome
    await owner.close()
    result: dict[str, Any] = {"look_alikes": await look_alikes(port)}
    result["guesses_one_address"] = await guesses_one_address(port, args.seconds, args.burst)
    addresses = [f"127.0.{10 + i // 200}.{1 + i % 200}" for i in range(args.addresses)]
    result.update(await guesses_one_name(port, addresses, secret))
    floods = [
        ("tells_one_address", ["127.0.0.3"], args.tell_seconds, False),
        ("tells_many_addresses", [f"127.0.5.{i}" for i in range(1, args.addresses + 1)], args.tell_seconds, False),
        ("tells_many_addresses_guests_muted", [f"127.0.6.{i}" for i in range(1, args.addresses + 1)], min(args.tell_seconds, 10.0), True),
    ]
    for n, (label, sources, seconds, mute_guests) in enumerate(floods):
        name = f"player{n}"  # each flood has a recipient of its own, connected just before it (an idle one would time out)
        outcome, target = await hello(port, name, "127.0.0.250", claim=True, secret=secrets.token_urlsafe(32))
        assert outcome == "welcome", outcome
        if mute_guests:
            await target.request("mute_guests", mute=True)
        result[label] = await tell_flood(port, sources, seconds, target, name)
        await target.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=65.0, help="how long one address keeps guessing (default 65)")
    parser.add_argument("--burst", type=int, default=10, help="guesses one address sends at once (default 10)")
    parser.add_argument("--addresses", type=int, default=40, help="addresses guessing at one name, and telling (default 40)")
    parser.add_argument("--tell-seconds", type=float, default=60.0, help="how long each tell flood lasts (default 60)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        server = ServerProcess(storage=["--db", str(Path(directory) / "abuse.db")], options=OPEN_CONNECTIONS)
        server.start()
        try:
            print(json.dumps(asyncio.run(measure(args, server.port)), indent=2, ensure_ascii=False))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
