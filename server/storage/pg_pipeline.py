"""The PostgreSQL writer's way for a group commit of several statements: one libpq pipeline, one implicit transaction.

A group that is not one move ``INSERT`` (:mod:`server.storage.pg_moves`) holds a table's new
row, its status, a player's counts ... beside the moves: several statements. Through
psycopg's cursor in a pipeline (``BEGIN``, each statement adapted, ``COMMIT``) such a commit
cost the server several times a commit of moves alone. Here each statement is a libpq
prepared statement of its own (prepared at its first use on the connection, parameters as
text, each typed by its Python type), all of them go in one pipeline ended by one ``Sync``,
and PostgreSQL runs everything before a ``Sync`` as one implicit transaction: committed at
the ``Sync`` (``synchronous_commit`` on: once the WAL was flushed), or rolled back whole if
any statement fails, whose place the results tell. Nothing is acknowledged before the
``Sync``'s result has come back.

A statement whose parameters are not all ``None``, ``bool``, ``int``, ``float``, ``str``
(without NUL) or a list of ``int`` (an array), or that PostgreSQL cannot prepare with those
types, goes through psycopg's cursor instead, with its group.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import psycopg
from psycopg import generators
from psycopg.errors import error_from_result
from psycopg.pq import DiagnosticField, ExecStatus
from psycopg.waiting import Ready, Wait

from .dialect import pg_params, to_postgres
from .store import Statement

__all__ = ["MAX_SHAPES", "Pipeline", "numbered", "through_psycopg", "typed_params"]

MAX_SHAPES = 512
"""At most this many statement shapes (text and parameter types) are prepared; the rest go through psycopg's cursor."""

_INT8, _FLOAT8, _INT8_ARRAY, _UNKNOWN = 20, 701, 1016, 0
"""PostgreSQL's type OIDs of the parameters sent (``_UNKNOWN``: the server infers it, as for psycopg's ``str``)."""

_PLACEHOLDER = re.compile(r"%[%s]")


def numbered(sql: str) -> str:
    """``sql`` (SQLite's dialect, ``?`` parameters) in PostgreSQL's, with ``$1``, ``$2`` ... parameters."""
    count = 0

    def place(match: re.Match[str]) -> str:
        nonlocal count
        if match.group() == "%%":
            return "%"
        count += 1
        return f"${count}"

    return _PLACEHOLDER.sub(place, to_postgres(sql))


def typed_params(params: Sequence[Any]) -> tuple[tuple[int, ...], list[bytes | None]] | None:
    """``params`` as PostgreSQL's text format with their type OIDs, or ``None`` if one has a type this path does not send."""
    types: list[int] = []
    values: list[bytes | None] = []
    for value in params:
        kind = type(value)
        if value is None:
            types.append(_UNKNOWN)
            values.append(None)
        elif kind is int or kind is bool:
            types.append(_INT8)
            values.append(b"%d" % value)
        elif kind is float:
            types.append(_FLOAT8)
            values.append(repr(value).encode())
        elif kind is str and "\0" not in value:
            types.append(_UNKNOWN)
            values.append(value.encode())
        elif (kind is list or kind is tuple) and all(type(item) is int for item in value):
            types.append(_INT8_ARRAY)
            values.append(("{" + ",".join(str(item) for item in value) + "}").encode())
        else:
            return None
    return tuple(types), values


class Pipeline:
    """Runs a group's statements as prepared statements in one pipeline and one implicit transaction, when they can be."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, tuple[int, ...]], bytes | None] = {}  # shape -> its statement's name; None: cannot be prepared
        self._connection: psycopg.AsyncConnection[Any] | None = None
        self._prepared: set[bytes] = set()  # names prepared on _connection

    async def execute(self, connection: psycopg.AsyncConnection[Any], statements: Sequence[Statement], progress: list[int | None]) -> bool:
        """Commit ``statements`` (SQLite's dialect) in one pipeline on ``connection`` (autocommit, idle); whether they went this way.

        ``progress[0]`` is set to the index of the statement that failed, or ``None`` when the commit itself did.

        Raises:
            psycopg.Error: a statement or the commit failed (nothing of the group was kept), or the connection was lost.
        """
        if connection is not self._connection:  # a new writer connection: nothing prepared on it yet
            self._connection, self._prepared = connection, set()
        queries: list[tuple[bytes, list[bytes | None]]] = []
        for sql, params in statements:
            typed = typed_params(params)
            if typed is None:
                return False
            name = await self._name(connection, sql, typed[0])
            if name is None:
                return False
            queries.append((name, typed[1]))
        pgconn = connection.pgconn
        if len(queries) == 1:  # no pipeline needed: one statement in autocommit is one transaction
            pgconn.send_query_prepared(*queries[0])
            results = await connection.wait(generators.execute(pgconn))
            failed_at, error = 0, next((result for result in results if result.status == ExecStatus.FATAL_ERROR), None)
        else:
            pgconn.enter_pipeline_mode()
            try:
                for name, values in queries:
                    pgconn.send_query_prepared(name, values)
                pgconn.pipeline_sync()
                failed_at, error = await connection.wait(_exchange(pgconn))
            finally:
                _leave_pipeline(pgconn)
        if error is not None:
            progress[0] = failed_at if failed_at is not None and failed_at < len(queries) else None
            raise error_from_result(error)
        return True

    async def _name(self, connection: psycopg.AsyncConnection[Any], sql: str, types: tuple[int, ...]) -> bytes | None:
        """The name of the statement prepared on ``connection`` for ``sql`` with parameters of ``types``; ``None``: not this way.

        Raises:
            psycopg.Error: preparing it failed for another reason than the statement (the connection was lost ...).
        """
        shape = (sql, types)
        name = self._names.get(shape, b"")
        if name is None or name in self._prepared:
            return name
        if not name:
            if len(self._names) >= MAX_SHAPES:
                return None
            name = self._names[shape] = f"parlour_s{len(self._names)}".encode()
        pgconn = connection.pgconn
        pgconn.send_prepare(name, numbered(sql).encode(), types)
        (result,) = await connection.wait(generators.execute(pgconn))
        if result.status != ExecStatus.COMMAND_OK:
            if (result.error_field(DiagnosticField.SQLSTATE) or b"").startswith(b"42"):  # a type it cannot take there, say
                self._names[shape] = None  # psycopg's cursor adapts its parameters
                return None
            raise error_from_result(result)  # the server going away ...: as a statement would fail
        self._prepared.add(name)
        return name


def _leave_pipeline(pgconn: Any) -> None:
    """Leave pipeline mode if every result was read; else (the connection was lost) leave it to be closed."""
    try:
        pgconn.exit_pipeline_mode()
    except psycopg.OperationalError:
        pass


def _exchange(pgconn: Any) -> Any:
    """psycopg's generator protocol: send the pipeline, then read every result up to its sync.

    Returns ``(index, result)`` of the first error (``index`` ``None``: after every statement,
    the commit's), or ``(None, None)``.
    """
    while pgconn.flush():
        if (yield Wait.RW) & Ready.R:
            pgconn.consume_input()
    index = 0
    failed: tuple[int | None, Any] = (None, None)
    held = False  # a result of the statement at index was read, the None that ends it not yet
    while True:
        yield Wait.R
        pgconn.consume_input()
        while not pgconn.is_busy():
            result = pgconn.get_result()
            if result is None:
                if not held:
                    break  # nothing more to read for now
                index, held = index + 1, False
                continue
            status = result.status
            if status == ExecStatus.PIPELINE_SYNC:
                return failed
            held = True
            if status == ExecStatus.FATAL_ERROR and failed[1] is None:
                failed = (index, result)


async def through_psycopg(connection: psycopg.AsyncConnection[Any], statements: list[Statement], pipelined: bool, progress: list[int | None]) -> None:
    """Run ``statements`` on ``connection`` (autocommit) through psycopg's cursor: one alone, several in one transaction,
    in psycopg's pipeline or not (the way of a group :class:`Pipeline` does not take).

    ``progress[0]`` is left at the index of the statement running when one fails (meaningful unpipelined).
    """
    if len(statements) == 1:
        sql, params = statements[0]
        await connection.execute(to_postgres(sql), pg_params(params) or None)
        return
    if not pipelined:
        async with connection.transaction():
            for index, (sql, params) in enumerate(statements):
                progress[0] = index
                await connection.execute(to_postgres(sql), pg_params(params) or None)
        return
    async with connection.pipeline(), connection.transaction():
        for sql, params in statements:
            await connection.execute(to_postgres(sql), pg_params(params) or None)
