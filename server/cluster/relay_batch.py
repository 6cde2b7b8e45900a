"""The relay's wire format: what one loop turn sends one node, as one message on its inbox.

What one loop turn sends to one node goes as one message on that node's
inbox (``parlour:node:NAME:all``): a *batch* (:class:`Mail`), the byte
``B``, the sender's name (one length byte, then UTF-8), then records, each a
header (:data:`RECORD`: kind, link, payload length) and its payload:
``O`` open (payload: MessagePack ``[name, claimed, bot, token, resume, host]``), ``R`` a request
(its MessagePack body, as the player sent it), ``C`` close (front to
authority); ``F`` frames (whole frames as written to the player, headers
included), ``G`` gone (authority to front); ``M`` a message of another layer
(a MessagePack list, link 0), sent in order with the rest (:meth:`Mail.message`,
handed to :func:`server.cluster.relay.dispatch_inbox`'s ``other``). Every sender on a node shares
that node's one :class:`Mail` (:meth:`Mail.of`). So a move's reply and both
players' pushes cross in one Redis message, with no wrapper per frame.
"""

from __future__ import annotations

import struct
import weakref
from typing import Any, Callable

import msgpack

from ..bus.redis import RedisBus
from ..core.turn_flush import TurnFlush
from .players import node_topic

__all__ = ["BATCH", "RECORD", "OPEN", "REQUEST", "CLOSE", "FRAMES", "GONE", "MESSAGE", "Mail", "read_batch"]

BATCH = b"B"
"""The first byte of a relay batch on a node's inbox (a MessagePack array, such as a forwarded tell, never starts so)."""
RECORD = struct.Struct(">BII")
"""A batch record's header: kind (:data:`OPEN` ... :data:`GONE`), link, payload length in bytes."""
OPEN, REQUEST, CLOSE, FRAMES, GONE, MESSAGE = b"ORCFGM"
"""The kinds of batch records (their first header byte): open, request, close (front to authority); frames, gone (back);
a message of another layer (either way)."""


class Mail:
    """What this node sends to other nodes' inboxes, one bus message per node per loop turn.

    Args:
        bus: this node's bus.

    Records are :meth:`put` as they come, in order, and the batch of each node
    goes at the end of the turn (or at :meth:`flush`). Use :meth:`of`: one a bus.
    """

    _of: "weakref.WeakKeyDictionary[RedisBus, Mail]" = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, bus: RedisBus) -> "Mail":
        """The one :class:`Mail` of ``bus`` (made at the first call)."""
        mail = cls._of.get(bus)
        if mail is None:
            mail = cls._of[bus] = cls(bus)
        return mail

    def __init__(self, bus: RedisBus) -> None:
        self._bus = bus
        self._head = BATCH + bytes([len(bus.node.encode())]) + bus.node.encode()
        self._pending: dict[str, list[bytes]] = {}  # node -> its batch so far
        self._turn = TurnFlush(self.flush)

    def put(self, node: str, kind: int, link: int, payload: bytes = b"") -> None:
        """Send ``node`` a record of ``kind`` about ``link`` (``payload``: bytes, up to 4 GiB) with this turn's batch."""
        pending = self._pending
        if not self._turn.due:
            self._turn.schedule()
        parts = pending.get(node)
        if parts is None:
            parts = pending[node] = [self._head]
        parts.append(RECORD.pack(kind, link, len(payload)))
        parts.append(payload)

    def message(self, node: str, message: list[Any]) -> None:
        """Send ``node`` a message of another layer (a MessagePack list), in order with this turn's records."""
        self.put(node, MESSAGE, 0, msgpack.packb(message))

    def flush_after(self, write: Callable[[], None]) -> None:
        """Call ``write``, then publish every node's batch at once: what ``write`` puts schedules no flush of its own
        (the end of a turn that writes to many links: one bus write, no further loop turn)."""
        self._turn.held(write)

    def flush(self) -> None:
        """Publish every node's batch now (one write to Redis for all of them)."""
        self._turn.due = False
        pending = self._pending
        if not pending:
            return
        self._pending = {}
        self._bus.publish_remote_now([(node_topic(node), b"".join(parts)) for node, parts in pending.items()])


def read_batch(data: bytes) -> tuple[str, list[tuple[int, int, bytes]]]:
    """The sender and the ``(kind, link, payload)`` records of a batch :class:`Mail` made.

    Raises:
        ValueError: ``data`` is cut short or is no batch.
    """
    if data[:1] != BATCH or len(data) < 2:
        raise ValueError("not a relay batch")
    end = 2 + data[1]
    sender = data[2:end].decode()
    records = []
    at, size = end, len(data)
    while at < size:
        if at + RECORD.size > size:
            raise ValueError("a relay batch cut short")
        kind, link, length = RECORD.unpack_from(data, at)
        at += RECORD.size
        if at + length > size:
            raise ValueError("a relay batch cut short")
        records.append((kind, link, data[at : at + length]))
        at += length
    return sender, records
