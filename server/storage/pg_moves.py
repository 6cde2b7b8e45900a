"""The PostgreSQL writer's short way for the statement most of its commits are: the INSERT of moves.

A move is one row of ``moves``; a group commit of several tables' moves is one
multi-row INSERT (:func:`server.storage.writer.merged_statements`). Through
psycopg's cursor (each parameter adapted, its own bookkeeping of prepared
statements, a cursor and a result object a call) such a commit cost the server
about 235 µs of CPU on the development machine; sent here as a prepared
statement of libpq's through psycopg's lower-level API (``pgconn``, parameters
typed by their columns, in binary: :class:`MovesPath`) and awaited through
psycopg's own generator, about 150 µs (``benchmarks/cluster_compare.py``, docs/BENCHMARKS.md). Every
other statement goes through psycopg's cursor as before. Durability is the
same: one statement in autocommit is one transaction, and its ``COMMIT`` has
returned (``synchronous_commit`` left on) when :meth:`MovesPath.execute` does.

On a node of a cluster a move's write begins with its table's lease fence
(:data:`server.storage.common.FENCE_SQL`). A lone move and its fence go as one
prepared statement too: ``INSERT INTO moves (...) SELECT $1, ... WHERE
parlour_fence($n, $m)``, so the fence runs (and raises ``PL001`` if this node
lost the lease: nothing is inserted) in the same statement and transaction.
A group commit of moves alone (its fences gathered into one
:data:`server.storage.common.FENCE_ALL_SQL`, its rows into one multi-row INSERT)
is one prepared statement as well: ``WITH fence AS (SELECT
parlour_fence_all(...)) INSERT INTO moves (...) SELECT v.* FROM fence,
(VALUES ...) AS v WHERE fence.ok`` (the fence runs once, before any row).
"""

from __future__ import annotations

import struct
from typing import Any, Callable, Sequence

import psycopg
from psycopg import generators
from psycopg.errors import error_from_result
from psycopg.pq import ExecStatus

from .common import FENCE_ALL_SQL, FENCE_SQL
from .statements import APPEND_MOVES
from .store import Statement

__all__ = ["MovesPath", "text_param"]


def _numbered(sql: str) -> bytes:
    """``sql`` with its ``?`` parameters as PostgreSQL's ``$1``, ``$2`` ... (move INSERTs hold no other ``?``)."""
    parts = sql.split("?")
    return "".join(f"{part}${index}" for index, part in enumerate(parts[:-1], 1)).encode() + parts[-1].encode()


_PREPARED: dict[str, tuple[bytes, bytes]] = {
    sql: (f"parlour_moves_{kind}_{rows}".encode(), _numbered(sql))
    for kind, shapes in enumerate(APPEND_MOVES.values())
    for rows, sql in enumerate(shapes, 1)
}
"""Each move INSERT (SQLite's text, as the server writes it) -> its prepared statement's name and text."""


def _fenced(kind: int, sql: str) -> tuple[bytes, bytes]:
    """The prepared statement (name, text) that inserts the one move of ``sql`` if ``parlour_fence`` lets it (two more parameters)."""
    columns, values = sql.split(" VALUES ")
    count = values.count("?")
    selected = ", ".join(f"${index}" for index in range(1, count + 1))
    return f"parlour_fenced_move_{kind}".encode(), f"{columns} SELECT {selected} WHERE parlour_fence(${count + 1}, ${count + 2})".encode()


_FENCED: dict[str, tuple[bytes, bytes]] = {shapes[0]: _fenced(kind, shapes[0]) for kind, shapes in enumerate(APPEND_MOVES.values())}
"""Each one-move INSERT -> the prepared statement that runs it behind its lease fence."""

_TYPES = {
    "table_id": "bigint", "ply": "bigint", "seat": "integer", "move": "text", "forced": "integer",
    "at": "double precision", "clock_ms": "bigint", "other_ms": "bigint", "running": "integer",
}  # fmt: skip
"""The types of the columns of ``moves`` (server.storage.pg_schema): a VALUES list in a FROM names them."""


def _fenced_group(kind: int, rows: int, sql: str) -> tuple[bytes, bytes]:
    """The prepared statement (name, text) that inserts the ``rows`` moves of ``sql`` if ``parlour_fence_all`` lets it."""
    head = sql[: sql.index(" VALUES ")]
    columns = [name.strip() for name in head[head.index("(") + 1 : head.rindex(")")].split(",")]
    values = ", ".join(
        "(" + ", ".join(f"${row * len(columns) + index + 1}::{_TYPES[column]}" for index, column in enumerate(columns)) + ")" for row in range(rows)
    )
    held = rows * len(columns) + 1
    text = (
        f"WITH fence AS (SELECT parlour_fence_all(${held}::bigint[], ${held + 1}) AS ok) "
        f"{head} SELECT v.* FROM fence, (VALUES {values}) AS v WHERE fence.ok"
    )
    return f"parlour_fenced_moves_{kind}_{rows}".encode(), text.encode()


_FENCED_GROUP: dict[str, tuple[bytes, bytes]] = {
    sql: _fenced_group(kind, rows, sql) for kind, shapes in enumerate(APPEND_MOVES.values()) for rows, sql in enumerate(shapes, 1)
}
"""Each move INSERT of a group commit -> the prepared statement that runs it behind the group's fences."""


def text_param(value: Any) -> bytes | None:
    """A move row's parameter in PostgreSQL's text format (``None``: NULL).

    Raises:
        TypeError: ``value`` is no int, float, str, bool or ``None``.
    """
    if value is None:
        return None
    kind = type(value)
    if kind is int or kind is bool:
        return b"%d" % value
    if kind is float:
        return repr(value).encode()
    if kind is str:
        return value.encode()
    raise TypeError(f"a move's parameter cannot be {kind.__name__}: {value!r}")


Packer = Callable[[Any], "bytes | None"]
"""A parameter's value -> its bytes as its statement takes them (binary or text); raises TypeError or struct.error."""

_BINARY: dict[int, Packer] = {
    20: struct.Struct(">q").pack,  # bigint
    23: struct.Struct(">i").pack,  # integer
    701: struct.Struct(">d").pack,  # double precision
    25: str.encode,  # text: UTF-8, as text_param writes it
}
"""PostgreSQL's binary form of each type a move's column has, by type OID (``pg_type``); any other goes as text."""


class _Shape:
    """How one prepared statement's parameters go: a packer and a format (1 binary, 0 text) each, from its described types."""

    __slots__ = ("formats", "packers")

    def __init__(self, types: Sequence[int]) -> None:
        self.packers: tuple[Packer, ...] = tuple(_BINARY.get(oid, text_param) for oid in types)
        self.formats: tuple[int, ...] = tuple(1 if oid in _BINARY else 0 for oid in types)

    def values(self, params: Sequence[Any]) -> list[bytes | None]:
        """``params`` as the statement takes them (``None``: NULL).

        Raises:
            TypeError: not as many as the statement has, or one of a type its column cannot take (a text for a
                bigint, an int beyond 64 bits ...), named by its position.
        """
        if len(params) != len(self.packers):
            raise TypeError(f"a move INSERT takes {len(self.packers)} parameters, not {len(params)}")
        try:
            return [pack(value) for pack, value in zip(self.packers, params)]
        except (TypeError, struct.error):  # a NULL (a timed move's clock), or a value of the wrong type
            return [None if value is None else _packed(pack, index, value) for index, (pack, value) in enumerate(zip(self.packers, params), 1)]


def _packed(pack: Packer, index: int, value: Any) -> bytes | None:
    """``pack(value)``, or a TypeError naming the parameter ``$index`` and the value it could not take."""
    try:
        return pack(value)
    except (TypeError, struct.error) as exc:
        raise TypeError(f"a move's parameter ${index} cannot be {type(value).__name__} {value!r}: {exc}") from None


class MovesPath:
    """Runs move INSERTs on the writer's connection as libpq prepared statements, each prepared at its first use there.

    Parameters go in PostgreSQL's binary form where their type is a move column's (``bigint``, ``integer``, ``double
    precision``, ``text``): PostgreSQL then reads no digits (``float8in`` alone was 3 % of the backend's instructions
    a move row, ``benchmarks/pg_row_instructions.py --wire``), and packing them costs the server a third of writing
    them as text. The types are those PostgreSQL inferred when it prepared the statement (described once).
    """

    def __init__(self) -> None:
        self._connection: psycopg.AsyncConnection[Any] | None = None
        self._prepared: set[bytes] = set()  # names prepared on _connection
        self._shapes: dict[bytes, _Shape] = {}  # ... and described there

    async def execute(self, connection: psycopg.AsyncConnection[Any], statements: list[Statement]) -> bool:
        """Run ``statements`` (SQLite's dialect) as one prepared statement in autocommit, if they are one move INSERT,
        a lease fence and one one-move INSERT (:data:`FENCE_SQL` first), or a group's fences and one multi-row move
        INSERT (:data:`FENCE_ALL_SQL` first); whether they were.

        Raises:
            psycopg.Error: as ``connection.execute`` would (a duplicate ply, a lost lease, a lost connection ...).
            TypeError: a parameter of a type a move has not.
        """
        if len(statements) == 1:
            sql, params = statements[0]
            prepared = _PREPARED.get(sql)
        elif len(statements) == 2 and statements[0][0] is FENCE_SQL:
            sql, params = statements[1]
            prepared = _FENCED.get(sql)
            params = (*params, *statements[0][1])
        elif len(statements) == 2 and statements[0][0] is FENCE_ALL_SQL:
            sql, params = statements[1]
            prepared = _FENCED_GROUP.get(sql)
            tables, run = statements[0][1]
            params = (*params, "{" + ",".join(str(int(table)) for table in tables) + "}", run)
        else:
            return False
        if prepared is None:
            return False
        name, text = prepared
        if connection is not self._connection:  # a new writer connection: nothing prepared on it yet
            self._connection, self._prepared, self._shapes = connection, set(), {}
        pgconn = connection.pgconn
        if name not in self._prepared:
            pgconn.send_prepare(name, text)
            _check(await connection.wait(generators.execute(pgconn)))
            self._prepared.add(name)
        shape = self._shapes.get(name)
        if shape is None:
            pgconn.send_describe_prepared(name)
            [described] = await connection.wait(generators.execute(pgconn))
            _check([described])
            shape = self._shapes[name] = _Shape([described.param_type(index) for index in range(described.nparams)])
        pgconn.send_query_prepared(name, shape.values(params), shape.formats)
        _check(await connection.wait(generators.execute(pgconn)))
        return True


def _check(results: list[Any]) -> None:
    for result in results:
        if result.status not in (ExecStatus.COMMAND_OK, ExecStatus.TUPLES_OK):
            raise error_from_result(result)
