"""Playing and watching a table held by another node: this node relays the requests, the table's node answers.

A table lives on one node (its authority). When a player connected to node
B sends a request about a table node A holds (``join_table``, ``watch_table``,
``move``, ``say``, offers ...), B forwards the request, as it came, to A's
inbox on the bus (:class:`RelayFront`). A keeps, for each such player, a
*link*: a session of that name whose connection is a :class:`server.net.peer.Peer`
over a :class:`LinkTransport` (:class:`RelayHost`). A answers the request
through its own pipeline exactly as it answers its own connections, and what
it writes to the link -- the reply and the pushes of that session's own
views -- crosses back to B's inbox, and B writes those frames to the
player's connection untouched. So every view stays per viewer: a frame goes
only to the node of the connection it was made for, on that node's own
channel.

The link's session on the authority has the player's own resume token, so
the seats it takes there are stored under it: a player who reconnects to
any node finds them (:mod:`server.cluster.identity`). When the player's
session comes back (it resumed, on the front or on another node), the front
opens its link again with ``resume`` set: the authority gives the seats its
session there holds to the new link and sends what a resume sends
(``resumed``, and ``player_back`` to the others), as it would to its own connection.

Messages on a node's inbox (``parlour:node:NAME:all``), MessagePack lists:
``["open", from, link, name, claimed, bot, token, resume, host]``, ``["req", from, link, body]``,
``["close", from, link]`` (front to authority); ``["frames", link, data]``,
``["gone", link]`` (authority to front). Each inbox message carries the bus's
per-channel number: a front that sees a gap from an authority has lost frames
of its links there, and ends those players' connections with an error that
says so (they reconnect).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

import msgpack

from protocol import Code, encode_message
from protocol.codec import decode_request
from protocol.connection import ServerConnection
from protocol.framing import HEADER_BYTES
from protocol.messages import Error, Request

from ..bus.redis import RedisBus
from ..tables.lobby import Lobby
from ..net.peer import Peer
from ..core.names import name_key
from ..core.session import Session, new_token
from .lobby import LobbyMirror
from .players import node_topic

__all__ = ["RelayFront", "RelayHost", "LinkTransport"]

log = logging.getLogger(__name__)

HandleRequest = Callable[[Peer, Request], Awaitable[None] | None]
Holder = Callable[[str], Session | None]
"""``holder(token)``: the session of ``token`` seated at one of this node's tables, or ``None``."""


class LinkTransport(asyncio.Transport):
    """The transport of a link's peer on the authority: what is written goes to the front node's inbox."""

    def __init__(self, bus: RedisBus, front: str, link: int, gone: Callable[[], None], host: str | None = None) -> None:
        super().__init__()
        self._host = host or f"node:{front}"  # the player's own address: its budgets here are its address's
        self._bus = bus
        self._front = front
        self._link = link
        self._closing = False
        self._gone = gone

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (self._host, self._link) if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._bus.publish_remote(node_topic(self._front), msgpack.packb(["frames", self._link, bytes(data)]))

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._bus.publish_remote(node_topic(self._front), msgpack.packb(["gone", self._link]))
            self._gone()

    def abort(self) -> None:
        self.close()

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class RelayHost:
    """The authority's side: links of players connected to other nodes.

    Args:
        bus: this node's bus.
        handle: the server's request pipeline (:meth:`server.app.Server._request`).
        disconnected: the server's handling of a connection that went away (seats held for the grace period).
    """

    def __init__(
        self, bus: RedisBus, handle: HandleRequest, disconnected: Callable[[Peer], None], holder: Holder, rejoin: Callable[[Session], None]
    ) -> None:
        self._bus = bus
        self._handle = handle
        self._disconnected = disconnected
        self._holder = holder
        self._rejoin = rejoin
        self._peers: dict[tuple[str, int], Peer] = {}
        self._busy: dict[Peer, asyncio.Task[None]] = {}  # a link's request in progress: the next waits for it

    def open(
        self, front: str, link: int, name: str, claimed: bool, bot: bool, token: str | None = None, resume: bool = False, host: str | None = None
    ) -> None:
        """A player on ``front`` comes to a table here: its session over a new link.

        The session seated here under ``token`` (the player's resume token) if
        there is one, else a new session of that name with that token. With
        ``resume``, the player's session came back: it is told of its seats here as a resume tells.
        ``host``: the player's address, which this node's per-address budgets count.
        """
        key = (front, link)
        peer = self._peers.get(key)
        if peer is None:
            transport = LinkTransport(self._bus, front, link, lambda: self._peers.pop(key, None), host)
            peer = Peer(transport, ServerConnection())
            peer.protocol.accept_hello()
            self._peers[key] = peer
            held = self._holder(token) if token is not None else None
            if held is None or name_key(held.name) != name_key(name):
                held = Session(name=name, token=token or new_token(), bot=bot, claimed=claimed)
            old, held.peer, peer.session = held.peer, peer, held
            held.claimed, held.bot = claimed, bot
            if old is not None and old is not peer and not old.closed:
                old.close()  # an older link of the same player (its front let it go), or a connection here it left
        if resume and peer.session is not None:
            self._rejoin(peer.session)

    def request(self, front: str, link: int, body: bytes) -> None:
        """Answer a request the front relayed, after the link's earlier ones."""
        peer = self._peers.get((front, link))
        if peer is None:
            return
        try:
            request = decode_request(body)
        except Exception as exc:  # the front checked it already; a garbled one is refused, never raised
            peer.send(Error(code=Code.BAD_REQUEST, message=f"the relayed request could not be read: {exc}"))
            return
        before = self._busy.get(peer)
        task = asyncio.get_running_loop().create_task(self._answer(peer, request, before))
        self._busy[peer] = task
        task.add_done_callback(lambda done: self._busy.pop(peer, None) if self._busy.get(peer) is done else None)

    async def _answer(self, peer: Peer, request: Request, before: asyncio.Task[None] | None) -> None:
        if before is not None:
            await asyncio.wait([before])
        answering = self._handle(peer, request)
        if answering is not None:
            await answering

    def close(self, front: str, link: int) -> None:
        """The player's connection to the front is gone: the seats held over this link run their grace period."""
        peer = self._peers.pop((front, link), None)
        if peer is None:
            return
        peer.closed = True
        self._disconnected(peer)

    def close_all(self) -> None:
        """This node stops: end every link (the fronts hear ``gone``)."""
        for peer in list(self._peers.values()):
            peer.transport.close()


class RelayFront:
    """The front's side: this node's players' requests about other nodes' tables, and the frames that come back.

    Args:
        bus: this node's bus.
        lobby: this node's lobby (its own tables are answered here).
        mirror: which node holds which other table.
    """

    def __init__(self, bus: RedisBus, lobby: Lobby, mirror: LobbyMirror) -> None:
        self._bus = bus
        self._lobby = lobby
        self._mirror = mirror
        self._next_link = 1
        self._sessions: dict[int, Session] = {}  # link -> the player it relays for
        self._links: dict[tuple[Session, str], int] = {}  # (player, authority node) -> link
        self._nodes: dict[int, str] = {}  # link -> authority node
        bus.on_gap.append(self._gap)

    def route(self, peer: Peer, request: Request) -> bool:
        """Relay ``request`` if it is about another node's table; return whether it was relayed."""
        table_id = getattr(request, "table", None)
        if type(table_id) is not int or table_id in self._lobby.tables:
            return False
        node = self._mirror.owner.get(table_id)
        session = peer.session
        if node is None or session is None:
            return False
        self.forward(session, node, request)
        return True

    def forward(self, session: Session, node: str, request: Request) -> None:
        """Relay ``request`` of ``session`` (connected here) to node ``node``, which answers it."""
        self._send(node, ["req", self._bus.node, self.link(session, node), encode_message(request)[HEADER_BYTES:]])

    def link(self, session: Session, node: str) -> int:
        """The link of ``session`` to node ``node``, opened now if there is none."""
        link = self._links.get((session, node))
        if link is None:
            link = self._open(session, node, resume=False)
        return link

    def _open(self, session: Session, node: str, resume: bool) -> int:
        """Open (again, with ``resume``) ``session``'s link to ``node``; return the link."""
        link = self._links.get((session, node))
        if link is None:
            link = self._next_link
            self._next_link += 1
            self._links[(session, node)] = link
            self._sessions[link] = session
            self._nodes[link] = node
        host = session.peer.host if session.peer is not None else None
        self._send(node, ["open", self._bus.node, link, session.name, session.claimed, session.bot, session.token, resume, host])
        return link

    def reattach(self, session: Session, table_ids: list[int]) -> None:
        """``session`` came back holding seats at ``table_ids``, other nodes' tables: have each such node tell it so.

        A table whose node is not known here (yet) is left: its seat's grace runs out there.
        """
        nodes = {self._mirror.owner[table_id] for table_id in table_ids if table_id in self._mirror.owner}
        for node in sorted(nodes):
            self._open(session, node, resume=True)

    def _send(self, node: str, message: list[Any]) -> None:
        self._bus.publish_remote(node_topic(node), msgpack.packb(message))

    def frames(self, link: int, data: bytes) -> None:
        """Frames the authority wrote to ``link``: to the player's connection, as they are."""
        session = self._sessions.get(link)
        peer = session.peer if session is not None else None
        if peer is None:
            return
        at = 0
        while at + HEADER_BYTES <= len(data):
            end = at + HEADER_BYTES + int.from_bytes(data[at : at + HEADER_BYTES], "big")
            peer.send_frame(data[at:end])
            at = end

    def gone(self, link: int) -> None:
        """The authority ended ``link`` (its session there ended, or the node stops)."""
        session = self._sessions.pop(link, None)
        node = self._nodes.pop(link, None)
        if session is not None and node is not None:
            self._links.pop((session, node), None)

    def disconnected(self, session: Session) -> None:
        """``session``'s connection is gone: its links close (the authorities hold its seats for the grace period)."""
        for (holder, node), link in list(self._links.items()):
            if holder is session:
                self._send(node, ["close", self._bus.node, link])
                self.gone(link)

    def _gap(self, topic: str, view: object, origin: str) -> None:
        if topic != node_topic(self._bus.node):
            return
        for link, node in list(self._nodes.items()):
            if node != origin:
                continue
            session = self._sessions.get(link)
            peer = session.peer if session is not None else None
            if peer is not None:
                log.warning("frames from node %s to %s were lost on the bus; ending the connection", origin, session.name if session else "?")
                peer.send(Error(code=Code.INTERNAL_ERROR, message=f"the connection to the node holding your table ({origin}) lost messages; reconnect"))
                peer.close()


def dispatch_inbox(data: bytes, host: RelayHost, front: RelayFront) -> bool:
    """Hand a relay message from this node's inbox to ``host`` or ``front``; ``False`` if it is no relay message."""
    message = msgpack.unpackb(data)
    kind = message[0]
    if kind == "open":
        address = str(message[8]) if len(message) > 8 and message[8] is not None else None
        token, resume = (str(message[6]), bool(message[7])) if len(message) >= 8 else (None, False)
        host.open(str(message[1]), int(message[2]), str(message[3]), bool(message[4]), bool(message[5]), token, resume, address)
    elif kind == "req":
        host.request(str(message[1]), int(message[2]), bytes(message[3]))
    elif kind == "close":
        host.close(str(message[1]), int(message[2]))
    elif kind == "frames":
        front.frames(int(message[1]), bytes(message[2]))
    elif kind == "gone":
        front.gone(int(message[1]))
    else:
        return False
    return True

