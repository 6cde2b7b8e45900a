"""What the server needs to know of the storage engines without loading one: which ``--db`` is PostgreSQL, and its error."""

from __future__ import annotations

from .store import StoreError

__all__ = ["StorageUnavailable", "is_postgres_url"]


class StorageUnavailable(StoreError):
    """The database server cannot be reached or cannot save right now (stopped, restarting, its disk full).

    Nothing of the write was kept; the same write may succeed once it is back
    (the server answers ``storage_unavailable``).
    """


def is_postgres_url(db: str) -> bool:
    """Whether ``--db`` names a PostgreSQL database (a ``postgresql://`` or ``postgres://`` URL) rather than a file."""
    return db.startswith(("postgresql://", "postgres://"))
