"""Persistence in SQLite: sessions, tables, every move, and the archive.

One :class:`Store` owns one database file in WAL mode. Writes go through a
single writer thread that commits in groups: every write handed over while
the previous commit was on its way to disk goes into the next transaction,
and each caller's ``await`` returns only after that transaction's ``COMMIT``
has returned. While recent commits carried several writes each (many tables
moving at once), the writes of one turn of the event loop are handed over
together, and the writer waits up to :data:`COMMIT_DELAY_S` for as many
writes as those commits carried before it commits, so that one fsync serves
more moves; a lone writer (one game) never waits. With ``synchronous=FULL``
(the default) a returned ``COMMIT`` means the WAL has been fsynced, so a move
acknowledged after ``await store.append_move(...)`` survives a crash or power
loss; ``NORMAL`` survives a crash of the process (SIGKILL) but may lose the
last commits on power loss.

Reads (startup, archive queries) are synchronous, on a second connection; in
WAL mode they never block the writer and see only committed data.

The schema has a version (``PRAGMA user_version``) and an application id
(``PRAGMA application_id``). Opening a file runs the :data:`MIGRATIONS` it
has not had yet, each in its own transaction; a file from a newer Parlour, a
non-Parlour SQLite database or a file that is not SQLite at all is refused
with :class:`SchemaError` and left untouched.

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
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Protocol, Self, Sequence, TypeVar

import games
from games.record import GameRecord, RecordedMove

__all__ = [
    "APPLICATION_ID",
    "ArchiveEntry",
    "DamagedTable",
    "MIGRATIONS",
    "Migration",
    "MoveRow",
    "NeedsUpgrade",
    "SCHEMA_VERSION",
    "SET_ASIDE_REASON",
    "STATUSES",
    "SYNCHRONOUS_MODES",
    "SchemaError",
    "Statement",
    "Store",
    "SQLiteStore",
    "StoreOps",
    "StoreError",
    "StoredTable",
    "TableRow",
    "append_move_sql",
    "append_ply_sql",
    "create_table_sql",
    "check_not_directory",
    "default_db_path",
    "delete_session_sql",
    "describe_sqlite_error",
    "is_disk_full",
    "delete_table_sql",
    "iso_utc",
    "save_session_sql",
    "set_aside_sql",
    "settled_at_once",
    "table_to_record",
    "takeback_clocks_sql",
    "truncate_moves_sql",
    "update_table_sql",
]

log = logging.getLogger(__name__)

Statement = tuple[str, tuple[Any, ...]]
"""One SQL statement with its ``?`` parameters, as :meth:`Store.write` takes it."""

APPLICATION_ID = 0x50524C52
"""``PRAGMA application_id`` of a Parlour database (the bytes ``PRLR``)."""

SET_ASIDE_REASON = "set aside: the server could not restore this table"
"""The ``reason`` in the outcome of a table set aside (:meth:`Store.set_aside`)."""

STATUSES = ("waiting", "playing", "over")
"""The values of a table's ``status``."""

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")
"""The values :meth:`SQLiteStore.open` accepts for ``synchronous`` (SQLite's ``PRAGMA synchronous``)."""


class StoreError(Exception):
    """The database cannot be opened, or a write failed (the cause is chained)."""


class SchemaError(StoreError):
    """The file is not a Parlour database this version can use: newer, foreign or not SQLite."""


class NeedsUpgrade(SchemaError):
    """A file opened read-only has an older schema: it must be opened for writing to be upgraded first."""


def default_db_path() -> Path:
    """Return the default database file: ``parlour.sqlite3`` in the user's data directory.

    The directory is not created here; :meth:`SQLiteStore.open` creates it.
    """
    import platformdirs

    return Path(platformdirs.user_data_dir("parlour")) / "parlour.sqlite3"


def iso_utc(unix_time: float) -> str:
    """Return a Unix time as ISO-8601 UTC text with milliseconds, e.g. ``2024-05-01T12:00:05.123Z``."""
    moment = datetime.fromtimestamp(unix_time, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- schema and migrations ------------------------------------------------------------------


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
)
"""Every schema step in order; a new version appends one (never edit a released step)."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The schema version this Parlour writes."""


# --- rows -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MoveRow:
    """One stored ply.

    Attributes:
        ply: the ply number from 1 (the position after it has ``state.ply == ply``).
        seat: the seat that moved (0 or 1).
        move: the canonical notation (``state.last_move``).
        at: when the server accepted it, Unix time in seconds.
        forced: whether the server played it as the only legal move (a pass).
        clock_ms: the mover's remaining time after the move, in milliseconds,
            or ``None`` without a time control.
        other_ms: the other seat's remaining time after the move, in
            milliseconds; ``None`` when the row carries no clocks.
        running: the seat whose time runs after the move (``None``: stopped,
            or no clocks); with ``clock_ms`` and ``other_ms``, the table's
            clocks as the server restores them (:attr:`StoredTable.clocks`).
    """

    ply: int
    seat: int
    move: str
    at: float
    forced: bool = False
    clock_ms: int | None = None
    other_ms: int | None = None
    running: int | None = None

    def __post_init__(self) -> None:
        if type(self.ply) is not int or self.ply < 1:
            raise ValueError(f"ply must be a positive integer, not {self.ply!r}")
        if self.seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, not {self.seat!r}")


@dataclass(frozen=True, slots=True)
class TableRow:
    """One stored table, without its moves.

    ``options``, ``outcome`` and ``clocks`` are kept as plain JSON values
    (tuples become lists), so a row equals the row loaded back.

    Attributes:
        id: the lobby id (positive).
        game: the game's short name.
        options: the resolved options.
        seed: the setup seed; an ``int`` comes back as an ``int``, a ``str`` as a ``str``.
        created: when the table was created, Unix time in seconds.
        time_control: ``"MINUTES+INCREMENT"`` or ``None`` (no clock).
        seat_names: the player names in seat 0 and 1 (``None``: free).
        seat_tokens: the session tokens of the seated players (``None``: free).
        status: ``"waiting"``, ``"playing"`` or ``"over"``.
        started: when play began (both seats filled), or ``None``.
        finished: when the game ended, or ``None``.
        outcome: how it ended, shaped like :meth:`games.Outcome.to_dict`, or ``None``.
        clocks: the clock state as the server chooses to save it, or ``None``.
        seed_chosen: whether a player chose the seed (then it is public) rather
            than the server drawing it.
        computer: per seat, the level of the computer player sitting there
            (``None``: a person or free), or ``None`` when no seat is a computer's.
        hints: whether the table was created with hints allowed.
        rated: whether the game is rated (:mod:`server.ratings`).
    """

    id: int
    game: str
    options: dict[str, Any]
    seed: str | int | None
    created: float
    time_control: str | None = None
    seat_names: tuple[str | None, str | None] = (None, None)
    seat_tokens: tuple[str | None, str | None] = (None, None)
    status: str = "waiting"
    started: float | None = None
    finished: float | None = None
    outcome: dict[str, Any] | None = None
    clocks: dict[str, Any] | None = None
    seed_chosen: bool = False
    computer: tuple[int | None, int | None] | None = None
    hints: bool = False
    rated: bool = False

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {self.status!r}")
        if self.seed is not None and type(self.seed) not in (int, str):
            raise ValueError(f"the seed must be a text, an integer or None, not {self.seed!r}")
        object.__setattr__(self, "seat_names", _pair("seat_names", self.seat_names))
        object.__setattr__(self, "seat_tokens", _pair("seat_tokens", self.seat_tokens))
        object.__setattr__(self, "options", _plain(self.options))
        object.__setattr__(self, "outcome", _plain(self.outcome))
        object.__setattr__(self, "clocks", _plain(self.clocks))
        if self.computer is not None:
            object.__setattr__(self, "computer", _levels(self.computer))


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as loaded back: its row and its moves in ply order.

    Attributes:
        row: the table's fields.
        moves: every stored ply, ``moves[i].ply == i + 1`` unless plies were lost.
    """

    row: TableRow
    moves: tuple[MoveRow, ...] = ()

    @property
    def id(self) -> int:
        """The table's id."""
        return self.row.id

    @property
    def clocks(self) -> dict[str, Any] | None:
        """The latest clocks: ``{"remaining_ms": [ms, ms], "running": seat or None}``, or ``None``.

        Those of the last move when it carries them (every timed move since
        schema 7), else the table row's (a takeback to the start, a flag, a
        file from before schema 7).
        """
        last = self.moves[-1] if self.moves else None
        if last is None or last.other_ms is None or last.clock_ms is None:
            return self.row.clocks
        remaining = [last.other_ms, last.other_ms]
        remaining[last.seat] = last.clock_ms
        return {"remaining_ms": remaining, "running": last.running}


@dataclass(frozen=True, slots=True)
class DamagedTable:
    """A stored table that cannot be restored, and why.

    Attributes:
        id: the table's id.
        status: the status it was stored with (``"waiting"`` or ``"playing"``).
        reason: what is wrong with it, in words (for the log and its outcome).
    """

    id: int
    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """One finished game as the archive lists it.

    Attributes:
        id: the table id (``parlour games --export ID``).
        game: the game's short name.
        options: the resolved options.
        players: the names in seat 0 and 1.
        result: how it ended (like :meth:`games.Outcome.to_dict`), or ``None``.
        plies: how many plies were played (forced passes included).
        created: when the table was created, Unix time.
        finished: when the game ended, Unix time, or ``None``.
    """

    id: int
    game: str
    options: dict[str, Any]
    players: tuple[str | None, str | None]
    result: dict[str, Any] | None
    plies: int
    created: float
    finished: float | None


def _pair(name: str, value: Sequence[str | None]) -> tuple[str | None, str | None]:
    pair = tuple(value)
    if len(pair) != 2 or any(item is not None and not isinstance(item, str) for item in pair):
        raise ValueError(f"{name} must be two texts or None, not {value!r}")
    return pair


def _levels(value: Sequence[int | None]) -> tuple[int | None, int | None]:
    pair = tuple(value)
    if len(pair) != 2 or any(item is not None and type(item) is not int for item in pair):
        raise ValueError(f"computer must be two levels or None, not {value!r}")
    return pair  # type: ignore[return-value]


def _plain(value: Any) -> Any:
    return None if value is None else json.loads(_dump(value))


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _dump_or_none(value: Any) -> str | None:
    return None if value is None else _dump(value)


# --- statements -----------------------------------------------------------------------------
# The typed helpers of Store are these statements passed to Store.write(). Pass several
# to one write() to make them atomic, e.g. the last move and the table's new status.

_TABLE_COLUMNS = (
    "id, game, options, seed, seed_is_int, time_control, seat0_name, seat1_name, seat0_token, "
    "seat1_token, status, created, started, finished, outcome, clocks, seed_chosen, computer, hints, rated"
)

_STATUS_COLUMN = [name.strip() for name in _TABLE_COLUMNS.split(",")].index("status")
"""Where ``status`` is in a row selected with :data:`_TABLE_COLUMNS`."""

_IS_SET_ASIDE = "(CASE WHEN json_valid(outcome) THEN json_extract(outcome, '$.set_aside') IS NOT NULL ELSE 0 END)"
"""SQL true for a table set aside (its outcome JSON, written by :func:`set_aside_sql`, has ``set_aside``)."""

_UPDATABLE = ("status", "seat_names", "seat_tokens", "outcome", "started", "finished", "clocks", "time_control", "seed")


def create_table_sql(row: TableRow) -> Statement:
    """The statement that inserts ``row`` (fails if the id exists)."""
    return (
        f"INSERT INTO tables ({_TABLE_COLUMNS}) VALUES ({', '.join('?' * 20)})",
        (
            row.id, row.game, _dump(row.options), *_seed_columns(row.seed), row.time_control,
            *row.seat_names, *row.seat_tokens, row.status, row.created, row.started, row.finished,
            _dump_or_none(row.outcome), _dump_or_none(row.clocks), row.seed_chosen,
            _dump_or_none(row.computer), row.hints, row.rated,
        ),
    )  # fmt: skip


_APPEND_MOVE = "INSERT INTO moves (table_id, ply, seat, move, forced, at) VALUES (?, ?, ?, ?, ?, ?)"
_APPEND_TIMED_MOVE = (
    "INSERT INTO moves (table_id, ply, seat, move, forced, at, clock_ms, other_ms, running) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


_MERGED_ROWS = 16
"""At most this many move rows share one multi-row ``INSERT`` in a group commit
(each row count is one more statement in sqlite3's statement cache)."""


def _multi_row(sql: str) -> tuple[str, ...]:
    """``sql`` (an INSERT of one row), then the same INSERT of 2, 3, ... :data:`_MERGED_ROWS` rows."""
    values = sql[sql.rindex("(") :]
    return tuple(sql + f", {values}" * (rows - 1) for rows in range(1, _MERGED_ROWS + 1))


_APPEND_MOVES = {_APPEND_MOVE: _multi_row(_APPEND_MOVE), _APPEND_TIMED_MOVE: _multi_row(_APPEND_TIMED_MOVE)}
"""``_APPEND_MOVES[sql][n - 1]`` inserts ``n`` moves (untimed or timed) in one statement."""


def append_move_sql(table_id: int, move: MoveRow) -> Statement:
    """The statement that stores ``move`` (fails if that ply is stored already)."""
    return append_ply_sql(table_id, move.ply, move.seat, move.move, move.at, move.forced, move.clock_ms, move.other_ms, move.running)


def append_ply_sql(
    table_id: int,
    ply: int,
    seat: int,
    move: str,
    at: float,
    forced: bool = False,
    clock_ms: int | None = None,
    other_ms: int | None = None,
    running: int | None = None,
) -> Statement:
    """:func:`append_move_sql` from the fields of a :class:`MoveRow`, unchecked: for the server's own plies.

    A frozen MoveRow costs about a microsecond to build, as much as the rest of the statement.
    """
    # Only exact ints, floats and texts where it can: sqlite3 binds a bool or None through its
    # adapter lookup (about 1 us each); an untimed move leaves the clock columns to their NULL default.
    if clock_ms is None and other_ms is None:
        return _APPEND_MOVE, (table_id, ply, seat, move, 1 if forced else 0, at)
    return _APPEND_TIMED_MOVE, (table_id, ply, seat, move, 1 if forced else 0, at, clock_ms, other_ms, running)


def takeback_clocks_sql(table_id: int, ply: int, clocks: dict[str, Any]) -> Statement:
    """The statement that keeps the clocks after a takeback to ``ply`` (after :func:`truncate_moves_sql`).

    They go into the move row of ``ply``, the last one left, where
    :attr:`StoredTable.clocks` finds them; at ply 0 into the table row.

    Args:
        clocks: ``{"remaining_ms": [ms, ms], "running": seat or None, ...}`` (:meth:`server.clock.Clock.snapshot`).
    """
    if ply == 0:
        return update_table_sql(table_id, clocks=clocks)
    first, second = clocks["remaining_ms"]
    return (
        "UPDATE moves SET clock_ms = CASE seat WHEN 0 THEN ? ELSE ? END, other_ms = CASE seat WHEN 0 THEN ? ELSE ? END, "
        "running = ? WHERE table_id = ? AND ply = ?",
        (first, second, second, first, clocks["running"], table_id, ply),
    )


def update_table_sql(table_id: int, **fields: Any) -> Statement:
    """The statement that changes some of a table's fields.

    Args:
        table_id: the table.
        **fields: any of ``status``, ``seat_names``, ``seat_tokens`` (pairs),
            ``outcome``, ``clocks`` (JSON maps or ``None``), ``started``,
            ``finished`` (Unix times or ``None``), ``time_control``, ``seed`` (a
            text, an integer or ``None``; it keeps its type like
            :attr:`TableRow.seed`).

    Raises:
        TypeError: for an unknown field or no field at all.
        ValueError: for a bad status, a seat pair that is not a pair, or a
            seed that is neither text, integer nor ``None``.
    """
    unknown = sorted(set(fields) - set(_UPDATABLE))
    if unknown:
        raise TypeError(f"update_table() got unknown fields {', '.join(unknown)} (known: {', '.join(_UPDATABLE)})")
    if not fields:
        raise TypeError("update_table() needs at least one field")
    columns: list[str] = []
    values: list[Any] = []
    for name, value in fields.items():
        if name == "status" and value not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {value!r}")
        if name in ("seat_names", "seat_tokens"):
            prefix = name.split("_")[1][:-1]  # "name" / "token"
            columns += [f"seat0_{prefix}", f"seat1_{prefix}"]
            values += _pair(name, value)
        elif name in ("outcome", "clocks"):
            columns.append(name)
            values.append(_dump_or_none(value))
        elif name == "seed":
            columns += ["seed", "seed_is_int"]
            values += _seed_columns(value)
        else:
            columns.append(name)
            values.append(value)
    assignments = ", ".join(f"{column} = ?" for column in columns)
    return f"UPDATE tables SET {assignments} WHERE id = ?", (*values, table_id)


def _seed_columns(seed: Any) -> tuple[str | None, bool]:
    """The ``seed`` and ``seed_is_int`` column values of a seed."""
    if seed is not None and type(seed) not in (int, str):
        raise ValueError(f"the seed must be a text, an integer or None, not {seed!r}")
    return (None if seed is None else str(seed)), type(seed) is int


def truncate_moves_sql(table_id: int, after_ply: int) -> Statement:
    """The statement that deletes every move of the table after ``after_ply`` (a takeback)."""
    return "DELETE FROM moves WHERE table_id = ? AND ply > ?", (table_id, after_ply)


def set_aside_sql(table: DamagedTable, at: float | None = None) -> Statement:
    """The statement that sets a table aside (see :meth:`Store.set_aside`); ``at`` is its ``finished`` time."""
    outcome = {"winner": None, "reason": SET_ASIDE_REASON, "set_aside": {"reason": table.reason, "status": table.status}}
    return (
        "UPDATE tables SET status = 'over', outcome = ?, finished = ? WHERE id = ?",
        (_dump(outcome), time.time() if at is None else at, table.id),
    )


def delete_table_sql(table_id: int) -> Statement:
    """The statement that deletes a table and (by cascade) its moves."""
    return "DELETE FROM tables WHERE id = ?", (table_id,)


def save_session_sql(token: str, name: str, created: float | None = None) -> Statement:
    """The statement that stores a session, or renames it if the token exists.

    The server writes a session's row once, when the session is created (its
    token never changes), and deletes it when the session is forgotten.
    """
    return (
        "INSERT INTO sessions (token, name, created) VALUES (?, ?, ?) "
        "ON CONFLICT (token) DO UPDATE SET name = excluded.name",
        (token, name, time.time() if created is None else created),
    )


def delete_session_sql(token: str) -> Statement:
    """The statement that forgets a session."""
    return "DELETE FROM sessions WHERE token = ?", (token,)


# --- the store --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Job:
    statements: tuple[Statement, ...]
    future: asyncio.Future[None]
    loop: asyncio.AbstractEventLoop


_STOP = object()

COMMIT_DELAY_S = 0.0005
"""Longest time (seconds) the writer waits for more writes before a commit, and only while
recent commits carried several writes each; like PostgreSQL's ``commit_delay``. Each fsync
costs far more CPU than the writes it carries, so gathering the moves of several tables
into one commit lowers the cost of every move, for at most this much more latency."""

_GROUP_WEIGHT = 0.25
"""How much the latest commit counts in the running mean of writes per commit (the rest: the mean so far)."""

_WAIT_FROM_MEAN = 1.5
"""The writer waits for company only while the running mean of writes per commit is at least this:
at least every other commit carried more than one write. One game's commits carry one write each."""

T = TypeVar("T")


class Store(Protocol):
    """Where the server keeps what must outlive it: sessions, tables, moves, the archive.

    Every write the server acknowledges to a client was committed by
    :meth:`write` first. Two implementations: :class:`SQLiteStore` (a file) and
    :class:`server.storage.postgres.PostgresStore` (a PostgreSQL database); both
    take the statements in SQLite's dialect (:mod:`server.storage.dialect`).
    """

    async def start(self) -> None:
        """Get ready for writes."""

    async def close(self) -> None:
        """Finish the writes in flight, then release the storage."""

    def write(self, *statements: Statement) -> Awaitable[None]:
        """Commit ``statements`` atomically; awaiting what this returns returns once they are durable.

        Raises:
            StoreError: (when awaited) nothing of the write was kept.
        """

    def read(self, query: Callable[[Any], T]) -> T:
        """Run a read-only ``query`` on one consistent snapshot of the database.

        ``query`` gets an object with ``execute(sql, params)`` taking SQLite's SQL: the
        ``sqlite3.Connection``, or PostgreSQL's stand-in for it.
        """

    def sessions(self) -> dict[str, str]:
        """Every stored session: token -> name."""

    def accounts(self) -> list[tuple[str, str, str, str | None]]:
        """Every claimed name: (name key, name, secret hash, password hash or ``None``)."""

    def server_id(self) -> str:
        """The server's stable identity, made once when the database was created (or upgraded to have one)."""

    def unfinished_tables(self, damaged: list[DamagedTable] | None = None) -> list[StoredTable]:
        """The tables whose game is not over, with their moves; rows that cannot be read go to ``damaged``."""

    async def set_aside(self, table: DamagedTable, at: float | None = None) -> None:
        """Mark a table that cannot be restored, keeping its rows."""

    def load(self, table_id: int) -> StoredTable | None:
        """One table with its moves, or ``None``."""

    def archive(self, limit: int = 50, offset: int = 0) -> list[ArchiveEntry]:
        """Finished games, newest first."""

    def next_table_id(self) -> int:
        """The id the next new table gets."""

    def to_record(self, table: StoredTable) -> GameRecord:
        """A stored table as a game record."""


class StoreOps:
    """What both engines share over their own ``write`` and ``_read``: the typed writes and every read of the store's tables.

    A subclass provides ``write(*statements) -> Awaitable[None]`` (:meth:`Store.write`) and
    ``_read(query) -> T``, which runs ``query`` on one consistent snapshot through an object
    with ``execute(sql, params) -> cursor`` taking SQLite's SQL (``?`` parameters).
    """

    def write(self, *statements: Statement) -> Awaitable[None]:
        raise NotImplementedError

    def _read(self, query: Callable[[Any], T]) -> T:
        raise NotImplementedError

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def create_table(self, row: TableRow) -> None:
        """Store a new table (see :func:`create_table_sql`)."""
        await self.write(create_table_sql(row))

    async def append_move(self, table_id: int, move: MoveRow) -> None:
        """Store one ply (see :func:`append_move_sql`)."""
        await self.write(append_move_sql(table_id, move))

    async def update_table(self, table_id: int, **fields: Any) -> None:
        """Change some of a table's fields (see :func:`update_table_sql` for the names).

        Raises:
            TypeError, ValueError: at once, before anything is queued, for bad fields.
        """
        await self.write(update_table_sql(table_id, **fields))

    async def truncate_moves(self, table_id: int, after_ply: int) -> None:
        """Delete the table's moves after ``after_ply`` (a takeback)."""
        await self.write(truncate_moves_sql(table_id, after_ply))

    async def delete_table(self, table_id: int) -> None:
        """Delete a table and its moves (a table closed before its game began)."""
        await self.write(delete_table_sql(table_id))

    async def save_session(self, token: str, name: str) -> None:
        """Store a session token and its player name (renaming it if the token exists)."""
        await self.write(save_session_sql(token, name))

    async def delete_session(self, token: str) -> None:
        """Forget a session token."""
        await self.write(delete_session_sql(token))


    def sessions(self) -> dict[str, str]:
        """Return every stored session: player name by token."""
        return self._read(lambda db: dict(db.execute("SELECT token, name FROM sessions ORDER BY created")))

    def accounts(self) -> list[tuple[str, str, str, str | None]]:
        """Return every claimed name: (name key, name, secret hash, password hash or ``None``) rows."""
        return self._read(lambda db: db.execute("SELECT name_key, name, secret_hash, password_hash FROM accounts").fetchall())

    def server_id(self) -> str:
        """Return the server's stable identity (32 hexadecimal digits), made once per database file by its schema step 8."""
        return str(self._read(lambda db: db.execute("SELECT server_id FROM server_identity").fetchone()[0]))

    def unfinished_tables(self, damaged: list[DamagedTable] | None = None) -> list[StoredTable]:
        """Return every table whose game is not over, by id, each with its moves in ply order.

        Args:
            damaged: where to put the tables whose stored values cannot be
                read back (bad JSON, say); they are left out of the result.
                Without it, such a table raises.

        Raises:
            StoreError: SQLite failed; or a table's values cannot be read back and ``damaged`` is ``None``.
        """

        def query(db: sqlite3.Connection) -> list[StoredTable]:
            rows = db.execute(f"SELECT {_TABLE_COLUMNS} FROM tables WHERE status != 'over' ORDER BY id").fetchall()
            moves: dict[int, list[Sequence[Any]]] = {row[0]: [] for row in rows}
            for table_id, *move in db.execute(
                "SELECT m.table_id, m.ply, m.seat, m.move, m.forced, m.at, m.clock_ms, m.other_ms, m.running FROM moves AS m "
                "JOIN tables AS t ON t.id = m.table_id WHERE t.status != 'over' ORDER BY m.table_id, m.ply"
            ):
                moves[table_id].append(move)
            return [table for row in rows if (table := _decode_table(row, moves[row[0]], damaged)) is not None]

        return self._read(query)

    async def set_aside(self, table: DamagedTable, at: float | None = None) -> None:
        """Mark a table that cannot be restored: never restored again, in no lobby or archive; its rows are kept.

        Its status becomes ``"over"`` and its outcome ``{"winner": None, "reason": ..., "set_aside":
        {"reason": ..., "status": <the status it had>}}``.
        """
        await self.write(set_aside_sql(table, at))

    def load(self, table_id: int) -> StoredTable | None:
        """Return the table with its moves in ply order, or ``None`` if there is no such table.

        Raises:
            StoreError: SQLite failed, or the table's stored values cannot be read back.
        """

        def query(db: sqlite3.Connection) -> StoredTable | None:
            row = db.execute(f"SELECT {_TABLE_COLUMNS} FROM tables WHERE id = ?", (table_id,)).fetchone()
            if row is None:
                return None
            moves = db.execute(
                "SELECT ply, seat, move, forced, at, clock_ms, other_ms, running FROM moves WHERE table_id = ? ORDER BY ply",
                (table_id,),
            )
            return _decode_table(row, list(moves), None)

        return self._read(query)

    def archive(self, limit: int = 50, offset: int = 0) -> list[ArchiveEntry]:
        """Return finished games, the most recently finished first.

        Args:
            limit: at most this many entries.
            offset: skip this many of the most recent first (for paging).

        Raises:
            ValueError: if ``limit`` or ``offset`` is negative.
        """
        if limit < 0 or offset < 0:
            raise ValueError(f"limit and offset must not be negative, not {limit} and {offset}")

        def query(db: sqlite3.Connection) -> list[ArchiveEntry]:
            rows = db.execute(
                "SELECT id, game, options, seat0_name, seat1_name, outcome, "
                "(SELECT count(*) FROM moves WHERE table_id = tables.id), created, finished "
                f"FROM tables WHERE status = 'over' AND NOT {_IS_SET_ASIDE} ORDER BY finished DESC, id DESC LIMIT ? OFFSET ?",
                (limit, offset),
            )
            return [
                ArchiveEntry(
                    id=row[0],
                    game=row[1],
                    options=json.loads(row[2]),
                    players=(row[3], row[4]),
                    result=None if row[5] is None else json.loads(row[5]),
                    plies=row[6],
                    created=row[7],
                    finished=row[8],
                )
                for row in rows
            ]

        return self._read(query)

    def next_table_id(self) -> int:
        """Return one more than the largest stored table id (1 for an empty database).

        Meant for startup: writes still queued are not seen. The id of a deleted
        table with the largest id is given out again.
        """
        return self._read(lambda db: int(db.execute("SELECT coalesce(max(id), 0) + 1 FROM tables").fetchone()[0]))

    def to_record(self, table: StoredTable) -> GameRecord:
        """Return the table's game as a plain-text-ready :class:`GameRecord` (times in ISO-8601 UTC).

        Raises:
            games.record.RecordError: if the stored plies are not numbered 1, 2, 3, ...
        """
        return table_to_record(table)


class SQLiteStore(StoreOps):
    """The :class:`Store` in SQLite: a Parlour database: one writer thread with group commit, one read connection.

    Build it with :meth:`open`, then ``await start()`` before writing and
    ``await close()`` at the end (or use ``async with SQLiteStore.open(path) as store``).
    Writes are made from one asyncio event loop.

    Why a writer thread rather than commits on the event loop's own thread
    (Redis's ``appendfsync always``), measured twice (``docs/BENCHMARKS.md``,
    the durable path): committing on the loop saves the hand-overs (every
    ``futex`` call, the self-pipe wake-up; about 45,000 instructions a move
    with one game, 6,000 at ten writes a commit), but the loop then waits
    for each fsync instead of reading, checking and planning the moves that
    arrive meanwhile. On the shared 2-core machine, the server pinned to one
    core as ``benchmarks/compare.py`` runs it, that halved the moves played
    at 10 games, raised their p50 two- to fourfold and one game's p50 from
    about 1 ms to 4-8 ms. So the thread stays, and the hand-overs are kept
    few: one queue hand-over and one loop wake-up per commit.

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
        self.path = path
        self.synchronous = synchronous
        self.commit_delay_s = commit_delay_s
        self._group_mean = 1.0  # running mean of writes per commit (_GROUP_WEIGHT)
        self.commits = 0
        self.writes = 0
        self._writer = writer
        self._cursor = writer.cursor() if writer is not None else None  # the writer thread's, reused for every statement
        self._reader = reader
        self._read_lock = threading.Lock()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()  # lists of jobs (one write, or a loop turn's), or _STOP
        self._turn: list[_Job] = []  # the writes made during this turn of the event loop
        self._hand_over_handle: asyncio.Handle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop writes come from (see write())
        self._thread: threading.Thread | None = None
        self._closed = False
        # Held by the writer thread while it gathers and commits a batch. Tests hold it
        # to make writes pile up, so that they land in one batch deterministically.
        self._writer_gate = threading.Lock()

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
        check_not_directory(db)
        _check_writable(db)
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory of {db}: {exc.strerror}") from exc
        writer = _connect(db, busy_timeout_s)
        reader: sqlite3.Connection | None = None
        try:
            _prepare(writer, db, MIGRATIONS)
            writer.execute(f"PRAGMA synchronous = {mode}")
            writer.execute("PRAGMA foreign_keys = ON")
            reader = _connect(db, busy_timeout_s)
            reader.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            writer.close()
            if reader is not None:
                reader.close()
            raise StoreError(f"cannot open {db}: {describe_sqlite_error(exc)}") from exc
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
        check_not_directory(db)
        if not db.exists():
            raise StoreError(f"{db} does not exist")
        live = Path(f"{db}-wal").exists()
        uri = db.resolve().as_uri() + ("?mode=ro" if live else "?mode=ro&immutable=1")
        try:
            reader = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {db} to read: {describe_sqlite_error(exc)}") from exc
        try:
            _check_schema(reader, db, MIGRATIONS, read_only=True)
        except sqlite3.Error as exc:
            reader.close()
            raise StoreError(f"cannot read {db}: {describe_sqlite_error(exc)}") from exc
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
            self._hand_over()
            self._queue.put(_STOP)
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
            self._hand_over()
            self._queue.put(_STOP)
            self._thread.join()
        self._close_connections()

    def _close_connections(self) -> None:
        with self._read_lock:
            self._reader.close()
        if self._writer is not None:
            self._writer.close()

    # --- writing -------------------------------------------------------------------------------

    def write(self, *statements: Statement) -> asyncio.Future[None]:
        """Run ``statements`` in the writer thread; the future returned is done once they are committed.

        A future, not a coroutine: the durable move awaits it with one frame
        fewer. Every error below is set on the future, so it is raised where
        the future is awaited, as it would be from a coroutine.

        The statements of one call are atomic: all committed or none. They share
        a transaction with whatever else was handed over while the previous
        commit was in progress (group commit); this call returns only after that
        ``COMMIT`` returned. While tables commit together, the writes made
        during one turn of the event loop are handed to the writer thread
        together at the end of the turn; otherwise each write at once.

        One bad write (a duplicate ply, say) fails only its own caller: when a
        statement fails, the shared transaction is rolled back, that write
        fails, and the other writes of the group are retried together, in the
        order they were made. The effect is that of running each write alone,
        in order, with fewer transactions. If ``BEGIN`` or ``COMMIT`` itself
        fails (the file is locked by another process beyond the busy timeout,
        the disk is full), every write of the group fails with that error.

        Cancelling the caller does not withdraw the write: it is committed anyway.

        Raises (when the future is awaited):
            StoreError: if the write failed (the SQLite error is the cause), or
                the store is not started or is closed.
            TypeError: if a statement is not a ``(sql, params)`` pair.
        """
        loop = self._loop
        if loop is None or not loop.is_running():  # the first write, or a new loop since: look it up
            loop = self._loop = asyncio.get_running_loop()  # a getpid() system call each time on Python 3.11
        future: asyncio.Future[None] = loop.create_future()
        if settled_at_once(future, statements, self._closed, self._thread is not None):
            return future
        job = _Job(statements, future, loop)
        if not self._turn and self._group_mean < _WAIT_FROM_MEAN:
            self._queue.put([job])  # tables seldom commit together (one game): no turn to wait for
        else:
            self._turn.append(job)
            if self._hand_over_handle is None:
                self._hand_over_handle = loop.call_soon(self._hand_over)
        return future

    def _hand_over(self) -> None:
        """Give the writes of the loop turn that just ended to the writer thread: one batch, one wake-up at most."""
        self._hand_over_handle = None
        if self._turn:
            batch, self._turn = self._turn, []
            self._queue.put(batch)

    # --- the writer thread ----------------------------------------------------------------------

    def _run(self) -> None:
        """The writer thread: commit what :meth:`_gather` gathers in one transaction, until ``_STOP``."""
        while True:
            first = self._queue.get()
            with self._writer_gate:
                jobs, stopping = self._gather(first)
                if jobs:
                    self._commit_batch(jobs)
                    self._group_mean += (len(jobs) - self._group_mean) * _GROUP_WEIGHT
            if stopping:
                return

    def _gather(self, first: Any) -> tuple[list[_Job], bool]:
        """The writes of the next commit, from the batch ``first`` on, and whether ``_STOP`` came.

        Every batch handed over already is taken. Then, while recent commits
        carried several writes each (their running mean is at least
        :data:`_WAIT_FROM_MEAN`), the writer waits, at most
        :attr:`commit_delay_s` in all, until it holds as many writes as that
        mean: the other tables' moves are probably on their way.
        """
        jobs: list[_Job] = []
        batch = first
        deadline = None
        while True:
            if batch is _STOP:
                return jobs, True
            jobs += batch
            if not self._queue.empty():  # this thread alone takes from it; get_nowait() would raise Empty once a commit
                batch = self._queue.get_nowait()
                continue
            wanted = self._group_mean
            if wanted < _WAIT_FROM_MEAN or len(jobs) >= wanted or not self.commit_delay_s:
                return jobs, False
            if deadline is None:
                deadline = time.monotonic() + self.commit_delay_s
            left = deadline - time.monotonic()
            if left <= 0:
                return jobs, False
            try:
                batch = self._queue.get(timeout=left)
            except queue.Empty:
                return jobs, False

    def _commit_batch(self, jobs: list[_Job]) -> None:
        """Commit ``jobs`` together; a job whose statement fails is dropped and the rest retried together.

        The waiters hear of the outcome together: one wake-up of each event
        loop per batch, however many writes it held.
        """
        settled: list[tuple[_Job, StoreError | None]] = []
        pending = list(jobs)
        merge = True
        while pending:
            culprit, error = self._transaction(pending, merge)
            if error is None:
                settled += [(job, None) for job in pending]
                break
            if culprit is _MERGED:  # a statement of several writes failed: find the one that fails alone
                merge = False
                continue
            if culprit is None:  # BEGIN or COMMIT failed (a full disk, say): nothing to single out, the whole group fails
                log.error("a group commit of %d writes failed: %s", len(pending), error)
                settled += [(job, _own_copy(error)) for job in pending]  # each waiter raises its own exception, with the same cause
                break
            assert isinstance(culprit, _Job)
            settled.append((culprit, error))
            pending.remove(culprit)
            if pending:
                log.warning("a write failed (%s); retrying the %d other writes of its group", error, len(pending))
        _settle(settled)

    def _transaction(self, jobs: list[_Job], merge: bool) -> tuple[_Job | object | None, StoreError | None]:
        """Run ``jobs`` in one transaction; with ``merge``, their move rows in multi-row INSERTs.

        A group that comes down to one statement (the moves of several tables,
        say) runs it alone, which SQLite commits as its own transaction: one
        call into SQLite instead of three.

        Returns:
            ``(None, None)`` once committed; else the error that rolled it back,
            with the job whose statement failed (:data:`_MERGED` if that statement
            held several writes; ``None`` if BEGIN or COMMIT failed).
        """
        connection = self._writer
        cursor = self._cursor
        assert connection is not None and cursor is not None, "start() refuses a read-only store"
        plan = _merged(jobs) if merge else [(sql, params, job) for job in jobs for sql, params in job.statements]
        culprit: _Job | object | None = None
        try:
            if len(plan) == 1:
                sql, params, culprit = plan[0]
                cursor.execute(sql, params)
            else:
                cursor.execute("BEGIN IMMEDIATE")
                for sql, params, culprit in plan:
                    cursor.execute(sql, params)
                culprit = None
                cursor.execute("COMMIT")
        except Exception as exc:  # sqlite3.Error, or a parameter SQLite cannot bind
            if connection.in_transaction:
                try:
                    connection.execute("ROLLBACK")
                except sqlite3.Error:
                    log.exception("ROLLBACK failed")
            error = StoreError(f"the write failed: {exc}")
            error.__cause__ = exc
            return culprit, error
        self.commits += 1
        self.writes += len(jobs)
        return None, None

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
                raise StoreError(f"cannot read {self.path}: {describe_sqlite_error(exc)}") from exc

    def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` on the read connection in one read transaction (a consistent snapshot of what is committed).

        For modules that keep their own tables (:mod:`server.ratings`); ``query`` must only read.

        Raises:
            StoreError: SQLite failed; the SQLite error is the cause.
        """
        return self._read(query)



def settled_at_once(future: asyncio.Future[None], statements: Sequence[Any], closed: bool, started: bool) -> bool:
    """Settle the ``future`` of :meth:`Store.write` at once where nothing is to be queued; return whether it did.

    It gets a TypeError for a statement that is not a ``(sql, params)`` pair, a
    StoreError when the store is ``closed`` or not ``started``, and ``None`` for no statement.
    """
    for statement in statements:
        if not (isinstance(statement, tuple) and len(statement) == 2 and isinstance(statement[0], str)):
            future.set_exception(TypeError(f"a statement must be a (sql, params) pair, not {statement!r}"))
            return True
    if closed or not started:
        future.set_exception(StoreError("the store is closed" if closed else "the store is not started: await store.start() first"))
        return True
    if not statements:
        future.set_result(None)
        return True
    return False


def table_to_record(table: StoredTable) -> GameRecord:
    """Return a stored table's game as a :class:`GameRecord` (see :meth:`Store.to_record`)."""
    row = table.row
    return GameRecord(
        game=row.game,
        options=row.options,
        seed=row.seed if _seed_matters(row.game, row.options) else None,
        players=row.seat_names,
        result=row.outcome,
        started_at=None if row.started is None else iso_utc(row.started),
        finished_at=None if row.finished is None else iso_utc(row.finished),
        moves=tuple(RecordedMove(m.ply, m.seat, m.move, iso_utc(m.at), m.forced) for m in table.moves),
    )


def _seed_matters(game: str, options: dict[str, Any]) -> bool:
    """Whether a game's setup with these options is drawn from its seed (a game unknown here: assume so)."""
    try:
        return games.get(game).setup_uses_chance(options)
    except games.UnknownGame:
        return True


_MERGED = object()
"""The culprit of a failed statement that held the rows of several writes."""


def _merged(jobs: list[_Job]) -> list[tuple[str, Sequence[Any], _Job | object]]:
    """The statements of ``jobs`` in order, each run of move INSERTs of one shape as multi-row INSERTs.

    Each statement comes with the job it belongs to, or :data:`_MERGED` if it
    holds rows of several jobs. Rows keep their order, so the effect is that of
    the statements one by one.
    """
    if len(jobs) == 1 and len(jobs[0].statements) == 1:  # one game's move, say: nothing to merge
        job = jobs[0]
        sql, params = job.statements[0]
        return [(sql, params, job)]
    plan: list[tuple[str, Sequence[Any], _Job | object]] = []
    rows: list[Any] = []
    owners: list[_Job] = []
    shapes: tuple[str, ...] = ()  # the multi-row INSERTs of the run being gathered

    def flush() -> None:
        first = owners[0]
        owner = first if all(owner is first for owner in owners) else _MERGED
        plan.append((shapes[len(owners) - 1], tuple(rows), owner))
        rows.clear()
        owners.clear()

    for job in jobs:
        for sql, params in job.statements:
            merged = _APPEND_MOVES.get(sql)
            if owners and merged is not shapes:
                flush()
            if merged is None:
                plan.append((sql, params, job))
                continue
            shapes = merged
            rows += params
            owners.append(job)
            if len(owners) == _MERGED_ROWS:
                flush()
    if owners:
        flush()
    return plan


def _own_copy(error: StoreError) -> StoreError:
    copy = StoreError(*error.args)
    copy.__cause__ = error.__cause__
    return copy


def _settle(settled: list[tuple[_Job, StoreError | None]]) -> None:
    """Resolve the futures of ``settled`` jobs from the writer thread: one callback per event loop, in job order."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Job, StoreError | None]]] = {}
    for job, error in settled:
        by_loop.setdefault(job.loop, []).append((job, error))

    def resolve(results: list[tuple[_Job, StoreError | None]]) -> None:
        for job, error in results:
            if job.future.done():  # the caller was cancelled; the write stands
                continue
            if error is None:
                job.future.set_result(None)
            else:
                job.future.set_exception(error)

    for loop, results in by_loop.items():
        try:
            loop.call_soon_threadsafe(resolve, results)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass


def _table_row(row: Sequence[Any]) -> TableRow:
    (table_id, game, options, seed, seed_is_int, time_control, name0, name1, token0, token1,
     status, created, started, finished, outcome, clocks, seed_chosen, computer, hints, rated) = row  # fmt: skip
    return TableRow(
        id=table_id,
        game=game,
        options=json.loads(options),
        seed=None if seed is None else int(seed) if seed_is_int else seed,
        created=created,
        time_control=time_control,
        seat_names=(name0, name1),
        seat_tokens=(token0, token1),
        status=status,
        started=started,
        finished=finished,
        outcome=None if outcome is None else json.loads(outcome),
        clocks=None if clocks is None else json.loads(clocks),
        seed_chosen=bool(seed_chosen),
        computer=None if computer is None else json.loads(computer),
        hints=bool(hints),
        rated=bool(rated),
    )


def _decode_table(row: Sequence[Any], moves: list[Sequence[Any]], damaged: list[DamagedTable] | None) -> StoredTable | None:
    """The table of ``row`` and ``moves``; ``None`` (noted in ``damaged``) if they cannot be read back."""
    try:
        return StoredTable(_table_row(row), tuple(_move_row(move) for move in moves))
    except (ValueError, TypeError, KeyError) as exc:  # json.JSONDecodeError is a ValueError
        reason = f"its stored values cannot be read back ({type(exc).__name__}: {exc})"
        if damaged is None:
            raise StoreError(f"table {row[0]}: {reason}") from exc
        damaged.append(DamagedTable(row[0], str(row[_STATUS_COLUMN]), reason))
        return None


def _move_row(row: Sequence[Any]) -> MoveRow:
    ply, seat, move, forced, at, clock_ms, other_ms, running = row
    return MoveRow(ply=ply, seat=seat, move=move, at=at, forced=bool(forced), clock_ms=clock_ms, other_ms=other_ms, running=running)


# --- opening ------------------------------------------------------------------------------------


def check_not_directory(path: Path) -> None:
    """Refuse a database path that names a directory.

    Raises:
        StoreError: ``path`` is a directory.
    """
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file; give the path of a file in it")


def _check_writable(path: Path) -> None:
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


def _connect(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    try:
        # isolation_level=None: no implicit transactions; BEGIN and COMMIT are ours.
        return sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc


def _prepare(connection: sqlite3.Connection, path: Path, migrations: Iterable[Migration]) -> None:
    """Check that ``path`` is a usable Parlour database, set WAL, run missing migrations."""
    steps = sorted(migrations, key=lambda step: step.version)
    _check_schema(connection, path, steps, read_only=False)
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


def _check_schema(connection: sqlite3.Connection, path: Path, migrations: Iterable[Migration], *, read_only: bool) -> None:
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
