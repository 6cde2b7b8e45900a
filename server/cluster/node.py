"""This node's part in a cluster: joining, staying known, healing after Redis comes back, and leaving.

What a node keeps in Redis (:mod:`server.cluster.keys`): its heartbeat, its
tables (:class:`server.cluster.lobby.LobbyMirror`), its players' lines
(:mod:`server.cluster.players`) and its names (:class:`server.cluster.names.ClusterNames`).
Redis keeps nothing on disk here: after a restart it is empty, so on every
(re)connection the node writes all of it again (:meth:`Cluster.rejoin`) and
announces its tables on the lobby channel, and the other nodes' lobbies heal.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import Any, Awaitable, Callable, Protocol

import msgpack
from redis.exceptions import RedisError

from protocol import encode_message
from protocol.messages import MAX_ID, Finger, TableClosed, Tell, Who

from ..play.authority import Authority
from ..bus.bus import LOBBY
from ..bus.redis import RedisBus
from ..tables.lobby import Lobby
from ..players.mutes import Mutes
from ..net.peer import Peer
from ..core.session import Session
from ..players.sessions import Sessions
from ..storage.store import Store
from .identity import SharedIdentity, adopt_seats, seat_holder
from .ids import TableIds
from .keys import NODES, node_key, players_key, tables_key
from .live import live_hashes
from .lobby import LobbyMirror
from .limits import ClusterLimits
from .names import NAME_TTL_S, ClusterNames
from .relay import HandleRequest
from .social_relay import Pairing, SocialFront, SocialHost, Spectating, dispatch_social
from .players import ClusterPlayers, RemotePlayer, claimed_by, deliver_told, node_topic, player_line, read_line

__all__ = ["Cluster", "NODE_TTL_S", "HEARTBEAT_S"]

log = logging.getLogger(__name__)

NODE_TTL_S = 10
"""How long a node counts as alive after its last heartbeat, in seconds; then the others drop its tables."""
HEARTBEAT_S = 1.0
"""How often a node renews its heartbeat and reconciles the lobby with the other nodes' snapshots, in seconds.

The heartbeat's value names the version of the node's tables hash, so a
reconciliation reads only the hashes that changed since it last read them."""
TICK_S = 0.25
"""How often a node writes its changed tables and players to Redis, in seconds."""
NAME_RENEW_S = NAME_TTL_S / 3

Handler = Callable[[Session, Any, list[Callable[[], None]]], Awaitable[Any]]


class Part(Protocol):
    """Something more a node keeps in Redis (:class:`server.cluster.social.ClusterSocial`): started, renewed, closed with it."""

    async def start(self) -> None:
        """Write its state into Redis once the node's own is there (raises ``RedisError``/``OSError``)."""

    async def reconnected(self) -> None:
        """Write its state again: Redis came back, perhaps empty (raises ``RedisError``/``OSError``)."""

    async def close(self) -> None:
        """Take its state out of Redis: the node leaves."""


class Cluster:
    """Joins this node to the others sharing ``bus``'s Redis.

    Args:
        bus: the node's bus (not started yet: :meth:`start` starts it).
        sessions: the node's sessions (their names get reserved cluster-wide).
        lobby: the node's lobby (it lists the other nodes' tables too).
        authority: the node's table authority (its table ids come from the cluster).
        mutes: applied to tells from other nodes.
        players: the name-key map ``who`` and tells use (:class:`ClusterPlayers` over ``sessions.by_name``).
    """

    def __init__(self, bus: RedisBus, sessions: Sessions, lobby: Lobby, authority: Authority, mutes: Mutes, players: ClusterPlayers) -> None:
        self.bus = bus
        self.node = bus.node
        self._redis = bus.redis
        self._sessions = sessions
        self._lobby = lobby
        self._authority = authority
        self._mutes = mutes
        self.players = players
        self.names = sessions.names = ClusterNames(bus.redis, bus.node)
        self.limits = sessions.accounts.shared = ClusterLimits(bus.redis)  # guesses and claims counted for the whole cluster
        sessions.node = bus.node
        self.mirror = LobbyMirror(bus, lobby)
        self.ids = TableIds(bus.redis, authority)
        self._lines: dict[str, bytes] = {}  # name key -> the line last written to this node's players hash
        self._live: set[str] = set()  # the other nodes alive at the last heartbeat
        self._unseen_since: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._host: SocialHost | None = None
        self.front: SocialFront | None = None
        self.parts: list[Part] = []
        """What else this node keeps in Redis, started after its own state and closed before it leaves."""
        self._run_id = secrets.token_hex(4)
        self.handed_over: set[int] = set()
        """The tables this node handed to the others as it stops (they live on: not closed in the others' lobbies)."""
        self._version = 0  # bumped with every write of this node's tables hash
        self._loaded: dict[str, bytes] = {}  # node -> the heartbeat value whose tables were last read
        self._claimed_of = claimed_by(sessions.by_name)
        bus.subscribe(node_topic(self.node), self)  # this node's inbox: tells forwarded by other nodes
        bus.on_connected.append(self._reconnected)

    def relay(self, handle: HandleRequest, disconnected: Callable[[Peer], None], pairing: Pairing, spectating: Spectating) -> SocialFront:
        """Serve other nodes' players at this node's tables through ``handle`` (the server's request pipeline),
        and relay this node's players' requests about other nodes' tables; return the front (:meth:`server.app.Server._request` routes through it).
        ``pairing`` and ``spectating`` answer other nodes' seeks and browsers (:mod:`server.cluster.social_relay`)."""
        holder = lambda token: seat_holder(self._lobby, token)  # noqa: E731
        self._host = SocialHost(self.bus, handle, disconnected, holder, self._rejoin, pairing, spectating)
        self._host.rewatch = self._rewatch
        self.front = SocialFront(self.bus, self._lobby, self.mirror)
        return self.front

    def _rejoin(self, session: Session) -> None:
        """A relayed player's session came back: what a resume does for its seats here, over its new link (or the one
        it had: the seats of tables taken over since it opened, restored under its token, become its own first)."""
        adopt_seats(self._lobby, self._sessions, session)
        then: list[Callable[[], None]] = []
        self._authority.rejoin(session, then)
        for push in then:
            push()

    def _rewatch(self, session: Session, table_id: int) -> None:
        """A relayed spectator of a table this node took over watches it again, and sees it whole (``resumed``)."""
        table = self._lobby.tables.get(table_id)
        if table is None or table_id in session.seats:
            return
        table.watch(session)
        session.watching.add(table_id)
        self._authority.welcome_back(session, table, None)

    def is_link(self, session: Session) -> bool:
        """Whether ``session`` is a player of another node, connected here through the relay."""
        return self._host is not None and self._host.is_link(session)

    def share(self, store: Store) -> None:
        """Read names, sessions, ratings and mutes through to ``store``, the database every node shares (before :meth:`start`)."""
        assert self.front is not None, "relay() first"
        SharedIdentity(self.bus, store, self._sessions, self._mutes, self._authority.ratings, self._lobby, self.names, self.front).install()

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        """Something forwarded to this node's inbox: a tell to one of its players, or a relay message (:mod:`server.cluster.relay`)."""
        try:
            if self._host is not None and self.front is not None and dispatch_social(frame, self._host, self.front):
                return
        except (ValueError, TypeError, IndexError, msgpack.UnpackException) as exc:
            log.warning("ignored a malformed inbox message: %s", exc)
            return
        deliver_told(frame, self._sessions.by_name, self._mutes.mutes)

    # --- lifecycle ------------------------------------------------------------

    async def start(self) -> None:
        """Connect to Redis, take table ids, publish this node's state and read the others'.

        Raises:
            server.bus.redis.BusUnavailable: Redis cannot be reached.
        """
        await self.bus.start()
        await self.ids.start(self._highest_id())
        await self.rejoin()
        for part in self.parts:
            await part.start()
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Leave: stop, and take this node's heartbeat, tables, players and names out of Redis."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task], timeout=HEARTBEAT_S)  # redis-py may swallow a cancellation: the loop also ends at its next tick
        self.mirror.close()
        for part in self.parts:
            await part.close()
        if self._host is not None:
            self._host.close_all()
        for table_id in self._lobby.tables:  # the other nodes' lobbies lose this node's tables now, not a heartbeat later
            if table_id not in self.handed_over:
                self.bus.publish_remote(LOBBY, encode_message(TableClosed(table=table_id)))
        try:
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(node_key(self.node), tables_key(self.node), players_key(self.node))
            for key in self._sessions.by_name:
                self.names.release(key)
            await pipe.execute()
        except (RedisError, OSError) as exc:
            log.info("cannot take this node out of Redis (its keys expire): %s", exc)
        await self.names.close()  # the releases finish before the client they use closes
        await self.limits.close()
        await self.bus.close()

    def _node_value(self) -> str:
        """The heartbeat's value: this run of the node and the version of its tables hash."""
        return f"{self._run_id}:{self._version}"

    def _highest_id(self) -> int:
        """The highest table id this node knows of (its own ids handed out, its tables, the mirrored ones)."""
        next_id = self._authority.next_table_id
        given = next_id - 1 if next_id <= MAX_ID else 0  # above MAX_ID: out of ids, not an id (the block's end counts in rebase)
        return max([given, *self._lobby.tables, *self.mirror.remote])

    async def _reconnected(self) -> None:
        await self.ids.rebase(self._highest_id())
        await self.rejoin()
        for part in self.parts:
            await part.reconnected()

    async def rejoin(self) -> None:
        """Write this node's whole state into Redis, announce its tables and reload the others' (at start and after Redis came back).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        taken = await self.names.renew(self._sessions.by_name)
        for key in taken:
            log.warning("the name key %r is held by another node too", key)
        pipe = self._redis.pipeline(transaction=True)
        self.mirror.snapshot_commands(pipe)
        self._version += 1
        pipe.set(node_key(self.node), self._node_value(), ex=NODE_TTL_S)
        pipe.sadd(NODES, self.node)
        self._lines = self._player_lines()
        pipe.delete(players_key(self.node))
        if self._lines:
            pipe.hset(players_key(self.node), mapping=self._lines)  # type: ignore[arg-type]
        await pipe.execute()
        for table_id in self._lobby.tables:
            self._lobby.changed(table_id)  # announced again: the other nodes' watchers hear of them at once
        await self.reconcile()

    # --- staying known ----------------------------------------------------------

    async def _run(self) -> None:
        last_heartbeat = last_names = time.monotonic()
        while not self._closing:
            await asyncio.sleep(TICK_S)
            if not self.bus.connected:
                continue
            try:
                now = time.monotonic()
                if await self.mirror.store_changes():
                    self._version += 1  # after the hash: a node that reads this version finds the tables it names
                    last_heartbeat = 0.0
                await self._store_players()
                if now - last_heartbeat >= HEARTBEAT_S:
                    last_heartbeat = now
                    await self._redis.set(node_key(self.node), self._node_value(), ex=NODE_TTL_S)
                    await self.ids.refill()
                    await self.reconcile()
                if now - last_names >= NAME_RENEW_S:
                    last_names = now
                    await self.names.renew(self._sessions.by_name)
            except (RedisError, OSError) as exc:
                log.info("cluster upkeep failed (Redis away?): %s", exc)

    def _player_lines(self) -> dict[str, bytes]:
        tables = self._lobby.tables
        return {
            key: player_line(session, tables)
            for key, session in self._sessions.by_name.items()
            if session.connected or session.seats
        }

    async def _store_players(self) -> None:
        lines = self._player_lines()
        changed = {key: line for key, line in lines.items() if self._lines.get(key) != line}
        gone = [key for key in self._lines if key not in lines]
        if not changed and not gone:
            return
        pipe = self._redis.pipeline(transaction=False)
        if changed:
            pipe.hset(players_key(self.node), mapping=changed)  # type: ignore[arg-type]
        if gone:
            pipe.hdel(players_key(self.node), *gone)
        await pipe.execute()
        self._lines = lines

    async def reconcile(self) -> None:
        """Find the live nodes; reload their tables; drop the tables of nodes unseen for :data:`NODE_TTL_S`.

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        members = [bytes(m).decode() for m in await self._redis.smembers(NODES)]
        others = [node for node in members if node != self.node]
        pipe = self._redis.pipeline(transaction=False)
        for node in others:
            pipe.get(node_key(node))
        values = await pipe.execute() if others else []
        versions = {node: bytes(value) for node, value in zip(others, values) if value is not None}
        self._live = set(versions)
        now = time.monotonic()
        for node in self._live:
            self._unseen_since.pop(node, None)
        waited_on = self.front.waiting_on() if self.front is not None else set()
        for node in (self.mirror.nodes() | waited_on) - self._live:
            since = self._unseen_since.setdefault(node, now)
            if now - since >= NODE_TTL_S:
                log.info("node %s is gone: its tables leave the lobby, the requests relayed to it get reply_lost", node)
                self.mirror.forget_node(node)
                if self.front is not None:
                    self.front.node_gone(node)
                del self._unseen_since[node]
        changed = [node for node, version in versions.items() if self._loaded.get(node) != version]
        await self.mirror.reload(changed)  # only the nodes whose tables changed since they were last read
        self._loaded.update((node, versions[node]) for node in changed)

    # --- players on other nodes -----------------------------------------------

    async def refresh_players(self) -> None:
        """Read the other live nodes' players into :attr:`players` (kept as they were if Redis is away)."""
        try:
            hashes = await live_hashes(self._redis, self.node, players_key)  # a node gone without leaving: its players are not online
        except (RedisError, OSError) as exc:
            log.info("cannot read the other nodes' players: %s", exc)
            return
        remote: dict[str, RemotePlayer] = {}
        for node, lines in hashes:
            for key, line in lines.items():
                name_key = bytes(key).decode()
                remote[name_key] = read_line(node, name_key, bytes(line), self._forward, self._claimed_of)
        self.players.replace(remote)

    def _forward(self, node: str, data: bytes) -> None:
        self.bus.publish_remote(node_topic(node), data)

    def install(self, dispatch: dict[type, Handler]) -> None:
        """Make ``who``, ``tell`` and ``finger`` read the other nodes' players first."""
        for kind in (Who, Tell, Finger):
            dispatch[kind] = self._refreshing(dispatch[kind])

    def _refreshing(self, handler: Handler) -> Handler:
        async def run(session: Session, request: Any, then: list[Callable[[], None]]) -> Any:
            await self.refresh_players()
            return await handler(session, request, then)

        return run
