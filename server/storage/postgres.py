"""The :class:`server.storage.store.Store` in PostgreSQL, through psycopg 3.

One writer connection (asyncio, autocommit) commits in groups, as the SQLite writer
thread does: while one transaction is on its way to the server, every write made meanwhile
waits, and the next transaction takes them all; each caller's ``await`` returns only after
that ``COMMIT`` returned (PostgreSQL's default ``synchronous_commit = on``: the WAL was
flushed). A group's statements go out in one pipeline, one round trip. One bad write (a
duplicate ply) fails only its own caller: the group is rolled back and its writes rerun
one transaction each. When the server cannot be reached (stopped, restarting, its disk
full), every write of the group fails with :class:`StorageUnavailable`, and the next write
connects again.

Reads are synchronous, like SQLite's, on a second connection, each in one ``REPEATABLE
READ`` read-only transaction (one snapshot); they take the same SQLite-dialect queries
(:mod:`server.storage.dialect` rewrites them).

The schema is versioned like SQLite's (:mod:`server.storage.pg_schema`).

Usage::

    store = PostgresStore.open("postgresql://parlour@127.0.0.1:5432/parlour")
    await store.start()
    await store.append_move(1, MoveRow(ply=1, seat=0, move="d3", at=time.time()))
    await store.close()
"""

from __future__ import annotations

import asyncio
import logging
import select
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import psycopg
from psycopg import errors as pg_errors

from .ops import StoreOps
from .schema import APPLICATION_ID, Migration
from .store import NeedsUpgrade, SchemaError, Statement, StoreError, settled_at_once
from .writer import COMMIT_DELAY_S, merged_statements, own_copy

from .common import UNREACHABLE, StorageUnavailable, is_postgres_url, lease_lost
from .dialect import pg_params, to_postgres
from .pacing import Pacing
from .pg_moves import MovesPath
from .pg_pipeline import Pipeline, through_psycopg
from .pg_schema import PG_MIGRATIONS, SCHEMA_TABLE
from .pg_url import redact

__all__ = ["PostgresStore", "StorageUnavailable", "CONNECT_TIMEOUT_S", "connect", "is_postgres_url", "redact"]

log = logging.getLogger(__name__)

T = TypeVar("T")

CONNECT_TIMEOUT_S = 5
"""How long (seconds, libpq's ``connect_timeout``) a connection attempt may take before the write or read fails."""


@dataclass(slots=True)
class _Job:
    statements: tuple[Statement, ...]
    future: asyncio.Future[None]


class _Reader:
    """What a read query gets as ``db``: ``execute(sql, params)`` in SQLite's dialect, returning a psycopg cursor."""

    __slots__ = ("_connection",)

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self._connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self._connection.execute(to_postgres(sql), pg_params(params) or None)


class PostgresStore(StoreOps):
    """The :class:`server.storage.store.Store` in one PostgreSQL database; build it with :meth:`open`.

    ``await start()`` before writing, ``await close()`` (or :meth:`close_sync` without a
    loop) at the end. Writes are made from one asyncio event loop.

    Attributes:
        url: the database's libpq URL.
        commits: transactions committed so far (each holds one or more writes).
        writes: writes (calls to :meth:`write`) committed so far.
    """

    def __init__(self, url: str, reader: psycopg.Connection[Any], writable: bool, commit_delay_s: float = COMMIT_DELAY_S) -> None:
        """Use :meth:`open` or :meth:`open_read_only`."""
        self.url = url
        self.commits = 0
        self.writes = 0
        self._reader: psycopg.Connection[Any] | None = reader
        self._writable = writable
        self._writer: psycopg.AsyncConnection[Any] | None = None
        self._pending: list[_Job] = []
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # Held by the writer while it commits. Tests hold it to make writes pile up into one group.
        self._writer_gate = asyncio.Lock()
        self.commit_delay_s = commit_delay_s
        self._pacing = Pacing()  # how many writes to wait for before a commit, and how long
        self._wanted = 0.0  # while the writer waits for company: how many pending writes end the wait
        self._enough: asyncio.Event | None = None
        self._moves = MovesPath()  # a commit that is one move INSERT (most are) skips psycopg's cursor
        self._pipeline = Pipeline()  # so does a commit of several statements, as one pipeline

    # --- opening and closing ---------------------------------------------------------------

    @classmethod
    def open(cls, url: str, *, commit_delay_s: float = COMMIT_DELAY_S) -> "PostgresStore":
        """Connect to the database at ``url`` and bring its schema up to date.

        Args:
            url: a libpq URL, ``postgresql://USER[:PASSWORD]@HOST:PORT/DB``, or over a unix socket
                ``postgresql://USER@/DB?host=SOCKETDIR`` (libpq's default socket directory without ``host``).
            commit_delay_s: how long the writer may wait for more writes before a commit
                while recent commit cycles held more writes than are pending, or two commits'
                duration if that is longer (:mod:`server.storage.pacing`); 0 never waits.

        Raises:
            ValueError: a negative ``commit_delay_s``.
            SchemaError: it holds another program's tables, or a newer Parlour's schema; or a step failed.
            StoreError: it cannot be reached (the cause is psycopg's error).
        """
        if commit_delay_s < 0:
            raise ValueError(f"commit_delay_s must not be negative, not {commit_delay_s!r}")
        reader = connect_then(url, lambda reader: _prepare(reader, url, PG_MIGRATIONS))
        return cls(url, _for_reading(reader), True, commit_delay_s)

    @classmethod
    def open_read_only(cls, url: str) -> "PostgresStore":
        """Connect for reading only (``parlour games``); nothing is written.

        Raises:
            NeedsUpgrade: its schema is older; :meth:`open` upgrades it.
            SchemaError, StoreError: as :meth:`open`.
        """
        reader = connect_then(url, lambda reader: _check_schema(reader, url, PG_MIGRATIONS, read_only=True))
        return cls(url, _for_reading(reader), False)

    async def start(self) -> None:
        """Connect the writer and start committing. Idempotent.

        Raises:
            StoreError: the store is closed or read-only, or the database cannot be reached.
        """
        if self._closed:
            raise StoreError("the store is closed")
        if not self._writable:
            raise StoreError(f"{redact(self.url)} was opened read-only")
        if self._task is None:
            self._writer = await _connect_async(self.url)
            self._wake = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="parlour-postgres-writer")

    async def close(self) -> None:
        """Commit every write already made, then close both connections. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._task is not None and self._wake is not None:
            self._wake.set()
            if self._enough is not None:  # no waiting for company once closing
                self._enough.set()
            await self._task
        if self._writer is not None:
            await self._writer.close()
        self._close_reader()

    def close_sync(self) -> None:
        """Close a store that never started writing (``parlour games``); see :meth:`close` otherwise."""
        self._closed = True
        self._close_reader()

    def _close_reader(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # --- writing -------------------------------------------------------------------------------

    def write(self, *statements: Statement) -> asyncio.Future[None]:
        """Commit ``statements`` atomically, grouped with the writes made while a commit is in flight.

        Returns a future, done once the transaction holding them committed.
        Cancelling the caller does not withdraw the write.

        Raises (when the future is awaited):
            StorageUnavailable: the database cannot be reached or cannot save; nothing was kept.
            StoreError: the write failed (psycopg's error is the cause); the store is not started or closed.
            TypeError: a statement is not a ``(sql, params)`` pair.
        """
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if settled_at_once(future, statements, self._closed, self._wake is not None):
            return future
        self._pending.append(_Job(statements, future))
        self._wake.set()
        if self._wanted and len(self._pending) >= self._wanted and self._enough is not None:
            self._enough.set()
        return future

    async def _run(self) -> None:
        """The writer: commit everything pending in one transaction, again and again, until closed and drained."""
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            async with self._writer_gate:
                while self._pending:
                    await self._wait_for_company()
                    jobs, self._pending = self._pending, []
                    started = time.monotonic()
                    await self._commit_group(jobs)
                    self._pacing.committed(len(jobs), len(self._pending), time.monotonic() - started)
            if self._closed:
                return

    async def _wait_for_company(self) -> None:
        """While recent commit cycles held more writes than are pending, wait for the rest (:class:`server.storage.pacing.Pacing`).

        Fewer, larger transactions cost the server and PostgreSQL less per move (one WAL flush,
        one round trip); the wait is at most two commits' duration, and 10 ms (or :attr:`commit_delay_s`
        if longer); a lone writer (one game) never waits.
        """
        wanted = self._pacing.wanted(len(self._pending))
        longest = self._pacing.longest_wait_s(self.commit_delay_s)
        if not wanted or not longest or self._closed:
            return
        self._enough = enough = asyncio.Event()
        self._wanted = wanted
        timer = asyncio.get_running_loop().call_later(longest, enough.set)
        try:
            await enough.wait()
        finally:
            timer.cancel()
            self._wanted = 0.0
            self._enough = None

    async def _commit_group(self, jobs: list[_Job]) -> None:
        """Commit ``jobs`` together, their move rows in multi-row INSERTs (:func:`server.storage.writer.merged_statements`, as SQLite's).

        A job whose statement fails is dropped and the rest retried together: the effect is
        that of each write alone, in order, with fewer transactions. To find the culprit the
        group runs again statement by statement, unmerged.
        """
        pending = list(jobs)
        merge = True
        try:
            while pending:
                plan = merged_statements(pending) if merge else [(sql, params, job) for job in pending for sql, params in job.statements]
                failed_at, error = await self._transaction([(sql, params) for sql, params, _ in plan], pipelined=merge)
                if error is None:
                    self.commits += 1
                    self.writes += len(pending)
                    for job in pending:
                        _settle(job, None)
                    return
                culprit = None if failed_at is None else plan[failed_at][2]
                if not isinstance(culprit, _Job) and merge:  # a pipeline, or a statement of several writes: find the one
                    merge = False
                    continue
                if not isinstance(culprit, _Job):  # the commit itself failed: nothing to single out, the whole group fails
                    log.error("a group commit of %d writes failed: %s", len(pending), error)
                    for job in pending:
                        _settle(job, error)
                    return
                _settle(culprit, error)
                pending.remove(culprit)
                merge = True
                if pending:
                    log.warning("a write failed (%s); retrying the %d other writes of its group", error, len(pending))
        except StorageUnavailable as exc:
            log.error("a group commit of %d writes failed: %s", len(pending), exc)
            for job in pending:
                _settle(job, exc)

    async def _transaction(self, statements: list[Statement], pipelined: bool) -> tuple[int | None, StoreError | None]:
        """Run ``statements`` in one transaction, in one pipeline or one by one.

        Returns:
            ``(None, None)`` once committed; else the error that rolled it back,
            with the index of the statement that failed (``None`` where unknown: a pipeline of
            psycopg's, a statement that held several writes' rows, or the commit itself).

        Raises:
            StorageUnavailable: the server cannot be reached (nothing committed).
        """
        for attempt in (1, 2, 3):
            connection = self._writer if self._writer is not None and not self._writer.closed else None
            if connection is not None and _ended_while_idle(connection):  # PostgreSQL restarted since: nothing was sent yet
                await connection.close()
                connection = self._writer = None
            if connection is None:
                connection = self._writer = await _connect_async(self.url, unavailable=True)
            progress: list[int | None] = [0 if len(statements) == 1 or not pipelined else None]  # which statement failed, where known
            try:
                if not await self._moves.execute(connection, statements) and not await self._pipeline.execute(connection, statements, progress):
                    await through_psycopg(connection, statements, pipelined, progress)
                return None, None
            except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:  # rolled back whole: again
                if attempt == 3:
                    return None, StoreError(f"the write failed: {_first_line(exc)}")
            except pg_errors.AdminShutdown as exc:  # a restart ended this connection before it ran anything: once more
                await connection.close()
                self._writer = None
                if attempt >= 2:
                    raise _unavailable(exc) from exc
            except Exception as exc:  # psycopg's errors, or a parameter it cannot send: that write fails, the writer goes on
                if connection.broken or connection.closed or isinstance(exc, psycopg.OperationalError):
                    await connection.close()
                    self._writer = None
                    raise _unavailable(exc) from exc
                error = lease_lost(exc) or StoreError(f"the write failed: {exc}")
                error.__cause__ = exc
                return progress[0], error
        raise AssertionError("unreachable")

    # --- reading ----------------------------------------------------------------------------------

    def _read(self, query: Callable[[Any], T]) -> T:
        """Run ``query`` in one read-only snapshot; reconnect once if the connection was lost.

        Raises:
            StorageUnavailable: the server cannot be reached.
            StoreError: the query failed (psycopg's error is the cause).
        """
        if self._closed:
            raise StoreError("the store is closed")
        for attempt in (1, 2):
            if self._reader is None or self._reader.closed:
                self._reader = _for_reading(connect(self.url, unavailable=True))
            connection = self._reader
            try:
                with connection.transaction():
                    return query(_Reader(connection))
            except psycopg.Error as exc:
                if not (connection.broken or connection.closed or isinstance(exc, psycopg.OperationalError)):
                    raise StoreError(f"cannot read {redact(self.url)}: {exc}") from exc
                connection.close()
                if attempt == 2:
                    raise _unavailable(exc) from exc
        raise AssertionError("unreachable")

    def read(self, query: Callable[[Any], T]) -> T:
        """Run a read-only ``query`` on one snapshot; ``query`` gets an object whose ``execute(sql, params)`` takes SQLite's SQL.

        Raises:
            StoreError: the read failed.
        """
        return self._read(query)


def _ended_while_idle(connection: psycopg.AsyncConnection[Any]) -> bool:
    """Whether PostgreSQL said something on the writer's idle ``connection`` (one syscall): nothing is due there
    between commits but a backend's goodbye (a restart), which the next commit would meet after sending itself."""
    return bool(select.select([connection.pgconn.socket], [], [], 0)[0])


def _settle(job: _Job, error: StoreError | None) -> None:
    if job.future.done():  # the caller was cancelled; the write stands
        return
    if error is None:
        job.future.set_result(None)
    else:
        job.future.set_exception(own_copy(error))


def _first_line(exc: BaseException) -> str:
    """libpq's message without its hints on further lines."""
    return (str(exc).strip() or type(exc).__name__).splitlines()[0]


def _unavailable(exc: BaseException) -> StorageUnavailable:
    return StorageUnavailable(f"{UNREACHABLE}: {_first_line(exc)}")


# --- connecting and the schema -----------------------------------------------------------------


def connect(url: str, *, unavailable: bool = False) -> psycopg.Connection[Any]:
    """A synchronous autocommit connection to ``url``.

    Raises:
        StorageUnavailable (``unavailable``) or StoreError: it cannot be made.
    """
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise _connect_error(url, exc, unavailable) from exc


def connect_then(url: str, setup: Callable[[psycopg.Connection[Any]], object]) -> psycopg.Connection[Any]:
    """A connection to ``url`` (as :func:`connect`) on which ``setup(connection)`` has run; closed if ``setup`` raises.

    Raises:
        StoreError: it cannot be made; and whatever ``setup`` raises.
    """
    connection = connect(url)
    try:
        setup(connection)
    except BaseException:
        connection.close()
        raise
    return connection


async def _connect_async(url: str, *, unavailable: bool = False) -> psycopg.AsyncConnection[Any]:
    """An asyncio autocommit connection to ``url`` (the writer's); errors as :func:`_connect`."""
    try:
        return await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise _connect_error(url, exc, unavailable) from exc


def _connect_error(url: str, exc: psycopg.Error, unavailable: bool) -> StoreError:
    """The error of a failed connection: :class:`StorageUnavailable` for a server in use, else :class:`StoreError`."""
    message = f"cannot connect to {redact(url)}: {_first_line(exc)}"
    return StorageUnavailable(f"{UNREACHABLE}: {message}") if unavailable else StoreError(message)


def _for_reading(connection: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    """``connection``, its transactions made read-only snapshots."""
    connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    connection.read_only = True
    return connection


def _prepare(connection: psycopg.Connection[Any], url: str, migrations: Sequence[Migration]) -> None:
    """Check that the database is a usable Parlour one, then run the steps it lacks, each in one transaction."""
    _check_schema(connection, url, migrations, read_only=False)
    before = _version(connection)
    applied = [step for step in sorted(migrations, key=lambda step: step.version) if _migrate(connection, url, step, migrations)]
    if applied:
        newest = applied[-1].version
        news = f"new database, schema version {newest}" if before == 0 else f"schema upgraded from version {before} to {newest}"
        log.info("%s: %s", redact(url), news)


def _version(connection: psycopg.Connection[Any]) -> int:
    """The schema version (0: no Parlour schema yet)."""
    if connection.execute("SELECT to_regclass(%s)", (SCHEMA_TABLE,)).fetchone()[0] is None:  # type: ignore[index]
        return 0
    row = connection.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchone()
    return 0 if row is None else int(row[0])


def _check_schema(connection: psycopg.Connection[Any], url: str, migrations: Sequence[Migration], *, read_only: bool) -> None:
    """Refuse another program's database and a newer schema; with ``read_only``, an older one too (:class:`NeedsUpgrade`)."""
    newest = max(step.version for step in migrations)
    try:
        version = _version(connection)
        tables = [row[0] for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name"
        )]  # fmt: skip
        app_id = connection.execute(f"SELECT application_id FROM {SCHEMA_TABLE}").fetchone()[0] if version else APPLICATION_ID  # type: ignore[index]
    except psycopg.Error as exc:
        raise StoreError(f"cannot read {redact(url)}: {exc}") from exc
    if (version == 0 and tables) or app_id != APPLICATION_ID:
        raise SchemaError(
            f"{redact(url)} holds some other program's tables ({', '.join(tables)}), not a Parlour database; choose another database"
        )
    if version > newest:
        raise SchemaError(f"database schema version {version} is newer than this Parlour supports ({newest}); upgrade Parlour")
    if read_only and version < newest:
        raise NeedsUpgrade(f"{redact(url)} has schema version {version} and must be upgraded to version {newest}")


def _migrate(connection: psycopg.Connection[Any], url: str, step: Migration, migrations: Sequence[Migration]) -> bool:
    """Apply ``step`` if the database is at the version before it; return whether it did. Atomic; safe against a concurrent opener."""
    previous = max((other.version for other in migrations if other.version < step.version), default=0)
    try:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (APPLICATION_ID,))
            version = _version(connection)
            if version >= step.version:
                return False
            if version != previous:
                raise SchemaError(f"{redact(url)} has schema version {version}, and no step leads from it to {step.version}")
            for statement in step.statements:
                connection.execute(statement)
            connection.execute(
                f"INSERT INTO {SCHEMA_TABLE} (id, version, application_id) VALUES (1, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                (step.version, APPLICATION_ID),
            )
    except psycopg.Error as exc:
        raise SchemaError(f"upgrading {redact(url)} to schema version {step.version} ({step.doc}) failed: {exc}; the database is unchanged") from exc
    return True
