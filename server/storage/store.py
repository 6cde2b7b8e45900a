"""The storage contract: what the server keeps, and the one rule every store keeps.

:class:`Store` is what the server writes through and reads from: sessions,
claimed names, tables, every move, the archive. Every write the server
acknowledges to a client was committed by :meth:`Store.write` first, and the
server changes its memory only once that commit returned. A write is a tuple
of :data:`Statement` pairs, committed atomically. Two stores keep it: SQLite
(:mod:`server.storage.sqlite`) and PostgreSQL (:mod:`server.storage.postgres`);
what they share over their own ``write`` is :class:`server.storage.ops.StoreOps`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Protocol, Sequence, TypeVar

from games.record import GameRecord

from .rows import ArchiveEntry, DamagedTable, StoredTable

__all__ = ["NeedsUpgrade", "SchemaError", "Statement", "Store", "StoreError", "settled_at_once"]

Statement = tuple[str, tuple[Any, ...]]
"""One SQL statement with its ``?`` parameters, as :meth:`Store.write` takes it."""


class StoreError(Exception):
    """The database cannot be opened, or a write failed (the cause is chained)."""


class SchemaError(StoreError):
    """The file is not a Parlour database this version can use: newer, foreign or not SQLite."""


class NeedsUpgrade(SchemaError):
    """A file opened read-only has an older schema: it must be opened for writing to be upgraded first."""


T = TypeVar("T")


class Store(Protocol):
    """Where the server keeps what must outlive it: sessions, tables, moves, the archive.

    Every write the server acknowledges to a client was committed by
    :meth:`write` first. Two implementations: :class:`server.storage.sqlite.SQLiteStore`
    (a file) and :class:`server.storage.postgres.PostgresStore` (a PostgreSQL database);
    both take the statements in SQLite's dialect (:mod:`server.storage.dialect`).
    """

    async def start(self) -> None:
        """Get ready for writes."""

    async def close(self) -> None:
        """Finish the writes in flight, then release the storage."""

    def write(self, *statements: Statement) -> Awaitable[None]:
        """Commit ``statements`` atomically; awaiting what this returns returns once they are durable.

        Raises:
            StoreError: (when awaited) nothing of the write was kept.
        """

    def read(self, query: Callable[[Any], T]) -> T:
        """Run a read-only ``query`` on one consistent snapshot of the database.

        ``query`` gets an object with ``execute(sql, params)`` taking SQLite's SQL: the
        ``sqlite3.Connection``, or PostgreSQL's stand-in for it.
        """

    def sessions(self) -> dict[str, str]:
        """Every stored session: token -> name."""

    def accounts(self) -> list[tuple[str, str, str, str | None]]:
        """Every claimed name: (name key, name, secret hash, password hash or ``None``)."""

    def server_id(self) -> str:
        """The server's stable identity, made once when the database was created (or upgraded to have one)."""

    def unfinished_tables(self, damaged: list[DamagedTable] | None = None) -> list[StoredTable]:
        """The tables whose game is not over, with their moves; rows that cannot be read go to ``damaged``."""

    async def set_aside(self, table: DamagedTable, at: float | None = None) -> None:
        """Mark a table that cannot be restored, keeping its rows."""

    def load(self, table_id: int) -> StoredTable | None:
        """One table with its moves, or ``None``."""

    def archive(self, limit: int = 50, offset: int = 0) -> list[ArchiveEntry]:
        """Finished games, newest first."""

    def next_table_id(self) -> int:
        """The id the next new table gets."""

    def to_record(self, table: StoredTable) -> GameRecord:
        """A stored table as a game record."""


def settled_at_once(future: asyncio.Future[None], statements: Sequence[Any], closed: bool, started: bool) -> bool:
    """Settle the ``future`` of :meth:`Store.write` at once where nothing is to be queued; return whether it did.

    It gets a TypeError for a statement that is not a ``(sql, params)`` pair, a
    StoreError when the store is ``closed`` or not ``started``, and ``None`` for no statement.
    """
    for statement in statements:
        if not (isinstance(statement, tuple) and len(statement) == 2 and isinstance(statement[0], str)):
            future.set_exception(TypeError(f"a statement must be a (sql, params) pair, not {statement!r}"))
            return True
    if closed or not started:
        future.set_exception(StoreError("the store is closed" if closed else "the store is not started: await store.start() first"))
        return True
    if not statements:
        future.set_result(None)
        return True
    return False
