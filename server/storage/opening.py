"""Open the database ``--db`` names: a ``postgresql://`` URL (:mod:`server.storage.postgres`) or an SQLite file (:mod:`server.storage.sqlite`).

PostgreSQL's module (and psycopg) is imported only for a URL, so a server on SQLite never loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .sqlite import SQLiteStore
from .store import NeedsUpgrade, StoreError

from .common import is_postgres_url

if TYPE_CHECKING:
    from .postgres import PostgresStore

__all__ = ["AnyStore", "open_store", "open_for_reading", "describe_db", "is_postgres_url"]

AnyStore = Union[SQLiteStore, "PostgresStore"]


def _engine(db: str) -> "type[SQLiteStore] | type[PostgresStore]":
    if not is_postgres_url(db):
        return SQLiteStore
    from .postgres import PostgresStore

    return PostgresStore


def open_store(db: str, **options: Any) -> AnyStore:
    """Open ``db`` for a server (creating or upgrading its schema); ``await start()`` it before writing.

    ``options`` are those both engines' ``open`` take (``commit_delay_s``).

    Raises:
        StoreError: it cannot be opened (see :meth:`SQLiteStore.open` and :meth:`PostgresStore.open`).
    """
    return _engine(db).open(db, **options)


def open_for_reading(db: str) -> AnyStore:
    """Open ``db`` read-only; a database of an older schema is upgraded first (which writes), as a server would.

    Raises:
        StoreError: it cannot be read, or needs an upgrade that cannot be written.
    """
    kind = _engine(db)
    try:
        return kind.open_read_only(db)
    except NeedsUpgrade as exc:
        try:
            kind.open(db).close_sync()
        except StoreError as failed:
            raise StoreError(f"{exc}, which needs write access: {failed}") from None
    return kind.open_read_only(db)


def describe_db(db: str) -> str:
    """``db`` as logs and messages show it: a URL without its password, or the file's path."""
    if not is_postgres_url(db):
        return str(Path(db))
    from .postgres import redact

    return redact(db)
