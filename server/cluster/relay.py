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

What one loop turn sends to one node goes as one message on that node's inbox:
a batch (:mod:`server.cluster.relay_batch`). A table that another node takes over is followed there by
the players of the fronts (:mod:`server.cluster.follow`). Each
inbox message carries the bus's per-channel number: a front that sees a gap
from an authority has lost frames of its links there, and ends those
players' connections with an error that says so (they reconnect).

A relayed request is never left without a reply. The front notes the ``id``
of each request it relays until the reply comes back; when the authority
goes away before answering -- it ends the link, another node takes the
request's table over, or the node is gone -- the front answers the request
itself with ``reply_lost`` (:data:`REPLY_LOST_MESSAGE`: whether it took effect
is not known; the ``resumed`` push of the table's new node shows the table as
it stands), and drops the late reply should the old authority send one after all.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

import msgpack
import msgspec

from protocol import Code
from protocol.codec import ENCODER, decode_request
from protocol.connection import ServerConnection
from protocol.framing import HEADER_BYTES
from protocol.messages import Error, Request

from ..bus.redis import RedisBus
from ..tables.lobby import Lobby
from ..net.peer import Outbox, Peer
from ..core.names import name_key
from ..core.session import Session, new_token
from .follow import FOLLOWED, Following
from .in_turn import InTurn
from .lobby import LobbyMirror
from .players import node_topic
from .relay_batch import BATCH, CLOSE, FRAMES, GONE, MESSAGE, OPEN, RECORD, REQUEST, Mail, read_batch

__all__ = ["REPLY_LOST_MESSAGE", "Mail", "RelayFront", "RelayHost", "LinkTransport", "RECORD", "OPEN", "REQUEST", "CLOSE", "FRAMES", "GONE", "MESSAGE", "BATCH", "dispatch_inbox", "read_batch"]

log = logging.getLogger(__name__)

_encode_body = ENCODER.encode

HandleRequest = Callable[[Peer, Request], Awaitable[None] | None]
Holder = Callable[[str], Session | None]
"""``holder(token)``: the session of ``token`` seated at one of this node's tables, or ``None``."""

REPLY_LOST_MESSAGE = (
    "the part of the server that held this table went away before answering; whether this was done is not known:"
    " the table is sent again as it stands once another part of the server holds it"
)
"""The message of the ``reply_lost`` error a front sends for a relayed request whose authority went away unanswered."""


class _Reply(msgspec.Struct):
    """What a front reads of a frame from a link while requests wait there: the ``id`` of a reply (a push has none)."""

    id: int | None = None


_read_reply = msgspec.msgpack.Decoder(_Reply).decode


def _reply_id(frame: bytes) -> int | None:
    """The ``id`` of ``frame`` (a whole frame, header included), or ``None``: a push, or a frame this version cannot read."""
    try:
        return _read_reply(memoryview(frame)[HEADER_BYTES:]).id
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


class LinkTransport(asyncio.Transport):
    """The transport of a link's peer on the authority: what is written goes to the front node's inbox, with the turn's batch."""

    def __init__(self, bus: RedisBus, front: str, link: int, gone: Callable[[], None], host: str | None = None) -> None:
        super().__init__()
        self._host = host or f"node:{front}"  # the player's own address: its budgets here are its address's
        self._mail = Mail.of(bus)
        self._front = front
        self._link = link
        self._closing = False
        self._gone = gone

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (self._host, self._link) if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._mail.put(self._front, FRAMES, self._link, bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._mail.put(self._front, GONE, self._link)
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


class _LinkOutbox(Outbox):
    """The links' outbox: its flush at the end of the turn publishes the frames it writes at once (one bus write,
    no loop turn more for the bus's own flush)."""

    __slots__ = ("_mail",)

    def __init__(self, mail: Mail) -> None:
        super().__init__()
        self._mail = mail

    def flush(self) -> None:
        self._mail.flush_after(super().flush)


class RelayHost:
    """The authority's side: links of players connected to other nodes.

    Args:
        bus: this node's bus (its :class:`Mail` carries the frames back).
        handle: the server's request pipeline (:meth:`server.app.Server._request`).
        disconnected: the server's handling of a connection that went away (seats held for the grace period).
    """

    def __init__(
        self, bus: RedisBus, handle: HandleRequest, disconnected: Callable[[Peer], None], holder: Holder, rejoin: Callable[[Session], None]
    ) -> None:
        self._bus = bus
        self._mail = Mail.of(bus)
        self._handle = handle
        self._disconnected = disconnected
        self._holder = holder
        self._rejoin = rejoin
        self.rewatch: Callable[[Session, int], None] | None = None
        """Set by the cluster: has a session watch this node's table of that id again and sends it ``resumed``."""
        self._peers: dict[tuple[str, int], Peer] = {}
        self._in_turn = InTurn()  # each link's requests one after another, none in a task of its own
        self._outbox = _LinkOutbox(self._mail)  # one flush a turn for every link's frames, and at once to the bus

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
            peer = Peer(transport, ServerConnection(), outbox=self._outbox)
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

    def watch_again(self, front: str, link: int, table_id: int) -> None:
        """The player of ``link`` on ``front`` watched table ``table_id`` before it came here (taken over): watch it again."""
        peer = self._peers.get((front, link))
        if peer is not None and peer.session is not None and self.rewatch is not None:
            self.rewatch(peer.session, table_id)

    @staticmethod
    def is_link(session: Session) -> bool:
        """Whether ``session`` is connected here through a link (a player of another node)."""
        peer = session.peer
        return peer is not None and isinstance(peer.transport, LinkTransport)

    def request(self, front: str, link: int, body: bytes) -> None:
        """Answer a request the front relayed, after the link's earlier ones (at once when none waits)."""
        peer = self._peers.get((front, link))
        if peer is None:
            return
        try:
            request = decode_request(body)
        except Exception as exc:  # the front checked it already; a garbled one is refused, never raised
            peer.send(Error(code=Code.BAD_REQUEST, message=f"the relayed request could not be read: {exc}"))
            return
        self._in_turn.run(peer, self._answer, peer, request, front)

    def _answer(self, peer: Peer, request: Request, front: str) -> Awaitable[None] | None:
        """Begin answering ``request`` of ``peer``: ``None`` once answered, else what answers it (the pipeline's own)."""
        try:
            return self._handle(peer, request)
        except Exception:  # the pipeline answers its own errors; this is a bug, and the bus's receiver must go on
            log.exception("relayed %s from %s on node %s failed", type(request).__name__, peer.session.name, front)
            peer.send(Error(id=request.id, code=Code.INTERNAL_ERROR, message="the server failed to handle this request"))
            return None

    def close(self, front: str, link: int) -> None:
        """The player's connection to the front is gone: the seats held over this link run their grace period."""
        peer = self._peers.pop((front, link), None)
        if peer is None:
            return
        peer.closed = True
        self._disconnected(peer)

    def close_all(self) -> None:
        """This node stops: end every link (the fronts hear ``gone`` at once)."""
        for peer in list(self._peers.values()):
            peer.transport.close()
        self._mail.flush()


class RelayFront:
    """The front's side: this node's players' requests about other nodes' tables, and the frames that come back.

    Args:
        bus: this node's bus (its :class:`Mail` carries the requests).
        lobby: this node's lobby (its own tables are answered here).
        mirror: which node holds which other table.
    """

    def __init__(self, bus: RedisBus, lobby: Lobby, mirror: LobbyMirror) -> None:
        self._bus = bus
        self._mail = Mail.of(bus)
        self._node = bus.node
        self._lobby = lobby
        self._mirror = mirror
        self._next_link = 1
        self._sessions: dict[int, Session] = {}  # link -> the player it relays for
        self._links: dict[tuple[Session, str], int] = {}  # (player, authority node) -> link
        self._nodes: dict[int, str] = {}  # link -> authority node
        self._waiting: dict[int, dict[int, int | None]] = {}  # link -> id of a relayed request not answered yet -> its table
        self._lost: dict[int, set[int]] = {}  # link -> ids answered here with reply_lost: the authority's late reply is dropped
        self.following = Following(self, self._node)
        """This node's players at other nodes' tables, who follow a table that moves."""
        bus.on_gap.append(self._gap)
        mirror.moved.append(self._table_moved)

    def route(self, peer: Peer, request: Request) -> bool:
        """Relay ``request`` if it is about another node's table; return whether it was relayed."""
        table_id = getattr(request, "table", None)
        if type(table_id) is not int or table_id in self._lobby.tables:
            return False
        node = self._mirror.owner.get(table_id)
        session = peer.session
        if node is None or session is None:
            return False
        kind = type(request)
        if kind in FOLLOWED:
            self.following.note(session, table_id, node, kind)
        self.forward(session, node, request)
        return True

    def forward(self, session: Session, node: str, request: Request) -> None:
        """Relay ``request`` of ``session`` (connected here) to node ``node``, which answers it (or, should that node
        go away first, this node answers ``reply_lost``: :meth:`gone`, :meth:`table_held`, :meth:`node_gone`)."""
        link = self.link(session, node)
        if request.id is not None:
            self._waiting.setdefault(link, {})[request.id] = getattr(request, "table", None)
        self._mail.put(node, REQUEST, link, _encode_body(request))  # its body: no frame header to make and cut off

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
        self._mail.put(node, OPEN, link, msgpack.packb([session.name, session.claimed, session.bot, session.token, resume, host]))
        return link

    def reopen(self, session: Session, node: str) -> None:
        """Open ``session``'s link to ``node`` again with ``resume`` set: that node gives the link the seats held there
        under the session's token, and sends ``resumed`` (a table it took over)."""
        self._open(session, node, resume=True)

    def post(self, node: str, message: list[Any]) -> None:
        """Send node ``node`` a message of another layer (a MessagePack list), in order with the relay's records."""
        self._mail.message(node, message)

    def reattach(self, session: Session, holders: dict[int, str | None]) -> None:
        """``session`` came back holding seats at other nodes' tables: have each such node tell it so.

        ``holders`` maps each table id to the node its lease in the database names (``None``: none). This
        node's lobby mirror is asked first; the lease answers for a table the mirror has not heard of yet (one
        created a moment ago). A table neither knows is left: its seat's grace runs out there.
        """
        nodes = {self._mirror.owner.get(table_id) or holder for table_id, holder in holders.items()}
        for node in sorted(node for node in nodes if node is not None and node != self._bus.node):
            self._open(session, node, resume=True)

    def frames(self, link: int, data: bytes) -> None:
        """Frames the authority wrote to ``link``: to the player's connection, as they are (the replies to requests
        answered here already with ``reply_lost`` left out)."""
        session = self._sessions.get(link)
        peer = session.peer if session is not None else None
        if peer is None:
            return
        waiting = self._waiting.get(link)
        lost = self._lost.get(link)
        at, size = 0, len(data)
        while at + HEADER_BYTES <= size:
            end = at + HEADER_BYTES + int.from_bytes(data[at : at + HEADER_BYTES], "big")
            frame = data if at == 0 and end == size else data[at:end]  # most often one frame: no copy
            at = end
            if waiting or lost:
                answered = _reply_id(frame)
                if waiting and answered in waiting:
                    del waiting[answered]  # type: ignore[arg-type]
                elif lost and answered in lost:
                    lost.discard(answered)  # type: ignore[arg-type]
                    continue
            peer.send_frame(frame)

    def gone(self, link: int) -> None:
        """The authority ended ``link`` (its session there ended, or the node stops): what it left unanswered gets ``reply_lost``."""
        self._give_up(link, None)
        self._waiting.pop(link, None)
        self._lost.pop(link, None)
        session = self._sessions.pop(link, None)
        node = self._nodes.pop(link, None)
        if session is not None and node is not None:
            self._links.pop((session, node), None)

    def table_held(self, table_id: int, node: str) -> None:
        """Node ``node`` holds table ``table_id`` now (it took it over; this node's name: this node did): the requests about
        it relayed to any other node and not answered yet get ``reply_lost``."""
        for link in [link for link, waiting in self._waiting.items() if waiting]:
            if self._nodes.get(link) != node:
                self._give_up(link, table_id)

    def node_gone(self, node: str) -> None:
        """Node ``node`` is gone (unseen for a while): the requests relayed to it and not answered get ``reply_lost``."""
        for link in [link for link, held_by in self._nodes.items() if held_by == node]:
            self._give_up(link, None)

    def waiting_on(self) -> set[str]:
        """The nodes that have relayed requests of this node's players to answer."""
        return {self._nodes[link] for link, waiting in self._waiting.items() if waiting and link in self._nodes}

    def _give_up(self, link: int, table_id: int | None) -> None:
        """Answer ``reply_lost`` to ``link``'s requests (about table ``table_id``; ``None``: all) that wait for a reply."""
        waiting = self._waiting.get(link)
        if not waiting:
            return
        given_up = [request_id for request_id, about in waiting.items() if table_id is None or about == table_id]
        if not given_up:
            return
        session = self._sessions.get(link)
        peer = session.peer if session is not None else None
        lost = self._lost.setdefault(link, set())
        for request_id in given_up:
            del waiting[request_id]
            lost.add(request_id)
            if peer is not None:
                peer.send(Error(id=request_id, code=Code.REPLY_LOST, message=REPLY_LOST_MESSAGE))
        log.warning("node %s lost %d requests of %s unanswered: answered reply_lost", self._nodes.get(link), len(given_up), session.name if session else "?")

    def _table_moved(self, table_id: int, node: str) -> None:
        """Node ``node`` holds table ``table_id`` now: requests about it that wait on another node get ``reply_lost``,
        then this node's players at the table follow it there."""
        self.table_held(table_id, node)
        self.following.table_moved(table_id, node)

    def disconnected(self, session: Session) -> None:
        """``session``'s connection is gone: its links close (the authorities hold its seats for the grace period)."""
        for (holder, node), link in list(self._links.items()):
            if holder is session:
                self._mail.put(node, CLOSE, link)
                self.gone(link)
        self.following.forget(session)

    def _gap(self, topic: str, view: object, origin: str) -> None:
        if topic != node_topic(self._node):
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


def dispatch_inbox(data: bytes, host: RelayHost, front: RelayFront, other: Callable[[bytes], Any] | None = None) -> bool:
    """Hand a relay batch from this node's inbox to ``host`` and ``front``; ``False`` if it is no relay batch.

    ``other`` gets the payload of each ``M`` record (a message of another layer, as :meth:`Mail.message` sent it).

    Raises:
        ValueError: a batch cut short (nothing of it is handled).
    """
    if data[:1] != BATCH:
        return False
    sender, records = read_batch(data)
    for kind, link, payload in records:
        if kind == FRAMES:
            front.frames(link, payload)
        elif kind == REQUEST:
            host.request(sender, link, payload)
        elif kind == OPEN:
            name, claimed, bot, token, resume, address = msgpack.unpackb(payload)
            host.open(sender, link, str(name), bool(claimed), bool(bot), None if token is None else str(token), bool(resume), None if address is None else str(address))
        elif kind == CLOSE:
            host.close(sender, link)
        elif kind == GONE:
            front.gone(link)
        elif kind == MESSAGE and other is not None:
            other(payload)
        else:
            log.warning("ignored a relay record of unknown kind %d from %s", kind, sender)
    return True
