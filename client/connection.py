"""The async client library every front end is built on.

>>> client = await Client.connect("127.0.0.1", 7420, name="ann")   # doctest: +SKIP
>>> joined = await client.create_table("othello", {"size": 8})      # doctest: +SKIP
>>> async for event in client.events():                             # doctest: +SKIP
...     print(event)

Requests are awaitables that return the server's reply or raise
:class:`ServerError`; pushes arrive through :meth:`Client.events`.
"""

from __future__ import annotations

import asyncio
import itertools
import ssl as ssl_module
from typing import Any, AsyncIterator, Mapping

import msgspec

from protocol import PROTOCOL_VERSION, ClientConnection, ProtocolError
from protocol import messages as m
from protocol.pacing import TokenBucket

from .tls import check_fingerprint

__all__ = ["Client", "ServerError", "ConnectionLost", "DEFAULT_PORT", "MAX_LISTED_TABLES", "SIGNED_IN_ELSEWHERE"]

SIGNED_IN_ELSEWHERE = "signed in elsewhere: another connection took over this session"
"""The close reason of a connection whose session another connection took over (:attr:`Client.superseded`)."""

SUPERSEDING_CODES = ("signed_in_elsewhere", "bad_token")
"""The ``error`` codes (without ``id``) that tell a connection its session went elsewhere; ``bad_token`` from older servers."""

DEFAULT_PORT = 7420

MAX_LISTED_TABLES = 10_000
"""The most tables :meth:`Client.list_tables` returns by default (a hundred pages)."""

PACING_BURST_SHARE = 0.5
"""The share of the server's announced burst (``welcome.request_burst``) a client sends at once (at least 1)."""

PACING_RATE_SHARE = 0.9
"""The share of the server's announced request rate (``welcome.requests_per_s``) a client keeps to."""

CLOSE_TIMEOUT_S = 2.0
"""How long :meth:`Client.close` waits for what was written to be delivered before it aborts the connection
(a server that stopped reading must not hold a front end's exit for ever)."""


class ServerError(Exception):
    """The server refused a request.

    Attributes:
        code: the stable error code (``"illegal_move"``, ...).
        message: the server's human explanation.
        field: the offending field, for ``bad_message``.
    """

    def __init__(self, error: m.Error) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.message = error.message
        self.field = error.field


class ConnectionLost(ConnectionError):
    """The connection closed before a reply arrived."""


class Client:
    """One connection to a Parlour server, after the handshake.

    Build with :meth:`connect`. Attributes after connecting: ``welcome`` (the
    server's ``welcome`` message), ``name`` and ``token``. ``superseded``
    turns true when the server hands the session to another connection that
    resumed it or proved its claimed name (``error`` ``signed_in_elsewhere``
    without ``id``); the server then closes this one, and resuming from here
    would only take the session back from the other connection: front ends
    stop and say :data:`SIGNED_IN_ELSEWHERE`. Requests keep to the request rate ``welcome``
    announces: past the burst they wait on this side, so the server never
    holds them back or closes the connection for flooding.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._protocol = ClientConnection()
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[m.Message]] = {}
        self._events: asyncio.Queue[m.Message | None] = asyncio.Queue()
        self._reader_task = asyncio.create_task(self._read_loop())
        self._keepalive_task: asyncio.Task[None] | None = None
        self._last_received = self._last_sent = asyncio.get_running_loop().time()
        self._pacer: TokenBucket | None = None  # the server's announced request rate, kept to on our side
        self._pacing = asyncio.Lock()  # held by the requests waiting for the pacer, in order
        self.welcome: m.Welcome | None = None
        self.closed = asyncio.Event()
        self.close_reason: str | None = None
        self.closed_by_us = False
        self.superseded = False
        self.watching_lobby = False  # whether this connection asked for the lobby's pushes
        self.server_host: str | None = None  # the host this connection was opened to (for the web face's address)
        self._refusal: m.Error | None = None

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int = DEFAULT_PORT,
        *,
        name: str,
        token: str | None = None,
        password: str | None = None,
        ssl: ssl_module.SSLContext | None = None,
        fingerprint: str | None = None,
        timeout_s: float = 10.0,
        watch_lobby: bool = False,
        bot: bool = False,
        secret: str | None = None,
        claim: bool = False,
    ) -> "Client":
        """Open a connection and say hello (:meth:`open`, then :meth:`handshake`).

        Args:
            ssl: a client TLS context (see :mod:`client.tls`); ``None`` for plain TCP.
            fingerprint: the server certificate's pinned SHA-256 fingerprint; the
                connection is refused if it presents another (needs ``ssl``).
            watch_lobby: also ask for the lobby's pushes (``table_updated``,
                ``table_closed``, lobby ``chat``); see :meth:`watch_lobby`.
            bot: say ``hello`` as a program playing by itself (``parlour bot``):
                lobbies show it in ``TableInfo.bots``.
            secret: the secret (or password) of ``name`` if it is claimed; with
                ``claim``, the new secret to claim a free ``name`` with. Whether
                the session owns its name is ``welcome.claimed``.
            claim: claim ``name`` with ``secret`` if nobody has claimed it (PROTOCOL.md section 15).

        Raises:
            OSError: the server cannot be reached, or TLS failed (``ssl.SSLError``,
                :class:`client.tls.FingerprintMismatch`).
            ServerError: the server refused the handshake (``name_taken``, ...).
        """
        client = await cls.open(host, port, ssl=ssl, fingerprint=fingerprint, timeout_s=timeout_s)
        await client.handshake(
            name=name, token=token, password=password, bot=bot, secret=secret, claim=claim, watch_lobby=watch_lobby, timeout_s=timeout_s
        )
        return client

    @classmethod
    async def open(
        cls, host: str, port: int = DEFAULT_PORT, *, ssl: ssl_module.SSLContext | None = None, fingerprint: str | None = None, timeout_s: float = 10.0
    ) -> "Client":
        """Open a connection without saying hello: then :meth:`identify` (optional) and :meth:`handshake`.

        Raises:
            OSError: as :meth:`connect` (``TimeoutError`` after ``timeout_s`` seconds).
        """
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=ssl), timeout_s)
        if fingerprint is not None:
            try:
                check_fingerprint(writer, fingerprint)
            except BaseException:
                writer.close()
                raise
        client = cls(reader, writer)
        client.server_host = host
        return client

    async def identify(self, timeout_s: float = 10.0) -> m.Identity | None:
        """Ask the server for its stable id (``identify``, before or after hello; PROTOCOL.md section 15).

        Returns ``None`` from a server that does not know ``identify`` (it answers ``handshake_required``).

        Raises:
            ServerError: any other refusal; ConnectionLost, TimeoutError: no answer.
        """
        try:
            reply = await asyncio.wait_for(self.request(m.Identify), timeout_s)
        except ServerError as exc:
            if exc.code in ("handshake_required", "bad_message"):
                return None
            raise
        assert isinstance(reply, m.Identity)
        return reply

    async def handshake(
        self,
        *,
        name: str,
        token: str | None = None,
        password: str | None = None,
        bot: bool = False,
        secret: str | None = None,
        claim: bool = False,
        watch_lobby: bool = False,
        timeout_s: float = 10.0,
    ) -> m.Welcome:
        """Say ``hello`` (the arguments as :meth:`connect`'s) and return the ``welcome``; the connection is closed if it fails.

        Raises:
            ServerError, ConnectionLost, TimeoutError: as :meth:`connect`.
        """
        try:
            hello = m.Hello(
                id=self._next_id(), version=PROTOCOL_VERSION, name=name, token=token, password=password, bot=bot,
                secret=secret, claim=claim,
            )  # fmt: skip
            reply = await asyncio.wait_for(self._request(hello), timeout_s)
        except BaseException:
            await self.close()
            raise
        assert isinstance(reply, m.Welcome)
        self.welcome = reply
        self._keep_to_rate(reply)
        if reply.heartbeat_s is not None and reply.idle_timeout_s is not None:
            self._keepalive_task = asyncio.create_task(self._keep_alive(reply.heartbeat_s, reply.idle_timeout_s))
        if watch_lobby:
            try:
                await asyncio.wait_for(self.watch_lobby(), timeout_s)
            except BaseException:
                await self.close()
                raise
        return reply

    @property
    def name(self) -> str:
        """The name the server knows us by."""
        assert self.welcome is not None
        return self.welcome.name

    @property
    def token(self) -> str:
        """The session's resume token, from ``welcome``.

        A resume by token keeps the token, so a resume's ``welcome`` normally
        repeats the token used; a client should still keep whatever token
        ``welcome`` gives: proving a claimed name by its secret or password
        issues a new one, and so do :meth:`set_password` and :meth:`change_secret`
        (this property then gives the new one).
        """
        assert self.welcome is not None
        return self.welcome.token

    def _next_id(self) -> int:
        return next(self._ids)

    def _keep_to_rate(self, welcome: m.Welcome) -> None:
        """Pace requests below the rate ``welcome`` announces, so the server never has to hold them back.

        The server counts a request when it handles it. When this process stalls (a busy machine),
        the requests already sent wait unread while both buckets refill: the server's then spends
        tokens on those, and this side's would send its whole burst on top. Half the burst leaves
        the server tokens for both; 90 % of the rate lets its bucket get back to half full (a
        connection held back again before that is dropped after ``flood_timeout_s``).
        """
        if welcome.requests_per_s is None or welcome.request_burst is None:
            return
        now = asyncio.get_running_loop().time()
        burst = max(1.0, welcome.request_burst * PACING_BURST_SHARE)
        self._pacer = TokenBucket(welcome.requests_per_s * PACING_RATE_SHARE, burst, now)
        self._pacer.take(now)  # the hello was the first request

    # --- plumbing --------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while data := await self._reader.read(65536):
                self._last_received = asyncio.get_running_loop().time()
                for message in self._protocol.receive_data(data):
                    self._route(message)
            self.close_reason = self.close_reason or "the server closed the connection"
        except ProtocolError as exc:
            self.close_reason = f"the server sent bad data: {exc}"
        except (ConnectionError, OSError) as exc:
            self.close_reason = f"connection lost: {exc}"
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(self._closed_error())
            self._pending.clear()
            self._events.put_nowait(None)
            self.closed.set()
            self._writer.close()

    def _route(self, message: m.Message) -> None:
        request_id = getattr(message, "id", None)
        if isinstance(message, m.Error) and request_id is None and self.welcome is None:
            self._refusal = message  # refused before the handshake (too_many_connections, ...): hello fails with it
            self.close_reason = f"the server refused the connection ({message.code}): {message.message}"
            return
        future = self._pending.pop(request_id, None) if request_id is not None else None
        if future is not None and not future.done():
            future.set_result(message)
            return
        if isinstance(message, (m.Heartbeat, m.Pong)):
            return  # liveness only: a keep-alive pong has no waiter
        if isinstance(message, m.Shutdown):
            self.close_reason = f"server shutting down: {message.message}"
        elif isinstance(message, m.Error) and message.id is None and message.code in SUPERSEDING_CODES:
            self.superseded = True  # the server closes this connection next
            self.close_reason = SIGNED_IN_ELSEWHERE
        self._events.put_nowait(message)

    async def _wait_for_pace(self, pacer: TokenBucket) -> None:
        """Wait, behind the requests already waiting, until ``pacer`` has a token; spend it.

        A token is spent when the request goes out, never reserved ahead: requests that came due
        together while the loop was held (a busy machine) still go out no faster than the bucket allows.
        """
        loop = asyncio.get_running_loop()
        async with self._pacing:
            while not pacer.try_take(loop.time()):
                await asyncio.sleep((1.0 - pacer.tokens(loop.time())) / pacer.rate)

    def _closed_error(self) -> Exception:
        """What a request fails with once the connection is closed: the server's refusal, if it sent one."""
        if self._refusal is not None:
            return ServerError(self._refusal)
        return ConnectionLost(self.close_reason or "connection closed")

    async def _request(self, request: m.Request) -> m.Message:
        pacer = self._pacer
        if pacer is not None and (self._pacing.locked() or not pacer.try_take(asyncio.get_running_loop().time())):
            await self._wait_for_pace(pacer)  # over the server's request rate: wait here rather than in its queue
        if self.closed.is_set():
            raise self._closed_error()
        future: asyncio.Future[m.Message] = asyncio.get_running_loop().create_future()
        self._pending[request.id] = future
        self._send(request)
        try:
            await self._writer.drain()
        except ConnectionError:  # the socket broke before the client noticed: the same as losing it before the reply
            self._pending.pop(request.id, None)
            if future.done() and not future.cancelled():
                future.exception()  # the loss is reported here, once
            raise self._closed_error() from None
        reply = await future
        if isinstance(reply, m.Error):
            raise ServerError(reply)
        return reply

    def _send(self, request: m.Request) -> None:
        self._writer.write(self._protocol.send(request))
        self._last_sent = asyncio.get_running_loop().time()

    async def _keep_alive(self, heartbeat_s: float, idle_timeout_s: float) -> None:
        """Ping when we have been quiet for most of ``heartbeat_s``; give up on a server silent for ``idle_timeout_s``.

        A server that stops answering (a half-open connection, a hung
        machine) is noticed within ``idle_timeout_s`` seconds: the connection
        is aborted, so :attr:`closed` is set and front ends can reconnect.
        """
        loop = asyncio.get_running_loop()
        while not self.closed.is_set():
            await asyncio.sleep(heartbeat_s / 3)
            now = loop.time()
            if now - self._last_received > idle_timeout_s:
                self.close_reason = f"the server sent nothing for {idle_timeout_s:g} s"
                self._writer.transport.abort()
                return
            if now - self._last_sent >= heartbeat_s * 2 / 3 and not self._writer.is_closing():
                if self._pacer is not None:
                    self._pacer.take(now)  # sent at once: a quiet connection has tokens to spare
                self._send(m.Ping(id=self._next_id()))

    async def request(self, message_class: type[m.Message], /, **fields: Any) -> m.Message:
        """Send a request of class ``message_class`` with ``fields`` (the id is added) and return the reply.

        Raises:
            ServerError: the server answered with an error.
            ConnectionLost: the connection closed first.
        """
        return await self._request(message_class(id=self._next_id(), **fields))  # type: ignore[call-arg]

    async def send_raw(self, frame: bytes) -> None:
        """Write bytes as they are (for tests of the server's handling of bad input)."""
        self._writer.write(frame)
        await self._writer.drain()

    async def events(self) -> AsyncIterator[m.Message]:
        """Yield server pushes (and unmatched errors) until the connection closes."""
        while (event := await self._events.get()) is not None:
            yield event
        self._events.put_nowait(None)  # let a later iterator end too

    async def next_event(self, kind: type[m.Message] | tuple[type[m.Message], ...] = m.Message, *, timeout_s: float = 10.0) -> m.Message:
        """Return the next push of class ``kind``, skipping others.

        Raises:
            ConnectionLost: the connection closed first.
            TimeoutError: none came within ``timeout_s`` seconds.
        """

        async def wait() -> m.Message:
            async for event in self.events():
                if isinstance(event, kind):
                    return event
            raise ConnectionLost(self.close_reason or "connection closed")

        return await asyncio.wait_for(wait(), timeout_s)

    def web_address(self, table: int | None = None) -> str | None:
        """The server's read-only web page of ``table`` (its lobby for ``None``), or ``None`` if it has no web face.

        ``http://HOST:PORT/table/ID``: the host this client connected to, the port ``welcome.http`` announced.
        """
        port = self.welcome.http if self.welcome is not None else None
        if port is None or not self.server_host:
            return None
        host = f"[{self.server_host}]" if ":" in self.server_host else self.server_host
        return f"http://{host}:{port}/" + ("" if table is None else f"table/{table}")

    async def close(self) -> None:
        """Close the connection and wait for the reader to stop.

        What was written is given :data:`CLOSE_TIMEOUT_S` seconds to be
        delivered; then the connection is aborted (the rest is dropped).
        """
        self.close_reason = self.close_reason or "closed by this client"
        self.closed_by_us = True
        if self._keepalive_task is not None:
            self._keepalive_task.cancel()
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), CLOSE_TIMEOUT_S)
        except asyncio.TimeoutError:
            self._writer.transport.abort()
        except (ConnectionError, OSError):
            pass
        await asyncio.gather(self._reader_task, return_exceptions=True)

    # --- requests -----------------------------------------------------------------------

    async def list_tables(self, *, most: int = MAX_LISTED_TABLES) -> list[m.TableInfo]:
        """Return every table in the lobby (at most ``most``), by increasing id, asking page after page.

        Long option texts come as summaries (``{"length": ..., "sha256": ...}``; PROTOCOL.md, TableInfo).

        Raises:
            ServerError, ConnectionLost: as :meth:`request`.
        """
        tables: list[m.TableInfo] = []
        after: int | None = None
        while len(tables) < most:
            page = await self.list_tables_page(after=after, limit=min(m.MAX_TABLES_PAGE, most - len(tables)))
            tables += page.tables
            if page.next is None or not page.tables or (after is not None and page.next <= after):
                break  # the last page (or a page that makes no progress: stop rather than loop)
            after = page.next
        return tables[:most]

    async def watch_lobby(self, watch: bool = True) -> None:
        """Start (or, with ``watch`` false, stop) receiving the lobby's pushes on this connection.

        A new connection hears nothing of the lobby until it asks; the
        subscription ends with the connection (a resumed session asks again).

        Raises:
            ServerError, ConnectionLost: as :meth:`request`.
        """
        await self.request(m.WatchLobby, watch=watch)
        self.watching_lobby = watch

    async def list_tables_page(self, *, after: int | None = None, limit: int = m.MAX_TABLES_PAGE) -> m.Tables:
        """One page of the lobby: up to ``limit`` (1 … 100) tables with an id above ``after``; ``next`` is the next ``after``."""
        reply = await self.request(m.ListTables, after=after, limit=limit)
        assert isinstance(reply, m.Tables)
        return reply

    async def create_table(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        *,
        seed: str | int | None = None,
        seat: int | None = 0,
        time_control: str | None = None,
        computer: Mapping[int, int] | None = None,
        hints: bool = False,
        rated: bool = False,
    ) -> m.TableJoined:
        """Create a table and sit at ``seat`` (``None``: watch it instead).

        ``time_control`` is ``"MINUTES+INCREMENT"`` (e.g. ``"5+3"``) or ``None`` for no clock.
        ``computer`` maps the seats the server's computer player takes to its
        level there (``{1: 4}``: level 4 plays seat 1; both seats and
        ``seat=None`` for a computer-vs-computer table to watch); the game
        starts as soon as both seats are filled. ``hints`` lets the seated
        players ask for :meth:`hint` (always allowed against the computer).
        ``rated`` makes the game change both players' ratings (claimed names only).

        Raises:
            ServerError: ``bad_request`` for a bad computer seat or level,
                ``too_many_bots`` past the server's limit of computer seats, and
                the usual refusals of a new table.
            ConnectionLost: as :meth:`request`.
        """
        seats = [m.ComputerSeat(seat=seat_of_computer, level=level) for seat_of_computer, level in sorted((computer or {}).items())]
        reply = await self.request(
            m.CreateTable,
            game=game,
            options=options or {},
            seed=seed,
            seat=seat,
            time_control=time_control,
            computer=seats,
            hints=hints,
            rated=rated,
        )
        assert isinstance(reply, m.TableJoined)
        return reply

    async def join_table(self, table: int, seat: int | None = None) -> m.TableJoined:
        """Take ``seat`` (``None``: any free one) at ``table``."""
        reply = await self.request(m.JoinTable, table=table, seat=seat)
        assert isinstance(reply, m.TableJoined)
        return reply

    async def watch_table(self, table: int) -> m.TableJoined:
        """Spectate ``table``."""
        reply = await self.request(m.WatchTable, table=table)
        assert isinstance(reply, m.TableJoined)
        return reply

    async def leave_table(self, table: int) -> None:
        """Leave a seat or stop watching.

        Leaving the seat of a running game forfeits it (the leaver loses), but
        while a side has not played a move of its own yet it aborts the game
        instead: no result, not rated (PROTOCOL.md ``leave_table``).
        """
        await self.request(m.LeaveTable, table=table)

    async def move(self, table: int, move: str, *, ply: int | None = None) -> None:
        """Play ``move`` at ``table``; returns once the server accepted it."""
        await self.request(m.PlayMove, table=table, move=move, ply=ply)

    async def resign(self, table: int) -> None:
        """Resign the game at ``table``."""
        await self.request(m.Resign, table=table)

    async def abort(self, table: int) -> None:
        """Abort the game at ``table`` before our own first move (no result, not rated)."""
        await self.request(m.AbortGame, table=table)

    async def offer(self, table: int, kind: str, *, plies: int = 1) -> None:
        """Offer a ``"draw"``, ask for a ``"takeback"`` of ``plies`` plies, or offer a ``"rematch"``."""
        await self.request(m.Offer, table=table, kind=kind, plies=plies)

    async def answer(self, table: int, kind: str, accept: bool) -> None:
        """Accept or decline the opponent's pending offer of ``kind``."""
        await self.request(m.Answer, table=table, kind=kind, accept=accept)

    async def say(self, text: str, table: int | None = None) -> None:
        """Chat at ``table``, or in the lobby when ``table`` is ``None``."""
        await self.request(m.Say, text=text, table=table)

    async def list_archive(self, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Finished games on the server, newest first."""
        reply = await self.request(m.ListArchive, limit=limit, offset=offset)
        assert isinstance(reply, m.Archive)
        return reply.games

    async def get_record(self, table: int, format: m.RecordFormat = "text") -> str:
        """The record of finished game ``table``: plain text (``games.record``), or ``format="ggf"`` GGF (``games.ggf``).

        Raises:
            ServerError: ``no_such_table``; ``bad_request`` for GGF of a game
                other than Othello, or (made here) from a server too old to
                write GGF, which answers with plain text.
        """
        reply = await self.request(m.GetRecord, table=table, format=format)
        assert isinstance(reply, m.Record)
        if reply.format != format:
            message = f"the server sent the record of game {table} as {reply.format}, not {format}: it is too old to write {format} records"
            raise ServerError(m.Error(code="bad_request", message=message, field="format"))
        return reply.text

    async def hint(self, table: int) -> m.Hint:
        """Ask the server's computer for the best move for our seat at ``table`` (it must be our turn).

        Returns the ``hint`` reply: its ``move`` and the ``ply`` it is for.

        Raises:
            ServerError: ``hints_off`` at a table created without hints,
                ``not_your_turn``, ``not_seated``, ``no_such_table``, ...
            ConnectionLost: as :meth:`request`.
        """
        reply = await self.request(m.AskHint, table=table)
        assert isinstance(reply, m.Hint)
        return reply

    async def finger(self, name: str) -> m.Player:
        """A player's ratings per game and time-control family and last rated games.

        Raises:
            ServerError: ``bad_name`` for a text no player can have.
            ConnectionLost: as :meth:`request`.
        """
        reply = await self.request(m.Finger, name=name)
        assert isinstance(reply, m.Player)
        return reply

    async def leaderboard(
        self, game: str, family: str | None = None, *, limit: int = 20, offset: int = 0, provisional: bool = False
    ) -> m.Ranking:
        """One page of ``game``'s leaderboard, best first (``family`` ``None``: each player's best family).

        ``reply.next`` is the ``offset`` of the next page (``None`` on the last);
        provisional ratings are left out unless ``provisional``.

        Raises:
            ServerError: ``unknown_game``; ``bad_message`` for an unknown family or a limit above 50.
            ConnectionLost: as :meth:`request`.
        """
        reply = await self.request(m.GetLeaderboard, game=game, family=family, limit=limit, offset=offset, provisional=provisional)
        assert isinstance(reply, m.Ranking)
        return reply

    async def ping(self) -> None:
        """Round-trip a ``ping``."""
        await self.request(m.Ping)

    async def set_password(self, password: str | None, current: str) -> str:
        """Set a password (at least 8 characters) that proves this session's claimed name like its secret; ``None`` removes it.

        ``current`` is the name's current password or secret. Every other session of the name
        is ended and this one gets a new token, which is returned (and kept as :attr:`token`).

        Raises:
            ServerError: ``bad_action`` (the name is not claimed by this session), ``bad_request``
                (too short), ``name_claimed`` (``current`` is wrong), ``rate_limited``.
        """
        return self._renewed(await self.request(m.SetPassword, password=password, current=current))

    async def change_secret(self, current: str, secret: str) -> str:
        """Replace the secret of this session's claimed name with ``secret`` (at least 16 characters).

        ``current`` is the name's current secret or password. As :meth:`set_password`, returns
        the session's new token.

        Raises:
            ServerError: as :meth:`set_password`.
        """
        return self._renewed(await self.request(m.ChangeSecret, current=current, secret=secret))

    def _renewed(self, reply: m.Message) -> str:
        """Keep the token of a ``token_renewed`` reply."""
        assert isinstance(reply, m.TokenRenewed) and self.welcome is not None
        self.welcome = msgspec.structs.replace(self.welcome, token=reply.token)
        return reply.token
    # --- finding an opponent (PROTOCOL.md §17) ----------------------------------------------

    async def who(self, *, game: str | None = None, sort: str = "name", offset: int = 0, limit: int = 50) -> m.Players:
        """One page of the players online (``sort`` ``"name"`` or ``"rating"``; ``game`` picks the rating shown)."""
        reply = await self.request(m.Who, game=game, sort=sort, offset=offset, limit=limit)
        assert isinstance(reply, m.Players)
        return reply

    async def challenge(
        self,
        name: str,
        game: str,
        options: Mapping[str, Any] | None = None,
        *,
        seat: int | None = None,
        time_control: str | None = None,
        rated: bool = False,
    ) -> m.ChallengeInfo:
        """Challenge ``name`` to ``game``; we sit in ``seat`` (``None``: drawn at random). Returns the open challenge."""
        reply = await self.request(m.Challenge, name=name, game=game, options=dict(options or {}), seat=seat, time_control=time_control, rated=rated)
        assert isinstance(reply, m.ChallengeSent)
        return reply.challenge

    async def accept_challenge(self, challenge: int) -> None:
        """Accept challenge ``challenge``; a ``paired`` push follows with the table."""
        await self.request(m.AcceptChallenge, challenge=challenge)

    async def decline_challenge(self, challenge: int) -> None:
        """Decline challenge ``challenge``."""
        await self.request(m.DeclineChallenge, challenge=challenge)

    async def withdraw_challenge(self, challenge: int) -> None:
        """Take back our challenge ``challenge``."""
        await self.request(m.WithdrawChallenge, challenge=challenge)

    async def seek(
        self,
        game: str,
        options: Mapping[str, Any] | None = None,
        *,
        time_control: str | None = None,
        rated: bool = False,
        rating_min: int | None = None,
        rating_max: int | None = None,
    ) -> m.SeekPosted:
        """Post a seek; the reply says whether it was paired at once (a ``paired`` push then follows)."""
        reply = await self.request(
            m.Seek, game=game, options=dict(options or {}), time_control=time_control, rated=rated, rating_min=rating_min, rating_max=rating_max
        )
        assert isinstance(reply, m.SeekPosted)
        return reply

    async def unseek(self, seek: int | None = None) -> None:
        """Take back our seek ``seek`` (``None``: all of ours)."""
        await self.request(m.Unseek, seek=seek)

    async def list_seeks(self, *, after: int | None = None, limit: int = m.MAX_SEEKS_PAGE) -> m.Seeks:
        """One page of the open seeks, by id."""
        reply = await self.request(m.ListSeeks, after=after, limit=limit)
        assert isinstance(reply, m.Seeks)
        return reply

    async def tell(self, name: str, text: str) -> None:
        """Send ``text`` to the player ``name`` alone."""
        await self.request(m.Tell, name=name, text=text)

    async def mute(self, name: str, mute: bool = True) -> None:
        """Mute (or, ``mute`` false, unmute) the player ``name``: no tells or challenges from them."""
        await self.request(m.Mute, name=name, mute=mute)

    async def list_mutes(self) -> list[str]:
        """The names we mute, sorted, each as the server compares names (NFKC, case-folded: ``"Bob"`` is ``"bob"``)."""
        reply = await self.request(m.ListMutes)
        assert isinstance(reply, m.MutedNames)
        return list(reply.names)

    async def mute_guests(self, mute: bool = True) -> None:
        """Mute (or, ``mute`` false, unmute) every guest: only claimed names may tell or challenge this player."""
        await self.request(m.MuteGuests, mute=mute)
