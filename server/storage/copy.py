"""``parlour db copy FROM TO``: copy an SQLite database into an empty PostgreSQL one, to move a server onto PostgreSQL.

Every row of every table comes across in one PostgreSQL transaction (all or nothing),
the server's identity (``welcome.server_id``) included, so clients see the same server.
The source is opened read-only (upgraded first if its schema is older, as a server
would); the target gets its schema if it has none, and must hold no Parlour data yet.
Stop the server on the SQLite file first: what it writes during the copy is not copied.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .schema import SCHEMA_VERSION
from .sqlite import SQLiteStore
from .store import StoreError

from .common import is_postgres_url
from .opening import open_for_reading

__all__ = ["COPIED_TABLES", "CopyError", "add_parser", "copy_database", "run"]

COPIED_TABLES: dict[str, tuple[str, ...]] = {
    "sessions": ("token", "name", "created"),
    "tables": (
        "id", "game", "options", "seed", "seed_is_int", "time_control", "seat0_name", "seat1_name", "seat0_token",
        "seat1_token", "status", "created", "started", "finished", "outcome", "clocks", "seed_chosen", "computer", "hints", "rated",
    ),
    "moves": ("table_id", "ply", "seat", "move", "forced", "at", "clock_ms", "other_ms", "running"),
    "accounts": ("name_key", "name", "secret_hash", "password_hash", "created"),
    "ratings": ("name_key", "name", "game", "family", "rating", "deviation", "volatility", "games", "wins", "draws", "losses", "updated"),
    "rating_changes": (
        "table_id", "seat", "name_key", "name", "game", "family", "score", "before", "after",
        "deviation_before", "deviation_after", "volatility_before", "volatility_after", "at",
    ),
    "mutes": ("owner_key", "muted_key"),
    "casual_games": ("name_key", "game", "games", "wins", "draws", "losses"),
    "chat": ("table_id", "seq", "name", "text", "at"),
}  # fmt: skip
"""Every table copied, parents before children (foreign keys), with its columns; ``server_identity`` is copied apart."""


class CopyError(StoreError):
    """The copy cannot be made: a source that is not SQLite, a target that is not empty PostgreSQL, a schema this version does not know."""


@dataclass(frozen=True, slots=True)
class Copied:
    """What :func:`copy_database` copied: rows per table, in :data:`COPIED_TABLES` order."""

    rows: dict[str, int]


def copy_database(source: str, target: str) -> Copied:
    """Copy every row of the SQLite database ``source`` into the PostgreSQL database ``target`` (a libpq URL).

    Raises:
        CopyError: ``source`` is not a file or ``target`` not a PostgreSQL URL; the target holds Parlour data already.
        StoreError: either cannot be opened (not a Parlour database, a newer schema); the copy failed (nothing is kept).
    """
    if is_postgres_url(source) or not Path(source).is_file():
        raise CopyError(f"the source must be an SQLite database file, not {source!r}")
    if not is_postgres_url(target):
        raise CopyError(f"the target must be a PostgreSQL URL (postgresql://USER@HOST:PORT/DB), not {target!r}")
    reader = open_for_reading(source)
    assert isinstance(reader, SQLiteStore)
    try:
        tables = reader.read(_everything)
    finally:
        reader.close_sync()
    from .postgres import PostgresStore

    PostgresStore.open(target).close_sync()  # the schema, created or brought up to date
    return Copied(_copy_rows(target, tables))


def _copy_rows(target: str, tables: dict[str, list[tuple[Any, ...]]]) -> dict[str, int]:
    """Put ``tables``' rows into ``target`` in one transaction (``COPY``); refuse a target holding Parlour data.

    Raises:
        CopyError: the target is not at :data:`SCHEMA_VERSION`, or holds rows already.
        StoreError: PostgreSQL refused the rows (nothing is kept).
    """
    import psycopg

    from .pg_schema import SCHEMA_TABLE
    from .postgres import connect, redact

    with connect(target) as connection:
        version = connection.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchone()
        if version is None or version[0] != SCHEMA_VERSION:
            raise CopyError(f"{redact(target)} has schema version {version and version[0]}, the source {SCHEMA_VERSION}: use one Parlour for both")
        full = [name for name in COPIED_TABLES if connection.execute(f"SELECT EXISTS (SELECT 1 FROM {name})").fetchone()[0]]  # type: ignore[index]
        if full:
            raise CopyError(f"{redact(target)} holds Parlour data already (in {', '.join(full)}); copy into an empty database")
        try:
            with connection.transaction():
                for name, columns in COPIED_TABLES.items():
                    with connection.cursor().copy(f"COPY {name} ({', '.join(columns)}) FROM STDIN") as copy:
                        for row in tables[name]:
                            copy.write_row(row)
                for (server_id,) in tables["server_identity"]:
                    connection.execute("UPDATE server_identity SET server_id = %s", (server_id,))
        except psycopg.Error as exc:
            raise StoreError(f"the copy into {redact(target)} failed, nothing was kept: {str(exc).strip()}") from exc
    return {name: len(tables[name]) for name in COPIED_TABLES}


def _everything(db: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every copied table (and ``server_identity``), from one snapshot."""
    rows = {name: db.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall() for name, columns in COPIED_TABLES.items()}
    rows["server_identity"] = db.execute("SELECT server_id FROM server_identity").fetchall()
    return rows


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``db copy FROM TO`` to the ``parlour`` command."""
    db = subparsers.add_parser("db", help="copy a server's database into PostgreSQL", description="Work on a server's database.")
    commands = db.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    copy = commands.add_parser(
        "copy",
        help="copy an SQLite database into an empty PostgreSQL database",
        description="Copy every table, move, session, claimed name, rating, mute and chat line of an SQLite database "
        "into an empty PostgreSQL database, in one transaction. Stop the server first.",
    )
    copy.add_argument("source", metavar="FROM", help="the SQLite database file")
    copy.add_argument("target", metavar="TO", help="the PostgreSQL database, postgresql://USER@HOST:PORT/DB")
    copy.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Copy ``args.source`` into ``args.target``; print what was copied; return 0, or 1 with one line saying why not."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        copied = copy_database(args.source, args.target)
    except StoreError as exc:
        print(f"Cannot copy the database: {exc}", file=err)
        return 1
    counts = ", ".join(f"{count} {name}" for name, count in copied.rows.items())
    print(f"Copied {args.source} into the PostgreSQL database: {counts}.", file=out)
    return 0
