"""The asyncio server: wires the connection layer, sessions, the lobby and the tables together.

:class:`server.connection.Connections` pumps each connection's bytes through
the sans-IO protocol and hands every request to :meth:`Server._request`,
one at a time, in order. Every request passes one pipeline: who is this, is
the request well formed, does the table exist, may this peer do it, is it
legal, commit, apply, tell everyone concerned.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import secrets
import ssl as ssl_module
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import games
from protocol import Code, ProtocolError
from protocol.codec import encode_message
from games.record import format_record
from protocol.messages import (
    Answer,
    Answered,
    Archive,
    Chat,
    CreateTable,
    Error,
    GameOver,
    GameStarted,
    Hello,
    GetRecord,
    JoinTable,
    LeaveTable,
    ListArchive,
    ListTables,
    Message,
    Moved,
    Offer,
    Offered,
    Ok,
    Ping,
    PlayerAway,
    PlayerBack,
    PlayMove,
    Pong,
    Request,
    Record,
    RematchStarted,
    Resign,
    Resumed,
    Say,
    TableJoined,
    Tables,
    TakenBack,
    WatchLobby,
    WatchTable,
    summarize_options,
)

from .bus import LocalBus
from .connection import Connections, send_protocol_error
from .sessions import Sessions
from .lobby import DEFAULT_TICK_S, Lobby
from .limits import Limits
from .peer import Peer
from .session import Session, new_token
from .clock import Clock, FlagFell, TimeControl, TimeControlError
from .dblock import DatabaseLock
from .descriptors import quiet_accept_errors
from .store import (
    ArchiveEntry,
    DamagedTable,
    MoveRow,
    Statement,
    SQLiteStore,
    Store,
    StoreError,
    StoredTable,
    TableRow,
    append_move_sql,
    create_table_sql,
    delete_session_sql,
    delete_table_sql,
    is_disk_full,
    iso_utc,
    truncate_moves_sql,
    update_table_sql,
)
from .table import Played, RequestError, Table, view_of

__all__ = ["Server", "ServerConfig"]

log = logging.getLogger(__name__)

STORAGE_FULL_MESSAGE = "the server cannot save moves right now: its disk is full. Nothing was changed; try again later"
"""The message of a ``storage_full`` error."""

Push = Callable[[], None]
Handler = Callable[[Session, Any, list[Push]], Awaitable[Message]]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Settings of a server; units are in the names.

    Attributes:
        host: address to listen on (``"0.0.0.0"``: every IPv4 interface).
        port: TCP port (0: pick a free one).
        server_name: shown to clients in ``welcome``.
        db_path: the SQLite database; ``None`` keeps nothing (tests, benchmarks).
        grace_s: how long a disconnected player's seat is held before forfeit.
        limits: what one client may cost (:class:`server.limits.Limits`).
        password: if set, ``hello`` must carry it (``bad_password`` otherwise).
        ssl: a server TLS context (see :mod:`server.tls`); ``None`` speaks plain TCP.
        lobby_tick_s: how long lobby changes are collected before they go to the lobby's watchers.
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


class Server:
    """A Parlour server: lobby, tables, sessions and connections.

    Use ``await server.start()``, then ``await server.close()``; or
    ``await server.serve_forever()``. With a ``db_path`` every accepted
    change is committed to SQLite before anyone hears of it, and unfinished
    tables and sessions come back at the next start.
    """

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.connections = Connections(self.config.limits, self._request, self._disconnected)
        self.handshake = Sessions(self.config.limits, self.config.server_name, self.config.password, self._persist, self._persist_soon)
        self.sessions: dict[str, Session] = self.handshake.by_token
        """Token -> session."""
        self.names: dict[str, Session] = self.handshake.by_name
        """Name key -> the session holding the name."""
        self.bus = LocalBus()
        self.lobby = Lobby(self.bus, self.config.lobby_tick_s)
        self.tables: dict[int, Table] = self.lobby.tables
        self.store: Store | None = None
        self._db_lock: DatabaseLock | None = None
        self._next_table_id = 1
        self._server: asyncio.Server | None = None
        self._tables_by_host: dict[str, set[int]] = {}  # address -> ids of tables it created (see _check_address_budget)
        self._closing = False
        self._dispatch: dict[type, Handler] = {
            ListTables: self._list_tables,
            WatchLobby: self._watch_lobby,
            CreateTable: self._create_table,
            JoinTable: self._join_table,
            WatchTable: self._watch_table,
            LeaveTable: self._leave_table,
            PlayMove: self._play_move,
            Resign: self._resign,
            Offer: self._offer,
            Answer: self._answer,
            Say: self._say,
            ListArchive: self._list_archive,
            GetRecord: self._get_record,
            Ping: self._ping,
        }

    # --- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Open the database (restoring what it holds) and start listening.

        Raises:
            server.store.StoreError: the database cannot be used (``SchemaError``: not a
                Parlour database this version can use; ``DatabaseInUse``: another server runs on it).
            OSError: the address cannot be bound.
        """
        try:
            if self.config.db_path is not None:
                self._db_lock = DatabaseLock.acquire(self.config.db_path)
                self.store = SQLiteStore.open(self.config.db_path)
                await self.store.start()
                await self._set_aside(self._restore(self.store))
            tls = {"ssl": self.config.ssl, "ssl_handshake_timeout": self.config.limits.handshake_timeout_s} if self.config.ssl else {}
            self._server = await asyncio.start_server(self.connections.serve, self.config.host, self.config.port, **tls)
        except BaseException:
            await self._release_storage()
            raise
        self.connections.fit_to_descriptors()
        quiet_accept_errors(asyncio.get_running_loop())
        self.connections.start_deadlines()

    @property
    def peers(self) -> set[Peer]:
        """The open connections."""
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
        self.handshake.restore(store.sessions())
        damaged: list[DamagedTable] = []
        for stored in store.unfinished_tables(damaged):
            try:
                table = restore_table(stored, self.sessions)
            except Exception as exc:  # whatever a bad row makes the engine or the clock raise
                damaged.append(DamagedTable(stored.id, stored.row.status, f"it no longer replays ({type(exc).__name__}: {exc})"))
                continue
            self.tables[table.id] = table
            for seat, holder in enumerate(table.seats):
                if holder is not None:
                    holder.seats[table.id] = seat
                    self.handshake.claim_name(holder)
                    self._hold_seat(table, seat, holder)
            if table.status == "playing" and table.clock is not None and table.clock.running is None:
                table.start_clock()
            self._schedule_flag(table)
        for session in [s for s in self.sessions.values() if not s.seats]:
            del self.sessions[session.token]  # holds nothing: its name must not stay half-reserved
            self._persist_soon(delete_session_sql(session.token))
        self._next_table_id = store.next_table_id()
        log.info("restored %d unfinished tables and %d sessions", len(self.tables), len(self.sessions))
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
        """The (host, port) pairs the server listens on."""
        assert self._server is not None
        return [sock.getsockname()[:2] for sock in self._server.sockets]

    @property
    def port(self) -> int:
        """The port actually bound (useful when the config asked for 0)."""
        return self.sockets[0][1]

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self, reason: str = "the server is shutting down") -> None:
        """Tell every client, close every connection, flush the database. Idempotent."""
        if self._closing:
            return
        self._closing = True
        if self._server is not None:
            self._server.close()
        self.lobby.close()
        for table in self.tables.values():
            for timer in table.grace.values():
                timer.cancel()
        await self.connections.close(reason)
        if self._server is not None:
            await self._server.wait_closed()
        await self._release_storage()

    def _persist_soon(self, *statements: Statement) -> None:
        """Commit ``statements`` in the background (housekeeping nobody waits for); a failure is logged in one line."""
        if self.store is None:
            return
        task = asyncio.ensure_future(self._persist(*statements))
        task.add_done_callback(_log_failed_write)

    async def _persist(self, *statements: Statement) -> None:
        """Commit ``statements`` in one transaction (grouped with concurrent ones); no-op without a database."""
        if self.store is not None and statements:
            await self.store.write(*statements)

    async def _request(self, peer: Peer, request: Request) -> None:
        then: list[Push] = []
        try:
            if isinstance(request, Hello):
                reply = await self._hello(peer, request, then)
            else:
                assert peer.session is not None
                reply = await self._dispatch[type(request)](peer.session, request, then)
        except RequestError as exc:
            reply = Error(id=request.id, code=exc.code, message=exc.message, field=exc.field)
        except ProtocolError as exc:
            send_protocol_error(peer, exc)
            return
        except Exception as exc:
            if is_disk_full(exc):  # SQLITE_FULL only: the request may succeed once there is room
                log.error("cannot save %s from %s: %s", type(request).__name__, peer.address, exc)
                reply = Error(id=request.id, code=Code.STORAGE_FULL, message=STORAGE_FULL_MESSAGE)
            else:
                log.exception("request %r from %s failed", request, peer.address)
                reply = Error(id=request.id, code=Code.INTERNAL_ERROR, message="the server failed to handle this request")
        peer.send(reply)
        if not isinstance(reply, Error):
            for push in then:  # pushes follow the reply, so the requester sees its reply first
                push()

    def _disconnected(self, peer: Peer) -> None:
        self.bus.unsubscribe_all(peer)
        session = peer.session
        if session is None or session.peer is not peer:
            return  # never said hello, or already replaced by a resumed connection
        session.peer = None
        log.info("%s (%s) disconnected", peer.address, session.name)
        if self._closing:
            return
        for table_id in list(session.watching):
            table = self.tables.get(table_id)
            if table is not None:
                self._unwatch(session, table)
        for table_id, seat in list(session.seats.items()):
            table = self.tables.get(table_id)
            if table is not None and table.outcome is None:
                self._hold_seat(table, seat, session)
            elif table is not None:
                self._vacate(session, table)
        if not session.seats:
            self._forget(session)

    def _forget(self, session: Session) -> None:
        """Drop a session that holds nothing: its name is free again, its token dead."""
        self.handshake.forget(session)

    # --- grace period -------------------------------------------------------------------

    def _hold_seat(self, table: Table, seat: int, session: Session) -> None:
        """Keep an absent player's seat for the grace period, then forfeit it."""
        grace_s = self.config.grace_s
        loop = asyncio.get_running_loop()
        table.grace[seat] = loop.call_later(grace_s, lambda: asyncio.ensure_future(self._grace_over(table, seat)))
        for member, _ in table.members():
            member.send(PlayerAway(table=table.id, seat=seat, name=session.name, forfeit_in_s=grace_s))

    async def _grace_over(self, table: Table, seat: int) -> None:
        async with table.lock:
            table.grace.pop(seat, None)
            holder = table.seats[seat]
            if holder is None or holder.connected or self.tables.get(table.id) is not table:
                return
            if table.status == "playing":
                if 1 - seat in table.moved:
                    outcome = table.forfeit(seat, "abandoned the game")
                else:
                    outcome = games.Outcome(winner=None, reason=f"{table.game.seats[seat]} abandoned before the opponent moved")
                await self._persist(_ended_sql(table, outcome))
                table.end(outcome)
                self._announce_outcome(table, outcome, lobby=False)
            self._vacate(holder, table)
            if not holder.seats and not holder.connected:
                self._forget(holder)

    def _vacate(self, session: Session, table: Table) -> None:
        """Take ``session`` out of its seat at a table that is not running."""
        session.seats.pop(table.id, None)
        table.offers.pop("rematch", None)
        table.unseat(session)
        if table.status == "waiting" and self.store is not None:
            self._persist_soon(_seats_sql(table))
        self._close_if_empty(table)

    def _unwatch(self, session: Session, table: Table) -> None:
        session.watching.discard(table.id)
        table.spectators.discard(session)
        self._close_if_empty(table)

    def _close_if_empty(self, table: Table) -> None:
        if table.is_empty() and table.status != "playing":
            if self.lobby.remove(table.id) is not None:
                self._uncount(table)
                if table.status == "waiting" and self.store is not None:
                    self._persist_soon(delete_table_sql(table.id))
        else:
            self._table_changed(table)

    # --- handshake ----------------------------------------------------------------------

    async def _hello(self, peer: Peer, hello: Hello, then: list[Push]) -> Message:
        session, welcome = await self.handshake.hello(peer, hello)
        if welcome.resumed:
            self._rejoin(session, then)
        return welcome

    def _rejoin(self, session: Session, then: list[Push]) -> None:
        """A resumed session is back: stop its grace timers; after the ``welcome``, tell it and the others at its tables."""
        for table_id, seat in session.seats.items():
            table = self.tables[table_id]
            timer = table.grace.pop(seat, None)
            if timer is not None:
                timer.cancel()
            then.append(lambda table=table, seat=seat: self._welcome_back(session, table, seat))
        for table_id in session.watching:
            table = self.tables[table_id]
            then.append(lambda table=table: self._welcome_back(session, table, None))

    def _welcome_back(self, session: Session, table: Table, seat: int | None) -> None:
        assert session.peer is not None
        session.peer.send(Resumed(table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves)))
        if seat is not None:
            for member, _ in table.members():
                if member is not session.peer:
                    member.send(PlayerBack(table=table.id, seat=seat, name=session.name))

    # --- lobby --------------------------------------------------------------------------

    def _table(self, table_id: int) -> Table:
        return self.lobby.get(table_id)

    def _table_changed(self, table: Table) -> None:
        self.lobby.changed(table.id)

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

    async def _create_table(self, session: Session, request: CreateTable, then: list[Push]) -> Message:
        try:
            control = TimeControl.parse(request.time_control)
        except TimeControlError as exc:
            raise RequestError(Code.BAD_OPTION, str(exc), "time_control") from None
        self._check_room(session)
        host = self._check_address_budget(session)
        table = Table.create(self._next_table_id, request.game, request.options, request.seed, seed_chosen=request.seed is not None)
        table.set_time_control(control)
        self._next_table_id += 1
        seat = None
        if request.seat is not None and table.outcome is not None:
            raise RequestError(
                Code.GAME_OVER,
                f"this setup is over before the first move ({table.outcome.reason}); "
                "create the table with seat null to look at it",
            )
        if request.seat is not None:
            seat = table.sit(session, request.seat)
        await self._persist(create_table_sql(_table_row(table)))
        self.lobby.add(table)
        self._count_against(host, table)
        if seat is not None:
            session.seats[table.id] = seat
        else:
            table.spectators.add(session)
            session.watching.add(table.id)
        log.info("%s created table %d (%s %s)", session.name, table.id, table.game.name, table.options)
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, seat)

    def _joined(self, request_id: int, table: Table, seat: int | None) -> TableJoined:
        return TableJoined(id=request_id, table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves))

    def _check_room(self, session: Session, who: str = "you") -> None:
        """Refuse one more table to a session at its limit of seats plus watched tables."""
        most = self.config.limits.max_tables_per_client
        if len(session.seats) + len(session.watching) >= most:
            verb = "are" if who == "you" else "is"
            raise RequestError(Code.TOO_MANY_TABLES, f"{who} {verb} already at {most} tables, the most this server allows; leave one first")

    def _check_address_budget(self, session: Session) -> str:
        """Refuse a new table to the address of ``session``'s connection at its budget; return that address.

        Every table an address created counts until its game is over or it
        closes, whether or not anyone from there is still connected.

        Raises:
            RequestError: ``too_many_tables``.
        """
        host = session.peer.host if session.peer is not None else "?"
        live = {table_id for table_id in self._tables_by_host.get(host, ()) if self._live(table_id)}
        self._tables_by_host[host] = live
        most = self.config.limits.max_tables_per_address
        if len(live) >= most:
            raise RequestError(
                Code.TOO_MANY_TABLES,
                f"your address already has {most} tables that are not over, the most this server allows;"
                " finish or leave one first (tables of players who left count until they close)",
            )
        return host

    def _live(self, table_id: int) -> bool:
        table = self.tables.get(table_id)
        return table is not None and table.outcome is None

    def _count_against(self, host: str, table: Table) -> None:
        """Count a new table against ``host``'s budget (see :meth:`_check_address_budget`)."""
        table.creator_host = host
        self._tables_by_host.setdefault(host, set()).add(table.id)

    def _uncount(self, table: Table) -> None:
        """Stop counting a closed table against its creator's address (restored tables count against none)."""
        host = table.creator_host
        if host is None or host not in self._tables_by_host:
            return
        ids = self._tables_by_host[host]
        ids.discard(table.id)
        if not ids:
            del self._tables_by_host[host]

    async def _join_table(self, session: Session, request: JoinTable, then: list[Push]) -> Message:
        table = self._table(request.table)
        if table.id not in session.watching and table.id not in session.seats:
            self._check_room(session)
        async with table.lock:
            seat = table.sit(session, request.seat)
            starting = table.ready_to_start()
            deal = table.plan_deal() if starting else None
            statements = [_seats_sql(table, status="playing" if starting else "waiting")]
            decided = None
            if starting:
                more, decided = _starting_sql(table, deal)
                statements += more
            try:
                await self._persist(*statements)
            except BaseException:
                table.unseat(session)
                raise
            session.seats[table.id] = seat
            session.watching.discard(table.id)
            if starting:
                if deal is not None:
                    table.deal(*deal)
                table.started = True
                then.append(lambda: self._start(table))
            if decided is not None:
                then.append(lambda: self._announce_outcome(table, decided, lobby=False))
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, seat)

    def _start(self, table: Table) -> None:
        log.info("table %d starts: %s vs %s", table.id, *table.seat_names)
        table.start_clock()
        self._schedule_flag(table)
        views = _ViewCache(table)
        seats = list(table.seat_names)
        send_views(table.members(), lambda seat: GameStarted(table=table.id, seats=seats, view=views.get(seat)))

    async def _watch_table(self, session: Session, request: WatchTable, then: list[Push]) -> Message:
        table = self._table(request.table)
        if table.id in session.seats:
            raise RequestError(Code.ALREADY_SEATED, f"you sit at table {table.id}; you cannot also watch it")
        if table.id not in session.watching:
            self._check_room(session)
        table.spectators.add(session)
        session.watching.add(table.id)
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, None)

    async def _leave_table(self, session: Session, request: LeaveTable, then: list[Push]) -> Message:
        table = self._table(request.table)
        if table.id in session.watching:
            then.append(lambda: self._unwatch(session, table))
            return Ok(id=request.id)
        if table.id not in session.seats:
            raise RequestError(Code.NOT_AT_TABLE, f"you are not at table {table.id}")
        async with table.lock:
            outcome = None
            if table.status == "playing":
                outcome = table.forfeit(session.seats[table.id], "left the table (game forfeited)")
                await self._persist(_ended_sql(table, outcome))
                table.end(outcome)
        if outcome is not None:
            then.append(lambda: self._announce_outcome(table, outcome, lobby=False))
        then.append(lambda: self._vacate(session, table))
        return Ok(id=request.id)

    # --- play ---------------------------------------------------------------------------

    async def _play_move(self, session: Session, request: PlayMove, then: list[Push]) -> Message:
        table = self._table(request.table)
        async with table.lock:
            played = table.plan_move(session, request.move, request.ply)
            clock_before = copy.deepcopy(table.clock)
            try:
                table.press_clock(played)
            except FlagFell as fell:
                await self._flag_fell(table, fell.seat)
                raise RequestError(Code.GAME_OVER, "your flag fell before the move arrived") from None
            now = time.time()
            statements = [append_move_sql(table.id, MoveRow(p.ply, p.seat, p.move, now, p.forced)) for p in played]
            final = played[-1].state.outcome
            if final is not None:
                statements.append(_ended_sql(table, final))
            if table.clock is not None:
                statements.append(update_table_sql(table.id, clocks=table.clock_snapshot()))
            try:
                await self._persist(*statements)
            except Exception:
                table.clock = clock_before  # not saved: the move did not happen, nor did its time
                raise
            table.apply(played)
            lapsed = table.lapse_offers(played[0].seat)
            if final is not None:
                table.stop_clock()
            else:
                self._schedule_flag(table)
        then.append(lambda: self._announce_moves(table, played))
        for kind in lapsed:
            then.append(lambda kind=kind: self._to_table(table, Answered(table=table.id, kind=kind, accepted=False, lapsed=True)))
        return Ok(id=request.id)

    # --- clocks -------------------------------------------------------------------------

    def _schedule_flag(self, table: Table) -> None:
        """Arrange for the server to notice the running seat's flag fall, even if nobody speaks."""
        if table.flag_timer is not None:
            table.flag_timer.cancel()
            table.flag_timer = None
        clock = table.clock
        if clock is None or clock.running is None or table.outcome is not None:
            return
        now = time.monotonic()
        flag_at = clock.flag_time(now)
        assert flag_at is not None
        delay = max(0.0, flag_at - now) + 0.001
        loop = asyncio.get_running_loop()
        table.flag_timer = loop.call_later(delay, lambda: asyncio.ensure_future(self._check_flag(table)))

    async def _check_flag(self, table: Table) -> None:
        async with table.lock:
            clock = table.clock
            if clock is None or table.outcome is not None:
                return
            seat = clock.flagged(time.monotonic())
            if seat is None:
                self._schedule_flag(table)
                return
            await self._flag_fell(table, seat)

    async def _flag_fell(self, table: Table, seat: int) -> None:
        """End the game: ``seat`` lost on time (called with the table lock held)."""
        outcome = table.forfeit(seat, "ran out of time")
        await self._persist(_ended_sql(table, outcome), update_table_sql(table.id, clocks=table.clock_snapshot()))
        table.end(outcome)
        self._announce_outcome(table, outcome)

    # --- offers, chat, archive ------------------------------------------------------------

    def _to_table(self, table: Table, message: Message) -> None:
        frame = encode_message(message)
        for member, _seat in table.members():
            member.send_frame(frame)

    async def _offer(self, session: Session, request: Offer, then: list[Push]) -> Message:
        table = self._table(request.table)
        async with table.lock:
            opponent_offer = table.offers.get(request.kind)
            if opponent_offer is not None and opponent_offer[0] != table.seat_of(session) and request.kind != "takeback":
                # Offering what the opponent already offers is accepting it (as on lichess).
                return await self._accept(session, table, request.kind, request.id, then)
            seat = table.offer(session, request.kind, request.plies)
        message = Offered(table=table.id, seat=seat, kind=request.kind, plies=request.plies)
        then.append(lambda: self._to_table(table, message))
        return Ok(id=request.id)

    async def _answer(self, session: Session, request: Answer, then: list[Push]) -> Message:
        table = self._table(request.table)
        async with table.lock:
            if request.accept:
                return await self._accept(session, table, request.kind, request.id, then)
            table.take_offer(session, request.kind)
        message = Answered(table=table.id, kind=request.kind, accepted=False)
        then.append(lambda: self._to_table(table, message))
        return Ok(id=request.id)

    async def _accept(self, session: Session, table: Table, kind: str, request_id: int, then: list[Push]) -> Message:
        """Carry out the opponent's offer of ``kind`` (called with the table lock held)."""
        if kind != "rematch":
            table.check_running()
        offer = table.take_offer(session, kind)
        if kind == "rematch":
            try:
                self._check_rematch(table, session)
            except RequestError:
                table.offers[kind] = offer  # refused: the offer stays pending
                raise
        _seat, plies = offer
        then.append(lambda: self._to_table(table, Answered(table=table.id, kind=kind, accepted=True)))
        if kind == "draw":
            outcome = games.Outcome(winner=None, reason="draw by agreement")
            await self._persist(_ended_sql(table, outcome))
            table.end(outcome)
            then.append(lambda: self._announce_outcome(table, outcome))
        elif kind == "takeback":
            state, taken = table.plan_takeback(plies)
            await self._persist(truncate_moves_sql(table.id, state.ply))
            table.apply_takeback(state, taken)
            table.start_clock()
            self._schedule_flag(table)
            then.append(lambda: self._announce_takeback(table, taken))
        else:
            rematch = await self._rematch(table, session)
            then.append(lambda: self._announce_rematch(table, rematch))
        return Ok(id=request_id)

    def _announce_takeback(self, table: Table, plies: int) -> None:
        views = _ViewCache(table)
        clock = table.clock_snapshot()
        moves = list(table.moves)
        send_views(table.members(), lambda seat: TakenBack(table=table.id, plies=plies, view=views.get(seat), moves=moves, clock=clock))

    def _check_rematch(self, old: Table, accepter: Session) -> str:
        """Raise unless the rematch of ``old`` can be played; return the address it will count against.

        Both players must still be there, each with room for a table, and the
        address of the accepter's connection within its table budget.

        Raises:
            RequestError: ``bad_action`` or ``too_many_tables``.
        """
        if old.rematch is not None:
            raise RequestError(Code.BAD_ACTION, f"the rematch of table {old.id} is table {old.rematch}")
        if any(holder is None for holder in old.seats):
            raise RequestError(Code.BAD_ACTION, "your opponent has left the table")
        for holder in old.seats:
            assert holder is not None
            self._check_room(holder, who=holder.name)
        return self._check_address_budget(accepter)

    async def _rematch(self, old: Table, accepter: Session) -> Table:
        """A new table with the same game and seats swapped, both players seated.

        Raises:
            RequestError: ``bad_action`` if a player has left or the rematch was already played;
                ``too_many_tables`` if a player or the accepter's address has no room.
        """
        host = self._check_rematch(old, accepter)
        seed = secrets.token_hex(8) if old.game.uses_seed else old.seed
        table = Table.create(self._next_table_id, old.game.name, old.options, seed)
        self._next_table_id += 1
        table.set_time_control(old.clock.control if old.clock is not None else None)
        second, first = old.seats
        assert first is not None and second is not None  # _check_rematch: both players are still there
        table.seat_both(first, second)
        table.started = True
        statements = [create_table_sql(_table_row(table))]
        if table.outcome is not None:  # decided by its setup: over as it starts
            statements.append(_ended_sql(table, table.outcome))
        await self._persist(*statements)
        self.lobby.add(table)
        self._count_against(host, table)
        old.rematch = table.id
        for seat, holder in enumerate(table.seats):
            if holder is not None:
                holder.seats[table.id] = seat
        table.start_clock()
        self._schedule_flag(table)
        return table

    def _announce_rematch(self, old: Table, table: Table) -> None:
        info = table.info()
        for member, seat in table.members():
            assert seat is not None
            member.send(RematchStarted(previous=old.id, table=info, seat=seat, view=table.view_for(seat)))
        if table.outcome is not None:
            self._announce_outcome(table, table.outcome, lobby=False)
        self._table_changed(table)

    async def _say(self, session: Session, request: Say, then: list[Push]) -> Message:
        most = self.config.limits.max_chat_chars
        if len(request.text) > most:
            raise RequestError(Code.BAD_MESSAGE, f"a chat line has at most {most} characters, not {len(request.text)}", "text")
        message = Chat(name=session.name, text=request.text, table=request.table)
        if request.table is None:
            then.append(lambda: self.lobby.say(message))
        else:
            table = self._table(request.table)
            if table.id not in session.seats and table.id not in session.watching:
                raise RequestError(Code.NOT_AT_TABLE, f"you are not at table {table.id}")
            then.append(lambda: self._to_table(table, message))
        return Ok(id=request.id)

    async def _list_archive(self, session: Session, request: ListArchive, then: list[Push]) -> Message:
        entries = self.store.archive(request.limit, request.offset) if self.store is not None else []
        return Archive(id=request.id, games=[_archive_entry(entry) for entry in entries])

    async def _get_record(self, session: Session, request: GetRecord, then: list[Push]) -> Message:
        stored = self.store.load(request.table) if self.store is not None else None
        if stored is None or stored.row.status != "over" or "set_aside" in (stored.row.outcome or {}):
            raise RequestError(Code.NO_SUCH_TABLE, f"there is no finished game {request.table} in the archive")
        return Record(id=request.id, text=format_record(self.store.to_record(stored)))  # type: ignore[union-attr]

    def _announce_moves(self, table: Table, played: list[Played]) -> None:
        members = table.members()
        clock = table.clock_snapshot()  # one snapshot: every moved of one request carries the same clock
        for ply in played:
            if ply.forced:
                log.info("table %d: %s must pass", table.id, table.game.seats[ply.seat])
            views = _ViewCache(table, ply.state)
            send_views(members, lambda seat: Moved(table=table.id, seat=ply.seat, move=ply.move, ply=ply.ply, forced=ply.forced, view=views.get(seat), clock=clock))
        if table.outcome is not None:
            self._announce_outcome(table, table.outcome)

    def _announce_outcome(self, table: Table, outcome: games.Outcome, *, lobby: bool = True) -> None:
        log.info("table %d over: %s", table.id, outcome)
        message = GameOver(table=table.id, outcome=outcome.to_dict())
        for member, _seat in table.members():
            member.send(message)
        for holder in list(table.seats):
            if holder is not None and not holder.connected:
                self._vacate(holder, table)  # nobody waits for an absent player of a finished game
                if not holder.seats:
                    self._forget(holder)
        if lobby:
            self._table_changed(table)

    async def _resign(self, session: Session, request: Resign, then: list[Push]) -> Message:
        table = self._table(request.table)
        async with table.lock:
            outcome = table.resign(session)
            await self._persist(_ended_sql(table, outcome))
            table.end(outcome)
        then.append(lambda: self._announce_outcome(table, outcome))
        return Ok(id=request.id)

    async def _ping(self, session: Session, request: Ping, then: list[Push]) -> Message:
        return Pong(id=request.id)


def _log_failed_write(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a background write failed: %s", task.exception())


def _table_row(table: Table) -> TableRow:
    return TableRow(
        id=table.id,
        game=table.game.name,
        options=table.options,
        seed=table.seed,
        created=table.created_at,
        time_control=str(table.clock.control) if table.clock is not None else None,
        seat_names=tuple(table.seat_names),  # type: ignore[arg-type]
        seat_tokens=_seat_tokens(table),
        status=table.status,
        seed_chosen=table.seed_chosen,
    )


def _archive_entry(entry: ArchiveEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "game": entry.game,
        "options": summarize_options(entry.options),
        "players": list(entry.players),
        "result": entry.result,
        "plies": entry.plies,
        "finished": iso_utc(entry.finished) if entry.finished is not None else None,
    }


def _seat_tokens(table: Table) -> tuple[str | None, str | None]:
    first, second = (holder.token if holder is not None else None for holder in table.seats)
    return first, second


def _seats_sql(table: Table, status: str | None = None) -> Statement:
    fields: dict[str, Any] = {"seat_names": tuple(table.seat_names), "seat_tokens": _seat_tokens(table)}
    if status is not None:
        fields["status"] = status
        if status == "playing":
            fields["started"] = time.time()
    return update_table_sql(table.id, **fields)


def _starting_sql(table: Table, deal: tuple[str, games.State] | None) -> tuple[list[Statement], games.Outcome | None]:
    """What starting the game writes besides the seats and status, and the outcome it starts with.

    Returns:
        The statements (the seed of ``deal``, a setup dealt now; the outcome,
        when the starting position is already decided) and that outcome or ``None``.
    """
    statements = [update_table_sql(table.id, seed=deal[0])] if deal is not None else []
    decided = (deal[1] if deal is not None else table.state).outcome
    if decided is not None:
        statements.append(_ended_sql(table, decided))
    return statements, decided


def _ended_sql(table: Table, outcome: games.Outcome) -> Statement:
    return update_table_sql(table.id, status="over", outcome=outcome.to_dict(), finished=time.time())


def restore_table(stored: StoredTable, sessions: dict[str, Session]) -> Table:
    """Rebuild a live table from the database: its position replayed move by move.

    Raises:
        games.GameError: the stored game no longer replays (an engine changed).
    """
    row = stored.row
    table = Table.create(row.id, row.game, row.options, _restored_seed(row), seed_chosen=row.seed_chosen)
    if row.time_control is not None and row.clocks:
        table.clock = Clock.restore(row.time_control, row.clocks["remaining_ms"], row.clocks["running"], time.monotonic())
    elif row.time_control is not None:
        table.set_time_control(TimeControl.parse(row.time_control))
    table.created_at = row.created
    table.started = row.status == "playing"
    table.seat_names = list(row.seat_names)
    for seat, token in enumerate(row.seat_tokens):
        holder = sessions.get(token) if token is not None else None
        if holder is None and row.seat_names[seat] is not None:
            holder = Session(name=row.seat_names[seat] or "?", token=token or new_token())
            sessions[holder.token] = holder
        table.seats[seat] = holder
    state = table.state
    played = []
    for move in stored.moves:
        state = state.play(move.move)
        played.append(Played(move.seat, move.move, move.ply, move.forced, state))
    if played:
        table.apply(played)
    return table


def _restored_seed(row: TableRow) -> str | int | None:
    """The seed to rebuild a stored table with: ``None`` (deal at start) for a waiting table's secret setup.

    A secret setup dealt by an older server while the table waited may have
    been seen by whoever sat there, so it is dealt afresh too.
    """
    if row.status == "waiting" and not row.seed_chosen and games.get(row.game).seed_is_secret(row.options):
        return None
    return row.seed


def send_views(members: list[tuple[Peer, int | None]], make: Callable[[int | None], Message]) -> None:
    """Send each member the message ``make(seat)`` builds for its view, encoded once per distinct seat.

    There are at most three encodings (seat 0, seat 1, spectators); every
    spectator gets the very same bytes.
    """
    encoded: dict[int | None, tuple[bytes, Message]] = {}
    for member, seat in members:
        pair = encoded.get(seat)
        if pair is None:
            message = make(seat)
            pair = encoded[seat] = (encode_message(message), message)
        member.send_frame(*pair)


class _ViewCache:
    """Views of one position, made at most once per seat (0, 1, spectator)."""

    def __init__(self, table: Table, state: games.State | None = None) -> None:
        self._table = table
        self._state = state
        self._views: dict[int | None, dict[str, Any]] = {}

    def get(self, seat: int | None) -> dict[str, Any]:
        """The view for ``seat``, made on first use."""
        view = self._views.get(seat)
        if view is None:
            current = self._state is None or self._state is self._table.state
            view = self._table.view_for(seat) if current else view_of(self._state, seat)  # type: ignore[arg-type]
            self._views[seat] = view
        return view
