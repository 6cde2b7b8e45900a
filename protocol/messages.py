"""Every message of the Parlour protocol, declared once.

Each message is a frozen msgspec struct whose ``type`` tag is the string on
the wire. Requests (client to server) carry an ``id`` that the server's reply
echoes; pushes (server to client, unprompted) carry none. Incoming maps are
validated against these declarations by :func:`parse_request` and
:func:`parse_server_message`, which raise :class:`MessageError` naming the bad
field. ``PROTOCOL.md`` documents each message with an example.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import Meta

from .errors import MessageError

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_ID",
    "MAX_NAME_CHARS",
    "MAX_MOVE_CHARS",
    "MAX_CHAT_CHARS",
    "MAX_TABLES_PAGE",
    "SUMMARY_CHARS",
    "summarize_options",
    "Message",
    "Request",
    "ServerMessage",
    "to_wire",
    "parse_request",
    "parse_server_message",
    "REQUEST_TYPES",
    "SERVER_TYPES",
]

PROTOCOL_VERSION = 2
"""The protocol version this code speaks (``hello.version``). Version 2 pages
``list_tables`` and summarizes long option texts in lobby messages."""

MAX_NAME_CHARS = 24
MAX_MOVE_CHARS = 64
MAX_CHAT_CHARS = 500
MAX_TOKEN_CHARS = 128
MAX_SECRET_CHARS = 256
"""The longest secret or password ``hello`` and ``set_password`` may carry."""
MIN_SECRET_CHARS = 16
"""The shortest secret a name may be claimed with (clients generate 43 characters)."""
MIN_PASSWORD_CHARS = 8
"""The shortest password ``set_password`` accepts."""
MAX_TABLES_PAGE = 100
"""The most tables one ``tables`` reply holds (``list_tables.limit``)."""
DEFAULT_TABLES_PAGE = 50
"""How many tables ``list_tables`` asks for when it gives no ``limit``."""
SUMMARY_CHARS = 64
"""Option texts longer than this many characters are summarized in lobby messages."""

MAX_ID = 2**53 - 1
"""The largest id on the wire, either way: JavaScript's ``Number.MAX_SAFE_INTEGER``.

A JavaScript client reads every MessagePack integer as a double, which holds
every integer up to this one exactly; the server never issues a larger table,
challenge or seek id and refuses larger request ids (``bad_message``)."""

RequestId = Annotated[int, Meta(ge=0, le=MAX_ID)]
TableId = Annotated[int, Meta(ge=1, le=MAX_ID)]
Seat = Annotated[int, Meta(ge=0, le=1)]
Name = Annotated[str, Meta(max_length=256)]  # the server checks names itself (bad_name)
MoveText = Annotated[str, Meta(min_length=1, max_length=MAX_MOVE_CHARS)]
ChatText = Annotated[str, Meta(min_length=1, max_length=MAX_CHAT_CHARS)]
Token = Annotated[str, Meta(max_length=MAX_TOKEN_CHARS)]
GameName = Annotated[str, Meta(min_length=1, max_length=32)]
Options = Annotated[dict[str, Any], Meta(max_length=32)]
OfferKind = Literal["draw", "takeback", "rematch"]
TimeControlText = Annotated[str, Meta(max_length=32)]
Seed = Union[Annotated[str, Meta(max_length=256)], Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)], None]


class Message(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="type"):
    """Base of every message; ``type`` on the wire is the class's ``tag``."""


# --- requests: client to server -------------------------------------------------


class Hello(Message, tag="hello"):
    """Opens a session. Must be the first request on a connection."""

    id: RequestId
    version: int
    name: Name
    token: Token | None = None
    password: Annotated[str, Meta(max_length=256)] | None = None
    bot: bool = False
    """The client is a program playing by itself (``parlour bot``), like a lichess BOT account."""
    secret: Annotated[str, Meta(max_length=MAX_SECRET_CHARS)] | None = None
    """The claimed name's secret or password (PROTOCOL.md section 15); with ``claim``, the new secret."""
    claim: bool = False
    """Claim the name with ``secret`` if nobody has claimed it yet."""

    def __repr__(self) -> str:
        """The hello with its password and secret hidden, so that no log line ever holds them."""
        hidden = {"password": self.password, "secret": self.secret}
        fields = ", ".join(
            f"{name}={'<hidden>' if hidden.get(name) is not None else repr(getattr(self, name))}" for name in self.__struct_fields__
        )
        return f"Hello({fields})"


class Identify(Message, tag="identify"):
    """Asks the server who it is (``identity``); allowed before ``hello``, so a client can pick the secret its ``hello`` carries."""

    id: RequestId


class ListTables(Message, tag="list_tables"):
    """Asks for one page of the lobby: up to ``limit`` tables whose id is above ``after`` (``None``: from the first)."""

    id: RequestId
    after: Annotated[int, Meta(ge=0, le=MAX_ID)] | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_TABLES_PAGE)] = DEFAULT_TABLES_PAGE


class ComputerSeat(msgspec.Struct, frozen=True, kw_only=True):
    """A seat the server's computer player takes at a new table, and its strength.

    ``seat`` is 0 or 1 and ``level`` 1 (a beginner can win) to 5 (the
    strongest); the server checks both and answers ``bad_request`` naming the field.
    """

    seat: Annotated[int, Meta(ge=-(2**31), le=2**31)]
    level: Annotated[int, Meta(ge=-(2**31), le=2**31)]


class CreateTable(Message, tag="create_table"):
    """Creates a table; the creator sits in ``seat`` (``None``: does not sit).

    ``computer`` seats the server's computer player (the game starts as soon
    as both seats are filled); ``hints`` lets the seated players ask for
    ``hint`` (always allowed at a table with a computer seat).
    """

    id: RequestId
    game: GameName
    options: Options = {}
    seed: Seed = None
    seat: Seat | None = 0
    time_control: TimeControlText | None = None
    computer: Annotated[list[ComputerSeat], Meta(max_length=2)] = []
    hints: bool = False
    rated: bool = False
    """The game changes both players' ratings (both must be claimed names; no computer seat)."""


class JoinTable(Message, tag="join_table"):
    """Takes a free seat (``seat`` ``None``: whichever is free)."""

    id: RequestId
    table: TableId
    seat: Seat | None = None


class WatchTable(Message, tag="watch_table"):
    """Becomes a spectator of a table."""

    id: RequestId
    table: TableId


class LeaveTable(Message, tag="leave_table"):
    """Gives up a seat (resigning a running game) or stops watching."""

    id: RequestId
    table: TableId


class PlayMove(Message, tag="move"):
    """Plays ``move`` for the sender's seat; ``ply``, if given, must be the current ply."""

    id: RequestId
    table: TableId
    move: MoveText
    ply: Annotated[int, Meta(ge=0)] | None = None


class Resign(Message, tag="resign"):
    """Resigns the game at a table where the sender is seated."""

    id: RequestId
    table: TableId


class AbortGame(Message, tag="abort"):
    """Aborts the game at a table where the sender is seated, before the sender's own first move: no result, not rated."""

    id: RequestId
    table: TableId


class Offer(Message, tag="offer"):
    """Offers the opponent a ``draw``, asks to take back ``plies`` plies (``takeback``), or offers a ``rematch``."""

    id: RequestId
    table: TableId
    kind: OfferKind
    plies: Annotated[int, Meta(ge=1, le=10_000)] = 1


class Answer(Message, tag="answer"):
    """Accepts or declines the opponent's pending offer of ``kind``."""

    id: RequestId
    table: TableId
    kind: OfferKind
    accept: bool


class Say(Message, tag="say"):
    """Chat: to a table's players and spectators, or to the whole lobby (``table`` ``None``)."""

    id: RequestId
    text: ChatText
    table: TableId | None = None


class WatchLobby(Message, tag="watch_lobby"):
    """Starts (``watch`` true) or stops the lobby's pushes to this connection: ``table_updated``, ``table_closed``, lobby ``chat``."""

    id: RequestId
    watch: bool = True


class ListArchive(Message, tag="list_archive"):
    """Asks for finished games, newest first."""

    id: RequestId
    limit: Annotated[int, Meta(ge=1, le=200)] = 50
    offset: Annotated[int, Meta(ge=0, le=2**31)] = 0


RecordFormat = Literal["text", "ggf"]
"""A record's format: Parlour's plain text (``games.record``), or GGF (``games.ggf``, Othello games only)."""


class GetRecord(Message, tag="get_record"):
    """Asks for the record of a finished game, as plain text or (Othello only) GGF."""

    id: RequestId
    table: TableId
    format: RecordFormat = "text"


MAX_LEADERBOARD_PAGE = 50
"""The most rows one ``leaderboard`` reply holds (``leaderboard.limit``)."""
MAX_LEADERBOARD_OFFSET = 10_000
"""The deepest a leaderboard can be paged (``leaderboard.offset``)."""
Family = Literal["bullet", "blitz", "rapid", "classical", "untimed"]


class Finger(Message, tag="finger"):
    """Asks for a player's ratings, record and last rated games (``finger`` reply)."""

    id: RequestId
    name: Name


class GetLeaderboard(Message, tag="leaderboard"):
    """Asks for the best ratings in ``game``: one ``family``'s, or each player's best family (``None``).

    Provisional ratings are left out unless ``provisional`` is true.
    """

    id: RequestId
    game: GameName
    family: Family | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_LEADERBOARD_PAGE)] = 20
    offset: Annotated[int, Meta(ge=0, le=MAX_LEADERBOARD_OFFSET)] = 0
    provisional: bool = False


class Ping(Message, tag="ping"):
    """Asks for a ``pong``; also keeps the connection alive."""

    id: RequestId


class AskHint(Message, tag="hint"):
    """Asks for the best move for the sender's seat at ``table`` (its turn; a table with hints allowed)."""

    id: RequestId
    table: TableId


class SetPassword(Message, tag="set_password"):
    """Sets (or with ``None`` removes) a password that proves the sender's claimed name like its secret.

    ``current`` must be the name's current password or secret (the server refuses a change without it);
    the reply is :class:`TokenRenewed`, and every other holder of the session's token is shut out.
    """

    id: RequestId
    password: Annotated[str, Meta(max_length=MAX_SECRET_CHARS)] | None
    current: Annotated[str, Meta(max_length=MAX_SECRET_CHARS)] | None = None

    def __repr__(self) -> str:
        """The request with both passwords hidden, so that no log line holds them."""
        return f"SetPassword(id={self.id!r}, password=<hidden>, current=<hidden>)"


class ChangeSecret(Message, tag="change_secret"):
    """Replaces the secret of the sender's claimed name with ``secret`` (at least ``MIN_SECRET_CHARS``), proven by ``current``.

    ``current`` is the name's current secret or password. The reply is :class:`TokenRenewed`.
    """

    id: RequestId
    current: Annotated[str, Meta(max_length=MAX_SECRET_CHARS)]
    secret: Annotated[str, Meta(max_length=MAX_SECRET_CHARS)]

    def __repr__(self) -> str:
        """The request with both secrets hidden, so that no log line holds them."""
        return f"ChangeSecret(id={self.id!r}, current=<hidden>, secret=<hidden>)"
# --- finding an opponent (PROTOCOL.md §17) -----------------------------------------

MAX_PLAYERS_PAGE = 100
"""The most players one ``players`` reply holds (``who.limit``)."""
MAX_SEEKS_PAGE = 100
"""The most seeks one ``seeks`` reply holds (``list_seeks.limit``)."""
ChallengeId = Annotated[int, Meta(ge=1, le=MAX_ID)]
SeekId = Annotated[int, Meta(ge=1, le=MAX_ID)]
RatingBound = Annotated[int, Meta(ge=0, le=10_000)]


class Who(Message, tag="who"):
    """Asks for one page of the players online, sorted by ``sort`` (``"name"``, or ``"rating"`` highest first).

    ``game`` picks the rating shown (``None``: each player's best); ``offset`` skips that many players.
    """

    id: RequestId
    game: GameName | None = None
    sort: Literal["name", "rating"] = "name"
    offset: Annotated[int, Meta(ge=0, le=2**31)] = 0
    limit: Annotated[int, Meta(ge=1, le=MAX_PLAYERS_PAGE)] = 50


class Challenge(Message, tag="challenge"):
    """Challenges the player ``name`` to a game of ``game``; the challenger sits in ``seat`` (``None``: drawn at random)."""

    id: RequestId
    name: Name
    game: GameName
    options: Options = {}
    seat: Seat | None = None
    time_control: TimeControlText | None = None
    rated: bool = False


class AcceptChallenge(Message, tag="accept_challenge"):
    """Accepts the challenge ``challenge`` made to the sender: the table is created and both are seated."""

    id: RequestId
    challenge: ChallengeId


class DeclineChallenge(Message, tag="decline_challenge"):
    """Declines the challenge ``challenge`` made to the sender."""

    id: RequestId
    challenge: ChallengeId


class WithdrawChallenge(Message, tag="withdraw_challenge"):
    """Takes back the sender's own challenge ``challenge``."""

    id: RequestId
    challenge: ChallengeId


class Seek(Message, tag="seek"):
    """Posts a seek for ``game``, paired at once with a compatible one; ratings outside ``rating_min``..``rating_max`` are not paired."""

    id: RequestId
    game: GameName
    options: Options = {}
    time_control: TimeControlText | None = None
    rated: bool = False
    rating_min: RatingBound | None = None
    rating_max: RatingBound | None = None


class Unseek(Message, tag="unseek"):
    """Takes back the sender's seek ``seek`` (``None``: every seek of the sender)."""

    id: RequestId
    seek: SeekId | None = None


class ListSeeks(Message, tag="list_seeks"):
    """Asks for one page of the open seeks: up to ``limit`` seeks whose id is above ``after``."""

    id: RequestId
    after: Annotated[int, Meta(ge=0, le=MAX_ID)] | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_SEEKS_PAGE)] = 50


class Tell(Message, tag="tell"):
    """Sends ``text`` to the player ``name`` alone."""

    id: RequestId
    name: Name
    text: ChatText


class Mute(Message, tag="mute"):
    """Stops (``mute`` true) or restarts tells and challenges from the player ``name`` to the sender."""

    id: RequestId
    name: Name
    mute: bool = True


class ListMutes(Message, tag="list_mutes"):
    """Asks for the names the sender mutes (answered with ``mutes``)."""

    id: RequestId


class MuteGuests(Message, tag="mute_guests"):
    """Stops (``mute`` true) or restarts tells and challenges to the sender from every player whose name is not claimed."""

    id: RequestId
    mute: bool = True


Request = Union[
    Hello,
    ListTables,
    WatchLobby,
    CreateTable,
    JoinTable,
    WatchTable,
    LeaveTable,
    PlayMove,
    Resign,
    AbortGame,
    Offer,
    Answer,
    Say,
    ListArchive,
    GetRecord,
    Ping,
    AskHint,
    SetPassword,
    Who,
    Challenge,
    AcceptChallenge,
    DeclineChallenge,
    WithdrawChallenge,
    Seek,
    Unseek,
    ListSeeks,
    Tell,
    Mute,
    ListMutes,
    Finger,
    GetLeaderboard,
    Identify,
    ChangeSecret,
    MuteGuests,
]
REQUEST_TYPES: tuple[type[Message], ...] = Request.__args__  # type: ignore[attr-defined]


# --- server to client -------------------------------------------------------------


class SeatRating:
    """A seated player's rating, rounded, and whether it is provisional.

    On the wire an array: ``[1484]`` for a settled rating, ``[1500, true]`` for
    a provisional one (``provisional`` is left out when false, PROTOCOL.md
    section 16). msgspec cannot leave a trailing default out of an array-like
    struct, so this is a plain class that :func:`wire_enc_hook` and
    :func:`wire_dec_hook` translate.
    """

    __slots__ = ("rating", "provisional")

    def __init__(self, *, rating: int, provisional: bool = False) -> None:
        self.rating = rating
        self.provisional = provisional

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SeatRating):
            return NotImplemented
        return (self.rating, self.provisional) == (other.rating, other.provisional)

    def __hash__(self) -> int:
        return hash((self.rating, self.provisional))

    def __repr__(self) -> str:
        return f"SeatRating(rating={self.rating!r}, provisional={self.provisional!r})"

    def to_wire(self) -> list[int | bool]:
        """``[rating]``, or ``[rating, true]`` when provisional."""
        return [self.rating, True] if self.provisional else [self.rating]

    @classmethod
    def from_wire(cls, value: Any) -> "SeatRating":
        """Read ``[rating]`` or ``[rating, provisional]``.

        Raises:
            ValueError: ``value`` is not such an array (an int rating, then a bool).
        """
        if type(value) is not list or not 1 <= len(value) <= 2 or type(value[0]) is not int or (len(value) == 2 and type(value[1]) is not bool):
            raise ValueError("Expected `[rating]` or `[rating, provisional]`")
        return cls(rating=value[0], provisional=len(value) == 2 and value[1])


def wire_enc_hook(obj: Any) -> Any:
    """msgspec ``enc_hook`` for the protocol's own non-struct types (:class:`SeatRating`).

    Raises:
        NotImplementedError: for any other type, as msgspec expects.
    """
    if isinstance(obj, SeatRating):
        return obj.to_wire()
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def wire_dec_hook(kind: type, obj: Any) -> Any:
    """msgspec ``dec_hook`` for the protocol's own non-struct types (:class:`SeatRating`).

    Raises:
        ValueError: a malformed value (msgspec reports it with its path).
        NotImplementedError: for any other type, as msgspec expects.
    """
    if kind is SeatRating:
        return SeatRating.from_wire(obj)
    raise NotImplementedError(f"cannot decode {kind!r}")


class TableInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A table as the lobby shows it.

    ``seats`` holds the two players' names (``None``: free); ``status`` is
    ``"waiting"``, ``"playing"`` or ``"over"``; ``seed`` is ``None`` while it
    would reveal hidden information. In lobby messages (``tables``,
    ``table_updated``) long option texts are summaries (:func:`summarize_options`).
    ``computer`` gives the level of a computer seat per seat (``None`` when
    no seat is a computer's); ``hints`` whether the seated players may ask for
    hints; ``bots`` which seated players said ``hello`` as programs (``None``
    when neither did).
    """

    id: int
    game: str
    options: dict[str, Any]
    seats: list[str | None]
    status: str
    spectators: int
    ply: int
    seed: str | int | None = None
    outcome: dict[str, Any] | None = None
    time_control: str | None = None
    clock: dict[str, Any] | None = None
    computer: list[int | None] | None = None
    hints: bool = False
    bots: list[bool] | None = None
    ratings: list[SeatRating | None] | None = None
    """``None`` at an unrated table; at a rated one, each seated player's rating in its game and family (``None``: seat free)."""


class Welcome(Message, tag="welcome"):
    """Answers ``hello``: the session is open."""

    id: int
    protocol: int
    server: str
    version: str
    name: str
    token: str
    games: list[dict[str, Any]]
    resumed: bool = False
    heartbeat_s: float | None = None
    """The client should send something (``ping`` will do) at least this often, in seconds."""
    idle_timeout_s: float | None = None
    """The server closes a connection it hears nothing from for this long, in seconds."""
    requests_per_s: float | None = None
    """The connection's steady request rate (frames per second) before the server slows it."""
    request_burst: int | None = None
    """How many frames the connection may send at once before the steady rate applies."""
    claimed: bool = False
    """The session owns its name: claimed now, or proven by ``hello.secret`` (PROTOCOL.md section 15)."""
    accounts: str | None = None
    """Whether the server lets names be claimed: ``"off"``, ``"optional"`` or ``"required"``."""
    server_id: str | None = None
    """The server's stable identity (PROTOCOL.md section 15): the same through every address, kept across restarts."""
    grace_s: float | None = None
    """How long the server holds a disconnected player's seats, in seconds (a client retries at least this long)."""
    http: int | None = None
    """The TCP port of the server's read-only web face (``--http``), on the host the client connected to; ``None``: none."""
    node: str | None = None
    """The node of a cluster that answered (``parlour serve --node``); ``None``: a server on its own."""


class Identity(Message, tag="identity"):
    """Answers ``identify``: the server's stable id and its name (PROTOCOL.md section 15)."""

    id: int
    server_id: str
    server: str


class Ok(Message, tag="ok"):
    """Answers a request that needs nothing back but success."""

    id: int


class TokenRenewed(Message, tag="token_renewed"):
    """Answers ``set_password`` and ``change_secret``: the session's new resume token (the old one is dead)."""

    id: int
    token: str


class Pong(Message, tag="pong"):
    """Answers ``ping``."""

    id: int


class Tables(Message, tag="tables"):
    """Answers ``list_tables``: one page of tables, by increasing id.

    ``next`` is the ``after`` to ask for the following page, ``None`` on the last page.
    """

    id: int
    tables: list[TableInfo]
    next: int | None


class ChatEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a table's chat history (``table_joined.chat``, ``resumed.chat``): who said what."""

    name: str
    text: str


class TableJoined(Message, tag="table_joined"):
    """Answers ``create_table``, ``join_table`` and ``watch_table``.

    ``seat`` is the sender's seat (``None``: spectator); ``view`` the position
    as that seat may see it; ``moves`` every move so far in notation; ``chat``
    the table's chat history, oldest first (the last 100 lines, without those
    of players the receiver mutes; left out when empty).
    """

    id: int
    table: TableInfo
    seat: int | None
    view: dict[str, Any]
    moves: list[str]
    chat: list[ChatEntry] = msgspec.field(default_factory=list)


class Error(Message, tag="error"):
    """A request failed (``id`` set) or the connection broke the protocol (``id`` ``None``)."""

    code: str
    message: str
    id: int | None = None
    field: str | None = None


class TableUpdated(Message, tag="table_updated"):
    """Push: a table appeared or changed (seats, status, spectators)."""

    table: TableInfo


class TableClosed(Message, tag="table_closed"):
    """Push: a table left the lobby."""

    table: int


class Moved(Message, tag="moved"):
    """Push to a table's players and spectators: a move was played.

    ``view`` is the new position as the receiver may see it; ``forced`` marks a
    pass the server played because it was the only legal move.
    """

    table: int
    seat: int
    move: str
    ply: int
    view: dict[str, Any]
    forced: bool = False
    clock: dict[str, Any] | None = None


class GameStarted(Message, tag="game_started"):
    """Push to a table: both seats are taken and play begins."""

    table: int
    seats: list[str | None]
    view: dict[str, Any]


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's rating before and after a rated game (rounded), with its deviation after."""

    before: int
    after: int
    deviation: int


class GameOver(Message, tag="game_over"):
    """Push to a table: the game ended. ``outcome`` has ``winner``, ``reason``, ``score``.

    ``ratings`` is given when the game was rated: per seat, the rating change.
    ``view`` is given when a game that hides information (Tactego) was ended by
    the table (resignation, time, agreement, a forfeit): the final position
    with everything shown, the same for every receiver. (A move that ends such
    a game shows everything in its ``moved`` view.)
    """

    table: int
    outcome: dict[str, Any]
    ratings: list[RatingChange] | None = None
    view: dict[str, Any] | None = None


class Resumed(Message, tag="resumed"):
    """Push after a resuming ``welcome``: one per table the session sits at or watches (``chat`` as in ``table_joined``);
    also, on a server of several nodes, for a table another node took over (PROTOCOL.md)."""

    table: TableInfo
    seat: int | None
    view: dict[str, Any]
    moves: list[str]
    chat: list[ChatEntry] = msgspec.field(default_factory=list)


class PlayerAway(Message, tag="player_away"):
    """Push to a table: a seated player lost their connection; the seat is forfeited in ``forfeit_in_s`` seconds."""

    table: int
    seat: int
    name: str
    forfeit_in_s: float


class PlayerBack(Message, tag="player_back"):
    """Push to a table: a player who was away has resumed."""

    table: int
    seat: int
    name: str


class Offered(Message, tag="offered"):
    """Push to a table: ``seat`` offers a draw, asks for a takeback of ``plies``, or offers a rematch."""

    table: int
    seat: int
    kind: str
    plies: int = 1


class Answered(Message, tag="answered"):
    """Push to a table: the offer of ``kind`` was accepted, declined, or lapsed (``accepted`` false, ``lapsed`` true)."""

    table: int
    kind: str
    accepted: bool
    lapsed: bool = False


class TakenBack(Message, tag="taken_back"):
    """Push to a table: the last ``plies`` plies were taken back; ``view`` and ``moves`` are the position now."""

    table: int
    plies: int
    view: dict[str, Any]
    moves: list[str]
    clock: dict[str, Any] | None = None


class RematchStarted(Message, tag="rematch_started"):
    """Push to both players and the spectators of ``previous``: a rematch with seats swapped is ready at ``table``.

    ``seat`` is the receiver's seat there; ``None`` for a spectator of the old
    table, who now watches the new one instead.
    """

    previous: int
    table: TableInfo
    seat: int | None
    view: dict[str, Any]


class Chat(Message, tag="chat"):
    """Push: ``name`` said ``text`` at ``table`` (``None``: in the lobby)."""

    name: str
    text: str
    table: int | None = None


class Archive(Message, tag="archive"):
    """Answers ``list_archive``: finished games, newest first.

    Each game: ``id``, ``game``, ``options``, ``players`` (two names),
    ``result`` (an outcome map), ``plies``, ``finished`` (ISO-8601 UTC).
    """

    id: int
    games: list[dict[str, Any]]


class Record(Message, tag="record"):
    """Answers ``get_record``: the game as a record in ``format`` (see ``games.record`` and ``games.ggf``)."""

    id: int
    text: str
    format: RecordFormat = "text"


class Shutdown(Message, tag="shutdown"):
    """Push: the server is stopping and will close the connection."""

    message: str


class Hint(Message, tag="hint"):
    """Answers ``hint``: the best move the computer finds for the asker's seat at ``ply``."""

    id: int
    table: int
    ply: int
    move: str


class RatingInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A rating in one game and family, as ``finger`` shows it (rating, deviation rounded)."""

    game: str
    family: str
    rating: int
    deviation: int
    provisional: bool
    games: int
    wins: int
    draws: int
    losses: int


class PastGame(msgspec.Struct, frozen=True, kw_only=True):
    """One rated game as ``finger`` shows it; ``table`` is the id ``get_record`` takes; ``result`` is ``win``, ``draw`` or ``loss``."""

    table: int
    game: str
    family: str
    opponent: str
    result: str
    before: int
    after: int
    finished: str


class CasualInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A player's casual games in one game (finished, no rating changed), as ``finger`` shows them."""

    game: str
    games: int
    wins: int
    draws: int
    losses: int


class Player(Message, tag="player"):
    """Answers ``finger``: a player's ratings (by game, then family), last rated games (newest first) and casual games (by game)."""

    id: int
    name: str
    online: bool
    ratings: list[RatingInfo]
    recent: list[PastGame]
    casual: list[CasualInfo] = msgspec.field(default_factory=list)


class RankingRow(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a leaderboard: ``rank`` from 1."""

    rank: int
    name: str
    family: str
    rating: int
    deviation: int
    provisional: bool
    games: int


class Ranking(Message, tag="ranking"):
    """Answers ``leaderboard``: the best ratings, best first; ``next`` is the ``offset`` of the next page, ``None`` on the last."""

    id: int
    game: str
    family: str | None
    rows: list[RankingRow]
    next: int | None


class Heartbeat(Message, tag="heartbeat"):
    """Push: the server is alive; sent when it has had nothing else to send for ``welcome.heartbeat_s``."""


class PlayerInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A player as ``who`` shows them.

    ``status`` is ``"idle"``, ``"playing"`` (holds a seat at a game not over),
    ``"watching"`` or ``"away"`` (disconnected, seat held for the grace period);
    ``claimed`` whether the name is claimed; ``rating`` and ``deviation`` the
    Glicko-2 rating for ``rating_game`` (``None``: unrated, or no ratings on this server).
    Fields at their default are left out on the wire (``{"name": "cat", "status": "idle"}``).
    """

    name: str
    status: str
    claimed: bool = False
    bot: bool = False
    rating: int | None = None
    deviation: int | None = None
    rating_game: str | None = None


class ChallengeInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An open challenge. ``seat`` is the challenger's seat (``None``: drawn when accepted);
    ``expires_in_s`` how long it stays open, in seconds; ``options`` as lobby messages summarize them.
    Fields at their default are left out on the wire."""

    id: int
    challenger: str
    challenged: str
    game: str
    options: dict[str, Any]
    seat: int | None = None
    time_control: str | None = None
    rated: bool = False
    expires_in_s: float = 0.0


class SeekInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An open seek. ``rating`` is the seeker's rating for the game (``None``: unrated or no ratings);
    ``rating_min``/``rating_max`` the opponents' ratings it accepts (``None``: any).
    Fields at their default are left out on the wire."""

    id: int
    name: str
    game: str
    options: dict[str, Any]
    time_control: str | None = None
    rated: bool = False
    rating: int | None = None
    rating_min: int | None = None
    rating_max: int | None = None


class Players(Message, tag="players"):
    """Answers ``who``: one page of the players online; ``total`` players in all, ``next`` the ``offset`` of the next page (``None``: last)."""

    id: int
    players: list[PlayerInfo]
    total: int
    next: int | None


class ChallengeSent(Message, tag="challenge_sent"):
    """Answers ``challenge``: the challenge is open."""

    id: int
    challenge: ChallengeInfo


class SeekPosted(Message, tag="seek_posted"):
    """Answers ``seek``: the seek is open, or (``paired`` true) was paired at once and a ``paired`` push follows."""

    id: int
    seek: SeekInfo
    paired: bool = False


class Seeks(Message, tag="seeks"):
    """Answers ``list_seeks``: one page of open seeks by increasing id; ``next`` is the ``after`` of the next page."""

    id: int
    seeks: list[SeekInfo]
    next: int | None


class ChallengeReceived(Message, tag="challenge_received"):
    """Push to the challenged player: a new challenge (answer with ``accept_challenge`` or ``decline_challenge``)."""

    challenge: ChallengeInfo


class ChallengeEnded(Message, tag="challenge_ended"):
    """Push to both players: challenge ``challenge`` is over; ``reason`` is ``"accepted"``, ``"declined"``,
    ``"withdrawn"``, ``"expired"`` or ``"gone"`` (a player left the server)."""

    challenge: int
    reason: str


class Paired(Message, tag="paired"):
    """Push to each of two players: an accepted challenge or two matching seeks seated them at ``table``.

    ``seat`` is the receiver's seat; ``view`` and ``moves`` as in ``table_joined``;
    ``challenge`` or ``seek`` names what paired them (the receiver's own seek).
    """

    table: TableInfo
    seat: int
    view: dict[str, Any]
    moves: list[str]
    challenge: int | None = None
    seek: int | None = None


class SeekAdded(Message, tag="seek_added"):
    """Push to the lobby's watchers: a seek was posted."""

    seek: SeekInfo


class SeekRemoved(Message, tag="seek_removed"):
    """Push to the lobby's watchers: seek ``seek`` is gone (paired, taken back, or its player left)."""

    seek: int


class Told(Message, tag="told"):
    """Push: the player ``name`` told the receiver ``text`` (a private message)."""

    name: str
    text: str


class MutedNames(Message, tag="mutes"):
    """Answers ``list_mutes``: every name the sender mutes, sorted, each in its compared form (NFKC, case-folded)."""

    id: int
    names: list[str]


ServerMessage = Union[
    Welcome,
    Ok,
    Pong,
    Tables,
    TableJoined,
    Error,
    TableUpdated,
    TableClosed,
    Moved,
    GameStarted,
    GameOver,
    Resumed,
    PlayerAway,
    PlayerBack,
    Offered,
    Answered,
    TakenBack,
    RematchStarted,
    Chat,
    Archive,
    Record,
    Shutdown,
    Heartbeat,
    Hint,
    Players,
    ChallengeSent,
    SeekPosted,
    Seeks,
    ChallengeReceived,
    ChallengeEnded,
    Paired,
    SeekAdded,
    SeekRemoved,
    Told,
    MutedNames,
    Player,
    Ranking,
    Identity,
    TokenRenewed,
]
SERVER_TYPES: tuple[type[Message], ...] = ServerMessage.__args__  # type: ignore[attr-defined]


# --- option summaries ------------------------------------------------------------------


def summarize_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` as lobby messages carry them: a text longer than :data:`SUMMARY_CHARS` becomes a summary.

    A summary is ``{"length": <characters>, "sha256": <the first 16 hexadecimal
    digits of the SHA-256 of the text's UTF-8>}``; other values are kept as they are.

    >>> summarize_options({"size": 8, "pieces": "0" * 100})
    {'size': 8, 'pieces': {'length': 100, 'sha256': '134e6543ddc35b40'}}
    """
    return {key: _summary(value) if isinstance(value, str) and len(value) > SUMMARY_CHARS else value for key, value in options.items()}


def _summary(text: str) -> dict[str, Any]:
    return {"length": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()[:16]}


# --- conversion ----------------------------------------------------------------------

_PATH = re.compile(r" - at `\$\.?(?P<path>[^`]*)`$")
_MISSING = re.compile(r"missing required field `(?P<path>[^`]*)`")


def to_wire(message: Message) -> dict[str, Any]:
    """Return ``message`` as a plain map with its ``type``, ready to pack."""
    return msgspec.to_builtins(message, enc_hook=wire_enc_hook)


def _convert(obj: dict[str, Any], union: Any, known: tuple[type[Message], ...]) -> Any:
    request_id = obj.get("id") if type(obj.get("id")) is int else None
    kind = obj.get("type")
    if kind is None:
        raise MessageError("message has no 'type' field", field="type", request_id=request_id)
    if not isinstance(kind, str) or kind not in {cls.__struct_config__.tag for cls in known}:
        raise MessageError(f"unknown message type {kind!r}", field="type", request_id=request_id)
    try:
        return msgspec.convert(obj, union, strict=True, dec_hook=wire_dec_hook)
    except msgspec.ValidationError as exc:
        text = str(exc)
        match = _PATH.search(text) or _MISSING.search(text)
        field = match["path"] if match else None
        detail = _PATH.sub("", text)
        where = f"field {field!r}: " if field else ""
        raise MessageError(f"bad {kind!r} message: {where}{detail}", field=field, request_id=request_id) from None


def parse_request(obj: dict[str, Any]) -> Request:
    """Validate a decoded map as a client request.

    Raises:
        MessageError: naming the missing or bad field (``field``) and carrying the
            request's ``id`` when it could be read.
    """
    return _convert(obj, Request, REQUEST_TYPES)


def parse_server_message(obj: dict[str, Any]) -> ServerMessage:
    """Validate a decoded map as a server reply or push.

    Raises:
        MessageError: naming the missing or bad field.
    """
    return _convert(obj, ServerMessage, SERVER_TYPES)
