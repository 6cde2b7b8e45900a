"""What both stores share over their own ``write`` and ``_read``: the typed writes and every read of the store's tables.

:class:`StoreOps` is the base of :class:`server.storage.sqlite.SQLiteStore` and
:class:`server.storage.postgres.PostgresStore`. The SQL it writes and reads is
SQLite's (:mod:`server.storage.statements`); the PostgreSQL store rewrites it
(:mod:`server.storage.dialect`).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Awaitable, Callable, Self, Sequence, TypeVar

from games.record import GameRecord

from .rows import ArchiveEntry, DamagedTable, MoveRow, StoredTable, TableRow, table_to_record
from .statements import (
    IS_SET_ASIDE,
    TABLE_COLUMNS,
    append_move_sql,
    create_table_sql,
    decode_table,
    delete_session_sql,
    delete_table_sql,
    save_session_sql,
    set_aside_sql,
    truncate_moves_sql,
    update_table_sql,
)
from .store import Statement

__all__ = ["StoreOps"]

T = TypeVar("T")


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
            rows = db.execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE status != 'over' ORDER BY id").fetchall()
            moves: dict[int, list[Sequence[Any]]] = {row[0]: [] for row in rows}
            for table_id, *move in db.execute(
                "SELECT m.table_id, m.ply, m.seat, m.move, m.forced, m.at, m.clock_ms, m.other_ms, m.running FROM moves AS m "
                "JOIN tables AS t ON t.id = m.table_id WHERE t.status != 'over' ORDER BY m.table_id, m.ply"
            ):
                moves[table_id].append(move)
            return [table for row in rows if (table := decode_table(row, moves[row[0]], damaged)) is not None]

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
            row = db.execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE id = ?", (table_id,)).fetchone()
            if row is None:
                return None
            moves = db.execute(
                "SELECT ply, seat, move, forced, at, clock_ms, other_ms, running FROM moves WHERE table_id = ? ORDER BY ply",
                (table_id,),
            )
            return decode_table(row, list(moves), None)

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
                f"FROM tables WHERE status = 'over' AND NOT {IS_SET_ASIDE} ORDER BY finished DESC, id DESC LIMIT ? OFFSET ?",
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
