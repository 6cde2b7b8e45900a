"""Persistence in SQLite: sessions, tables, every move, and the archive.

One :class:`SQLiteStore` owns one database file in WAL mode. Writes go
through a single writer thread that commits in groups
(:mod:`server.storage.writer`); each caller's ``await`` returns only after
its transaction's ``COMMIT`` has returned. With ``synchronous=FULL``
(the default) a returned ``COMMIT`` means the WAL has been fsynced, so a move
acknowledged after ``await store.append_move(...)`` survives a crash or power
loss; ``NORMAL`` survives a crash of the process (SIGKILL) but may lose the
last commits on power loss.

Reads (startup, archive queries) are synchronous, on a second connection; in
WAL mode they never block the writer and see only committed data.

Opening a file checks it and brings its schema up to date
(:mod:`server.storage.schema`). The SQL written and the rows read back are
in :mod:`server.storage.statements`, the objects in :mod:`server.storage.rows`,
the typed writes and the reads in :mod:`server.storage.ops` (shared with the
PostgreSQL store), the contract every store keeps in :mod:`server.storage.store`.

Usage::

    store = SQLiteStore.open(default_db_path())
    await store.start()
    await store.create_table(TableRow(id=1, game="othello", options={"size": 8}, seed=None, created=time.time()))
    await store.append_move(1, MoveRow(ply=1, seat=0, move="d3", at=time.time()))
    await store.close()

Times are Unix times in seconds (``time.time()``), stored as REAL.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, TypeVar

from . import schema
from .ops import StoreOps
from .store import StoreError
from .writer import COMMIT_DELAY_S, GroupCommitWriter

__all__ = ["SQLiteStore", "SYNCHRONOUS_MODES", "default_db_path"]

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")
"""The values :meth:`SQLiteStore.open` accepts for ``synchronous`` (SQLite's ``PRAGMA synchronous``)."""


def default_db_path() -> Path:
    """Return the default database file: ``parlour.sqlite3`` in the user's data directory.

    The directory is not created here; :meth:`SQLiteStore.open` creates it.
    """
    import platformdirs

    return Path(platformdirs.user_data_dir("parlour")) / "parlour.sqlite3"


T = TypeVar("T")


class SQLiteStore(GroupCommitWriter, StoreOps):
    """The :class:`~server.storage.store.Store` in SQLite: a Parlour database: one writer thread with group commit, one read connection.

    Build it with :meth:`open`, then ``await start()`` before writing and
    ``await close()`` at the end (or use ``async with SQLiteStore.open(path) as store``).
    Writes are made from one asyncio event loop.

    The writing half (the writer thread, group commit, :meth:`write`) is
    :class:`~server.storage.writer.GroupCommitWriter`'s; the typed writes and
    the reads are :class:`~server.storage.ops.StoreOps`', shared with the
    PostgreSQL store.

    Attributes:
        path: the database file.
        synchronous: the ``PRAGMA synchronous`` mode of the writer.
        commit_delay_s: the longest wait for more writes before a commit (see :meth:`open`).
        commits: transactions committed so far (each holds one or more writes).
        writes: writes (calls to :meth:`write`) committed so far.
    """

    def __init__(
        self,
        path: Path,
        writer: sqlite3.Connection | None,
        reader: sqlite3.Connection,
        synchronous: str,
        commit_delay_s: float = COMMIT_DELAY_S,
    ) -> None:
        """Use :meth:`open` (or :meth:`open_read_only`, without a writer)."""
        super().__init__(writer, commit_delay_s)
        self.path = path
        self.synchronous = synchronous
        self._reader = reader
        self._read_lock = threading.Lock()

    # --- opening and closing ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        busy_timeout_s: float = 5.0,
        commit_delay_s: float = COMMIT_DELAY_S,
    ) -> "SQLiteStore":
        """Open (creating if needed) the database at ``path`` and bring its schema up to date.

        Args:
            path: the database file; missing parent directories are created.
            synchronous: ``"FULL"`` (fsync every commit: survives power loss),
                ``"NORMAL"`` (survives a process crash, not a power loss),
                ``"OFF"`` or ``"EXTRA"``; see SQLite's ``PRAGMA synchronous``.
            busy_timeout_s: how long to wait for another process holding the
                write lock (a second server on the same file, say).
            commit_delay_s: how long the writer may wait for more writes
                before a commit while recent commits carried several writes
                each (:data:`COMMIT_DELAY_S`); 0 never waits.

        Raises:
            SchemaError: if the file is not an SQLite database, is another
                program's database, or has a newer schema than this Parlour's;
                or if a migration fails (the file is left at its old version).
            StoreError: if the file cannot be opened or WAL mode cannot be set.
            ValueError: for an unknown ``synchronous`` mode or a negative ``commit_delay_s``.
        """
        mode = synchronous.upper()
        if commit_delay_s < 0:
            raise ValueError(f"commit_delay_s must not be negative, not {commit_delay_s!r}")
        if mode not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}, not {synchronous!r}")
        db = Path(path)
        schema.check_not_directory(db)
        schema.check_writable(db)
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory of {db}: {exc.strerror}") from exc
        writer = schema.connect(db, busy_timeout_s)
        reader: sqlite3.Connection | None = None
        try:
            schema.prepare(writer, db, schema.MIGRATIONS)
            writer.execute(f"PRAGMA synchronous = {mode}")
            writer.execute("PRAGMA foreign_keys = ON")
            reader = schema.connect(db, busy_timeout_s)
            reader.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            writer.close()
            if reader is not None:
                reader.close()
            raise StoreError(f"cannot open {db}: {schema.describe_sqlite_error(exc)}") from exc
        except BaseException:
            writer.close()
            raise
        return cls(db, writer, reader, mode, commit_delay_s)

    @classmethod
    def open_read_only(cls, path: str | os.PathLike[str]) -> "SQLiteStore":
        """Open an existing database for reading only: nothing is written, in the file or beside it.

        While a server has it open (its ``-wal`` file exists) it is read like
        any WAL database (``mode=ro``), seeing what is committed; otherwise it
        is read as a file nobody changes (``immutable=1``), which needs no
        ``-wal`` or ``-shm`` file and so works in a directory that cannot be
        written. Writing to the returned store raises :class:`StoreError`.

        Raises:
            NeedsUpgrade: the file has an older schema; :meth:`open` it (which writes) to upgrade it.
            SchemaError: the file is not a Parlour database this version can use.
            StoreError: it does not exist or cannot be read.
        """
        db = Path(path)
        schema.check_not_directory(db)
        if not db.exists():
            raise StoreError(f"{db} does not exist")
        live = Path(f"{db}-wal").exists()
        uri = db.resolve().as_uri() + ("?mode=ro" if live else "?mode=ro&immutable=1")
        try:
            reader = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {db} to read: {schema.describe_sqlite_error(exc)}") from exc
        try:
            schema.check_schema(reader, db, schema.MIGRATIONS, read_only=True)
        except sqlite3.Error as exc:
            reader.close()
            raise StoreError(f"cannot read {db}: {schema.describe_sqlite_error(exc)}") from exc
        except BaseException:
            reader.close()
            raise
        return cls(db, None, reader, "OFF")

    async def start(self) -> None:
        """Start the writer thread. Idempotent.

        Raises:
            StoreError: if the store is closed.
        """
        if self._closed:
            raise StoreError("the store is closed")
        if self._writer is None:
            raise StoreError(f"{self.path} was opened read-only")
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="parlour-store-writer", daemon=True)
            self._thread.start()

    async def close(self) -> None:
        """Commit every write already queued, stop the writer thread, close the database. Idempotent.

        Writes made after ``close()`` was called raise :class:`StoreError`.
        """
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._stop_writing()
            await asyncio.to_thread(self._thread.join)
        self._close_connections()

    def close_sync(self) -> None:
        """Like :meth:`close`, blocking the calling thread; for scripts and commands without an event loop.

        Do not call it from a running event loop while writes are queued: it
        blocks the loop until the writer has committed them.
        """
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._stop_writing()
            self._thread.join()
        self._close_connections()

    def _close_connections(self) -> None:
        with self._read_lock:
            self._reader.close()
        if self._writer is not None:
            self._writer.close()

    # --- reading ----------------------------------------------------------------------------------

    def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` in one read transaction (one consistent snapshot).

        Raises:
            StoreError: SQLite failed (a damaged file, say); the SQLite error is the cause.
        """
        with self._read_lock:
            if self._closed:
                raise StoreError("the store is closed")
            try:
                self._reader.execute("BEGIN")
                try:
                    return query(self._reader)
                finally:
                    if self._reader.in_transaction:
                        self._reader.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read {self.path}: {schema.describe_sqlite_error(exc)}") from exc

    def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` on the read connection in one read transaction (a consistent snapshot of what is committed).

        For modules that keep their own tables (:mod:`server.ratings.ratings`); ``query`` must only read.

        Raises:
            StoreError: SQLite failed; the SQLite error is the cause.
        """
        return self._read(query)
