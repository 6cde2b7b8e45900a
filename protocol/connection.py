"""Sans-IO protocol state for each end of a connection.

The transport feeds received bytes to ``receive_data`` and writes whatever
``send`` returns; these objects never touch a socket. Which requests may be
sent in which state is one table:

=================  =========================================
state              requests accepted from the client
=================  =========================================
``AWAIT_HELLO``    ``hello``
``OPEN``           every request except ``hello``
``CLOSED``         none
=================  =========================================
"""

from __future__ import annotations

import enum
from typing import Iterator

from .codec import _REQUESTS, decode_server_message, encode_message
from .errors import Code, FrameError, ProtocolError
from .framing import _HEADER, DEFAULT_MAX_FRAME_BYTES, HEADER_BYTES, MAX_SERVER_FRAME_BYTES, FrameDecoder
from .messages import REQUEST_TYPES, Hello, Identify, Message, Request, ServerMessage

__all__ = ["State", "ServerConnection", "ClientConnection"]

_decode_request = _REQUESTS.decode
"""The body of :func:`protocol.codec.decode_request`, bound once."""

_REQUEST_CLASSES = frozenset(REQUEST_TYPES)
"""The classes a decoded request is an instance of (exactly: the decoders make no subclass). ``type(x) in`` this
set costs about a tenth of an ``isinstance`` that fails (which looks ``__class__`` up) or of one against a
struct class (whose metaclass's ``__instancecheck__`` is called)."""


class State(enum.Enum):
    """Where a connection is in its life."""

    AWAIT_HELLO = "await_hello"
    OPEN = "open"
    CLOSED = "closed"


# The states as plain module names: reading an enum member off its class (State.OPEN) costs about
# 900 instructions in Python 3.11, and the hot path asks the state twice a request.
_AWAIT_HELLO, _OPEN, _CLOSED = State.AWAIT_HELLO, State.OPEN, State.CLOSED


class ServerConnection:
    """The server's end: bytes in, validated requests out.

    ``receive_data`` yields requests and :class:`ProtocolError` values in the
    order they arrived; a fatal error (bad framing) closes the connection and
    is always last. The caller answers each error with an ``error`` message.

    Between frames it holds no :class:`FrameDecoder`, only the largest body
    size to make one with: one is made for the bytes received and kept only
    while a frame is incomplete (or the stream is broken), so an idle
    connection costs two fields.

    Args:
        max_frame_bytes: the largest frame body accepted, in bytes.
    """

    __slots__ = ("_decoder", "state")

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._decoder: FrameDecoder | int = max_frame_bytes  # an int (that size) while no decoder is needed
        self.state = _AWAIT_HELLO

    @property
    def buffered_bytes(self) -> int:
        """Bytes of an incomplete frame waiting for the rest."""
        decoder = self._decoder
        return 0 if type(decoder) is int else decoder.buffered_bytes  # type: ignore[union-attr]

    def receive_data(self, data: bytes) -> Iterator[Request | ProtocolError]:
        """Feed received bytes; yield the requests and errors they complete.

        Requests are validated one at a time as the caller takes them, so an
        :meth:`accept_hello` between two of them applies to the second.
        """
        if self.state is _CLOSED:
            return
        decoder = self._decoder
        if type(decoder) is int:
            event = self.receive_frame(data)
            if event is not None:
                yield event
                return
            decoder = self._decoder = FrameDecoder(max_frame_bytes=decoder)
        try:
            bodies = decoder.feed_bodies(data)
        except FrameError as exc:
            self.state = _CLOSED
            yield exc
            return
        if not decoder.buffered_bytes and decoder.error is None:
            self._decoder = decoder.max_frame_bytes  # nothing left over: the next bytes start afresh
        for body in bodies:
            if self.state is _CLOSED:
                return
            event = self._parse(body)
            if type(event) not in _REQUEST_CLASSES and isinstance(event, FrameError):
                decoder.fail(event)
                self._decoder = decoder  # broken for good
                break
            yield event
        if decoder.error is not None:
            self.state = _CLOSED
            yield decoder.error

    def receive_frame(self, data: bytes) -> Request | ProtocolError | None:
        """The request (or error) in ``data`` when it is exactly one whole frame and no earlier bytes wait; else ``None``.

        The usual read, without :meth:`receive_data`'s generator and without a
        :class:`FrameDecoder`. ``None`` takes nothing: hand ``data`` to
        :meth:`receive_data` then (a partial frame, several frames, bytes of an
        unfinished frame before them, or a closed connection). A body that is
        not a valid request gives its :class:`ProtocolError`; one that is not
        a MessagePack map (a :class:`FrameError`) closes the connection, as in
        :meth:`receive_data`.
        """
        limit = self._decoder
        if type(limit) is not int or self.state is _CLOSED or type(data) is not bytes or len(data) < HEADER_BYTES:
            return None
        (length,) = _HEADER.unpack_from(data)
        if len(data) != HEADER_BYTES + length or length > limit:
            return None
        try:
            request = _decode_request(data[HEADER_BYTES:])  # _parse(), written out: every request
        except ProtocolError as exc:
            if isinstance(exc, FrameError):
                broken = self._decoder = FrameDecoder(max_frame_bytes=limit)
                broken.fail(exc)  # broken for good, as receive_data leaves it
                self.state = _CLOSED
            return exc
        kind = type(request)
        if (kind is Hello) != (self.state is _AWAIT_HELLO) and kind is not Identify:
            return self._out_of_turn(request)
        return request

    def _parse(self, body: bytes) -> Request | ProtocolError:
        try:
            request = _decode_request(body)  # decode_request(), without its call: every request
        except ProtocolError as exc:
            return exc
        kind = type(request)  # no subclass: see _REQUEST_CLASSES
        if (kind is Hello) != (self.state is _AWAIT_HELLO) and kind is not Identify:  # identify: before or after hello alike
            return self._out_of_turn(request)
        return request

    @staticmethod
    def _out_of_turn(request: Request) -> ProtocolError:
        """The error for a ``hello`` after the handshake, or another request (not ``identify``) before it."""
        text = "hello was already received" if type(request) is Hello else "say hello first"
        return ProtocolError(Code.HANDSHAKE_REQUIRED, text, request_id=request.id)

    def accept_hello(self) -> None:
        """Mark the handshake done: from now on, every request but ``hello`` is accepted."""
        self.state = _OPEN

    def send(self, message: Message) -> bytes:
        """Return the frame for a reply or push."""
        return encode_message(message)

    def close(self) -> None:
        """Stop accepting data."""
        self.state = _CLOSED


class ClientConnection:
    """The client's end: requests in, bytes out; bytes in, server messages out.

    Args:
        max_frame_bytes: the largest frame body accepted from the server, in bytes;
            by default the most a server ever sends (replies are larger than requests).
    """

    def __init__(self, *, max_frame_bytes: int = MAX_SERVER_FRAME_BYTES) -> None:
        self._decoder = FrameDecoder(max_frame_bytes=max_frame_bytes)

    def send(self, request: Request) -> bytes:
        """Return the frame for ``request``."""
        return encode_message(request)

    def receive_data(self, data: bytes) -> list[ServerMessage]:
        """Feed received bytes; return the server messages they complete.

        Messages of a ``type`` this client does not know are skipped, so a
        newer server's additions do not break an older client.

        Raises:
            ProtocolError: the server sent bad framing or an invalid message of
                a known type (after the valid messages before it were returned
                by an earlier call, or are lost with the connection).
        """
        messages: list[ServerMessage] = []
        for decoded, body in enumerate(self._decoder.feed_bodies(data)):
            try:
                message = decode_server_message(body)
            except FrameError as exc:
                self._decoder.fail(exc)
                if not decoded:
                    raise
                break
            if message is not None:
                messages.append(message)
        return messages
