"""Length-prefixed MessagePack framing, without I/O.

A frame is a 4-byte big-endian unsigned length ``N`` followed by exactly ``N``
bytes holding one MessagePack map. :class:`FrameDecoder` takes bytes as they
arrive and yields decoded maps; it refuses an oversize frame as soon as its
length prefix is read, before buffering its body.
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

from .errors import FrameError

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "MAX_SERVER_FRAME_BYTES", "HEADER_BYTES", "FrameDecoder", "encode_frame"]

DEFAULT_MAX_FRAME_BYTES = 65536
"""Largest frame body accepted by default, in bytes (64 KiB)."""

MAX_SERVER_FRAME_BYTES = 4 * DEFAULT_MAX_FRAME_BYTES
"""Largest frame body a server sends, in bytes (256 KiB): every client must accept frames this large."""

HEADER_BYTES = 4
_HEADER = struct.Struct(">I")


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"MessagePack extension type {code} is not allowed")


def encode_frame(payload: dict[str, Any]) -> bytes:
    """Return ``payload`` packed as one frame (length prefix + MessagePack map).

    Raises:
        TypeError: if ``payload`` holds something MessagePack cannot encode.
    """
    body = msgpack.packb(payload, use_bin_type=True)
    return _HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict[str, Any]:
    """Decode one frame body into a map.

    Raises:
        FrameError: if the body is not exactly one MessagePack map with text keys.
    """
    try:
        obj = msgpack.unpackb(body, raw=False, strict_map_key=True, ext_hook=_refuse_ext)
    except msgpack.ExtraData:
        raise FrameError("the frame holds more than one MessagePack object") from None
    except Exception as exc:  # msgpack raises several unrelated types for bad data
        raise FrameError(f"the frame is not valid MessagePack ({exc or type(exc).__name__})") from None
    if not isinstance(obj, dict):
        raise FrameError(f"a frame must hold a MessagePack map, not {type(obj).__name__}")
    _check_plain(obj, MAX_NESTING)
    return obj


MAX_NESTING = 32
"""Deepest nesting of maps and arrays accepted inside a frame."""

_SCALARS = (str, int, float, bool, bytes, type(None))


def _check_plain(value: Any, depth: int) -> None:
    """Refuse what msgpack decodes that no message may hold: byte-string keys, timestamps, deep nesting."""
    if isinstance(value, _SCALARS):
        return
    if depth == 0:
        raise FrameError(f"the frame nests maps and arrays deeper than {MAX_NESTING} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise FrameError(f"map keys must be text, not {type(key).__name__}")
            _check_plain(item, depth - 1)
    elif isinstance(value, list):
        for item in value:
            _check_plain(item, depth - 1)
    else:
        raise FrameError(f"MessagePack {type(value).__name__} values are not allowed")


class FrameDecoder:
    """Turns a byte stream into decoded frame bodies.

    Args:
        max_frame_bytes: the largest body accepted, in bytes.

    After a :class:`FrameError` the decoder is broken: every later call
    raises again, since the stream can no longer be trusted.
    """

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()
        self._error: FrameError | None = None

    @property
    def buffered_bytes(self) -> int:
        """How many bytes of an incomplete frame are waiting."""
        return len(self._buffer)

    @property
    def error(self) -> FrameError | None:
        """The framing error that broke the stream, once one has been found."""
        return self._error

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add ``data`` and return every map completed by it, in order.

        If the data breaks the framing after some complete frames, those
        frames are returned and the error is kept in :attr:`error`; it is
        raised by the next call.

        Raises:
            FrameError: an oversize length prefix or a body that is not one map.
        """
        if self._error is not None:
            raise self._error
        self._buffer += data
        frames: list[dict[str, Any]] = []
        try:
            while len(self._buffer) >= HEADER_BYTES:
                (length,) = _HEADER.unpack_from(self._buffer)
                if length > self.max_frame_bytes:
                    raise FrameError(f"frame of {length} bytes exceeds the limit of {self.max_frame_bytes} bytes")
                end = HEADER_BYTES + length
                if len(self._buffer) < end:
                    break
                body = bytes(self._buffer[HEADER_BYTES:end])
                del self._buffer[:end]
                frames.append(decode_body(body))
        except FrameError as exc:
            self._error = exc
            self._buffer.clear()
            if not frames:
                raise
        return frames
