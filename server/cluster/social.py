"""Challenges, seeks and browsers between the nodes of a cluster, wired into one node.

- A challenge is held by the challenged player's node. ``challenge`` naming
  a player of another node (its name's reservation says which,
  :mod:`server.cluster.names`) is relayed there, so the challenged player gets
  it as a local one, and mutes, limits, expiry, decline and accept are that
  node's; the accepted challenge's table is created there, and the
  challenger plays it through the relay. ``withdraw_challenge`` goes to the
  node that holds the challenge (:meth:`server.cluster.social_relay.SocialFront.challenge_node`).
- Seeks: :class:`server.cluster.seeks.ClusterSeeks`.
- A browser of this node's web face watches another node's table through
  :meth:`server.cluster.social_relay.SocialFront.spectate`; here the table's
  node feeds it (:meth:`ClusterSocial.spectating`) as its own web face feeds
  its own browsers: the spectators' frames only.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Mapping

from redis.exceptions import RedisError

from protocol import Code, encode_message
from protocol.messages import Challenge, Error, Request, Seek, TableJoined, WithdrawChallenge

from ..bus.redis import RedisBus
from ..core.errors import Relayed, RequestError
from ..core.names import name_key
from ..core.session import Push, Session
from ..net.peer import Peer
from ..social.chat import ChatEntry
from ..social.social import Social
from ..tables.lobby import Lobby
from ..tables.table import Table
from .ids import IdBlocks
from .keys import SOCIAL_IDS, name_key_of
from .relay import LinkTransport
from .seeks import SETTLE_S, ClusterSeeks
from .social_relay import FrameSink, SocialFront

__all__ = ["ClusterSocial", "is_relayed"]

log = logging.getLogger(__name__)

Handler = Callable[[Session, Any, list[Push]], Any]


def is_relayed(session: Session) -> bool:
    """Whether ``session`` is a player of another node, here through the relay (never relayed on again)."""
    return session.peer is not None and isinstance(session.peer.transport, LinkTransport)


class ClusterSocial:
    """This node's part in the cluster's challenges, seeks and spectating browsers.

    Args:
        bus: this node's bus.
        social: this node's challenges and seeks.
        local: this node's sessions by name key.
        lobby: this node's lobby (its tables).
        chat: a table's chat history, as a spectator sees it.
    """

    def __init__(self, bus: RedisBus, social: Social, local: Mapping[str, Session], lobby: Lobby, chat: Callable[[Table], list[ChatEntry]]) -> None:
        self._bus = bus
        self._social = social
        self._local = local
        self._lobby = lobby
        self._chat = chat
        self.ids = IdBlocks(bus.redis, SOCIAL_IDS, "challenge and seek ids")
        social.challenges.next_id = social.seeks.next_id = self.ids.next
        self._front: SocialFront | None = None
        self._seeks: ClusterSeeks | None = None
        self._task: asyncio.Task[None] | None = None

    def attach(self, front: SocialFront, dispatch: dict[type, Handler]) -> None:
        """Use ``front`` to reach the other nodes; route ``challenge`` and ``withdraw_challenge`` in ``dispatch`` through it."""
        self._front = front
        self._seeks = ClusterSeeks(self._bus, front, self._social.seeks)
        self._social.seeks.elsewhere = self._seeks
        front.seated.append(self._social.seeks.player_left)
        dispatch[Challenge] = self._challenge(dispatch[Challenge])
        dispatch[WithdrawChallenge] = self._withdraw(dispatch[WithdrawChallenge])

    async def start(self) -> None:
        """Take ids and write this node's seeks (at the node's start).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        await self.ids.start()
        if self._seeks is not None:
            await self._seeks.rewrite()
        self._task = asyncio.get_running_loop().create_task(self._settle())

    async def _settle(self) -> None:
        """Every :data:`server.cluster.seeks.SETTLE_S`, pair this node's posted seeks with other nodes' (:meth:`ClusterSeeks.settle`)."""
        while True:
            await asyncio.sleep(SETTLE_S)
            if self._seeks is not None and self._bus.connected and self._social.seeks.open:
                self._seeks.settle_soon()

    async def reconnected(self) -> None:
        """Redis came back (perhaps empty): move the id counter past every id given, write the seeks again.

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        await self.ids.rebase()
        if self._seeks is not None:
            await self._seeks.rewrite()

    async def close(self) -> None:
        """This node leaves: its seeks leave Redis."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._seeks is not None:
            await self._seeks.close()

    # --- challenges ---------------------------------------------------------------------

    def _challenge(self, handler: Handler) -> Handler:
        async def run(session: Session, request: Challenge, then: list[Push]) -> Any:
            key = name_key(request.name)
            if key not in self._local and not is_relayed(session):
                node = await self._holder(key)
                if node is not None and node != self._bus.node and self._front is not None:
                    self._front.forward(session, node, request)
                    raise Relayed()
            return await handler(session, request, then)

        return run

    def _withdraw(self, handler: Handler) -> Handler:
        async def run(session: Session, request: WithdrawChallenge, then: list[Push]) -> Any:
            node = None if self._front is None or is_relayed(session) else self._front.challenge_node(session, request.challenge)
            if node is not None:
                self._front.forward(session, node, request)  # type: ignore[union-attr]
                raise Relayed()
            return await handler(session, request, then)

        return run

    async def _holder(self, key: str) -> str | None:
        """The node whose session holds the name key ``key`` (``None``: nobody's).

        Raises:
            RequestError: ``internal_error``: Redis cannot be reached, so neither can the other nodes.
        """
        await asyncio.sleep(0)  # a bare yield: a request's handling becomes a task (redis-py's timeouts need one)
        try:
            holder = await self._bus.redis.get(name_key_of(key))
        except (RedisError, OSError) as exc:
            log.info("cannot look up which node holds %r: %s", key, exc)
            raise RequestError(Code.INTERNAL_ERROR, "the server cannot reach the other servers of its cluster right now; try again in a moment") from None
        return None if holder is None else bytes(holder).decode()

    # --- the host's side of pairings and spectating -------------------------------------

    async def pairing(self, peer: Peer, request: Request, seek_id: int, quiet: bool = False) -> bool:
        """Answer ``request`` (a ``seek`` of a player of another node, on its link ``peer``) by pairing it with this
        node's seek ``seek_id``; ``False`` (nothing sent) if that seek is gone or no longer matches, or (``quiet``: the
        request was answered before, the pairing's pushes alone are sent) if it is refused."""
        session = peer.session
        if not isinstance(request, Seek) or session is None:
            raise ValueError(f"a pairing needs a seek, not {type(request).__name__}")
        then: list[Push] = []
        try:
            reply = await self._social.seeks.pair_with(session, request, seek_id, then)
        except RequestError as exc:
            if quiet:
                log.info("a posted seek of %s could not be paired with seek %d: %s", session.name, seek_id, exc.message)
                return False
            peer.send(Error(id=request.id, code=exc.code, message=exc.message, field=exc.field))
            return True
        if reply is None:
            return False
        if not quiet:
            peer.send(reply)
        for push in then:
            push()
        return True

    def spectating(self, table_id: int, sink: FrameSink) -> bool:
        """Feed ``sink`` (another node's browser) this node's table ``table_id``: its snapshot, then the spectators' frames."""
        table = self._lobby.tables.get(table_id)
        if table is None:
            message = f"table {table_id} is not open on this server (a finished game may be in the archive)"
            sink.send_frame(encode_message(Error(code=Code.NO_SUCH_TABLE, message=message)))
            return False
        snapshot = TableJoined(id=0, table=table.info(), seat=None, view=table.view_for(None), moves=list(table.moves), chat=self._chat(table))
        sink.send_frame(encode_message(snapshot))
        self._bus.subscribe(table.topic, sink, None)  # the spectators' view, never a seat's
        return True
