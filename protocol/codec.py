"""Frame bodies straight to message structs and back, without building maps.

A body is decoded by one msgspec decoder for a whole tagged union
(``Request`` or ``ServerMessage``), which picks the struct by the ``type`` tag.
That decoder skips unknown fields without looking into them and accepts
free-form values (``options``, ``view``) with any keys, timestamps or depth,
so its result is taken as it is only when nothing can have been skipped or let
through:

- the body's map has exactly the entries the message needs: the ``type``,
  every required field and every field whose value is not its default (the
  entries :data:`ENCODER` writes for it); so it holds no unknown and no
  repeated key;
- the message holds no nested struct (whose map could hide such keys), and
  its free-form values pass :func:`protocol.framing.check_plain`.

Any other body is judged the thorough way: :func:`protocol.framing.decode_body`
checks the whole map; the typed result stands if the map has no repeated key,
and otherwise, or when the typed decoding failed, :func:`parse_request` /
:func:`parse_server_message` decide, with the exact errors they always gave.
"""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from .errors import FrameError
from .framing import _HEADER, MAX_NESTING, check_plain, decode_body
from .messages import REQUEST_TYPES, SERVER_TYPES, Message, Request, ServerMessage, parse_request, parse_server_message, wire_dec_hook, wire_enc_hook

__all__ = ["ENCODER", "encode_message", "decode_request", "decode_server_message"]

ENCODER = msgspec.msgpack.Encoder(enc_hook=wire_enc_hook)
"""The one encoder of outgoing messages (``type`` first, then the fields in declaration order, defaults omitted)."""

SERVER_TAGS = frozenset(cls.__struct_config__.tag for cls in SERVER_TYPES)


def encode_message(message: Message) -> bytes:
    """Return the frame for ``message``: the same bytes as ``encode_frame(to_wire(message))``, encoded directly.

    Raises:
        TypeError: if ``message`` holds something MessagePack cannot encode.
    """
    body = _encode(message)
    return _pack_header(len(body)) + body  # frame_of(), written out: this runs for every frame the server sends


_encode = ENCODER.encode
_pack_header = _HEADER.pack


def _refuse_ext(code: int, data: memoryview) -> Any:
    raise ValueError(f"MessagePack extension type {code} is not allowed")


def _map_entries(body: bytes) -> int:
    """How many entries the MessagePack map that ``body`` starts with declares (-1: not a map)."""
    first = body[0]
    if first & 0xF0 == 0x80:
        return first & 0x0F
    if first == 0xDE:
        return int.from_bytes(body[1:3], "big")
    if first == 0xDF:
        return int.from_bytes(body[1:5], "big")
    return -1


def _mentions(kind: msgspec.inspect.Type, wanted: type[msgspec.inspect.Type]) -> bool:
    """Whether the type ``kind`` is or holds a ``wanted`` (not looking inside nested structs)."""
    if isinstance(kind, wanted):
        return True
    if isinstance(kind, msgspec.inspect.StructType):
        return False
    for name in kind.__struct_fields__:
        value = getattr(kind, name)
        for part in value if isinstance(value, tuple) else (value,):
            if isinstance(part, msgspec.inspect.Type) and _mentions(part, wanted):
                return True
    return False


def _free_form_fields(cls: type[Message]) -> tuple[str, ...] | None:
    """Names of ``cls``'s fields that hold free-form values; ``None`` if it nests a struct."""
    fields = msgspec.inspect.type_info(cls).fields  # type: ignore[attr-defined]
    if any(_mentions(field.type, msgspec.inspect.StructType) for field in fields):
        return None
    return tuple(field.name for field in fields if _mentions(field.type, msgspec.inspect.AnyType))


def _free_form_of(cls: type[Message]) -> tuple[str, ...] | None:
    """:func:`_free_form_fields`, and ``None`` also for a type with too many fields for a small map (fixmap)."""
    return None if len(cls.__struct_fields__) >= 15 else _free_form_fields(cls)


def _header_of(cls: type[Message]) -> tuple[int, tuple[str, ...]] | None:
    """The first byte of ``cls``'s encoded map (a fixmap) with only its required fields, and the fields that add an
    entry each when not ``None``; ``None`` unless every default is ``None`` and no field is free-form or a struct.

    :data:`ENCODER` omits a field whose value is its default (``omit_defaults``): for such a type that is exactly
    a ``None``, so the header is counted from the values without encoding the message.
    """
    fields = msgspec.structs.fields(cls)
    if _free_form_of(cls) != () or any(not field.required and field.default is not None for field in fields):
        return None
    optional = tuple(field.name for field in fields if not field.required)
    return 0x80 + 1 + len(fields) - len(optional), optional  # the type tag, then each required field


class _UnionDecoder:
    """Decodes bodies into one union of message types; see the module's description."""

    def __init__(self, union: Any, types: tuple[type[Message], ...], judge: Callable[[dict[str, Any]], Any]) -> None:
        self._decoder = msgspec.msgpack.Decoder(union, ext_hook=_refuse_ext, dec_hook=wire_dec_hook)
        self._free_form = {cls: _free_form_of(cls) for cls in types}
        self._headers = {cls: header for cls in types if (header := _header_of(cls)) is not None}
        self._judge = judge

    def decode(self, body: bytes) -> Any:
        try:
            message = self._decoder.decode(body)
        except Exception:  # malformed, invalid, refused extension, too deep: let the thorough path name it
            return self._judge(decode_body(body))
        header = self._headers.get(type(message))
        if header is not None:  # the map header it encodes to, counted without encoding it (every move)
            head, optional = header
            for name in optional:
                if getattr(message, name) is not None:
                    head += 1
            if head == body[0]:
                return message
            return self._thorough(body, message)
        free_form = self._free_form[type(message)]
        # Whole when the body's map header is the one the message encodes to (a fixmap: at most 15 fields,
        # so the same number of entries) and its free-form values are plain.
        if free_form is not None and _encode(message)[0] == body[0] and (not free_form or _plain(message, free_form)):
            return message
        return self._thorough(body, message)

    def _thorough(self, body: bytes, message: Any) -> Any:
        """``message``, decoded from ``body``, if the whole map holds no repeated key; else the judge's verdict on the map."""
        frame = decode_body(body)
        if len(frame) != _map_entries(body):  # a repeated key: the map's last value counts
            return self._judge(frame)
        return message


def _plain(message: Message, free_form: tuple[str, ...]) -> bool:
    """Whether every free-form value of ``message`` (the fields named ``free_form``) passes :func:`protocol.framing.check_plain`."""
    try:
        for name in free_form:
            check_plain(getattr(message, name), MAX_NESTING - 1)
    except FrameError:
        return False
    return True


def _judge_server_message(frame: dict[str, Any]) -> ServerMessage | None:
    kind = frame.get("type")
    if not isinstance(kind, str) or kind not in SERVER_TAGS:  # a newer server's message, or no message at all
        return None
    return parse_server_message(frame)


_REQUESTS = _UnionDecoder(Request, REQUEST_TYPES, parse_request)
_SERVER_MESSAGES = _UnionDecoder(ServerMessage, SERVER_TYPES, _judge_server_message)


def decode_request(body: bytes) -> Request:
    """Decode one frame body into the request it holds.

    Accepts and refuses exactly what ``parse_request(decode_body(body))`` does,
    with the same errors, but decodes a well-formed request straight into its
    struct.

    Raises:
        FrameError: the body is not one plain MessagePack map (fatal).
        MessageError: the map is not a valid request; names the field and
            carries the request's ``id`` when it could be read.
    """
    return _REQUESTS.decode(body)


def decode_server_message(body: bytes) -> ServerMessage | None:
    """Decode one frame body into the server message it holds; ``None`` for a ``type`` this code does not know.

    Raises:
        FrameError: the body is not one plain MessagePack map.
        MessageError: a message of a known type is invalid; names the field.
    """
    return _SERVER_MESSAGES.decode(body)
