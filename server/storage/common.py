"""What the server needs to know of the storage engines without loading one: which ``--db`` is PostgreSQL, and its error."""

from __future__ import annotations

import re

from .store import StoreError

__all__ = ["FENCE_ALL_SQL", "FENCE_SQL", "LeaseLost", "StorageUnavailable", "UNREACHABLE", "is_postgres_url", "lease_lost"]

UNREACHABLE = "the database cannot be reached"
"""How the message of every :class:`StorageUnavailable` of a database that does not answer begins."""


class StorageUnavailable(StoreError):
    """The database server cannot be reached or cannot save right now (stopped, restarting, its disk full).

    Nothing of the write was kept; the same write may succeed once it is back
    (the server answers ``storage_unavailable``).
    """


class LeaseLost(StoreError):
    """A write about a table was refused because this node of a cluster no longer holds the table's lease
    (another node claimed it while this one was paused or cut off); nothing of the write was kept.

    Attributes:
        table: the table's id, when the database named it.
    """

    def __init__(self, message: str, table: int | None = None) -> None:
        super().__init__(message, table)
        self.table = table

    def __str__(self) -> str:
        return str(self.args[0])


FENCE_SQL = "SELECT parlour_fence(?, ?)"
"""The statement (with ``(table id, run)``) that begins a node's write about a table: it fails unless that run holds the
table's lease (:mod:`server.cluster.leases`); the group commit gathers a transaction's fences into one :data:`FENCE_ALL_SQL`."""
FENCE_ALL_SQL = "SELECT parlour_fence_all(?::bigint[], ?)"
"""Every fence of one transaction at once, with ``([table ids], run)``."""

LEASE_LOST_STATE = "PL001"
"""The SQLSTATE ``parlour_fence`` raises (:mod:`server.storage.pg_schema`, schema step 11)."""


def is_postgres_url(db: str) -> bool:
    """Whether ``--db`` names a PostgreSQL database (a ``postgresql://`` or ``postgres://`` URL) rather than a file."""
    return db.startswith(("postgresql://", "postgres://"))


def lease_lost(exc: BaseException) -> LeaseLost | None:
    """The :class:`LeaseLost` of a write ``parlour_fence`` refused (psycopg's error ``exc``), else ``None``."""
    if getattr(exc, "sqlstate", None) != LEASE_LOST_STATE:
        return None
    found = re.search(r"table (\d+)", str(exc))
    table = int(found[1]) if found else None
    return LeaseLost(f"table {table if table is not None else '?'} is held by another node now", table)
