"""Players on the other nodes of a cluster, as ``who`` and tells see them.

Each node keeps, in the hash :func:`server.cluster.keys.players_key`, one
line per player it holds (online, or away but seated): name, claimed, bot,
status and seats. :class:`ClusterPlayers` is the name-key map that ``who``
and ``tell`` look players up in: this node's sessions first, then the lines
of the other live nodes, read fresh before each such request. A tell to a
player on another node crosses the bus to that node (:class:`RemotePeer`),
where the recipient's own mutes are applied before it is delivered.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import msgpack

from protocol import Message, encode_message
from protocol.messages import Told

from ..core.names import name_key
from ..players.presence import status_of
from ..core.session import Session
from ..tables.table import Table

__all__ = ["ClusterPlayers", "RemotePlayer", "RemotePeer", "Forward", "claimed_by", "deliver_told", "node_topic", "player_line", "read_line"]

log = logging.getLogger(__name__)

Forward = Callable[[str, bytes], None]
"""``forward(node, data)``: send ``data`` to node ``node``'s inbox (:func:`node_topic`)."""


def node_topic(node: str) -> str:
    """The bus topic of a node's inbox: pushes other nodes forward to its players."""
    return f"node:{node}"


def player_line(session: Session, tables: Mapping[int, Table]) -> bytes:
    """A player's packed line in its node's players hash: ``[name, claimed, bot, status, {table: seat}]``."""
    return msgpack.packb([session.name, session.claimed, session.bot, status_of(session, tables), session.seats])


class RemotePeer:
    """The connection of a player on another node: what is sent to it crosses the bus to that node.

    Only tells cross today (:class:`protocol.messages.Told`); anything else is not forwarded.
    """

    closed = False
    host = "cluster"

    def __init__(self, node: str, key: str, forward: Forward, claimed_of: Callable[[str], bool]) -> None:
        self.node = node
        self.key = key
        self._forward = forward
        self._claimed_of = claimed_of

    def send(self, message: Message) -> None:
        """Forward ``message`` to the player's node (which applies the player's mutes first)."""
        if not isinstance(message, Told):
            log.warning("not forwarding a %s to %s on node %s", type(message).__name__, self.key, self.node)
            return
        self._forward(self.node, msgpack.packb(["told", self.key, message.name, self._claimed_of(message.name), encode_message(message)]))

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        if message is not None:
            self.send(message)


@dataclass(eq=False, slots=True)
class RemotePlayer(Session):
    """A player whose session lives on another node (``node``), as its node last described it."""

    node: str = ""
    remote_status: str = "idle"
    remote_seats: dict[int, int] = field(default_factory=dict)

    @property
    def connected(self) -> bool:  # type: ignore[override]
        return self.remote_status != "away"

    @property
    def seats(self) -> dict[int, int]:  # type: ignore[override]
        return self.remote_seats


class ClusterPlayers(Mapping[str, Session]):
    """Name key -> player: this node's sessions (``local``), then the other nodes' players (:meth:`replace`).

    Args:
        local: this node's live map (:attr:`server.players.sessions.Sessions.by_name`).
    """

    def __init__(self, local: Mapping[str, Session]) -> None:
        self._local = local
        self._remote: dict[str, RemotePlayer] = {}

    def replace(self, remote: dict[str, RemotePlayer]) -> None:
        """Take ``remote`` (name key -> player) as the other nodes' players now."""
        self._remote = remote

    def __getitem__(self, key: str) -> Session:
        session = self._local.get(key)
        if session is not None:
            return session
        return self._remote[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._local
        for key in self._remote:
            if key not in self._local:
                yield key

    def __len__(self) -> int:
        return len(self._local) + sum(1 for key in self._remote if key not in self._local)


def read_line(node: str, key: str, data: bytes, forward: Forward, claimed_of: Callable[[str], bool]) -> RemotePlayer:
    """The :class:`RemotePlayer` of a packed :func:`player_line` held by node ``node``."""
    name, claimed, bot, status, seats = msgpack.unpackb(data, strict_map_key=False)
    return RemotePlayer(
        name=name, token="", peer=RemotePeer(node, key, forward, claimed_of), bot=bool(bot), claimed=bool(claimed),  # type: ignore[arg-type]
        node=node, remote_status=str(status), remote_seats={int(t): int(s) for t, s in seats.items()},
    )  # fmt: skip


def deliver_told(data: bytes, local: Mapping[str, Session], mutes_sender: Callable[[Session, Session], bool]) -> None:
    """Deliver a tell another node forwarded (:meth:`RemotePeer.send`) to this node's player, unless they mute its sender."""
    try:
        kind, key, sender_name, sender_claimed, frame = msgpack.unpackb(data)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        log.warning("ignored a malformed forwarded push: %s", exc)
        return
    if kind != "told":
        return
    player = local.get(key)
    if player is None or isinstance(player, RemotePlayer) or not player.connected:
        return  # gone meanwhile: a tell to someone away is not kept, as on one node
    sender = Session(name=sender_name, token="", claimed=bool(sender_claimed))
    if mutes_sender(player, sender):
        return
    assert player.peer is not None
    player.peer.send_frame(frame)


def claimed_by(local: Mapping[str, Session]) -> Callable[[str], bool]:
    """Whether the local session called ``name`` proved its claimed name."""

    def claimed(name: str) -> bool:
        session = local.get(name_key(name))
        return bool(session is not None and session.claimed)

    return claimed
