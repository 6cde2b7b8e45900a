"""The web face: an aiohttp application on the game server's event loop, read-only.

Routes: the pages (``/``, ``/table/ID``, ``/tv``, ``/archive``,
``/archive/ID``), their files (``/static/NAME``, only the names
:mod:`server.web.assets` lists), JSON for the TV and the archive
(``/api/...``), plain-text records (``/archive/ID.txt``) and two WebSocket
feeds (``/ws/lobby``, ``/ws/table/ID``: :mod:`server.web.feed`). Every
response carries a strict Content-Security-Policy: scripts and styles only
from the served files, no inline code, connections only back to this server.
No cookie is ever set; nothing a browser sends changes anything.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import socket as socket_module
from typing import Awaitable, Callable, cast

from aiohttp import WSMsgType, web

from protocol.messages import RematchStarted

from ..bus.bus import LOBBY
from ..net.peer import SOCKET_BUFFER_BYTES
from ..storage.rows import archive_entry_map
from ..tables.exports import ExportError
from ..tables.table import Table
from . import assets, snapshots
from .feed import Outbox, Translator, Watcher, json_text, text_message

from .watched import WatchedServer

__all__ = ["CONTENT_SECURITY_POLICY", "WebFace"]

log = logging.getLogger(__name__)

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""Sent with every response: nothing inline, nothing from elsewhere, no framing by other sites."""

HEARTBEAT_S = 30.0
"""How often a browser's WebSocket is pinged; one that does not answer within half of it is closed."""
MOST_INCOMING_BYTES = 1024
"""The largest WebSocket message a browser may send (it has nothing to say: anything it sends is ignored)."""
ARCHIVE_PAGE = 50
"""Finished games per archive page."""
MOST_ARCHIVE_OFFSET = 1_000_000
"""The furthest an archive page may start."""
KEEPALIVE_S = 15.0
"""How long an idle HTTP connection (a page already loaded) is kept open for the browser's next request."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebFace:
    """The HTTP and WebSocket server of one game server (``parlour serve --http``).

    Args:
        server: the game server; its bus feeds the pages, its connection limits count the WebSockets.
    """

    def __init__(self, server: WatchedServer) -> None:
        self._server = server
        self._files = assets.load()
        self._translator = Translator()
        self._outbox = Outbox(server.config.limits.send_buffer_bytes)
        self._runner: web.AppRunner | None = None
        self.browsers: collections.Counter[int] = collections.Counter()
        """Table id -> browsers watching it now (the TV picks by them too)."""
        self._watchers: dict[int, set[Watcher]] = {}
        server.authority.rematch_listeners.append(self._rematch)

    # --- lifecycle --------------------------------------------------------------------

    async def start(self, host: str, port: int) -> tuple[str, int]:
        """Listen on ``host``:``port`` (0: any free port); return the address bound.

        Raises:
            OSError: the address cannot be bound.
        """
        app = web.Application(middlewares=[_headers], client_max_size=MOST_INCOMING_BYTES)
        app.add_routes(self._routes())
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0, keepalive_timeout=KEEPALIVE_S)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await self.close()
            raise
        bound = self._runner.addresses[0]
        return str(bound[0]), int(bound[1])

    async def close(self) -> None:
        """Close every feed and stop listening. Idempotent."""
        for watchers in list(self._watchers.values()):
            for watcher in list(watchers):
                watcher.close()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def _routes(self) -> list[web.RouteDef]:
        page = self._page
        return [
            web.get("/", page("lobby.html")),
            web.get(r"/table/{id:\d{1,12}}", page("table.html")),
            web.get("/tv", page("table.html")),  # the same page, in TV mode (table.js)
            web.get("/archive", page("archive.html")),
            web.get(r"/archive/{id:\d{1,12}}", page("replay.html")),
            web.get(r"/archive/{id:\d{1,12}}.{format:txt|ggf}", self._record),
            web.get("/static/{name}", self._static),
            web.get("/favicon.ico", self._favicon),
            web.get("/api/tv", self._tv),
            web.get("/api/archive", self._archive),
            web.get(r"/api/archive/{id:\d{1,12}}", self._archive_game),
            web.get("/ws/lobby", self._lobby_feed),
            web.get(r"/ws/table/{id:\d{1,12}}", self._table_feed),
        ]

    # --- files ------------------------------------------------------------------------

    def _page(self, name: str) -> Handler:
        asset = self._files[name]

        async def handle(request: web.Request) -> web.StreamResponse:
            return web.Response(body=asset.body, content_type=asset.content_type, charset="utf-8")

        return handle

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        asset = self._files.get(name) if name in assets.ASSETS else None
        if asset is None:
            raise web.HTTPNotFound(text=f"there is no file {name!r} here")
        return web.Response(body=asset.body, content_type=asset.content_type, charset="utf-8")

    async def _favicon(self, request: web.Request) -> web.StreamResponse:
        asset = self._files["favicon.svg"]
        return web.Response(body=asset.body, content_type=asset.content_type)

    # --- JSON and records -------------------------------------------------------------

    async def _tv(self, request: web.Request) -> web.StreamResponse:
        chosen = snapshots.most_watched(self._server.tables.values(), self.browsers, self._server.lobby.remote.values())
        return _json({"table": chosen})

    async def _archive(self, request: web.Request) -> web.StreamResponse:
        offset = _number(request.query.get("offset", "0"), "offset", MOST_ARCHIVE_OFFSET)
        store = self._server.store
        entries = store.archive(ARCHIVE_PAGE, offset) if store is not None else []
        return _json({"games": [archive_entry_map(entry) for entry in entries], "offset": offset, "page": ARCHIVE_PAGE})

    async def _archive_game(self, request: web.Request) -> web.StreamResponse:
        table_id = int(request.match_info["id"])
        store = self._server.store
        try:
            game = snapshots.archive_game(store, table_id) if store is not None else None
        except snapshots.RecordError as exc:
            raise web.HTTPInternalServerError(text=f"game {table_id} cannot be replayed: {exc}") from None
        if game is None:
            raise web.HTTPNotFound(text=f"there is no finished game {table_id} in the archive")
        return _json(game)

    async def _record(self, request: web.Request) -> web.StreamResponse:
        table_id, suffix = int(request.match_info["id"]), request.match_info["format"]
        store = self._server.store
        try:
            text = snapshots.record_text(store, table_id, "ggf" if suffix == "ggf" else "text") if store is not None else None
        except ExportError as exc:
            raise web.HTTPNotFound(text=str(exc)) from None
        if text is None:
            raise web.HTTPNotFound(text=f"there is no finished game {table_id} in the archive")
        headers = {"Content-Disposition": f'attachment; filename="parlour-{table_id}.{suffix}"'}
        return web.Response(text=text, content_type="text/plain", charset="utf-8", headers=headers)

    # --- feeds ------------------------------------------------------------------------

    async def _lobby_feed(self, request: web.Request) -> web.StreamResponse:
        lobby = self._server.lobby

        def join(watcher: Watcher) -> bool:
            watcher.send(text_message(json_text(snapshots.lobby_tables(lobby))))
            self._server.bus.subscribe(LOBBY, watcher, None)
            return True

        return await self._feed(request, join, lambda watcher: None)

    async def _table_feed(self, request: web.Request) -> web.StreamResponse:
        table_id = int(request.match_info["id"])
        server = self._server

        links: dict[Watcher, int] = {}  # a browser fed by the node holding the table (a cluster's)

        def join(watcher: Watcher) -> bool:
            table = server.tables.get(table_id)
            if table is None and self._watch_elsewhere(table_id, watcher, links):
                return True
            if table is None:
                message = f"table {table_id} is not open on this server (a finished game may be in the archive)"
                watcher.send(text_message(json_text({"type": "error", "code": "no_such_table", "message": message})))
                return False
            watcher.send(text_message(json_text(snapshots.table_snapshot(table, server.table_chat.history(table)))))
            server.bus.subscribe(table.topic, watcher, None)  # the spectator's view, never a seat's
            self.browsers[table_id] += 1
            self._watchers.setdefault(table_id, set()).add(watcher)
            return True

        def leave(watcher: Watcher) -> None:
            link = links.pop(watcher, None)
            if link is not None and server.cluster is not None and server.cluster.front is not None:
                server.cluster.front.unspectate(link)
            watchers = self._watchers.get(table_id)
            if watchers is not None and watcher in watchers:
                watchers.discard(watcher)
                if not watchers:
                    del self._watchers[table_id]
                self.browsers[table_id] -= 1
                if self.browsers[table_id] <= 0:
                    del self.browsers[table_id]

        return await self._feed(request, join, leave)

    def _watch_elsewhere(self, table_id: int, watcher: Watcher, links: dict[Watcher, int]) -> bool:
        """Have the node holding ``table_id`` (on a cluster) feed ``watcher`` its snapshot and spectators' frames."""
        cluster = self._server.cluster
        node = cluster.mirror.owner.get(table_id) if cluster is not None else None
        if cluster is None or cluster.front is None or node is None:
            return False
        links[watcher] = cluster.front.spectate(node, table_id, watcher)
        return True

    async def _feed(self, request: web.Request, join: Callable[[Watcher], bool], leave: Callable[[Watcher], None]) -> web.StreamResponse:
        """Serve one WebSocket: counted against its address's connections, fed by ``join`` until either side closes."""
        connections = self._server.connections
        host = request.remote or "?"
        refusal = connections.take_slot(host)
        if refusal is not None:
            raise web.HTTPServiceUnavailable(text=refusal)
        try:
            socket = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MOST_INCOMING_BYTES, compress=False)
            await socket.prepare(request)
            transport = request.transport
            if transport is None:  # gone while the handshake was answered
                return socket
            _bound_kernel_buffers(transport)
            watcher = Watcher(cast(asyncio.Transport, transport), self._translator, self._outbox)
            try:
                if join(watcher):  # the snapshot and the subscription in one step: no event falls between
                    async for message in socket:
                        if message.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                            break  # anything else a browser sends is ignored: the feed is read-only
                else:
                    watcher.flush()
                    await socket.close()
            finally:
                self._server.bus.unsubscribe_all(watcher)
                leave(watcher)
                watcher.close()
            return socket
        finally:
            connections.free_slot(host)

    def _rematch(self, old: Table, new: Table) -> None:
        """Tell the browsers watching ``old`` where its rematch is played (they move there, as terminal spectators do)."""
        watchers = self._watchers.get(old.id)
        if not watchers:
            return
        message = text_message(json_text(RematchStarted(previous=old.id, table=new.info(), seat=None, view=new.view_for(None))))
        for watcher in list(watchers):
            watcher.send(message)


@web.middleware
async def _headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Add the security headers to every answer, errors included."""
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        response = exc
    if not response.prepared:
        headers = response.headers
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "no-referrer"
        headers["Cross-Origin-Resource-Policy"] = "same-origin"
        headers.setdefault("Cache-Control", "no-cache")
    if isinstance(response, web.HTTPException):
        raise response
    return response


def _bound_kernel_buffers(transport: asyncio.BaseTransport | None) -> None:
    """Fix the socket's kernel buffers as a game connection's are, so a browser that stops reading is noticed as soon."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is not None:
        for option in (socket_module.SO_SNDBUF, socket_module.SO_RCVBUF):
            sock.setsockopt(socket_module.SOL_SOCKET, option, SOCKET_BUFFER_BYTES)


def _json(value: object) -> web.Response:
    return web.Response(body=json_text(value), content_type="application/json", charset="utf-8")


def _number(text: str, name: str, most: int) -> int:
    """``text`` as a whole number from 0 to ``most``; HTTP 400 naming ``name`` otherwise."""
    if not (text.isascii() and text.isdigit()) or len(text) > 9 or int(text) > most:
        raise web.HTTPBadRequest(text=f"{name} must be a whole number from 0 to {most}, not {text[:40]!r}")
    return int(text)
