"""The relay's second use: challenges, seeks and browsers that reach another node.

:class:`SocialFront` adds to the front (:class:`server.cluster.relay.RelayFront`):

- what it learns from the frames an authority sends back over a link: a
  ``paired`` or ``table_joined`` names a table that node holds (so the
  player's next request about it is relayed there at once, before the lobby
  hears of the table), a ``challenge_sent`` names a challenge that node
  holds (so ``withdraw_challenge`` goes there). Only frames that carry one of
  those type names are decoded; every other frame passes untouched;
- pairing a new seek with another node's seek (:meth:`SocialFront.pair`): the
  node holding the seek pairs it or says it is gone, one request at a time,
  so a seek is paired once however many nodes ask;
- spectating for a browser (:meth:`SocialFront.spectate`): the table's node
  feeds the spectators' frames of a table to a sink here (the web face).

:class:`SocialHost` is the authority's side of the last two. Its messages
are MessagePack lists of their own, carried as ``M`` records of the relay's
batches (:meth:`server.cluster.relay.Mail.message`), so they keep their
order with the relay's own records (a ``pair`` after the ``open`` of its link):
``["pair", from, link, number, seek, body, quiet]`` (front to authority, on
the player's relay link; ``quiet``: the request was answered already, send
only the pushes of a pairing) answered by ``["paired", number, answered]``;
``["spectate", from, feed, table]`` and ``["unspectate", from, feed]`` (front
to authority), ``["feed", feed, frame]`` and ``["unfed", feed]`` (authority
to front), a feed being a browser's, numbered by its front; and the relay's own
``["watch", from, link, table]`` (:mod:`server.cluster.follow`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Protocol

import msgpack

from protocol import Code, encode_message
from protocol.codec import decode_request, decode_server_message
from protocol.framing import HEADER_BYTES
from protocol.messages import ChallengeEnded, ChallengeSent, Error, JoinTable, Paired, Request, Resumed, TableJoined, WatchTable

from ..bus.redis import RedisBus
from ..core.session import Session
from ..net.peer import Peer
from ..tables.lobby import Lobby
from .lobby import LobbyMirror
from .players import node_topic
from .follow import FOLLOWED, WATCH
from .relay import HandleRequest, Holder, Mail, RelayFront, RelayHost, dispatch_inbox

__all__ = ["FrameSink", "SocialFront", "SocialHost", "dispatch_social", "PAIR_TIMEOUT_S"]

log = logging.getLogger(__name__)

PAIR_TIMEOUT_S = 10.0
"""How long a front waits for another node to answer a pairing, in seconds (then it takes the seek as gone)."""
MOST_ROUTES = 10_000
"""Tables learned from frames that a front remembers (the lobby's mirror knows them soon after)."""
ROUTE_TYPES = frozenset((b"paired", b"table_joined", b"resumed", b"challenge_sent", b"challenge_ended"))
"""The types of the frames a front reads (the others pass unread)."""
TYPE_KEY = b"\xa4type"
"""The MessagePack key ``type``: the tag comes first in a frame's map, its name right after this key."""
TYPE_WITHIN = 12
"""The key ``type`` starts within a frame's first bytes: its length header, then the map's header."""


class FrameSink(Protocol):
    """Where a browser's spectated frames go (:class:`server.web.feed.Watcher`)."""

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        """Send one encoded frame (a spectator's) to the browser."""


Pairing = Callable[[Peer, Request, int, bool], Awaitable[bool]]
"""``pairing(peer, seek_request, seek_id, quiet)``: answer the request by pairing it with seek ``seek_id`` (``quiet``: send
only the pairing's pushes, no reply); ``False`` if it was gone."""
Spectating = Callable[[int, FrameSink], bool]
"""``spectating(table, sink)``: feed ``sink`` the table's snapshot and spectators' frames; ``False`` if it is no table here."""


def _frames(data: bytes) -> list[bytes]:
    frames, at = [], 0
    while at + HEADER_BYTES <= len(data):
        end = at + HEADER_BYTES + int.from_bytes(data[at : at + HEADER_BYTES], "big")
        frames.append(data[at:end])
        at = end
    return frames


def _names_a_route(data: bytes) -> bool:
    """Whether one of the frames ``data`` is of a type in :data:`ROUTE_TYPES` (only each frame's first bytes are looked at)."""
    at, end = 0, len(data)
    while at + HEADER_BYTES < end:
        key = data.find(TYPE_KEY, at + HEADER_BYTES, at + TYPE_WITHIN + len(TYPE_KEY))
        if key >= 0:
            name = key + len(TYPE_KEY) + 1
            if data[name : name + data[name - 1] - 0xA0] in ROUTE_TYPES:
                return True
        at += HEADER_BYTES + int.from_bytes(data[at : at + HEADER_BYTES], "big")
    return False


class SocialFront(RelayFront):
    """The front (:class:`RelayFront`) with routes learned from frames, pairings and spectating.

    Attributes:
        seated: called with a player of this node whom another node seated (their seeks here vanish).
    """

    def __init__(self, bus: RedisBus, lobby: Lobby, mirror: LobbyMirror) -> None:
        super().__init__(bus, lobby, mirror)
        self._social_bus = bus
        self._routes: dict[int, str] = {}  # table id -> node, from frames (until the mirror knows it)
        self._challenges: dict[tuple[Session, int], str] = {}  # (challenger, challenge id) -> the node holding it
        self._sinks: dict[int, tuple[str, int, FrameSink]] = {}  # feed -> the node feeding it, its table, the browser
        self._next_feed = 1
        self._pairs: dict[int, asyncio.Future[bool]] = {}
        self._next_pair = 1
        self.seated: list[Callable[[Session], None]] = []
        bus.on_gap.append(self._feeds_gap)

    def route(self, peer: Peer, request: Request) -> bool:
        """Relay ``request`` if it is about another node's table (the lobby's, or one learned from frames)."""
        if super().route(peer, request):
            return True
        table_id = getattr(request, "table", None)
        node = self._routes.get(table_id) if type(table_id) is int else None
        if node is None or peer.session is None or table_id in self._lobby.tables:
            return False
        if type(request) in FOLLOWED:
            self.following.note(peer.session, table_id, node, type(request))
        self.forward(peer.session, node, request)
        return True

    def challenge_node(self, session: Session, challenge_id: int) -> str | None:
        """The node holding the challenge ``challenge_id`` that ``session`` made to a player there, if any."""
        return self._challenges.get((session, challenge_id))

    def _post(self, node: str, message: list[Any]) -> None:
        Mail.of(self._social_bus).message(node, message)

    def frames(self, link: int, data: bytes) -> None:
        """Frames for ``link``: to its player, after reading those that name a table or challenge."""
        if _names_a_route(data):
            self._learn(link, data)
        super().frames(link, data)

    def _learn(self, link: int, data: bytes) -> None:
        session, node = self._sessions.get(link), self._nodes.get(link)
        if session is None or node is None:
            return
        for frame in _frames(data):
            try:
                message = decode_server_message(frame[HEADER_BYTES:])
            except Exception:  # noqa: BLE001 - a frame this version cannot read is passed on untouched
                continue
            if isinstance(message, (Paired, TableJoined, Resumed)):  # a resume through the relay names its table too
                if len(self._routes) >= MOST_ROUTES:
                    del self._routes[next(iter(self._routes))]
                self._routes[message.table.id] = node
                self.following.note(session, message.table.id, node, WatchTable if message.seat is None else JoinTable)  # a pairing seats too
                if message.seat is not None:
                    for seated in self.seated:
                        seated(session)
            elif isinstance(message, ChallengeSent):
                self._challenges[(session, message.challenge.id)] = node
            elif isinstance(message, ChallengeEnded):
                self._challenges.pop((session, message.challenge), None)

    async def pair(self, session: Session, node: str, seek_id: int, request: Request, *, quiet: bool = False) -> bool:
        """Ask ``node`` to pair ``request`` (a ``seek`` of ``session``) with its seek ``seek_id``.

        Returns whether that node answered the request (its reply reaches the player through the link;
        with ``quiet`` no reply, only the pairing's pushes: a posted seek paired later); ``False`` if the
        seek was gone there, or the node did not answer within :data:`PAIR_TIMEOUT_S`.
        """
        number = self._next_pair
        self._next_pair += 1
        answer = self._pairs[number] = asyncio.get_running_loop().create_future()
        link = self.link(session, node)
        self._post(node, ["pair", self._social_bus.node, link, number, seek_id, encode_message(request)[HEADER_BYTES:], quiet])
        try:
            return await asyncio.wait_for(answer, PAIR_TIMEOUT_S)
        except asyncio.TimeoutError:
            log.warning("node %s did not answer a pairing with seek %d in time", node, seek_id)
            return False
        finally:
            self._pairs.pop(number, None)

    def paired(self, number: int, answered: bool) -> None:
        """The answer to pairing ``number`` (:meth:`pair`)."""
        answer = self._pairs.get(number)
        if answer is not None and not answer.done():
            answer.set_result(answered)

    def spectate(self, node: str, table_id: int, sink: FrameSink) -> int:
        """Have ``node`` feed ``sink`` its table ``table_id`` as a spectator sees it; return the feed (for :meth:`unspectate`)."""
        feed = self._next_feed
        self._next_feed += 1
        self._sinks[feed] = (node, table_id, sink)
        self._post(node, ["spectate", self._social_bus.node, feed, table_id])
        return feed

    def _feeds_gap(self, topic: str, view: object, origin: str) -> None:
        """Messages from ``origin`` to this node were lost: its browsers' feeds start again from a fresh snapshot."""
        if topic != node_topic(self._social_bus.node):
            return
        for feed, (node, table_id, _sink) in list(self._sinks.items()):
            if node == origin:
                self._post(node, ["spectate", self._social_bus.node, feed, table_id])

    def unspectate(self, feed: int) -> None:
        """Stop ``feed``."""
        fed = self._sinks.pop(feed, None)
        if fed is not None:
            self._post(fed[0], ["unspectate", self._social_bus.node, feed])

    def feed(self, feed: int, frame: bytes) -> None:
        """A frame of ``feed``: to its browser."""
        fed = self._sinks.get(feed)
        if fed is not None:
            fed[2].send_frame(frame)

    def unfed(self, feed: int) -> None:
        """The table's node ended ``feed`` (it stops)."""
        self._sinks.pop(feed, None)

    def gone(self, link: int) -> None:
        """The authority ended ``link``."""
        session = self._sessions.get(link)
        if session is not None:
            self._challenges = {key: node for key, node in self._challenges.items() if key[0] is not session}
        super().gone(link)


class SocialHost(RelayHost):
    """The authority's side (:class:`RelayHost`), with pairings and spectating.

    Args:
        pairing: pairs a relayed seek with one of this node's (:data:`Pairing`).
        spectating: feeds a front's browser a table (:data:`Spectating`).
    """

    def __init__(
        self,
        bus: RedisBus,
        handle: HandleRequest,
        disconnected: Callable[[Peer], None],
        holder: Holder,
        rejoin: Callable[[Session], None],
        pairing: Pairing,
        spectating: Spectating,
    ) -> None:
        super().__init__(bus, handle, disconnected, holder, rejoin)
        self._social_bus = bus
        self._pairing = pairing
        self._spectating = spectating
        self._sinks: dict[tuple[str, int], _FeedSink] = {}  # (front, feed) -> its sink here

    def pair(self, front: str, link: int, number: int, seek_id: int, body: bytes, quiet: bool = False) -> None:
        """Pair a seek a player of ``front`` made with this node's seek ``seek_id``, after the link's earlier requests."""
        peer = self._peers.get((front, link))
        if peer is None:
            Mail.of(self._social_bus).message(front, ["paired", number, False])
            return
        self._in_turn.run(peer, self._pair, peer, front, number, seek_id, body, quiet)

    async def _pair(self, peer: Peer, front: str, number: int, seek_id: int, body: bytes, quiet: bool) -> None:
        answered = False
        try:
            answered = await self._pairing(peer, decode_request(body), seek_id, quiet)
        except Exception as exc:  # a garbled relay message, or a failure: refused, never raised
            log.warning("a seek relayed from %s could not be paired: %s", front, exc)
            if not quiet:
                peer.send(Error(code=Code.INTERNAL_ERROR, message="the server holding that seek failed to pair it; seek again"))
                answered = True
        finally:
            Mail.of(self._social_bus).message(front, ["paired", number, answered])

    def spectate(self, front: str, feed: int, table_id: int) -> None:
        """A browser on ``front`` watches this node's table ``table_id``, fed as ``feed``."""
        self.unspectate(front, feed)  # asked again (frames were lost): a fresh snapshot, then the frames
        sink = _FeedSink(self._social_bus, front, feed)
        if self._spectating(table_id, sink):
            self._sinks[(front, feed)] = sink

    def unspectate(self, front: str, feed: int) -> None:
        """The browser of ``feed`` on ``front`` left."""
        sink = self._sinks.pop((front, feed), None)
        if sink is not None:
            self._social_bus.unsubscribe_all(sink)

    def close_all(self) -> None:
        """This node stops: end every link and feed."""
        for (front, feed), sink in list(self._sinks.items()):
            self._social_bus.unsubscribe_all(sink)
            Mail.of(self._social_bus).message(front, ["unfed", feed])
        self._sinks.clear()
        super().close_all()


class _FeedSink:
    """A browser's feed on the table's node: each frame crosses to the front's inbox."""

    def __init__(self, bus: RedisBus, front: str, feed: int) -> None:
        self._bus = bus
        self._front = front
        self._feed = feed

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        Mail.of(self._bus).message(self._front, ["feed", self._feed, bytes(frame)])

    def send(self, message: Any) -> None:
        self.send_frame(encode_message(message), message)


def dispatch_social(data: bytes, host: SocialHost, front: SocialFront) -> bool:
    """Hand a message from this node's inbox to ``host`` or ``front``; ``False`` if it is no relay message.

    A relay batch (:mod:`server.cluster.relay`) carries this layer's messages as its ``M`` records, in order with the rest.
    """
    if dispatch_inbox(data, host, front, lambda payload: _dispatch_message(payload, host, front)):
        return True
    return _dispatch_message(data, host, front)


def _dispatch_message(data: bytes, host: SocialHost, front: SocialFront) -> bool:
    """One of this layer's messages (a MessagePack list) to ``host`` or ``front``; ``False`` if it is none."""
    message = msgpack.unpackb(data)
    kind = message[0]
    if kind == "pair":
        host.pair(str(message[1]), int(message[2]), int(message[3]), int(message[4]), bytes(message[5]), len(message) > 6 and bool(message[6]))
    elif kind == "paired":
        front.paired(int(message[1]), bool(message[2]))
    elif kind == "spectate":
        host.spectate(str(message[1]), int(message[2]), int(message[3]))
    elif kind == "unspectate":
        host.unspectate(str(message[1]), int(message[2]))
    elif kind == "feed":
        front.feed(int(message[1]), bytes(message[2]))
    elif kind == "unfed":
        front.unfed(int(message[1]))
    elif kind == WATCH:
        host.watch_again(str(message[1]), int(message[2]), int(message[3]))
    else:
        return False
    return True
