"""A node of a cluster wired into a server: the Redis bus, the players across nodes, the :class:`Cluster` and its relay.

Imported by :class:`server.app.Server` only when it is given ``--bus``: one
process on its own loads neither this module nor Redis.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from ..bus.redis import RedisBus
from ..core.session import Session
from ..net.peer import Peer
from ..play.authority import Authority
from ..players.mutes import Mutes
from ..players.sessions import Sessions
from ..tables.lobby import Lobby
from ..social.chat import ChatEntry
from ..social.social import Social
from ..tables.table import Table
from .failover import Failover
from .leases import Leases
from .node import Cluster, Handler
from .players import ClusterPlayers
from .relay import HandleRequest, RelayFront
from .social import ClusterSocial

__all__ = ["cluster_players", "failover", "join", "leases", "redis_bus"]


def redis_bus(url: str, node: str) -> RedisBus:
    """The bus between the nodes on the Redis server at ``url``, this node being named ``node``."""
    return RedisBus(url, node, crosses=lambda topic: not topic.startswith("table:"))  # tables reach other nodes through the relay


def cluster_players(local: dict[str, Session]) -> ClusterPlayers:
    """The players of every node, this node's being ``local`` (name key -> session)."""
    return ClusterPlayers(local)


def join(
    bus: RedisBus, handshake: Sessions, lobby: Lobby, authority: Authority, mutes: Mutes, players: ClusterPlayers,
    dispatch: dict[type, Handler], handle: HandleRequest, disconnected: Callable[[Peer], None],
    social: Social, chat: Callable[[Table], list[ChatEntry]],
) -> tuple[Cluster, RelayFront]:  # fmt: skip
    """Make this server a node: the :class:`Cluster` on ``bus`` (a ``RedisBus`` from :func:`redis_bus`), its handlers
    installed in ``dispatch``, and the relay front that routes requests about other nodes' tables (``handle``: the
    server's request pipeline; ``disconnected``: what a closed connection does); ``social``'s challenges and seeks
    reach the other nodes' players (:class:`ClusterSocial`; ``chat``: a table's chat for the browsers of other nodes).
    Nothing is started: see :meth:`Cluster.start`."""
    cluster = Cluster(bus, handshake, lobby, authority, mutes, players)
    cluster.install(dispatch)
    crossing = ClusterSocial(bus, social, handshake.by_name, lobby, chat)
    front = cluster.relay(handle, disconnected, crossing.pairing, crossing.spectating)
    crossing.attach(front, dispatch)
    cluster.parts.append(crossing)
    return cluster, front


def leases(url: str, node: str, lease_s: float) -> Leases:
    """This node's table leases in the cluster's PostgreSQL database at ``url`` (not connected yet)."""
    return Leases(url, node, lease_s)


def failover(
    held: Leases, bus: RedisBus, live: Callable[[], set[int]],
    take_over: Callable[[set[int]], Awaitable[None]], lost: Callable[[set[int]], None],
) -> Failover:  # fmt: skip
    """What renews ``held`` and claims the other nodes' expired leases (see :class:`Failover`); :meth:`Failover.start` starts it."""
    return Failover(held, bus, live, take_over, lost)
