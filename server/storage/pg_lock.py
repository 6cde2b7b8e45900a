"""One server per PostgreSQL database, one process per node name: PostgreSQL advisory locks held for the server's life.

SQLite has a lock file beside the database (:mod:`server.storage.dblock`). PostgreSQL
has session-level advisory locks, which the database server releases when the
connection that took them ends, however its process ends (a SIGKILLed server leaves
no stale lock). A server on its own (no ``--bus``) takes the database's lock
exclusively: a second server, or a node of a cluster, is refused. A node of a cluster
takes it shared (the nodes share the database) and takes its node name's lock
exclusively: a second process started with the same ``--node`` is refused, so a node
name stands for one live process and the tables it holds (:mod:`server.cluster.leases`).

PostgreSQL forgets the locks when it restarts (their connection ends with it), so a
running server checks their connection every :data:`CHECK_S` seconds
(:meth:`PostgresLock.keep`) and takes them again on a new one. While they are not
held, :attr:`PostgresLock.refusal` says why writes must be refused; if another server
took them meanwhile, they are lost for good: this server must write nothing more.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from .common import UNREACHABLE, StorageUnavailable, is_postgres_url
from .dblock import DatabaseInUse
from .schema import APPLICATION_ID
from .store import StoreError

__all__ = ["CHECK_S", "DatabaseTaken", "PostgresLock", "SERVER_KEY", "NODE_KEY"]

log = logging.getLogger(__name__)

CHECK_S = 1.0
"""How often (seconds) a running server checks that the connection holding its locks is alive (:meth:`PostgresLock.keep`)."""

SERVER_KEY = APPLICATION_ID
"""The first key of the database's lock (the second is 0): exclusive for a server alone, shared by the nodes of a cluster."""
NODE_KEY = APPLICATION_ID + 1
"""The first key of a node name's lock (the second is ``hashtext(name)``)."""


class DatabaseTaken(StorageUnavailable):
    """A write refused because this server does not hold its database's lock: PostgreSQL restarted and the lock is
    not taken again yet (the message then begins as every :class:`StorageUnavailable` does, "the database cannot be
    reached"), or another server took it meanwhile (then for good). Nothing of the write was kept."""


class PostgresLock:
    """The advisory locks of one server on one PostgreSQL database, held on a connection of their own; see :meth:`acquire`.

    Attributes:
        refusal: ``None`` while the locks are held; else the error every write must fail with (see :meth:`keep`).
        lost: whether another server took the locks while they were not held (for good: :attr:`refusal` stays).
    """

    def __init__(self, connection: Any, url: str = "", node: str | None = None) -> None:
        """Use :meth:`acquire`."""
        self._connection = connection
        self._url = url
        self._node = node
        self._guard = threading.Lock()  # check() runs in a worker thread; release() on the loop's
        self.refusal: DatabaseTaken | None = None
        self.lost = False
        self._released = False

    @classmethod
    def acquire(cls, url: str, node: str | None = None) -> "PostgresLock":
        """Take the database's lock at ``url``: exclusively without ``node``; shared, with ``node``'s own lock, for a node of a cluster.

        Raises:
            DatabaseInUse: another server runs on the database alone, or a cluster does (without ``node``),
                or another process runs as node ``node``.
            StoreError: the database cannot be reached.
        """
        assert is_postgres_url(url)
        from .postgres import connect_then  # only a server on PostgreSQL loads psycopg

        return cls(connect_then(url, lambda connection: _take(connection, url, node)), url, node)

    async def keep(self, interval_s: float = CHECK_S) -> None:
        """Check the locks every ``interval_s`` seconds (:meth:`check`, in a worker thread) until they are lost.

        Run as a task for the server's life; cancel it before :meth:`release`.
        """
        while not self.lost:
            await asyncio.sleep(interval_s)
            await asyncio.to_thread(self.check)

    def check(self) -> None:
        """Make sure the locks are held: if their connection died (PostgreSQL restarted), take them again on a new one.

        While they cannot be taken again (PostgreSQL still down) :attr:`refusal` is set and
        the next call tries again; if another server holds them, they are :attr:`lost`
        (logged as an ERROR) and :attr:`refusal` says so for good.
        """
        with self._guard:
            if self.lost or self._released:  # a check still running in its thread when the server stopped takes nothing
                return
            if self.refusal is None and _alive(self._connection):
                return
            if self.refusal is None:
                log.warning("the connection holding this server's lock on %s ended (PostgreSQL restarted?): taking the lock again", _redact(self._url))
                self.refusal = DatabaseTaken(f"{UNREACHABLE}: the connection holding the server's lock ended, and the lock is not taken again yet")
            self._connection.close()
            self._take_again()

    def _take_again(self) -> None:
        from .postgres import connect

        try:
            connection = connect(self._url)
        except StoreError as exc:  # still unreachable: the next check tries again
            self.refusal = DatabaseTaken(f"{UNREACHABLE}: {exc}; the server's lock is not taken again yet")
            return
        try:
            _take(connection, self._url, self._node)
        except DatabaseInUse as exc:
            connection.close()
            self.lost = True
            self.refusal = DatabaseTaken(f"another server took the database while PostgreSQL restarted ({exc}): this server saves nothing more")
            log.error(
                "another process took this server's lock on %s while PostgreSQL restarted (%s): this server refuses every change "
                "from now on (players get storage_unavailable) rather than run beside it; stop it",
                _redact(self._url), exc,
            )  # fmt: skip
            return
        except Exception as exc:  # PostgreSQL went away again meanwhile
            connection.close()
            log.warning("cannot take the lock on %s again yet: %s", _redact(self._url), exc)
            return
        self._connection = connection
        self.refusal = None
        log.warning("took this server's lock on %s again", _redact(self._url))

    def release(self) -> None:
        """Give the locks up now, then close their connection. Idempotent.

        Closing alone would leave them held until PostgreSQL's backend has noticed the close, after
        this returns: a server started again at once on the same database could be refused.
        """
        with self._guard:
            self._released = True
            if not self._connection.closed:
                try:
                    self._connection.execute("SELECT pg_advisory_unlock_all()")
                except Exception:  # the connection is gone already: PostgreSQL released them with it
                    pass
            self._connection.close()


def _take(connection: Any, url: str, node: str | None) -> None:
    """Take the locks of :meth:`PostgresLock.acquire` on ``connection``.

    Raises:
        DatabaseInUse: one of them is held by another server or node process.
    """
    if node is None:
        if not _taken(connection, "SELECT pg_try_advisory_lock(%s, 0)", (SERVER_KEY,)):
            raise DatabaseInUse(
                f"another Parlour server runs on {_redact(url)}: one server per database "
                "(or start every server as a node of one cluster, with --bus and --node)"
            )
        return
    if not _taken(connection, "SELECT pg_try_advisory_lock_shared(%s, 0)", (SERVER_KEY,)):
        raise DatabaseInUse(f"a Parlour server without --bus runs on {_redact(url)}: stop it before nodes of a cluster share the database")
    if not _taken(connection, "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (NODE_KEY, node)):
        raise DatabaseInUse(f"node {node!r} already runs on {_redact(url)}: give every node of a cluster its own --node name")


def _alive(connection: Any) -> bool:
    try:
        connection.execute("SELECT 1")
    except Exception:
        return False
    return True


def _redact(url: str) -> str:
    from .postgres import redact  # only a server on PostgreSQL loads psycopg

    return redact(url)


def _taken(connection: Any, sql: str, params: tuple[Any, ...]) -> bool:
    return bool(connection.execute(sql, params).fetchone()[0])
