"""The asyncio server: wires the connection layer, sessions, the lobby and the tables together.

:class:`server.net.connection.Connections` pumps each connection's bytes through
the sans-IO protocol and hands every request to :meth:`Server._request`
(:mod:`server.dispatch`),
one at a time, in order. Every request passes one pipeline: who is this, is
the request well formed, does the table exist, may this peer do it, is it
legal, commit, apply, tell everyone concerned.
"""

from __future__ import annotations

import asyncio
import logging
from types import ModuleType
from typing import TYPE_CHECKING, Awaitable

from protocol.messages import PlayMove

from .players.accounts import Accounts
from .players.credentials import Credentials
from .bus.local import LocalBus
from .social.chat import TableChat, forget_finished_chat_sql, stored_chat
from .play.computer import ComputerPlayers
from .net.connection import Connections
from .players.sessions import Sessions
from .play.authority import Authority
from .tables.lobby import Lobby
from .core.names import name_key
from .net.peer import Peer
from .core.session import Session
from .social.social import Social
from .storage.dblock import DatabaseLock
from .storage.pg_lock import PostgresLock
from .players.finger import RatingQueries
from .net import listen
from .storage.common import is_postgres_url
from .storage.opening import open_store
from .storage.store import Statement, Store
from .tables.table import Table
from .play.workers import WorkerPool
from .config import ServerConfig
from .dispatch import AtOnceHandler, Handler, Requests
from .startup import Restoring

if TYPE_CHECKING:
    from .cluster import Cluster
    from .cluster.failover import Failover
    from .cluster.relay import RelayFront
    from .web import WebFace

__all__ = ["Server", "ServerConfig"]

log = logging.getLogger(__name__)


class Server(Requests, Restoring):
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
        wiring = self._wiring = _cluster_wiring(self.config)  # None: one process, which loads neither Redis nor server.cluster
        self.node = self.config.node or self.config.server_name
        """This node's name in its cluster (the server's name on its own)."""
        self.bus = LocalBus() if wiring is None else wiring.redis_bus(self.config.bus, self.node)
        self.lobby = Lobby(self.bus, self.config.lobby_tick_s)
        self.tables: dict[int, Table] = self.lobby.tables
        self.authority = Authority(self.config.limits, self.config.grace_s, self.lobby, self._persist, self._persist_soon, self._forget)
        self.authority.durable = False  # until start() opens the store
        self.authority.name_locked_s = lambda session: self.accounts.limits.locked_s(name_key(session.name))
        self.authority.rated_allowed = self.config.rated
        self.authority.abort_after_s = self.config.abort_after_s
        self.ratings = self.authority.ratings
        players = wiring.cluster_players(self.names) if wiring is not None else None
        rating_queries = RatingQueries(self.ratings, self.names if players is None else players)
        self.computers = self.authority.computers = ComputerPlayers(
            WorkerPool(self.config.bot_workers), self.authority.play_computer_move, self.config.bot_seconds, self.config.hint_seconds
        )
        self.store: Store | None = None
        self._db_lock: DatabaseLock | PostgresLock | None = None
        self._lock_keeper: asyncio.Task[None] | None = None  # PostgreSQL: takes the lock again after a restart (PostgresLock.keep)
        self.failover: Failover | None = None
        """A node of a cluster: its table leases, renewed, and the other nodes' expired ones, claimed (after :meth:`start`)."""
        self._listener: listen.Listener | None = None
        self.web: WebFace | None = None
        """The web face once started with ``config.http``; ``None`` without one."""
        self.http_address: tuple[str, int] | None = None
        """Where the web face listens, once started: ``(host, port)``."""
        self._closing = False
        credentials = Credentials(self.accounts, self.handshake)
        self._dispatch: dict[type, Handler] = self._handlers(credentials, rating_queries)
        self.social = Social(
            self.authority, self.names, self.tables, self.bus, lambda: self.config.limits, self._persist, self.config.lobby_tick_s,
            self.ratings, lambda: self.authority.rated_allowed, players=players,
        )  # fmt: skip
        self.social.install(self._dispatch)
        self.cluster: Cluster | None = None
        self._relay: RelayFront | None = None  # routes requests about other nodes' tables (a node of a cluster)
        self.table_chat = TableChat(self.social.mutes, self._persist)
        if wiring is not None:
            self.cluster, self._relay = wiring.join(
                self.bus, self.handshake, self.lobby, self.authority, self.social.mutes, players, self._dispatch, self._request, self._disconnected,
                self.social, self.table_chat.history,
            )  # fmt: skip
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
                if not is_postgres_url(self.config.db_path):  # one server per database (or per node name of a cluster)
                    self._db_lock = DatabaseLock.acquire(self.config.db_path)
                else:
                    self._db_lock = PostgresLock.acquire(self.config.db_path, self.node if self.cluster is not None else None)
                    self._lock_keeper = asyncio.ensure_future(self._db_lock.keep())
                self.store = open_store(self.config.db_path)
                self.authority.durable = True
                self._at_once.clear()  # every move waits for its commit: no handler can answer at once
                self.ratings.store = self.store
                await self.store.start()
                self.handshake.server_id = self.store.server_id()
                if self.cluster is not None:
                    self.cluster.share(self.store)  # before the restore: its clean-up keeps what other nodes still seat
                held = await self._hold_leases(self.config.db_path) if self._wiring is not None else None
                await self._set_aside(self._restore(self.store, held))
                self.social.restore(self.store)
                self.table_chat.restore(self.tables, self.store.read(stored_chat))
                self._persist_soon(forget_finished_chat_sql())
                log.info("restored %d unfinished tables and %d sessions", len(self.tables), len(self.sessions))  # once all of it was read
            if self.cluster is not None:
                await self.cluster.start()
            if self.failover is not None:
                self.failover.start()
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

    async def _hold_leases(self, url: str) -> set[int]:
        """A node of a cluster: take the leases of the tables it may restore; from now on its writes about a table are fenced.

        Raises:
            server.storage.store.StoreError: the database cannot be reached.
        """
        assert self._wiring is not None
        leases = self._wiring.leases(url, self.node, self.config.lease_s)
        self.failover = self._wiring.failover(leases, self.bus, self._unfinished, self._take_over, self._drop_lost)
        held: set[int] = await leases.claim_at_start()
        self.authority.fence, self.authority.lease = leases.fence, leases.lease
        return held

    def _unfinished(self) -> set[int]:
        """The live tables whose game is not over and that no write is changing now (see :class:`server.cluster.failover.Failover`)."""
        return {table.id for table in self.tables.values() if table.outcome is None and not table.lock.locked()}

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
        if self._lock_keeper is not None:
            self._lock_keeper.cancel()
        if self.store is not None:
            await self.store.close()
        if self.failover is not None:
            await self.failover.close()
        if self._db_lock is not None:
            self._db_lock.release()


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
        if self.failover is not None and self.cluster is not None:
            self.cluster.handed_over = await self.failover.hand_over()  # the others claim this node's tables now
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
        lock = self._db_lock
        if type(lock) is PostgresLock and lock.refusal is not None:  # PostgreSQL restarted: not ours until the lock is again
            return _refused(lock.refusal)
        return store.write(*statements)

    def _disconnected(self, peer: Peer) -> None:
        self.bus.unsubscribe_all(peer)
        session = peer.session
        if session is None or session.peer is not peer:
            return  # never said hello, or already replaced by a resumed connection
        moved = self._moved_away(session)
        session.peer = None
        log.info("%s (%s) disconnected", peer.address, session.name)
        if self._relay is not None:
            self._relay.disconnected(session)
        self.social.disconnected(session)
        if not self._closing:
            self.authority.left(session, moved=moved)

    def _moved_away(self, session: Session) -> bool:
        """Whether ``session`` (its connection still set) went on at another node: a node of a cluster let it go
        (:meth:`server.players.sessions.Sessions.let_go`), and it is no player of another node's relay link."""
        return self.cluster is not None and self.handshake.by_token.get(session.token) is not session and not self.cluster.is_link(session)

    def _forget(self, session: Session) -> None:
        """Drop a session that holds nothing: its name is free again, its token dead."""
        self.social.forget(session)
        self.handshake.forget(session)



def _cluster_wiring(config: ServerConfig) -> ModuleType | None:
    """:mod:`server.cluster.wiring` for a node of a cluster (``config.bus`` set), imported only now; ``None`` without a bus."""
    if config.bus is None:
        return None
    from .cluster import wiring

    return wiring


async def _nothing() -> None:
    """What :meth:`Server._persist` returns when there is nothing to commit: an awaitable that is done at once."""


async def _refused(refusal: Exception) -> None:
    """What :meth:`Server._persist` returns while the server does not hold its PostgreSQL lock: an awaitable raising ``refusal`` anew."""
    raise type(refusal)(str(refusal))


def _log_failed_write(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a background write failed: %s", task.exception())
