"""The asyncio server: accepts connections, runs the lobby, dispatches requests.

Each connection is pumped by :meth:`Server._handle`: bytes from the socket go
into the sans-IO :class:`protocol.ServerConnection`, requests come out and are
handled one at a time, in order. Every request passes one pipeline: who is
this, is the request well formed, does the table exist, may this peer do it,
is it legal, apply, tell everyone concerned.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import games
from protocol import PROTOCOL_VERSION, Code, ProtocolError, ServerConnection
from protocol.framing import DEFAULT_MAX_FRAME_BYTES, encode_frame
from protocol.messages import (
    CreateTable,
    Error,
    GameOver,
    GameStarted,
    Hello,
    JoinTable,
    LeaveTable,
    ListTables,
    Message,
    Moved,
    Ok,
    Ping,
    PlayMove,
    Pong,
    Request,
    Resign,
    Shutdown,
    TableClosed,
    TableJoined,
    Tables,
    TableUpdated,
    WatchTable,
    Welcome,
    to_wire,
)

from . import __version__
from .names import NameError_, check_name, name_key
from .peer import Peer
from .table import Played, RequestError, Table

__all__ = ["Server", "ServerConfig"]

log = logging.getLogger(__name__)

Push = Callable[[], None]
Handler = Callable[[Peer, Any, list[Push]], Awaitable[Message]]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Settings of a server; units are in the names.

    Attributes:
        host: address to listen on (``"0.0.0.0"``: every IPv4 interface).
        port: TCP port (0: pick a free one).
        server_name: shown to clients in ``welcome``.
        max_frame_bytes: largest request frame accepted.
        send_queue_frames: outgoing frames a slow reader may have waiting.
    """

    host: str = "0.0.0.0"
    port: int = 7420
    server_name: str = "parlour"
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    send_queue_frames: int = 256


class Server:
    """A Parlour server: lobby, tables and connections.

    Use ``await server.start()``, then ``await server.close()``; or
    ``await server.serve_forever()``.
    """

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.peers: set[Peer] = set()
        self.names: dict[str, Peer] = {}
        self.tables: dict[int, Table] = {}
        self._next_table_id = 1
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._closing = False
        self._dispatch: dict[type, Handler] = {
            ListTables: self._list_tables,
            CreateTable: self._create_table,
            JoinTable: self._join_table,
            WatchTable: self._watch_table,
            LeaveTable: self._leave_table,
            PlayMove: self._play_move,
            Resign: self._resign,
            Ping: self._ping,
        }

    # --- lifecycle ------------------------------------------------------------------

    async def start(self) -> None:
        """Start listening."""
        self._server = await asyncio.start_server(self._handle, self.config.host, self.config.port)

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
        """Tell every client, close every connection and stop listening. Idempotent."""
        if self._closing:
            return
        self._closing = True
        if self._server is not None:
            self._server.close()
        for peer in list(self.peers):
            peer.send(Shutdown(message=reason))
            peer.close()
        await asyncio.gather(*(peer.wait_closed() for peer in list(self.peers)), return_exceptions=True)
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    # --- connections -------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        protocol = ServerConnection(max_frame_bytes=self.config.max_frame_bytes)
        peer = Peer(writer, protocol, send_queue_frames=self.config.send_queue_frames)
        self.peers.add(peer)
        log.info("connection from %s", peer.address)
        try:
            await self._pump(reader, peer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("connection %s failed", peer.address)
        finally:
            self._disconnected(peer)
            peer.close()
            await peer.wait_closed()
            self._handlers.discard(task)

    async def _pump(self, reader: asyncio.StreamReader, peer: Peer) -> None:
        while not peer.closed:
            data = await reader.read(65536)
            if not data:
                return
            for event in peer.protocol.receive_data(data):
                if isinstance(event, ProtocolError):
                    self._protocol_error(peer, event)
                else:
                    await self._request(peer, event)
                if peer.closed:
                    return

    def _protocol_error(self, peer: Peer, error: ProtocolError) -> None:
        log.info("%s: %s (%s)", peer.address, error.code, error.message)
        peer.send(Error(id=error.request_id, code=error.code, message=error.message, field=error.field))
        if error.fatal:
            peer.close()

    async def _request(self, peer: Peer, request: Request) -> None:
        then: list[Push] = []
        try:
            if isinstance(request, Hello):
                reply = self._hello(peer, request)
            else:
                reply = await self._dispatch[type(request)](peer, request, then)
        except RequestError as exc:
            reply = Error(id=request.id, code=exc.code, message=exc.message, field=exc.field)
        except ProtocolError as exc:
            self._protocol_error(peer, exc)
            return
        except Exception:
            log.exception("request %r from %s failed", request, peer.address)
            reply = Error(id=request.id, code=Code.INTERNAL_ERROR, message="the server failed to handle this request")
        peer.send(reply)
        if not isinstance(reply, Error):
            for push in then:  # pushes follow the reply, so the requester sees its reply first
                push()

    def _disconnected(self, peer: Peer) -> None:
        self.peers.discard(peer)
        if peer.name is not None and self.names.get(name_key(peer.name)) is peer:
            del self.names[name_key(peer.name)]
        for table_id in list(peer.seats) + list(peer.watching):
            table = self.tables.get(table_id)
            if table is not None:
                self._leave(peer, table, reason="left the server")
        log.info("%s (%s) disconnected", peer.address, peer.name)

    # --- handshake ----------------------------------------------------------------------

    def _hello(self, peer: Peer, hello: Hello) -> Message:
        if hello.version != PROTOCOL_VERSION:
            raise ProtocolError(
                Code.UNSUPPORTED_VERSION,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {hello.version}",
                request_id=hello.id,
                fatal=True,
            )
        if peer.name is not None:
            raise RequestError(Code.HANDSHAKE_REQUIRED, "hello was already received")
        try:
            name = check_name(hello.name)
        except NameError_ as exc:
            raise RequestError(Code.BAD_NAME, str(exc)) from None
        if name_key(name) in self.names:
            raise RequestError(Code.NAME_TAKEN, f"the name {name!r} is already in use")
        peer.name = name
        peer.token = secrets.token_urlsafe(24)
        self.names[name_key(name)] = peer
        peer.protocol.accept_hello()
        log.info("%s is %s", peer.address, name)
        return Welcome(
            id=hello.id,
            protocol=PROTOCOL_VERSION,
            server=self.config.server_name,
            version=__version__,
            name=name,
            token=peer.token,
            games=[games.get(n).describe() for n in games.names()],
        )

    # --- lobby --------------------------------------------------------------------------

    def _table(self, table_id: int) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise RequestError(Code.NO_SUCH_TABLE, f"there is no table {table_id}")
        return table

    def _broadcast_lobby(self, message: Message) -> None:
        frame = encode_frame(to_wire(message))
        for peer in list(self.peers):
            if peer.name is not None:
                peer.send_frame(frame)

    def _table_changed(self, table: Table) -> None:
        self._broadcast_lobby(TableUpdated(table=table.info()))

    async def _list_tables(self, peer: Peer, request: ListTables, then: list[Push]) -> Message:
        return Tables(id=request.id, tables=[table.info() for table in self.tables.values()])

    async def _create_table(self, peer: Peer, request: CreateTable, then: list[Push]) -> Message:
        seed = request.seed if request.seed is not None else secrets.token_hex(8)
        table = Table.create(self._next_table_id, request.game, request.options, seed)
        table_id = self._next_table_id
        self._next_table_id += 1
        self.tables[table_id] = table
        seat = None
        if request.seat is not None:
            seat = table.sit(peer, request.seat)
            peer.seats[table_id] = seat
        else:
            table.spectators.add(peer)
            peer.watching.add(table_id)
        log.info("%s created table %d (%s %s)", peer.name, table_id, table.game.name, table.options)
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, seat)

    def _joined(self, request_id: int, table: Table, seat: int | None) -> TableJoined:
        return TableJoined(id=request_id, table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves))

    async def _join_table(self, peer: Peer, request: JoinTable, then: list[Push]) -> Message:
        table = self._table(request.table)
        seat = table.sit(peer, request.seat)
        peer.seats[table.id] = seat
        peer.watching.discard(table.id)
        if table.ready_to_start():
            table.started = True
            then.append(lambda: self._start(table))
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, seat)

    def _start(self, table: Table) -> None:
        log.info("table %d starts: %s vs %s", table.id, *table.seat_names)
        views = _ViewCache(table)
        for member, seat in table.members():
            member.send(GameStarted(table=table.id, seats=list(table.seat_names), view=views.get(seat)))

    async def _watch_table(self, peer: Peer, request: WatchTable, then: list[Push]) -> Message:
        table = self._table(request.table)
        if table.id in peer.seats:
            raise RequestError(Code.ALREADY_SEATED, f"you sit at table {table.id}; you cannot also watch it")
        table.spectators.add(peer)
        peer.watching.add(table.id)
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, None)

    async def _leave_table(self, peer: Peer, request: LeaveTable, then: list[Push]) -> Message:
        table = self._table(request.table)
        if table.id not in peer.seats and table.id not in peer.watching:
            raise RequestError(Code.NOT_AT_TABLE, f"you are not at table {table.id}")
        then.append(lambda: self._leave(peer, table, reason="left the table"))
        return Ok(id=request.id)

    def _leave(self, peer: Peer, table: Table, reason: str) -> None:
        """Take ``peer`` away from ``table``, forfeiting a running game it plays in."""
        if table.id in peer.seats and table.status == "playing":
            outcome = table.forfeit(peer.seats[table.id], f"{reason} (game forfeited)")
            self._announce_outcome(table, outcome, lobby=False)
        peer.seats.pop(table.id, None)
        peer.watching.discard(table.id)
        table.unseat(peer)
        if table.is_empty() and table.status != "playing":
            del self.tables[table.id]
            self._broadcast_lobby(TableClosed(table=table.id))
        else:
            self._table_changed(table)

    # --- play ---------------------------------------------------------------------------

    async def _play_move(self, peer: Peer, request: PlayMove, then: list[Push]) -> Message:
        table = self._table(request.table)
        played = table.play(peer, request.move, request.ply)
        then.append(lambda: self._announce_moves(table, played))
        return Ok(id=request.id)

    def _announce_moves(self, table: Table, played: list[Played]) -> None:
        members = table.members()
        for ply in played:
            if ply.forced:
                log.info("table %d: %s must pass", table.id, table.game.seats[ply.seat])
            views = _ViewCache(table, ply.state)
            for member, seat in members:
                message = Moved(table=table.id, seat=ply.seat, move=ply.move, ply=ply.ply, forced=ply.forced, view=views.get(seat))
                member.send(message)
        if table.outcome is not None:
            self._announce_outcome(table, table.outcome)

    def _announce_outcome(self, table: Table, outcome: games.Outcome, *, lobby: bool = True) -> None:
        log.info("table %d over: %s", table.id, outcome)
        message = GameOver(table=table.id, outcome=outcome.to_dict())
        for member, _seat in table.members():
            member.send(message)
        if lobby:
            self._table_changed(table)

    async def _resign(self, peer: Peer, request: Resign, then: list[Push]) -> Message:
        table = self._table(request.table)
        outcome = table.resign(peer)
        then.append(lambda: self._announce_outcome(table, outcome))
        return Ok(id=request.id)

    async def _ping(self, peer: Peer, request: Ping, then: list[Push]) -> Message:
        return Pong(id=request.id)


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
            view = self._table.view_for(seat) if current else self._state.view(seat)  # type: ignore[union-attr]
            self._views[seat] = view
        return view
