"""The asyncio server: wires the connection layer, sessions, the lobby and the tables together.

:class:`server.net.connection.Connections` pumps each connection's bytes through
the sans-IO protocol and hands every request to :meth:`Server._request`,
one at a time, in order. Every request passes one pipeline: who is this, is
the request well formed, does the table exist, may this peer do it, is it
legal, commit, apply, tell everyone concerned.
"""

from __future__ import annotations

import asyncio
import logging
import ssl as ssl_module
from dataclasses import dataclass
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

from .players.accounts import ACCOUNT_MODES, Accounts
from .players.credentials import Credentials
from .bus.local import LocalBus
from .social.chat import TableChat, forget_finished_chat_sql, stored_chat
from .play.computer import DEFAULT_HINT_SECONDS, ComputerPlayers
from .net.connection import Connections, send_protocol_error
from .players.sessions import Sessions
from .play.authority import DEFAULT_ABORT_AFTER_S, Authority
from .play.stored import restore_table
from .tables.lobby import DEFAULT_TICK_S, Lobby
from .net.limits import Limits
from .core.names import name_key
from .net.peer import Peer
from .core.session import Push, Session
from .social.social import Social
from .storage.dblock import DatabaseLock
from .tables.exports import ExportError, export_record
from .players.finger import RatingQueries
from .ratings.rated import show_ratings
from .net import listen
from .storage.common import StorageUnavailable, is_postgres_url
from .storage.opening import open_store
from .storage.rows import DamagedTable, archive_entry_map
from .storage.schema import is_disk_full
from .storage.statements import delete_session_sql
from .storage.store import Statement, Store, StoreError
from .core.errors import RequestError
from .tables.table import Table
from .play.workers import WorkerPool

if TYPE_CHECKING:
    from .cluster import Cluster
    from .cluster.relay import RelayFront
    from .web import WebFace

__all__ = ["Server", "ServerConfig"]

log = logging.getLogger(__name__)

STORAGE_FULL_MESSAGE = "the server cannot save moves right now: its disk is full. Nothing was changed; try again later"
"""The message of a ``storage_full`` error."""

STORAGE_UNAVAILABLE_MESSAGE = "the server cannot save moves right now: its database cannot be reached. Nothing was changed; try again later"
"""The message of a ``storage_unavailable`` error."""

Handler = Callable[[Session, Any, list[Push]], Awaitable[Message]]
AtOnceHandler = Callable[[Session, Any, list[Push]], Message | None]


MOST_LOBBY_TICK_S = 10.0
"""The longest the lobby may collect changes before sending them, in seconds."""
MOST_THINKING_S = 60.0
"""The longest a computer player may be set to think per move or hint, in seconds."""
MOST_ABORT_AFTER_S = 86_400.0
"""The longest ``abort_after_s``: a day."""
MOST_BOT_WORKERS = 256
"""The most worker processes the computer players may be given."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Settings of a server; units are in the names.

    Attributes:
        host: address to listen on (``"0.0.0.0"``: every IPv4 interface).
        port: TCP port (0: pick a free one).
        server_name: shown to clients in ``welcome``.
        db_path: the SQLite database; ``None`` keeps nothing (tests, benchmarks).
        grace_s: how long a disconnected player's seat is held before forfeit.
        limits: what one client may cost (:class:`server.net.limits.Limits`).
        password: if set, ``hello`` must carry it (``bad_password`` otherwise).
        ssl: a server TLS context (see :mod:`server.net.tls`); ``None`` speaks plain TCP.
        lobby_tick_s: how long lobby changes are collected before they go to the lobby's watchers.
        bot_seconds: how long the strongest computer level thinks per move, in seconds
            (``None``: :func:`games.bots.default_seconds`); lower levels think proportionally less.
        hint_seconds: how long the computer thinks for a ``hint``, in seconds.
        bot_workers: worker processes for the computer players (``None``: one per core but one, at least one).
        accounts: whether names may be claimed: ``"off"``, ``"optional"`` or ``"required"`` (see :mod:`server.players.accounts`).
        rated: whether players may create rated tables (``--no-rated``: ``rated_off``).
        abort_after_s: how long the side to move at a timed table may take over its own first move
            before the game is aborted, in seconds (``None``: never).
        http: ``(host, port)`` of the read-only web face (:mod:`server.web`; port 0: any free one),
            or ``None``: no web face (the default).
        bus: a Redis URL (``redis://HOST:PORT``) to share lobby, names and players with the other
            nodes on it (:mod:`server.cluster`); ``None``: one process, the local bus.
        node: this node's name in the cluster (unique among its nodes; ``None``: ``server_name``).
    """

    host: str = "0.0.0.0"
    port: int = 7420
    server_name: str = "parlour"
    db_path: str | None = None
    grace_s: float = 60.0
    limits: Limits = Limits()
    password: str | None = None
    ssl: ssl_module.SSLContext | None = None
    lobby_tick_s: float = DEFAULT_TICK_S
    bot_seconds: float | None = None
    hint_seconds: float = DEFAULT_HINT_SECONDS
    bot_workers: int | None = None
    accounts: str = "optional"
    rated: bool = True
    abort_after_s: float | None = DEFAULT_ABORT_AFTER_S
    http: tuple[str, int] | None = None
    bus: str | None = None
    node: str | None = None

    def __post_init__(self) -> None:
        if not 0 < self.lobby_tick_s <= MOST_LOBBY_TICK_S:
            raise ValueError(f"lobby_tick_s must be more than 0 and at most {MOST_LOBBY_TICK_S:g} seconds, not {self.lobby_tick_s}")
        for name in ("bot_seconds", "hint_seconds"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= MOST_THINKING_S:
                raise ValueError(f"{name} must be more than 0 and at most {MOST_THINKING_S:g} seconds, not {value}")
        if self.abort_after_s is not None and not 0 < self.abort_after_s <= MOST_ABORT_AFTER_S:
            raise ValueError(f"abort_after_s must be more than 0 and at most {MOST_ABORT_AFTER_S:g} seconds, or None, not {self.abort_after_s}")
        if self.bot_workers is not None and not 1 <= self.bot_workers <= MOST_BOT_WORKERS:
            raise ValueError(f"bot_workers must be 1 to {MOST_BOT_WORKERS}, not {self.bot_workers}")
        if self.accounts not in ACCOUNT_MODES:
            raise ValueError(f"accounts must be one of {', '.join(ACCOUNT_MODES)}, not {self.accounts!r}")


class Server:
    """A Parlour server: lobby, tables, sessions and connections.

    Use ``await server.start()``, then ``await server.close()``; or
    ``await server.serve_forever()``. With a ``db_path`` every accepted
    change is committed to SQLite before anyone hears of it, and unfinished
    tables and sessions come back at the next start.
    """

    def __init__(self, config: ServerConfig | None = None) -> None:
        self._config = config or ServerConfig()
        self.connections = Connections(self.config.limits, self._request, self._disconnected)
        self.accounts = Accounts(self.config.accounts, self._persist)
        self.handshake = Sessions(
            self.config.limits, self.config.server_name, self.config.password, self._persist, self._persist_soon, self.accounts
        )
        self.handshake.grace_s = self.config.grace_s
        self.sessions: dict[str, Session] = self.handshake.by_token
        """Token -> session."""
        self.names: dict[str, Session] = self.handshake.by_name
        """Name key -> the session holding the name."""
        self.bus = LocalBus() if self.config.bus is None else _redis_bus(self.config.bus, self.config.node or self.config.server_name)
        self.lobby = Lobby(self.bus, self.config.lobby_tick_s)
        self.tables: dict[int, Table] = self.lobby.tables
        self.authority = Authority(self.config.limits, self.config.grace_s, self.lobby, self._persist, self._persist_soon, self._forget)
        self.authority.durable = False  # until start() opens the store
        self.authority.name_locked_s = lambda session: self.accounts.limits.locked_s(name_key(session.name))
        self.authority.rated_allowed = self.config.rated
        self.authority.abort_after_s = self.config.abort_after_s
        self.ratings = self.authority.ratings
        players = _cluster_players(self.names) if self.config.bus is not None else None
        rating_queries = RatingQueries(self.ratings, self.names if players is None else players)
        self.computers = self.authority.computers = ComputerPlayers(
            WorkerPool(self.config.bot_workers), self.authority.play_computer_move, self.config.bot_seconds, self.config.hint_seconds
        )
        self.store: Store | None = None
        self._db_lock: DatabaseLock | None = None
        self._listener: listen.Listener | None = None
        self.web: WebFace | None = None
        """The web face once started with ``config.http``; ``None`` without one."""
        self.http_address: tuple[str, int] | None = None
        """Where the web face listens, once started: ``(host, port)``."""
        self._closing = False
        credentials = Credentials(self.accounts, self.handshake)
        self._dispatch: dict[type, Handler] = {
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
        self.social = Social(
            self.authority, self.names, self.tables, self.bus, lambda: self.config.limits, self._persist, self.config.lobby_tick_s,
            self.ratings, lambda: self.authority.rated_allowed, players=players,
        )  # fmt: skip
        self.social.install(self._dispatch)
        self.cluster: Cluster | None = None
        self._relay: RelayFront | None = None  # routes requests about other nodes' tables (a node of a cluster)
        if players is not None:  # Redis is imported only by a node of a cluster
            from .cluster import Cluster

            self.cluster = Cluster(self.bus, self.handshake, self.lobby, self.authority, self.social.mutes, players)  # type: ignore[arg-type]
            self.cluster.install(self._dispatch)
            self._relay = self.cluster.relay(self._request, self._disconnected)
        self.table_chat = TableChat(self.social.mutes, self._persist)
        self.authority.chat_for = self.table_chat.history_for
        self._at_once: dict[type, AtOnceHandler] = {PlayMove: self.authority.play_move_now}
        """Handlers that answer without waiting when they can (``None``: the request's ``_dispatch`` handler must)."""

    @property
    def config(self) -> ServerConfig:
        """The server's settings; a new value takes effect for what happens next (grace periods, limits of new tables)."""
        return self._config

    @config.setter
    def config(self, config: ServerConfig) -> None:
        self._config = config
        self.handshake.grace_s = config.grace_s
        self.authority.grace_s = config.grace_s
        self.authority.limits = config.limits
        self.authority.rated_allowed = config.rated
        self.authority.abort_after_s = config.abort_after_s

    # --- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Open the database (restoring what it holds) and start listening.

        Raises:
            server.storage.store.StoreError: the database cannot be used (``SchemaError``: not a
                Parlour database this version can use; ``DatabaseInUse``: another server runs on it).
            OSError: the address cannot be bound.
        """
        await self.accounts.prepare()
        try:
            if self.config.db_path is not None:
                if not is_postgres_url(self.config.db_path):  # one server per SQLite file; a PostgreSQL server keeps its own order
                    self._db_lock = DatabaseLock.acquire(self.config.db_path)
                self.store = open_store(self.config.db_path)
                self.authority.durable = True
                self._at_once.clear()  # every move waits for its commit: no handler can answer at once
                self.ratings.store = self.store
                await self.store.start()
                self.handshake.server_id = self.store.server_id()
                await self._set_aside(self._restore(self.store))
                self.social.restore(self.store)
                self.table_chat.restore(self.tables, self.store.read(stored_chat))
                self._persist_soon(forget_finished_chat_sql())
                log.info("restored %d unfinished tables and %d sessions", len(self.tables), len(self.sessions))  # once all of it was read
            if self.cluster is not None:
                await self.cluster.start()
            sockets = await listen.bind(self.config.host, self.config.port)
        except BaseException:
            await self._release_storage()
            raise
        connections = self.connections
        connections.fit_to_descriptors()
        self._listener = listen.Listener(
            sockets, connections.protocol_factory, room=connections.wait_for_room, hold=connections.hold_descriptor, release=connections.free_descriptor,
            ssl=self.config.ssl, ssl_handshake_timeout_s=self.config.limits.handshake_timeout_s,
        )  # fmt: skip
        self._listener.start()
        connections.start_deadlines()
        if self.config.http is not None:
            await self._start_web(*self.config.http)
        for table in list(self.tables.values()):
            self.computers.wake(table)  # a computer to move when the server stopped thinks again

    async def _start_web(self, host: str, port: int) -> None:
        """Start the web face (imported only now: a server without ``--http`` never loads aiohttp).

        Raises:
            OSError: its address cannot be bound (the game port is closed again first).
        """
        from .web import WebFace

        web = WebFace(self)
        try:
            self.http_address = await web.start(host, port)
        except OSError as exc:
            await self.close()
            raise OSError(exc.errno, f"the web face's address {host}:{port}: {exc.strerror or exc}") from None
        except BaseException:
            await self.close()
            raise
        self.web = web
        self.handshake.http_port = self.http_address[1]

    @property
    def server_id(self) -> str:
        """The server's stable identity (``welcome.server_id``): its database's, or this process's without one."""
        return self.handshake.server_id

    @property
    def peers(self) -> dict[Peer, None]:
        """The open connections (the keys)."""
        return self.connections.peers

    @property
    def max_connections(self) -> int:
        """Open connections allowed: ``limits.max_connections``, or fewer if the descriptor limit is lower."""
        return self.connections.max_connections

    async def _release_storage(self) -> None:
        """Close the database and give up its lock (after a failed start, or at the end of :meth:`close`)."""
        if self.store is not None:
            await self.store.close()
        if self._db_lock is not None:
            self._db_lock.release()

    def _restore(self, store: Store) -> list[DamagedTable]:
        """Bring back the stored sessions and unfinished tables; return the tables that cannot come back."""
        self.accounts.load(store.accounts())
        self.handshake.restore(store.sessions())
        damaged: list[DamagedTable] = []
        for stored in store.unfinished_tables(damaged):
            try:
                table = restore_table(stored, self.sessions, self.bus)
            except Exception as exc:  # whatever a bad row makes the engine or the clock raise
                damaged.append(DamagedTable(stored.id, stored.row.status, f"it no longer replays ({type(exc).__name__}: {exc})"))
                continue
            self.tables[table.id] = table
            for seat, holder in enumerate(table.seats):
                if holder is not None:
                    holder.seats[table.id] = seat
                    self.handshake.claim_name(holder)
                    self.authority.hold_seat(table, seat, holder)
            show_ratings(self.ratings, table)
            if table.status == "playing" and table.clock is not None:
                table.start_clock()  # a side's time runs only after its own first move (a snapshot of an older server may differ)
            self.authority.schedule_flag(table)
        for session in [s for s in self.sessions.values() if not s.seats]:
            del self.sessions[session.token]  # holds nothing: its name must not stay half-reserved
            self._persist_soon(delete_session_sql(session.token))
        self.authority.next_table_id = store.next_table_id()
        return damaged

    async def _set_aside(self, damaged: list[DamagedTable]) -> None:
        """Mark tables that cannot be restored so that they are not tried again; their rows are kept."""
        assert self.store is not None
        for table in damaged:
            log.error("table %d cannot be restored and is set aside (kept in the database, out of the lobby): %s", table.id, table.reason)
            try:
                await self.store.set_aside(table)
            except StoreError as exc:
                log.error("table %d could not be marked as set aside (it will be tried again at the next start): %s", table.id, exc)

    @property
    def sockets(self) -> list[tuple[str, int]]:
        """The (host, port) pairs the server listens on (none once it stopped listening)."""
        assert self._listener is not None
        return [sock.getsockname()[:2] for sock in self._listener.sockets]

    @property
    def port(self) -> int:
        """The port actually bound (useful when the config asked for 0)."""
        return self.sockets[0][1]

    async def serve_forever(self) -> None:
        """Serve until cancelled (which stops accepting connections) or until :meth:`close`."""
        if self._listener is None:
            await self.start()
        assert self._listener is not None
        try:
            await asyncio.shield(self._listener.closed)
        except asyncio.CancelledError:
            await self._listener.close()
            raise

    async def close(self, reason: str = "the server is shutting down") -> None:
        """Tell every client, close every connection, flush the database. Idempotent."""
        if self._closing:
            return
        self._closing = True
        if self._listener is not None:
            await self._listener.close()
        if self.web is not None:
            await self.web.close()
        self.lobby.close()
        self.social.close()
        self.authority.cancel_timers()
        await self.connections.close(reason)
        await self.computers.close()
        if self.cluster is not None:
            await self.cluster.close()
        await self._release_storage()

    def _persist_soon(self, *statements: Statement) -> None:
        """Commit ``statements`` in the background (housekeeping nobody waits for); a failure is logged in one line."""
        if self.store is None:
            return
        task = asyncio.ensure_future(self._persist(*statements))
        task.add_done_callback(_log_failed_write)

    def _persist(self, *statements: Statement) -> Awaitable[None]:
        """Commit ``statements`` in one transaction (grouped with concurrent ones), once what this returns is awaited;
        no-op without a database. Not a coroutine: the store's future is awaited with no frame of this method between."""
        store = self.store
        if store is None or not statements:
            return _nothing()
        return store.write(*statements)

    def _request(self, peer: Peer, request: Request) -> Awaitable[None] | None:
        """Answer ``request`` at once (``None``) if its handler can without waiting, else return what answers it."""
        relay = self._relay
        if relay is not None and relay.route(peer, request):
            return None  # the table's node answers, through the relay
        answer_now = self._at_once.get(type(request))
        if answer_now is None:
            return self._answer(peer, request)
        assert peer.session is not None
        then: list[Push] = []
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
        """The reply to ``request`` whose handler raised ``exc``; ``None`` if it was a protocol error (answered already)."""
        if isinstance(exc, RequestError):
            return Error(id=request.id, code=exc.code, message=exc.message, field=exc.field)
        if isinstance(exc, ProtocolError):
            send_protocol_error(peer, exc)
            return None
        if is_disk_full(exc):  # SQLITE_FULL only: the request may succeed once there is room
            log.error("cannot save %s from %s: %s", type(request).__name__, peer.address, exc)
            return Error(id=request.id, code=Code.STORAGE_FULL, message=STORAGE_FULL_MESSAGE)
        if isinstance(exc, StorageUnavailable):  # PostgreSQL stopped or unreachable: the request may succeed once it is back
            log.error("cannot save %s from %s: %s", type(request).__name__, peer.address, exc)
            return Error(id=request.id, code=Code.STORAGE_UNAVAILABLE, message=STORAGE_UNAVAILABLE_MESSAGE)
        log.exception("request %r from %s failed", request, peer.address)
        return Error(id=request.id, code=Code.INTERNAL_ERROR, message="the server failed to handle this request")

    def _disconnected(self, peer: Peer) -> None:
        self.bus.unsubscribe_all(peer)
        session = peer.session
        if session is None or session.peer is not peer:
            return  # never said hello, or already replaced by a resumed connection
        session.peer = None
        log.info("%s (%s) disconnected", peer.address, session.name)
        if self._relay is not None:
            self._relay.disconnected(session)
        self.social.disconnected(session)
        if not self._closing:
            self.authority.left(session)

    def _forget(self, session: Session) -> None:
        """Drop a session that holds nothing: its name is free again, its token dead."""
        self.social.forget(session)
        self.handshake.forget(session)

    # --- handshake ----------------------------------------------------------------------

    async def _hello(self, peer: Peer, hello: Hello, then: list[Push]) -> Message:
        session, welcome = await self.handshake.hello(peer, hello)
        if welcome.resumed:
            self.authority.rejoin(session, then)
            self.social.resumed(session, then)
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



def _redis_bus(url: str, node: str) -> LocalBus:
    """A :class:`server.bus.redis.RedisBus` (imported here: one node never loads Redis)."""
    from .bus.redis import RedisBus

    return RedisBus(url, node, crosses=lambda topic: not topic.startswith("table:"))  # tables reach other nodes through the relay


def _cluster_players(local: dict[str, Session]) -> Any:
    from .cluster.players import ClusterPlayers

    return ClusterPlayers(local)


async def _nothing() -> None:
    """What :meth:`Server._persist` returns when there is nothing to commit: an awaitable that is done at once."""


def _log_failed_write(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a background write failed: %s", task.exception())




