"""One server per PostgreSQL database, one process per node name: PostgreSQL advisory locks held for the server's life.

SQLite has a lock file beside the database (:mod:`server.storage.dblock`). PostgreSQL
has session-level advisory locks, which the database server releases when the
connection that took them ends, however its process ends (a SIGKILLed server leaves
no stale lock). A server on its own (no ``--bus``) takes the database's lock
exclusively: a second server, or a node of a cluster, is refused. A node of a cluster
takes it shared (the nodes share the database) and takes its node name's lock
exclusively: a second process started with the same ``--node`` is refused, so a node
name stands for one live process and the tables it holds (:mod:`server.cluster.leases`).
"""

from __future__ import annotations

from typing import Any

from .common import is_postgres_url
from .dblock import DatabaseInUse
from .schema import APPLICATION_ID

__all__ = ["PostgresLock", "SERVER_KEY", "NODE_KEY"]

SERVER_KEY = APPLICATION_ID
"""The first key of the database's lock (the second is 0): exclusive for a server alone, shared by the nodes of a cluster."""
NODE_KEY = APPLICATION_ID + 1
"""The first key of a node name's lock (the second is ``hashtext(name)``)."""


class PostgresLock:
    """The advisory locks of one server on one PostgreSQL database, held on a connection of their own; see :meth:`acquire`."""

    def __init__(self, connection: Any) -> None:
        """Use :meth:`acquire`."""
        self._connection = connection

    @classmethod
    def acquire(cls, url: str, node: str | None = None) -> "PostgresLock":
        """Take the database's lock at ``url``: exclusively without ``node``; shared, with ``node``'s own lock, for a node of a cluster.

        Raises:
            DatabaseInUse: another server runs on the database alone, or a cluster does (without ``node``),
                or another process runs as node ``node``.
            StoreError: the database cannot be reached.
        """
        assert is_postgres_url(url)
        from .postgres import connect, redact  # only a server on PostgreSQL loads psycopg

        connection = connect(url)
        try:
            if node is None:
                if not _taken(connection, "SELECT pg_try_advisory_lock(%s, 0)", (SERVER_KEY,)):
                    raise DatabaseInUse(
                        f"another Parlour server runs on {redact(url)}: one server per database "
                        "(or start every server as a node of one cluster, with --bus and --node)"
                    )
                return cls(connection)
            if not _taken(connection, "SELECT pg_try_advisory_lock_shared(%s, 0)", (SERVER_KEY,)):
                raise DatabaseInUse(f"a Parlour server without --bus runs on {redact(url)}: stop it before nodes of a cluster share the database")
            if not _taken(connection, "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (NODE_KEY, node)):
                raise DatabaseInUse(f"node {node!r} already runs on {redact(url)}: give every node of a cluster its own --node name")
        except BaseException:
            connection.close()
            raise
        return cls(connection)

    def release(self) -> None:
        """Give the locks up now, then close their connection. Idempotent.

        Closing alone would leave them held until PostgreSQL's backend has noticed the close, after
        this returns: a server started again at once on the same database could be refused.
        """
        if not self._connection.closed:
            try:
                self._connection.execute("SELECT pg_advisory_unlock_all()")
            except Exception:  # the connection is gone already: PostgreSQL released them with it
                pass
        self._connection.close()


def _taken(connection: Any, sql: str, params: tuple[Any, ...]) -> bool:
    return bool(connection.execute(sql, params).fetchone()[0])
