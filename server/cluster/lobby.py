"""One lobby over every node: the other nodes' tables, mirrored; this node's tables, kept in Redis for them.

This node's lobby events (``table_updated``, ``table_closed``) cross the bus
like any other, so every node's lobby watchers hear of every table. The
mirror follows them too: from the other nodes' events it keeps
:attr:`LobbyMirror.remote` (table id -> :class:`protocol.messages.TableInfo`),
which :meth:`server.tables.lobby.Lobby.page` lists with the local tables; from this
node's own events it keeps this node's hash (:func:`server.cluster.keys.tables_key`)
up to date, the snapshot the other nodes read when they join, when they see
a gap in this node's lobby events, and at every reconciliation.

A reload compares a node's snapshot with the mirror and tells this node's
lobby watchers the difference, so a watcher that missed events (Redis pub/sub
is at-most-once) sees the lobby heal.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, Iterable

from redis.exceptions import RedisError

from protocol import Message, encode_message
from protocol.codec import decode_server_message
from protocol.framing import HEADER_BYTES
from protocol.messages import TableClosed, TableInfo, TableUpdated

from ..bus.bus import LOBBY
from ..bus.local import LocalBus
from ..bus.redis import RedisBus
from ..tables.lobby import Lobby
from .keys import tables_key

__all__ = ["LobbyMirror", "SEQ_FIELD"]

SEQ_FIELD = "seq"
"""The field of a node's tables hash that holds the number of its last lobby event the hash includes."""

log = logging.getLogger(__name__)


def _decode(frame: bytes) -> Message | None:
    try:
        return decode_server_message(frame[HEADER_BYTES:])
    except Exception as exc:  # a frame from a newer node, or garbage on the channel
        log.warning("ignored an undecodable lobby event: %s", exc)
        return None


class LobbyMirror:
    """The other nodes' tables, and this node's in Redis.

    Args:
        bus: this node's bus.
        lobby: this node's lobby (its ``remote`` becomes this mirror's :attr:`remote`).

    Attributes:
        remote: table id -> the table as its node last described it.
        owner: table id -> the node holding it.
    """

    def __init__(self, bus: RedisBus, lobby: Lobby) -> None:
        self._bus = bus
        self._lobby = lobby
        self.remote: dict[int, TableInfo] = {}
        self.owner: dict[int, str] = {}
        self.moved: list[Callable[[int, str], None]] = []
        """Called with (table id, node) when a table is heard of on a node other than the one that held it (or for the first time)."""
        self._frames: dict[int, bytes] = {}  # remote table id -> its last table_updated frame (to compare with snapshots)
        self._dirty: dict[int, bytes | None] = {}  # this node's table id -> its frame to store, or None: delete
        self._seen_at: dict[int, int] = {}  # remote table id -> the number of the lobby event (or snapshot) it was last taken from
        self._closed_at: dict[tuple[str, int], int] = {}  # (node, table id) -> the number of the event that closed it
        lobby.remote = self.remote
        lobby.watch(self)  # so this node's lobby always publishes (other nodes watch), and the mirror sees it
        bus.on_remote.append(self._remote_event)
        bus.on_gap.append(self._gap)
        self._tasks: set[asyncio.Task[None]] = set()

    # --- this node's tables ---------------------------------------------------

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        """A lobby event delivered on this node: this node's own (``message`` given) is noted for its hash."""
        if isinstance(message, TableUpdated):
            self._dirty[message.table.id] = frame
        elif isinstance(message, TableClosed):
            self._dirty[message.table] = None

    async def store_changes(self) -> bool:
        """Write this node's changed tables to its hash; return whether there were any.

        Raises:
            RedisError, OSError: Redis cannot be reached (the changes stay noted).
        """
        if not self._dirty:
            return False
        dirty, self._dirty = self._dirty, {}
        pipe = self._bus.redis.pipeline(transaction=True)
        key = tables_key(self._bus.node)
        for table_id, frame in dirty.items():
            if frame is None:
                pipe.hdel(key, table_id)
            else:
                pipe.hset(key, table_id, frame)
        pipe.hset(key, SEQ_FIELD, self._bus.published(LOBBY))  # every lobby event up to this number is in the hash
        try:
            await pipe.execute()
        except BaseException:
            self._dirty = {**dirty, **self._dirty}
            raise
        return True

    def snapshot_commands(self, pipe: object) -> None:
        """Add to ``pipe`` (a transaction) the commands that rewrite this node's hash from its live tables."""
        key = tables_key(self._bus.node)
        pipe.delete(key)  # type: ignore[attr-defined]
        frames: dict[int | str, bytes | int] = {table.id: encode_message(TableUpdated(table=table.lobby_info())) for table in self._lobby.tables.values()}
        frames[SEQ_FIELD] = self._bus.published(LOBBY)
        pipe.hset(key, mapping=frames)  # type: ignore[attr-defined]
        self._dirty.clear()

    # --- the other nodes' tables ----------------------------------------------

    def _remote_event(self, topic: str, origin: str, seq: int, frame: bytes) -> None:
        if topic != LOBBY:
            return
        message = _decode(frame)
        if isinstance(message, TableUpdated):
            self._put(message.table, origin, frame, seq)
        elif isinstance(message, TableClosed):
            if self.owner.get(message.table) in (origin, None):  # a node that handed a table over does not close it elsewhere
                self._drop(message.table)
            self._closed_at[(origin, message.table)] = seq

    def _put(self, info: TableInfo, node: str, frame: bytes, seq: int) -> None:
        if info.id in self._lobby.tables:
            return  # this node's own table: never shadowed by a stale line
        self.remote[info.id] = info
        before = self.owner.get(info.id)
        self.owner[info.id] = node
        self._frames[info.id] = frame
        self._seen_at[info.id] = seq
        self._closed_at.pop((node, info.id), None)
        if before != node:
            for listener in self.moved:
                listener(info.id, node)

    def _drop(self, table_id: int) -> None:
        self.remote.pop(table_id, None)
        self.owner.pop(table_id, None)
        self._frames.pop(table_id, None)
        self._seen_at.pop(table_id, None)

    def _gap(self, topic: str, view: object, origin: str) -> None:
        if topic != LOBBY:
            return
        task = asyncio.get_running_loop().create_task(self._reload_quietly([origin]))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reload_quietly(self, nodes: list[str]) -> None:
        try:
            await self.reload(nodes)
        except (RedisError, OSError) as exc:
            log.info("cannot reload the lobby of %s: %s", ", ".join(nodes), exc)

    async def reload(self, nodes: Iterable[str]) -> None:
        """Replace the mirrored tables of ``nodes`` by their snapshots; this node's watchers hear the difference.

        Raises:
            RedisError, OSError: Redis cannot be reached.
        """
        nodes = [node for node in nodes if node != self._bus.node]
        if not nodes:
            return
        pipe = self._bus.redis.pipeline(transaction=False)
        for node in nodes:
            pipe.hgetall(tables_key(node))
        snapshots = await pipe.execute()
        for node, snapshot in zip(nodes, snapshots):
            seq = int(snapshot.pop(SEQ_FIELD.encode(), 0))
            self._replace(node, {int(table_id): bytes(frame) for table_id, frame in snapshot.items()}, seq)

    def _replace(self, node: str, frames: dict[int, bytes], seq: int) -> None:
        """Take node ``node``'s snapshot, written when its lobby events were numbered up to ``seq``.

        A table heard of in a later event than the snapshot stays as that event said (the
        snapshot is older), so a reload never undoes what the events already told.
        """
        gone = [table_id for table_id, holder in self.owner.items() if holder == node and table_id not in frames and self._seen_at.get(table_id, 0) <= seq]
        for table_id in gone:
            self._drop(table_id)
            self._tell_watchers(TableClosed(table=table_id))
        for table_id, frame in frames.items():
            if self._frames.get(table_id) == frame or self._seen_at.get(table_id, 0) > seq or self._closed_at.get((node, table_id), 0) > seq:
                continue
            message = _decode(frame)
            if isinstance(message, TableUpdated):
                self._put(message.table, node, frame, seq)
                self._tell_watchers(message)

    def adopted(self, table_id: int) -> None:
        """This node took table ``table_id`` over from another node: it is no longer mirrored (and no watcher hears it close)."""
        self._drop(table_id)
        self._closed_at = {key: seq for key, seq in self._closed_at.items() if key[1] != table_id}

    def forget_node(self, node: str) -> None:
        """Take a dead node's tables out of the lobby (its watchers here get ``table_closed``)."""
        self._closed_at = {key: seq for key, seq in self._closed_at.items() if key[0] != node}
        for table_id in [table_id for table_id, holder in self.owner.items() if holder == node]:
            self._drop(table_id)
            self._tell_watchers(TableClosed(table=table_id))

    def nodes(self) -> set[str]:
        """The nodes whose tables are mirrored now."""
        return set(self.owner.values())

    def _tell_watchers(self, message: Message) -> None:
        LocalBus.publish(self._bus, LOBBY, encode_message(message), message, skip=self)  # this node's watchers only

    def close(self) -> None:
        """Stop the reloads in flight."""
        for task in self._tasks:
            task.cancel()
