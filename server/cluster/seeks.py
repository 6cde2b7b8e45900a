"""Seeks across the nodes of a cluster: each held by its player's node, listed and matched on every node.

Each node keeps its open seeks in the hash :func:`server.cluster.keys.seeks_key`
(seek id -> a packed line: the player, the terms and the range), written as
they are posted and removed, rewritten whole when Redis comes back. Another
node reads the live nodes' hashes when it lists seeks or matches a new seek
that found no partner among its own: a match is sent to the node holding
that seek, which pairs it once (:meth:`server.social.seeks.SeekBoard.pair_with`),
or says it is gone and the next one is tried. The lobby's ``seek_added`` and
``seek_removed`` cross the bus with the lobby's other events.

Two matching seeks made at the same moment on two nodes may each miss the
other (neither was in Redis yet) and both be posted. So once its posted
seeks are written, and every :data:`SETTLE_S` while it has some, a node
pairs each of its seeks with a matching seek of another node whose id is
smaller (:meth:`ClusterSeeks.settle`): of two such seeks, only the node of
the one with the larger id asks, so they are paired once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgpack
from redis.exceptions import RedisError

from protocol.messages import Request, Seek

from ..bus.redis import RedisBus
from ..core.errors import RequestError
from ..core.session import Session
from ..social.pairing import Terms
from ..social.seeks import OpenSeek, SeekBoard
from .keys import seeks_key
from .live import live_hashes
from .players import RemotePlayer
from .social_relay import SocialFront

__all__ = ["ClusterSeeks", "seek_line", "read_seek_line", "SETTLE_S"]

log = logging.getLogger(__name__)

SETTLE_S = 1.0
"""How often a node with open seeks looks for matching seeks posted on other nodes meanwhile, in seconds."""


def seek_line(seek: OpenSeek) -> bytes:
    """A seek's packed line in its node's seeks hash."""
    terms = seek.terms
    player = seek.player
    return msgpack.packb([
        player.name, player.claimed, terms.game, terms.options, terms.time_control, terms.rated, seek.rating, seek.rating_min, seek.rating_max,
    ])  # fmt: skip


def read_seek_line(node: str, seek_id: int, data: bytes) -> OpenSeek:
    """The :class:`OpenSeek` of a packed :func:`seek_line` held by node ``node`` (its player a :class:`RemotePlayer`).

    Raises:
        ValueError, TypeError, RequestError, msgpack.UnpackException: the line cannot be read.
    """
    name, claimed, game, options, time_control, rated, rating, rating_min, rating_max = msgpack.unpackb(data)
    player = RemotePlayer(name=str(name), token="", claimed=bool(claimed), node=node)
    return OpenSeek(seek_id, player, Terms.check(game, options, time_control, bool(rated)), rating, rating_min, rating_max)


class ClusterSeeks:
    """The other nodes' seeks for this node's :class:`SeekBoard` (its :attr:`SeekBoard.elsewhere`), and this node's in Redis.

    Args:
        bus: this node's bus.
        front: relays a pairing to the node holding the seek.
        board: this node's seek board.
    """

    def __init__(self, bus: RedisBus, front: SocialFront, board: SeekBoard) -> None:
        self._bus = bus
        self._redis = bus.redis
        self._node = bus.node
        self._front = front
        self._board = board
        self._dirty: dict[int, bytes | None] = {}  # seek id -> its line to store, or None: delete
        self._writing: asyncio.Task[None] | None = None
        self._settling: asyncio.Task[None] | None = None

    async def candidates(self) -> list[OpenSeek]:
        """The open seeks of the other live nodes, by id (none while Redis is away)."""
        try:
            hashes = await live_hashes(self._redis, self._node, seeks_key)  # a node gone without leaving: its seeks went with its players
        except (RedisError, OSError) as exc:
            log.info("cannot read the other nodes' seeks: %s", exc)
            return []
        seeks: list[OpenSeek] = []
        for node, lines in hashes:
            for seek_id, line in lines.items():
                try:
                    seeks.append(read_seek_line(node, int(seek_id), bytes(line)))
                except (ValueError, TypeError, RequestError, msgpack.UnpackException) as exc:
                    log.warning("ignored seek %r of node %s: %s", seek_id, node, exc)
        seeks.sort(key=lambda seek: seek.id)
        return seeks

    async def pair(self, session: Session, request: Request, seek: OpenSeek) -> bool:
        """Have the node holding ``seek`` pair it with ``request``; whether that node answered the request."""
        return await self._front.pair(session, getattr(seek.player, "node"), seek.id, request)

    def changed(self, seek: OpenSeek, posted: bool) -> None:
        """Note this node's seek posted or removed; written to Redis at once, in the background."""
        self._dirty[seek.id] = seek_line(seek) if posted else None
        if self._writing is None:
            self._writing = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        posted = False
        try:
            while self._dirty:
                dirty, self._dirty = self._dirty, {}
                posted = posted or any(line is not None for line in dirty.values())
                pipe = self._redis.pipeline(transaction=False)
                key = seeks_key(self._node)
                for seek_id, line in dirty.items():
                    if line is None:
                        pipe.hdel(key, seek_id)
                    else:
                        pipe.hset(key, seek_id, line)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            log.info("cannot write this node's seeks to Redis (rewritten when it is back): %s", exc)
        finally:
            self._writing = None
        if posted:
            self.settle_soon()

    def settle_soon(self) -> None:
        """Run :meth:`settle` in the background, unless it runs already."""
        if self._settling is None:
            self._settling = asyncio.get_running_loop().create_task(self.settle())

    async def settle(self) -> None:
        """Pair this node's posted seeks with matching seeks of other nodes that have smaller ids (module docstring)."""
        try:
            if not any(not seek.pairing for seek in self._board.open.values()):
                return
            for other in await self.candidates():
                for seek in list(self._board.open.values()):
                    if seek.id > other.id and not seek.pairing and self._board.open.get(seek.id) is seek and self._board.compatible(seek, other):
                        if await self._pair_posted(seek, other):
                            break
        finally:
            if self._settling is asyncio.current_task():
                self._settling = None

    async def _pair_posted(self, seek: OpenSeek, other: OpenSeek) -> bool:
        """Pair the posted ``seek`` with ``other`` on its node; whether they were paired (``seek`` is gone then)."""
        terms = seek.terms
        request = Seek(
            id=0, game=terms.game, options=terms.options, time_control=terms.time_control, rated=terms.rated,
            rating_min=seek.rating_min, rating_max=seek.rating_max,
        )  # fmt: skip
        seek.pairing = True  # no other seek takes it meanwhile
        try:
            paired = await self._front.pair(seek.player, getattr(other.player, "node"), other.id, request, quiet=True)
        finally:
            seek.pairing = False
        if paired:
            log.info("posted seeks %d (%s) and %d (%s) paired across nodes", seek.id, seek.player.name, other.id, other.player.name)
            self._board.player_left(seek.player)  # seated there: its seeks here vanish
        return paired

    async def rewrite(self) -> None:
        """Write this node's open seeks whole (at the start, and after Redis came back).

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        lines: dict[Any, Any] = {seek.id: seek_line(seek) for seek in self._board.open.values()}
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(seeks_key(self._node))
        if lines:
            pipe.hset(seeks_key(self._node), mapping=lines)
        self._dirty.clear()
        await pipe.execute()

    async def close(self) -> None:
        """Take this node's seeks out of Redis (this node leaves)."""
        for task in (self._writing, self._settling):
            if task is not None:
                task.cancel()
        try:
            await self._redis.delete(seeks_key(self._node))
        except (RedisError, OSError) as exc:
            log.info("cannot take this node's seeks out of Redis: %s", exc)
