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

Messages on a node's inbox (``parlour:node:NAME:all``), MessagePack lists:
``["open", from, link, name, claimed, bot]``, ``["req", from, link, body]``,
``["close", from, link]``, ``["watch", from, link, table]`` (front to authority:
watch again a table taken over from a node that died); ``["frames", link, data]``,
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
from protocol.messages import Error, JoinTable, LeaveTable, Request, WatchTable

from ..bus.redis import RedisBus
from ..tables.lobby import Lobby
from ..net.peer import Peer
from ..core.names import name_key
from ..core.session import Session, new_token
from ..tables.table import Table
from .lobby import LobbyMirror
from .players import node_topic

__all__ = ["RelayFront", "RelayHost", "LinkTransport"]

log = logging.getLogger(__name__)

HandleRequest = Callable[[Peer, Request], Awaitable[None] | None]
WelcomeBack = Callable[[Session, Table, "int | None"], None]
"""Sends a session the whole of a table it is back at, from its seat or as a spectator (``resumed``)."""


class LinkTransport(asyncio.Transport):
    """The transport of a link's peer on the authority: what is written goes to the front node's inbox."""

    def __init__(self, bus: RedisBus, front: str, link: int, gone: Callable[[], None]) -> None:
        super().__init__()
        self._bus = bus
        self._front = front
        self._link = link
        self._closing = False
        self._gone = gone

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (f"node:{self._front}", self._link) if name == "peername" else default

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
        names: this node's sessions by name key: a link for a player whose seats are held here (a table taken
            over from a node that died) takes that session over.
        lobby: this node's lobby (the tables a link may be asked to watch again).
        welcome_back: sends a session the whole table it is back at (``resumed``).
    """

    def __init__(
        self, bus: RedisBus, handle: HandleRequest, disconnected: Callable[[Peer], None],
        names: dict[str, Session] | None = None, lobby: Lobby | None = None, welcome_back: WelcomeBack | None = None,
    ) -> None:  # fmt: skip
        self._bus = bus
        self._handle = handle
        self._disconnected = disconnected
        self._names = names if names is not None else {}
        self._lobby = lobby
        self._welcome_back = welcome_back
        self._peers: dict[tuple[str, int], Peer] = {}
        self._busy: dict[Peer, asyncio.Task[None]] = {}  # a link's request in progress: the next waits for it

    def open(self, front: str, link: int, name: str, claimed: bool, bot: bool) -> None:
        """A player on ``front`` comes to a table here: a session of that name over a new link."""
        key = (front, link)
        if key in self._peers:
            return
        transport = LinkTransport(self._bus, front, link, lambda: self._peers.pop(key, None))
        peer = Peer(transport, ServerConnection())
        peer.protocol.accept_hello()
        self._peers[key] = peer
        held = self._names.get(name_key(name))
        if held is not None and held.peer is None and held.seats and self._welcome_back is not None and self._lobby is not None:
            held.peer, peer.session = peer, held  # a player whose seats came here with a table taken over: the seats are theirs
            for table_id, seat in list(held.seats.items()):
                table = self._lobby.tables.get(table_id)
                if table is not None:
                    self._welcome_back(held, table, seat)
            return
        peer.session = Session(name=name, token=new_token(), peer=peer, bot=bot, claimed=claimed)

    def watch(self, front: str, link: int, table_id: int) -> None:
        """The player on ``front`` watched table ``table_id`` before it came here (taken over): watch it again, and see it whole."""
        peer = self._peers.get((front, link))
        table = self._lobby.tables.get(table_id) if self._lobby is not None else None
        session = peer.session if peer is not None else None
        if session is None or table is None or table_id in session.seats or self._welcome_back is None:
            return
        table.watch(session)
        session.watching.add(table_id)
        self._welcome_back(session, table, None)

    def is_link(self, session: Session) -> bool:
        """Whether ``session`` is connected here through a link (a player of another node)."""
        peer = session.peer
        return peer is not None and isinstance(peer.transport, LinkTransport)

    def session_named(self, key: str) -> Session | None:
        """The session of a link for the player of name key ``key``, if one is open here."""
        for peer in self._peers.values():
            if peer.session is not None and name_key(peer.session.name) == key:
                return peer.session
        return None

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
        self.host: RelayHost | None = None
        """This node's side of the links other nodes open (set by the cluster)."""
        self._next_link = 1
        self._sessions: dict[int, Session] = {}  # link -> the player it relays for
        self._links: dict[tuple[Session, str], int] = {}  # (player, authority node) -> link
        self._nodes: dict[int, str] = {}  # link -> authority node
        self._at: dict[int, dict[Session, tuple[str, bool]]] = {}  # table -> this node's players at it elsewhere: (node, watching)
        bus.on_gap.append(self._gap)
        mirror.moved.append(self.table_moved)

    def route(self, peer: Peer, request: Request) -> bool:
        """Relay ``request`` if it is about another node's table; return whether it was relayed."""
        table_id = getattr(request, "table", None)
        if type(table_id) is not int or table_id in self._lobby.tables:
            return False
        node = self._mirror.owner.get(table_id)
        session = peer.session
        if node is None or session is None:
            return False
        link = self._link(session, node)
        kind = type(request)
        if kind is JoinTable or kind is WatchTable:
            self._at.setdefault(table_id, {})[session] = (node, kind is WatchTable)
        elif kind is LeaveTable:
            self._not_at(session, table_id)
        self._send(node, ["req", self._bus.node, link, encode_message(request)[HEADER_BYTES:]])
        return True

    def _link(self, session: Session, node: str) -> int:
        """The link of ``session`` to ``node``, opened now if there is none."""
        link = self._links.get((session, node))
        if link is None:
            link = self._next_link
            self._next_link += 1
            self._links[(session, node)] = link
            self._sessions[link] = session
            self._nodes[link] = node
            self._send(node, ["open", self._bus.node, link, session.name, session.claimed, session.bot])
        return link

    def _not_at(self, session: Session, table_id: int) -> None:
        players = self._at.get(table_id)
        if players is not None:
            players.pop(session, None)
            if not players:
                del self._at[table_id]

    # --- tables that change node ------------------------------------------------

    def table_moved(self, table_id: int, node: str) -> None:
        """Node ``node`` holds table ``table_id`` now (it took it over): this node's players at it follow it there.

        A seat comes back by itself (the new authority gives the player's link the seat it restored);
        a spectator watches again. Each gets the whole table (``resumed``), as after a reconnection.
        """
        for session, (held_by, watching) in list(self._at.get(table_id, {}).items()):
            if held_by == node:
                continue
            if session.peer is None:
                self._not_at(session, table_id)
                continue
            link = self._link(session, node)
            if watching:
                self._send(node, ["watch", self._bus.node, link, table_id])
            self._at[table_id][session] = (node, watching)

    def taken_over(self, table: Table, welcome_back: WelcomeBack) -> None:
        """This node took ``table`` over: its players here who watched it through the relay watch it here now.
        (Those seated were given their seats as the table was restored.)"""
        for session, (_, watching) in self._at.pop(table.id, {}).items():
            if watching and session.peer is not None and table.id not in session.seats:
                table.watch(session)
                session.watching.add(table.id)
                welcome_back(session, table, None)

    def follow(self, session: Session, table_id: int, watching: bool) -> None:
        """``session`` was at table ``table_id``, which another node claimed from this one: follow it once that node is known."""
        if self.host is not None and self.host.is_link(session):
            return  # a player of another node: that node's relay follows the table itself
        self._at.setdefault(table_id, {})[session] = (self._bus.node, watching)
        node = self._mirror.owner.get(table_id)
        if node is not None:
            self.table_moved(table_id, node)

    def host_session(self, key: str) -> Session | None:
        """Set by the cluster: the session of a link here for the player of name key ``key`` (see :meth:`RelayHost.session_named`)."""
        return self.host.session_named(key) if self.host is not None else None

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
        for table_id in [table_id for table_id, players in self._at.items() if session in players]:
            self._not_at(session, table_id)

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
        host.open(str(message[1]), int(message[2]), str(message[3]), bool(message[4]), bool(message[5]))
    elif kind == "req":
        host.request(str(message[1]), int(message[2]), bytes(message[3]))
    elif kind == "watch":
        host.watch(str(message[1]), int(message[2]), int(message[3]))
    elif kind == "close":
        host.close(str(message[1]), int(message[2]))
    elif kind == "frames":
        front.frames(int(message[1]), bytes(message[2]))
    elif kind == "gone":
        front.gone(int(message[1]))
    else:
        return False
    return True

