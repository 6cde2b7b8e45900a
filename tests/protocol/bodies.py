"""Raw MessagePack bodies for tests that must say what a well-behaved encoder never would."""

from __future__ import annotations

from typing import Any

import msgpack

__all__ = ["packed", "with_entry", "nested"]


def packed(value: Any) -> bytes:
    """``value`` as MessagePack (text as str, bytes as bin)."""
    return msgpack.packb(value, use_bin_type=True)


def with_entry(body: bytes, key: Any, value: bytes) -> bytes:
    """``body`` (a fixmap) with one more entry appended: ``key`` packed, then ``value`` as raw bytes (possibly a repeat)."""
    assert body[0] & 0xF0 == 0x80 and body[0] < 0x8F
    return bytes([body[0] + 1]) + body[1:] + packed(key) + value


def nested(depth: int) -> Any:
    """A value whose arrays nest ``depth`` levels deep."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value
