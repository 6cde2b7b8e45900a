"""Every request's way through the server: the handler table, answering at once or after waiting, errors as replies.

A mixin of :class:`server.app.Server` (which holds the state named below), with
the small handlers that need no group of their own: the lobby's list and
watch, chat, the archive, ``ping`` and ``hello``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from protocol import Code, ProtocolError
from protocol.messages import (
    Answer,
    AskHint,
    Archive,
    Chat,
    CreateTable,
    Error,
    Hello,
    Identify,
    GetRecord,
    JoinTable,
    LeaveTable,
    ListArchive,
    ListTables,
    Message,
    Offer,
    Ok,
    Ping,
    Finger,
    GetLeaderboard,
    PlayMove,
    Pong,
    Request,
    Record,
    Resign,
    AbortGame,
    Say,
    SetPassword,
    ChangeSecret,
    Tables,
    WatchLobby,
    WatchTable,
)

from .config import ServerConfig
from .core.errors import Relayed, RequestError
from .core.session import Push, Session
from .net.connection import send_protocol_error
from .net.peer import Peer
from .play.authority import Authority
from .players.credentials import Credentials
from .players.finger import RatingQueries
from .players.sessions import Sessions
from .social.chat import TableChat
from .social.social import Social
from .storage.common import LeaseLost, StorageUnavailable
from .storage.rows import archive_entry_map
from .storage.schema import is_disk_full
from .storage.store import Store
from .tables.exports import ExportError, export_record
from .tables.fanout import send_moved
from .tables.lobby import MOVED_AWAY_MESSAGE, Lobby

if TYPE_CHECKING:
    from .cluster.relay import RelayFront

__all__ = ["AtOnceHandler", "Handler", "LEASE_LOST_MESSAGE", "Requests", "STORAGE_FULL_MESSAGE", "STORAGE_UNAVAILABLE_MESSAGE"]

log = logging.getLogger("server.app")  # the server's log lines keep the logger they were always written to

STORAGE_FULL_MESSAGE = "the server cannot save moves right now: its disk is full. Nothing was changed; try again later"
"""The message of a ``storage_full`` error."""

LEASE_LOST_MESSAGE = MOVED_AWAY_MESSAGE
"""The ``storage_unavailable`` message of a write refused because another node took the table over (:class:`LeaseLost`)."""
STORAGE_UNAVAILABLE_MESSAGE = "the server cannot save moves right now: its database cannot be reached. Nothing was changed; try again later"
"""The message of a ``storage_unavailable`` error."""

Handler = Callable[[Session, Any, list[Push]], Awaitable[Message]]
AtOnceHandler = Callable[[Session, Any, list[Any]], Message | None]
"""A handler that answers without waiting, or returns ``None`` when it must wait (its :data:`Handler` answers then).

What it leaves in the list follows its reply: a :data:`Push`, or a ``(table, ply)`` pair, the ``moved`` of a ply
of a game that goes on (``send_moved(table, ply, False, None, True)``: every move), called straight from
:meth:`Requests._request`: a ``functools.partial`` costs its creation and a call through C (about 2,600
instructions more a move)."""


class Requests:
    """The request pipeline and the small handlers, for :class:`server.app.Server`."""

    config: ServerConfig
    handshake: Sessions
    lobby: Lobby
    authority: Authority
    social: Social
    table_chat: TableChat
    store: Store | None
    _relay: RelayFront | None
    _dispatch: dict[type, Handler]
    _at_once: dict[type, AtOnceHandler]
    _drop_lost: Callable[[set[int]], None]

    def _handlers(self, credentials: Credentials, rating_queries: RatingQueries) -> dict[type, Handler]:
        """The handler of each request type but ``hello`` and ``identify`` (the social group and a cluster add theirs)."""
        return {
            ListTables: self._list_tables,
            WatchLobby: self._watch_lobby,
            CreateTable: self.authority.create_table,
            JoinTable: self.authority.join_table,
            WatchTable: self.authority.watch_table,
            LeaveTable: self.authority.leave_table,
            PlayMove: self.authority.play_move,
            Resign: self.authority.resign,
            AbortGame: self.authority.abort,
            Offer: self.authority.offer,
            Answer: self.authority.answer,
            Say: self._say,
            ListArchive: self._list_archive,
            GetRecord: self._get_record,
            Ping: self._ping,
            AskHint: self.authority.hint,
            SetPassword: credentials.set_password,
            ChangeSecret: credentials.change_secret,
            Finger: rating_queries.finger,
            GetLeaderboard: rating_queries.leaderboard,
        }

    def _request(self, peer: Peer, request: Request) -> Awaitable[None] | None:
        """Answer ``request`` at once (``None``) if its handler can without waiting, else return what answers it."""
        relay = self._relay
        if relay is not None and relay.route(peer, request):
            return None  # the table's node answers, through the relay
        answer_now = self._at_once.get(type(request))
        if answer_now is None:
            return self._answer(peer, request)
        assert peer.session is not None
        then: list[Any] = []
        try:
            reply = answer_now(peer.session, request, then)
        except Exception as exc:
            reply = self._failed(peer, request, exc)
            if reply is not None:
                peer.send(reply)
            return None
        if reply is None:
            return self._answer(peer, request)  # it must wait: the whole handler, from the start
        peer.send(reply)
        for push in then:  # the reply is no error (those are raised): its pushes follow it
            if push.__class__ is tuple:  # (table, ply): see AtOnceHandler
                send_moved(push[0], push[1], False, None, True)
            else:
                push()
        return None

    async def _answer(self, peer: Peer, request: Request) -> None:
        """Answer ``request``: its handler's reply (or the error it raised), then the pushes it left in ``then``."""
        then: list[Push] = []
        try:
            if isinstance(request, Hello):
                reply = await self._hello(peer, request, then)
            elif isinstance(request, Identify):
                reply = self.handshake.identify(request)
            else:
                assert peer.session is not None
                reply = await self._dispatch[type(request)](peer.session, request, then)
        except Exception as exc:
            reply = self._failed(peer, request, exc)
            if reply is None:
                return
        peer.send(reply)
        if not isinstance(reply, Error):
            for push in then:  # pushes follow the reply, so the requester sees its reply first
                push()

    def _failed(self, peer: Peer, request: Request, exc: Exception) -> Message | None:
        """The reply to ``request`` whose handler raised ``exc``; ``None`` if it was a protocol error (answered already)
        or the request was handed to another node (:class:`server.core.errors.Relayed`)."""
        if isinstance(exc, Relayed):
            return None  # another node answers it, through the relay
        if isinstance(exc, RequestError):
            return Error(id=request.id, code=exc.code, message=exc.message, field=exc.field)
        if isinstance(exc, ProtocolError):
            send_protocol_error(peer, exc)
            return None
        if is_disk_full(exc):  # SQLITE_FULL only: the request may succeed once there is room
            log.error("cannot save %s from %s: %s", type(request).__name__, peer.address, exc)
            return Error(id=request.id, code=Code.STORAGE_FULL, message=STORAGE_FULL_MESSAGE)
        if isinstance(exc, LeaseLost):  # another node of the cluster claimed the table: it answers from now on
            log.warning("cannot save %s from %s: %s", type(request).__name__, peer.address, exc)
            if exc.table is not None:
                self._drop_lost({exc.table})
            return Error(id=request.id, code=Code.STORAGE_UNAVAILABLE, message=LEASE_LOST_MESSAGE)
        if isinstance(exc, StorageUnavailable):  # PostgreSQL stopped or unreachable: the request may succeed once it is back
            log.error("cannot save %s from %s: %s", type(request).__name__, peer.address, exc)
            return Error(id=request.id, code=Code.STORAGE_UNAVAILABLE, message=STORAGE_UNAVAILABLE_MESSAGE)
        log.exception("request %r from %s failed", request, peer.address)
        return Error(id=request.id, code=Code.INTERNAL_ERROR, message="the server failed to handle this request")

    # --- handshake ----------------------------------------------------------------------

    async def _hello(self, peer: Peer, hello: Hello, then: list[Push]) -> Message:
        session, welcome = await self.handshake.hello(peer, hello)
        if welcome.resumed:
            self.authority.rejoin(session, then)
            self.social.resumed(session, then)
            self.handshake.reattach(session, then)
        return welcome

    # --- lobby --------------------------------------------------------------------------

    async def _list_tables(self, session: Session, request: ListTables, then: list[Push]) -> Message:
        tables, cursor = self.lobby.page(request.after or 0, request.limit)
        return Tables(id=request.id, tables=tables, next=cursor)

    async def _watch_lobby(self, session: Session, request: WatchLobby, then: list[Push]) -> Message:
        assert session.peer is not None
        if request.watch:
            self.lobby.watch(session.peer)
        else:
            self.lobby.unwatch(session.peer)
        return Ok(id=request.id)

    # --- chat, archive ------------------------------------------------------------

    async def _say(self, session: Session, request: Say, then: list[Push]) -> Message:
        most = self.config.limits.max_chat_chars
        if len(request.text) > most:
            raise RequestError(Code.BAD_MESSAGE, f"a chat line has at most {most} characters, not {len(request.text)}", "text")
        if request.table is not None:
            return await self.table_chat.say(session, self.authority.table(request.table), request, then)
        message = Chat(name=session.name, text=request.text, table=None)
        then.append(lambda: self.lobby.say(message))
        return Ok(id=request.id)

    async def _list_archive(self, session: Session, request: ListArchive, then: list[Push]) -> Message:
        entries = self.store.archive(request.limit, request.offset) if self.store is not None else []
        return Archive(id=request.id, games=[archive_entry_map(entry) for entry in entries])

    async def _get_record(self, session: Session, request: GetRecord, then: list[Push]) -> Message:
        stored = self.store.load(request.table) if self.store is not None else None
        if stored is None or stored.row.status != "over" or "set_aside" in (stored.row.outcome or {}):
            raise RequestError(Code.NO_SUCH_TABLE, f"there is no finished game {request.table} in the archive")
        try:
            text = export_record(self.store, stored, request.format)  # type: ignore[arg-type]
        except ExportError as exc:
            raise RequestError(Code.BAD_REQUEST, str(exc), "format") from None
        return Record(id=request.id, text=text, format=request.format)

    async def _ping(self, session: Session, request: Ping, then: list[Push]) -> Message:
        return Pong(id=request.id)
