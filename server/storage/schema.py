"""What a Parlour SQLite file is: its schema, the migrations that build it, and the checks made on opening it.

The schema has a version (``PRAGMA user_version``) and an application id
(``PRAGMA application_id``). Opening a file runs the :data:`MIGRATIONS` it
has not had yet, each in its own transaction (:func:`prepare`); a file from a
newer Parlour, a non-Parlour SQLite database or a file that is not SQLite at
all is refused with :class:`~server.storage.store.SchemaError` and left
untouched.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from .store import NeedsUpgrade, SchemaError, StoreError

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "Migration",
    "SCHEMA_VERSION",
    "check_not_directory",
    "check_schema",
    "check_writable",
    "connect",
    "describe_sqlite_error",
    "is_disk_full",
    "prepare",
]

log = logging.getLogger(__name__)

APPLICATION_ID = 0x50524C52
"""``PRAGMA application_id`` of a Parlour database (the bytes ``PRLR``)."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema: what turns version ``version - 1`` into ``version``.

    Attributes:
        version: the schema version after this step (1, 2, ...).
        doc: what the step changes, for humans and for error messages.
        statements: the SQL to run, in order, inside one transaction.
    """

    version: int
    doc: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "sessions, tables and moves",
        (
            """CREATE TABLE sessions (
                token   TEXT PRIMARY KEY,
                name    TEXT NOT NULL,
                created REAL NOT NULL
            )""",
            """CREATE TABLE tables (
                id           INTEGER PRIMARY KEY,
                game         TEXT NOT NULL,
                options      TEXT NOT NULL,               -- JSON object
                seed         TEXT,                        -- NULL: no seed
                seed_is_int  INTEGER NOT NULL DEFAULT 0,  -- 1: seed holds the decimal digits of an int
                time_control TEXT,                        -- 'MINUTES+INCREMENT' or NULL
                seat0_name   TEXT,
                seat1_name   TEXT,
                seat0_token  TEXT,
                seat1_token  TEXT,
                status       TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'over')),
                created      REAL NOT NULL,
                started      REAL,
                finished     REAL,
                outcome      TEXT,                        -- JSON like Outcome.to_dict(), or NULL
                clocks       TEXT                         -- JSON clock state, or NULL
            )""",
            "CREATE INDEX tables_by_status_finished ON tables (status, finished)",
            """CREATE TABLE moves (
                table_id INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
                ply      INTEGER NOT NULL,
                seat     INTEGER NOT NULL CHECK (seat IN (0, 1)),
                move     TEXT NOT NULL,
                forced   INTEGER NOT NULL DEFAULT 0,
                at       REAL NOT NULL,
                clock_ms INTEGER,                         -- the mover's remaining time after the move
                PRIMARY KEY (table_id, ply)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        2,
        "whether a player chose a table's seed",
        ("ALTER TABLE tables ADD COLUMN seed_chosen INTEGER NOT NULL DEFAULT 0",),  # 1: chosen, so public
    ),
    Migration(
        3,
        "computer seats and hints",
        (
            "ALTER TABLE tables ADD COLUMN computer TEXT",  # JSON [level or null, level or null], NULL: no computer seat
            "ALTER TABLE tables ADD COLUMN hints INTEGER NOT NULL DEFAULT 0",  # 1: the players may ask for hints
        ),
    ),
    Migration(
        4,
        "claimed names",
        (
            """CREATE TABLE accounts (
                name_key      TEXT PRIMARY KEY,           -- server.names.name_key of the name
                name          TEXT NOT NULL,              -- the name as it was claimed
                secret_hash   TEXT NOT NULL,              -- server.passwords.hash_secret of the client's secret
                password_hash TEXT,                       -- of the player's password; NULL: none set
                created       REAL NOT NULL
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        5,
        "rated tables, players' ratings and each rated game's rating changes",
        (
            "ALTER TABLE tables ADD COLUMN rated INTEGER NOT NULL DEFAULT 0",  # 1: a rated table
            """CREATE TABLE ratings (
                name_key   TEXT NOT NULL,                 -- server.names.name_key of the player
                name       TEXT NOT NULL,                 -- the name as last seen in a rated game
                game       TEXT NOT NULL,
                family     TEXT NOT NULL,                 -- time-control family (server.ratings.FAMILIES)
                rating     REAL NOT NULL,
                deviation  REAL NOT NULL,
                volatility REAL NOT NULL,
                games      INTEGER NOT NULL,
                wins       INTEGER NOT NULL,
                draws      INTEGER NOT NULL,
                losses     INTEGER NOT NULL,
                updated    REAL NOT NULL,                 -- when the last rated game ended
                PRIMARY KEY (name_key, game, family)
            ) WITHOUT ROWID""",
            "CREATE INDEX ratings_by_family_rating ON ratings (game, family, rating, name_key)",  # leaderboards
            "CREATE INDEX ratings_by_game_rating ON ratings (game, rating, name_key)",
            """CREATE TABLE rating_changes (
                table_id          INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
                seat              INTEGER NOT NULL CHECK (seat IN (0, 1)),
                name_key          TEXT NOT NULL,
                name              TEXT NOT NULL,
                game              TEXT NOT NULL,
                family            TEXT NOT NULL,
                score             REAL NOT NULL,          -- 1 won, 0.5 drew, 0 lost
                before            REAL NOT NULL,          -- ratings before and after the game
                after             REAL NOT NULL,
                deviation_before  REAL NOT NULL,
                deviation_after   REAL NOT NULL,
                volatility_before REAL NOT NULL,
                volatility_after  REAL NOT NULL,
                at                REAL NOT NULL,
                PRIMARY KEY (table_id, seat)
            ) WITHOUT ROWID""",
            "CREATE INDEX rating_changes_by_player ON rating_changes (name_key, at)",
        ),
    ),
    Migration(
        6,
        "who mutes whom (claimed names)",
        (
            """CREATE TABLE mutes (
                owner_key TEXT NOT NULL,                  -- the muting player's name key (server.names.name_key)
                muted_key TEXT NOT NULL,                  -- the muted player's name key
                PRIMARY KEY (owner_key, muted_key)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        7,
        "each timed move carries both clocks (no update of the table row per move)",
        (
            "ALTER TABLE moves ADD COLUMN other_ms INTEGER",  # the other seat's remaining time after the move
            "ALTER TABLE moves ADD COLUMN running INTEGER",  # the seat whose time runs after the move; NULL: stopped
        ),
    ),
    Migration(
        8,
        "each player's casual games (finished, no rating changed), counted per game (server.casual)",
        (
            """CREATE TABLE casual_games (
                name_key TEXT NOT NULL,                   -- server.names.name_key of the player
                game     TEXT NOT NULL,
                games    INTEGER NOT NULL,
                wins     INTEGER NOT NULL,
                draws    INTEGER NOT NULL,
                losses   INTEGER NOT NULL,
                PRIMARY KEY (name_key, game)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        9,
        "each table's chat history (server.chat: the last 100 lines per table)",
        (
            """CREATE TABLE chat (
                table_id INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
                seq      INTEGER NOT NULL,                -- 1 for the first line said at the table, then 2, ...
                name     TEXT NOT NULL,                   -- the sender's name as shown
                text     TEXT NOT NULL,
                at       REAL NOT NULL,
                PRIMARY KEY (table_id, seq)
            ) WITHOUT ROWID""",
        ),
    ),
    Migration(
        10,
        "the server's stable identity (welcome.server_id), made once per database",
        (
            """CREATE TABLE server_identity (
                only INTEGER PRIMARY KEY CHECK (only = 1),  -- one row
                server_id TEXT NOT NULL                     -- 128 random bits as 32 hexadecimal digits
            )""",
            "INSERT INTO server_identity (only, server_id) VALUES (1, lower(hex(randomblob(16))))",
        ),
    ),
    Migration(
        11,
        "nothing in SQLite: the leases of tables held by the nodes of a cluster live in PostgreSQL (server.storage.pg_schema)",
        (),
    ),
    Migration(
        12,
        "nothing in SQLite: PostgreSQL's moves lose their foreign key to tables (server.storage.pg_schema), whose check locked a row a move",
        (),
    ),
    Migration(
        13,
        "nothing in SQLite: PostgreSQL's moves lose their CHECK on seat (server.storage.pg_schema), read and planned again a statement",
        (),
    ),
)
"""Every schema step in order; a new version appends one (never edit a released step)."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The schema version this Parlour writes."""


def check_not_directory(path: Path) -> None:
    """Refuse a database path that names a directory.

    Raises:
        StoreError: ``path`` is a directory.
    """
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file; give the path of a file in it")


def check_writable(path: Path) -> None:
    """Refuse an existing file that cannot be opened for writing (SQLite would quietly open it read-only).

    Raises:
        StoreError: it exists and cannot be written (read-only, immutable, on a read-only mount).
    """
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CLOEXEC))
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror}; it must be writable to be used by a server") from None


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (a :class:`StoreError` or an ``sqlite3.Error``) failed because the disk is full.

    True only for SQLite's ``SQLITE_FULL`` (also a database at its ``max_page_count``), whether
    ``exc`` is that error or a :class:`StoreError` caused by it.
    """
    cause = exc.__cause__ if isinstance(exc, StoreError) else exc
    code = getattr(cause, "sqlite_errorcode", None) if isinstance(cause, sqlite3.Error) else None
    return code is not None and code & 0xFF == sqlite3.SQLITE_FULL


def describe_sqlite_error(exc: sqlite3.Error) -> str:
    """SQLite's message, with what to do for the failures an operator can fix."""
    primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF  # extended codes keep the primary one in the low byte
    if primary == sqlite3.SQLITE_CORRUPT:
        return f"the file is damaged ({exc}); restore it from a backup (sqlite3's .recover may save some of it)"
    if primary == sqlite3.SQLITE_FULL:
        return f"the disk is full ({exc}); free some space"
    if primary == sqlite3.SQLITE_READONLY:
        return f"{exc}: the file, or its directory (for the -wal and -shm files beside it), must be writable"
    if primary == sqlite3.SQLITE_CANTOPEN:
        return f"{exc}: check that the file and its directory exist and are writable"
    return str(exc)


def connect(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    try:
        # isolation_level=None: no implicit transactions; BEGIN and COMMIT are ours.
        return sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc


def prepare(connection: sqlite3.Connection, path: Path, migrations: Iterable[Migration]) -> None:
    """Check that ``path`` is a usable Parlour database, set WAL, run missing migrations."""
    steps = sorted(migrations, key=lambda step: step.version)
    check_schema(connection, path, steps, read_only=False)
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreError(f"cannot use write-ahead logging on {path} (journal mode stays {mode!r})")
    before = connection.execute("PRAGMA user_version").fetchone()[0]
    applied = [step for step in steps if _migrate(connection, path, step)]
    if applied:
        log.info("%s", _schema_news(path, before, applied))


def _schema_news(path: Path, before: int, applied: Sequence[Migration]) -> str:
    """The one line saying what opening ``path`` did to its schema: created at version N, or upgraded from ``before`` to N.

    ``applied`` are the steps just run, in order (at least one).
    """
    newest = applied[-1].version
    if before == 0:
        return f"{path}: new database, schema version {newest}"
    return f"{path}: schema upgraded from version {before} to {newest} ({'; '.join(step.doc for step in applied)})"


def check_schema(connection: sqlite3.Connection, path: Path, migrations: Iterable[Migration], *, read_only: bool) -> None:
    """Refuse what is not a Parlour database this version can use; with ``read_only``, also one that needs upgrading.

    Raises:
        SchemaError: not SQLite, another program's database, a newer schema (or, ``read_only``, an older one: :class:`NeedsUpgrade`).
        sqlite3.Error: the file cannot be read (damaged, say).
    """
    steps = sorted(migrations, key=lambda step: step.version)
    newest = steps[-1].version if steps else 0
    try:
        version, app_id, tables = _inspect(connection)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode == sqlite3.SQLITE_CORRUPT:
            raise
        raise SchemaError(f"{path} is not a Parlour database: it is not an SQLite file ({exc})") from exc
    if app_id != APPLICATION_ID and (app_id != 0 or version != 0 or tables):
        described = f"application id {app_id:#x}, " if app_id else ""
        raise SchemaError(
            f"{path} is an SQLite database of some other program ({described}schema version {version}, "
            f"tables: {', '.join(tables) or 'none'}), not a Parlour one; choose another file"
        )
    if version > newest:
        raise SchemaError(
            f"database schema version {version} is newer than this Parlour supports ({newest}); upgrade Parlour"
        )
    if read_only and version < newest:
        raise NeedsUpgrade(f"{path} has schema version {version} and must be upgraded to version {newest}")


def _inspect(connection: sqlite3.Connection) -> tuple[int, int, list[str]]:
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    app_id = connection.execute("PRAGMA application_id").fetchone()[0]
    tables = [
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return version, app_id, tables


def _migrate(connection: sqlite3.Connection, path: Path, step: Migration) -> bool:
    """Apply ``step`` if the file is one version below it; return whether it did. Atomic; safe against a concurrent opener."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version >= step.version:
            connection.execute("COMMIT")
            return False
        if version != step.version - 1:
            raise SchemaError(f"{path} has schema version {version}, and no step leads from it to {step.version}")
        for statement in step.statements:
            connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {step.version}")
        connection.execute("COMMIT")
    except BaseException as exc:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        if isinstance(exc, SchemaError) or not isinstance(exc, sqlite3.Error):
            raise
        raise SchemaError(
            f"upgrading {path} to schema version {step.version} ({step.doc}) failed: {exc}; "
            "the file is unchanged"
        ) from exc
    return True
