"""Which node of a cluster holds which table: leases in the shared PostgreSQL database (schema step 11, ``table_leases``).

A table lives on one node (its authority). That node holds the table's lease: a
row naming the node, the node's *run* (a random token of this process: a node
name started again is another run) and when the lease expires. The holder renews
all its leases in one statement every third of a lease (:meth:`Leases.renew`).
Every write about a live table begins with ``SELECT parlour_fence(table, run)``
(:meth:`Leases.fence`), which fails the whole transaction unless this run still
holds the lease, so a node that lost a table (paused, cut off, too slow to renew)
can never commit a move for it: the move is refused, nothing is kept, and the
node that claimed the table restored it from what was committed.

Every node claims expired leases (:meth:`Leases.claim`): a node that died keeps
its tables for at most one lease, then the first node to look takes them. A
node that stops gracefully expires its own leases at once (:meth:`Leases.release`)
so the others claim them without waiting.

The leases go through a connection of their own (psycopg's asyncio connection,
autocommit), apart from the store's writer, so renewing never waits behind a
group commit.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import psycopg

from ..storage.common import FENCE_SQL, StorageUnavailable
from ..storage.postgres import CONNECT_TIMEOUT_S, redact
from ..storage.store import Statement

__all__ = ["CLAIM_BATCH", "Leases"]

log = logging.getLogger(__name__)

CLAIM_BATCH = 100
"""The most expired leases one claim takes: the other nodes share the rest of a dead node's tables."""

_UNTIL = "now() + %s * interval '1 second'"

_RENEW = f"""
UPDATE table_leases SET expires = {_UNTIL}
WHERE table_id IN (
    SELECT table_leases.table_id FROM table_leases JOIN tables ON tables.id = table_leases.table_id
    WHERE table_leases.run = %s AND tables.status <> 'over'
    ORDER BY table_leases.table_id FOR UPDATE OF table_leases)
RETURNING table_id"""
"""Locks its rows in table order, as the writer's fences do (``parlour_fence_all``): the two never deadlock."""

_CLAIM_EXPIRED = f"""
UPDATE table_leases SET node = %s, run = %s, expires = {_UNTIL}
WHERE table_id IN (
    SELECT table_leases.table_id FROM table_leases JOIN tables ON tables.id = table_leases.table_id
    WHERE table_leases.expires < now() AND tables.status <> 'over'
    ORDER BY table_leases.table_id LIMIT %s FOR UPDATE OF table_leases SKIP LOCKED)
RETURNING table_id"""

_CLAIM_OWN = f"""
UPDATE table_leases SET run = %s, expires = {_UNTIL} FROM tables
WHERE table_leases.node = %s AND tables.id = table_leases.table_id AND tables.status <> 'over'
RETURNING table_leases.table_id"""

_CLAIM_UNLEASED = f"""
INSERT INTO table_leases (table_id, node, run, expires)
SELECT id, %s, %s, {_UNTIL} FROM tables
WHERE status <> 'over' AND NOT EXISTS (SELECT 1 FROM table_leases WHERE table_leases.table_id = tables.id)
ON CONFLICT (table_id) DO NOTHING
RETURNING table_id"""

_SWEEP = """
DELETE FROM table_leases USING tables
WHERE tables.id = table_leases.table_id AND tables.status = 'over' AND table_leases.expires < now() - interval '1 minute'
RETURNING table_leases.table_id"""

_RELEASE = """
UPDATE table_leases SET expires = now() - interval '1 second'
WHERE table_id IN (SELECT table_id FROM table_leases WHERE run = %s ORDER BY table_id FOR UPDATE)
RETURNING table_id"""


class Leases:
    """This node's leases in the database at ``url``.

    Args:
        url: the cluster's PostgreSQL database (a libpq URL).
        node: this node's name.
        lease_s: how long a lease lasts unless renewed, in seconds.

    Attributes:
        run: this process's token in the lease rows (random, new at every start).
    """

    def __init__(self, url: str, node: str, lease_s: float) -> None:
        self.url = url
        self.node = node
        self.lease_s = lease_s
        self.run = secrets.token_hex(8)
        self._connection: psycopg.AsyncConnection[Any] | None = None

    # --- what the table authority writes -------------------------------------------------

    def fence(self, table_id: int) -> tuple[Statement, ...]:
        """The statement that begins every write about table ``table_id``: it fails the write unless this run holds its lease."""
        return ((FENCE_SQL, (table_id, self.run)),)

    def lease(self, table_id: int) -> tuple[Statement, ...]:
        """The statement that ends the write creating table ``table_id``: this run holds it from now on."""
        return (
            (
                "INSERT INTO table_leases (table_id, node, run, expires) VALUES (?, ?, ?, now() + ? * interval '1 second') "
                "ON CONFLICT (table_id) DO UPDATE SET node = excluded.node, run = excluded.run, expires = excluded.expires",
                (table_id, self.node, self.run, self.lease_s),
            ),
        )

    # --- the lease rows -------------------------------------------------------------------

    async def claim_at_start(self) -> set[int]:
        """Take the tables this node may restore as it starts: those its name held (its previous run is over: one
        process per node name, :mod:`server.storage.pg_lock`), those nobody holds, and those whose lease expired.

        Raises:
            StorageUnavailable: the database cannot be reached.
        """
        own = await self._ids(_CLAIM_OWN, (self.run, self.lease_s, self.node))
        unleased = await self._ids(_CLAIM_UNLEASED, (self.node, self.run, self.lease_s))
        return own | unleased | await self.claim()

    async def claim(self, most: int = CLAIM_BATCH) -> set[int]:
        """Take up to ``most`` unfinished tables whose lease expired; return their ids.

        Raises:
            StorageUnavailable: the database cannot be reached.
        """
        return await self._ids(_CLAIM_EXPIRED, (self.node, self.run, self.lease_s, most))

    async def renew(self) -> set[int]:
        """Extend every lease this run holds, in one statement; return the ids of the unfinished tables it still holds.

        Raises:
            StorageUnavailable: the database cannot be reached.
        """
        return await self._ids(_RENEW, (self.lease_s, self.run))

    async def release(self) -> set[int]:
        """Let every lease of this run expire now (a graceful stop hands the tables over); return their ids.

        Raises:
            StorageUnavailable: the database cannot be reached.
        """
        return await self._ids(_RELEASE, (self.run,))

    async def sweep(self) -> int:
        """Delete the expired leases of finished games (any node's); return how many.

        Raises:
            StorageUnavailable: the database cannot be reached.
        """
        return len(await self._ids(_SWEEP, ()))

    async def close(self) -> None:
        """Close the connection (the leases stay until they expire or are released)."""
        if self._connection is not None:
            await self._connection.close()
            self._connection = None

    async def _ids(self, sql: str, params: tuple[Any, ...]) -> set[int]:
        connection = await self._connect()
        try:
            cursor = await connection.execute(sql, params)
            return {int(row[0]) for row in await cursor.fetchall()}
        except psycopg.Error as exc:
            await connection.close()
            self._connection = None
            reason = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            raise StorageUnavailable(f"the leases in {redact(self.url)} cannot be read or renewed: {reason}") from exc

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        if self._connection is None or self._connection.closed:
            try:
                self._connection = await psycopg.AsyncConnection.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
            except psycopg.Error as exc:
                raise StorageUnavailable(f"cannot connect to {redact(self.url)} for the leases: {exc}") from exc
        return self._connection
