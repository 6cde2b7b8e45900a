"""SQLite's SQL, as the server's modules write it, in PostgreSQL's dialect.

Every statement the server writes (``(sql, params)`` pairs, :data:`server.storage.store.Statement`)
and every read query uses SQLite's SQL with ``?`` parameters. Most of it is standard SQL
that PostgreSQL runs as it is; :func:`to_postgres` rewrites the rest: the parameters
(``%s``), ``INSERT OR IGNORE``, SQLite's two-argument scalar ``max`` and its JSON test of
a set-aside table. Where one text serves both (a column named with its table), the
server's modules write that instead. Booleans are stored as 0 and 1 in both engines (SQLite has no other),
so :func:`pg_params` turns Python's ``bool`` parameters into integers.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

from .statements import IS_SET_ASIDE

__all__ = ["to_postgres", "pg_params"]

_OR_IGNORE = re.compile(r"^\s*INSERT OR IGNORE INTO (.*)$", re.IGNORECASE | re.DOTALL)

_REWRITES = (
    (IS_SET_ASIDE, "parlour_set_aside(outcome)"),  # a function of schema step 10 (server.storage.pg_schema)
    ("max(? - updated, 0)", "greatest(? - updated, 0)"),  # server.ratings: SQLite's scalar max
)  # fmt: skip


@lru_cache(maxsize=4096)
def to_postgres(sql: str) -> str:
    """``sql`` (SQLite's dialect, ``?`` parameters) as PostgreSQL runs it through psycopg (``%s`` parameters).

    Cached: the server's statements are a few hundred distinct texts.
    """
    for sqlite_text, postgres_text in _REWRITES:
        sql = sql.replace(sqlite_text, postgres_text)
    ignore = _OR_IGNORE.match(sql)
    if ignore:
        sql = f"INSERT INTO {ignore.group(1)} ON CONFLICT DO NOTHING"
    return sql.replace("%", "%%").replace("?", "%s")


def pg_params(params: Sequence[Any]) -> tuple[Any, ...]:
    """``params`` with every ``bool`` as the integer SQLite would store (0 or 1)."""
    return tuple(int(value) if value is True or value is False else value for value in params)
