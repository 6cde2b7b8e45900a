"""Length-prefixed MessagePack framing, without I/O.

A frame is a 4-byte big-endian unsigned length ``N`` followed by exactly ``N``
bytes holding one MessagePack map. :class:`FrameDecoder` takes bytes as they
arrive and yields decoded maps (:meth:`FrameDecoder.feed`) or the undecoded
bodies (:meth:`FrameDecoder.feed_bodies`, for :mod:`protocol.codec`'s typed
decoding); it refuses an oversize frame as soon as its length prefix is read,
before buffering its body.
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

from .errors import FrameError

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "MAX_SERVER_FRAME_BYTES", "HEADER_BYTES", "FrameDecoder", "encode_frame", "frame_of"]

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
    return frame_of(msgpack.packb(payload, use_bin_type=True))


def frame_of(body: bytes) -> bytes:
    """Return the frame holding ``body``: its 4-byte big-endian length, then ``body`` itself."""
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
    check_plain(obj, MAX_NESTING)
    return obj


MAX_NESTING = 32
"""Deepest nesting of maps and arrays accepted inside a frame."""

_SCALARS = (str, int, float, bool, bytes, type(None))


def check_plain(value: Any, depth: int) -> None:
    """Refuse what no message may hold: non-text keys, timestamps and other extension values, deep nesting.

    ``value`` is a decoded MessagePack value; maps and arrays may nest
    ``depth`` levels deep in it (``value`` itself, if a container, is one).

    Raises:
        FrameError: naming what was found.
    """
    if isinstance(value, _SCALARS):
        return
    if depth == 0:
        raise FrameError(f"the frame nests maps and arrays deeper than {MAX_NESTING} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise FrameError(f"map keys must be text, not {type(key).__name__}")
            check_plain(item, depth - 1)
    elif isinstance(value, list):
        for item in value:
            check_plain(item, depth - 1)
    else:
        raise FrameError(f"MessagePack {type(value).__name__} values are not allowed")


class FrameDecoder:
    """Turns a byte stream into decoded frame bodies.

    Args:
        max_frame_bytes: the largest body accepted, in bytes.

    After a :class:`FrameError` the decoder is broken: every later call
    raises again, since the stream can no longer be trusted.

    No buffer is held between frames: one is made only while a frame is
    incomplete, so an idle connection costs no buffer at all.
    """

    __slots__ = ("max_frame_bytes", "_buffer", "_wanted", "_error")

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buffer: bytearray | None = None  # the incomplete frame's bytes, only while there is one
        self._wanted = HEADER_BYTES  # bytes the buffered frame needs before it is complete
        self._error: FrameError | None = None

    @property
    def buffered_bytes(self) -> int:
        """How many bytes of an incomplete frame are waiting."""
        return len(self._buffer) if self._buffer is not None else 0

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
        frames: list[dict[str, Any]] = []
        for body in self.feed_bodies(data):
            try:
                frames.append(decode_body(body))
            except FrameError as exc:
                self.fail(exc)
                if not frames:
                    raise
                break
        return frames

    def feed_bodies(self, data: bytes) -> list[bytes]:
        """Add ``data`` and return the body of every frame completed by it, in order, undecoded.

        Only the length prefixes are judged here: the caller decodes each body
        and, if one is not a valid frame body, reports it with :meth:`fail`
        (and ignores the bodies after it). An oversize prefix after some
        complete frames is kept in :attr:`error` and raised by the next call.

        Raises:
            FrameError: an oversize length prefix before any complete frame,
                or the error that already broke the stream.
        """
        if self._error is not None:
            raise self._error
        if type(data) is not bytes:
            data = bytes(data)
        if self._buffer is not None:
            self._buffer += data
            if len(self._buffer) < self._wanted:
                return []
            data = bytes(self._buffer)
            self._buffer = None
        bodies: list[bytes] = []
        try:
            start = self._split(data, bodies)
        except FrameError as exc:
            self.fail(exc)
            if not bodies:
                raise
            return bodies
        if start < len(data):
            self._buffer = bytearray(memoryview(data)[start:])
        return bodies

    def _split(self, data: bytes, bodies: list[bytes]) -> int:
        """Append the body of each complete frame in ``data`` to ``bodies``; return where the incomplete rest starts."""
        start, size = 0, len(data)
        self._wanted = HEADER_BYTES
        while size - start >= HEADER_BYTES:
            (length,) = _HEADER.unpack_from(data, start)
            if length > self.max_frame_bytes:
                raise FrameError(f"frame of {length} bytes exceeds the limit of {self.max_frame_bytes} bytes")
            end = start + HEADER_BYTES + length
            if size < end:
                self._wanted = HEADER_BYTES + length
                break
            bodies.append(data[start + HEADER_BYTES : end])
            start = end
        return start

    def fail(self, error: FrameError) -> None:
        """Break the stream with ``error`` (a body the caller found invalid): every later call raises it."""
        self._error = error
        self._buffer = None
