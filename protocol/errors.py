"""Error codes carried by ``error`` messages, and the protocol's exceptions.

Codes are stable strings: clients may branch on them. The human ``message``
beside a code may change wording at any time.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Code", "ProtocolError", "FrameError", "MessageError"]


class Code(StrEnum):
    """Every error code the server sends, with when it is sent."""

    BAD_FRAME = "bad_frame"
    """The bytes are not a frame: oversize length, bad MessagePack, not a map. The connection is closed."""
    BAD_MESSAGE = "bad_message"
    """The frame is a map but not a valid message (unknown type, missing or mistyped field)."""
    UNSUPPORTED_VERSION = "unsupported_version"
    """``hello`` asked for a protocol version the server cannot speak. The connection is closed."""
    HANDSHAKE_REQUIRED = "handshake_required"
    """A request other than ``hello`` came before the handshake, or ``hello`` came twice."""
    BAD_PASSWORD = "bad_password"
    """The server needs a password and ``hello`` had none or a wrong one. The connection is closed."""
    BAD_NAME = "bad_name"
    """The player name is empty, too long, or has control or look-alike whitespace characters."""
    NAME_TAKEN = "name_taken"
    """Another connected player already uses that name."""
    BAD_TOKEN = "bad_token"
    """``hello`` carried a resume token this server does not know."""
    UNKNOWN_GAME = "unknown_game"
    """``create_table`` named a game the server does not have."""
    BAD_OPTION = "bad_option"
    """A game option, the seed or the time control is unknown, mistyped or out of range."""
    NO_SUCH_TABLE = "no_such_table"
    """No table has that id."""
    TABLE_FULL = "table_full"
    """Both seats are taken (or the seat asked for is)."""
    ALREADY_SEATED = "already_seated"
    """The player already holds a seat at that table."""
    NOT_SEATED = "not_seated"
    """The action needs a seat at that table and the player holds none."""
    NOT_AT_TABLE = "not_at_table"
    """The player neither sits at nor watches that table."""
    NOT_STARTED = "not_started"
    """The game waits for its second player."""
    GAME_OVER = "game_over"
    """The game at that table has ended."""
    NOT_YOUR_TURN = "not_your_turn"
    """A move came from the seat that is not to move."""
    STALE_PLY = "stale_ply"
    """The move named a ply other than the current one (the client's view is out of date)."""
    ILLEGAL_MOVE = "illegal_move"
    """The rules engine refused the move; the message names the rule."""
    BAD_ACTION = "bad_action"
    """A table action (draw offer, takeback, rematch) that makes no sense now."""
    TOO_MANY_TABLES = "too_many_tables"
    """The player already holds as many tables as the server allows."""
    RATE_LIMITED = "rate_limited"
    """Too many requests for too long: the connection was slowed, then closed (no ``id``); or, with an ``id``,
    too many wrong secrets or passwords for a claimed name, or too many challenges, tells or seeks in the last minute:
    the message gives the seconds to wait."""
    TOO_MANY_CONNECTIONS = "too_many_connections"
    """The server or this address has too many connections. The connection is closed."""
    TIMEOUT = "timeout"
    """The peer was silent, stalled mid-frame, or never said ``hello``. The connection is closed."""
    SHUTTING_DOWN = "shutting_down"
    """The server is stopping."""
    STORAGE_FULL = "storage_full"
    """The server could not save the change because its disk is full; nothing was changed. Try again later."""
    STORAGE_UNAVAILABLE = "storage_unavailable"
    """The server could not save the change because its database server cannot be reached; nothing was changed. Try again later."""
    BAD_REQUEST = "bad_request"
    """A well-formed request asks for what cannot be: a computer seat with a bad level or seat, or a game without a computer player."""
    TOO_MANY_BOTS = "too_many_bots"
    """The server already runs as many computer seats as it allows (``--max-bots``); the message gives the limit."""
    HINTS_OFF = "hints_off"
    """The table was created without hints (and has no computer seat)."""
    NAME_CLAIMED = "name_claimed"
    """The name is claimed and ``hello`` did not prove it (no secret, or a wrong secret or password)."""
    CLAIM_REQUIRED = "claim_required"
    """The server needs claimed names (``--accounts required``) and ``hello`` neither proved nor claimed one."""
    NO_SUCH_PLAYER = "no_such_player"
    """No player of that name is online (``challenge``, ``tell``, ``mute`` of a guest)."""
    NO_SUCH_CHALLENGE = "no_such_challenge"
    """No open challenge has that id, or it is not the sender's to answer or withdraw."""
    NO_SUCH_SEEK = "no_such_seek"
    """No open seek of the sender has that id."""
    MUTED = "muted"
    """The challenged player mutes the challenger."""
    TOO_MANY_CHALLENGES = "too_many_challenges"
    """The sender already has as many open challenges as the server allows; the message gives the limit."""
    TOO_MANY_SEEKS = "too_many_seeks"
    """The sender already has as many open seeks as the server allows; the message gives the limit."""
    RATED_OFF = "rated_off"
    """The server's operator does not allow rated games (``parlour serve --no-rated``)."""
    RATED_NEEDS_CLAIM = "rated_needs_claim"
    """Only claimed names sit at a rated table; a guest name cannot."""
    SIGNED_IN_ELSEWHERE = "signed_in_elsewhere"
    """Without ``id``: another connection took over this session (it resumed it, or proved its claimed name).
    The connection is closed; the client must not resume on its own, or the two would take the session from each other."""
    REPLY_LOST = "reply_lost"
    """On a server of several nodes: the node that held the request's table went away (died, stopped, or lost the table
    to another node) before answering. Whether the request took effect is not known; a ``resumed`` push shows the table
    as it stands once another node holds it."""
    INTERNAL_ERROR = "internal_error"
    """The server failed to handle a request; nothing was changed."""


class ProtocolError(Exception):
    """A peer broke the protocol.

    Attributes:
        code: the :class:`Code` to report.
        message: a human explanation naming what was wrong.
        field: the offending field's path (``"id"``, ``"options.size"``) if known.
        request_id: the ``id`` of the request that failed, if one could be read.
        fatal: whether the connection must be closed.
    """

    def __init__(
        self,
        code: Code,
        message: str,
        *,
        field: str | None = None,
        request_id: int | None = None,
        fatal: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.request_id = request_id
        self.fatal = fatal


class FrameError(ProtocolError):
    """The byte stream is not valid framing; always fatal."""

    def __init__(self, message: str) -> None:
        super().__init__(Code.BAD_FRAME, message, fatal=True)


class MessageError(ProtocolError):
    """A frame decoded to a map that is not a valid message."""

    def __init__(self, message: str, *, field: str | None = None, request_id: int | None = None) -> None:
        super().__init__(Code.BAD_MESSAGE, message, field=field, request_id=request_id)
