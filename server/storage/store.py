"""The storage contract: what the server keeps, and the one rule every store keeps.

:class:`Store` is what the server writes through and reads from: sessions,
claimed names, tables, every move, the archive. Every write the server
acknowledges to a client was committed by :meth:`Store.write` first, and the
server changes its memory only once that commit returned. A write is a tuple
of :data:`Statement` pairs, committed atomically. The SQLite store
(:mod:`server.storage.sqlite`) is the implementation the server ships with.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Protocol, TypeVar

from games.record import GameRecord

from .rows import ArchiveEntry, DamagedTable, StoredTable

__all__ = ["NeedsUpgrade", "SchemaError", "Statement", "Store", "StoreError"]

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
    :meth:`write` first. One implementation today, :class:`SQLiteStore`; a
    deployment over several machines would put a shared database behind it.
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
        """Run a read-only ``query`` on one consistent snapshot of the database (its ``sqlite3.Connection``)."""

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
