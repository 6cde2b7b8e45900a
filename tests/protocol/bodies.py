"""Raw MessagePack bodies for tests that must say what a well-behaved encoder never would."""

from __future__ import annotations

from typing import Any

import msgpack

__all__ = ["packed", "with_entry", "nested"]


def packed(value: Any) -> bytes:
    """``value`` as MessagePack (text as str, bytes as bin)."""
    return msgpack.packb(value, use_bin_type=True)


def with_entry(body: bytes, key: Any, value: bytes) -> bytes:
    """``body`` (a fixmap or map16) with one more entry appended: ``key`` packed, then ``value`` as raw bytes (possibly a repeat)."""
    if body[0] & 0xF0 == 0x80:
        count, entries = body[0] & 0x0F, body[1:]
    else:
        assert body[0] == 0xDE, "a fixmap or a map16"
        count, entries = int.from_bytes(body[1:3], "big"), body[3:]
    header = bytes([0x80 | count + 1]) if count + 1 < 16 else b"\xde" + (count + 1).to_bytes(2, "big")
    return header + entries + packed(key) + value


def nested(depth: int) -> Any:
    """A value whose arrays nest ``depth`` levels deep."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value
