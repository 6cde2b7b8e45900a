"""The Parlour wire protocol, sans-IO: bytes in, typed messages out, and back.

See ``PROTOCOL.md`` at the top of the repository for the full description.
"""

from __future__ import annotations

from . import messages
from .codec import decode_request, decode_server_message, encode_message
from .connection import ClientConnection, ServerConnection, State
from .errors import Code, FrameError, MessageError, ProtocolError
from .framing import DEFAULT_MAX_FRAME_BYTES, MAX_SERVER_FRAME_BYTES, FrameDecoder, encode_frame
from .messages import PROTOCOL_VERSION, Message, Request, ServerMessage, parse_request, parse_server_message, to_wire

__all__ = [
    "ClientConnection",
    "Code",
    "DEFAULT_MAX_FRAME_BYTES",
    "FrameDecoder",
    "FrameError",
    "MAX_SERVER_FRAME_BYTES",
    "Message",
    "MessageError",
    "PROTOCOL_VERSION",
    "ProtocolError",
    "Request",
    "ServerConnection",
    "ServerMessage",
    "State",
    "decode_request",
    "decode_server_message",
    "encode_frame",
    "encode_message",
    "messages",
    "parse_request",
    "parse_server_message",
    "to_wire",
]
