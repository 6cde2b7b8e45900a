"""The SQL of tables, moves and sessions: the statements the server writes, and the rows read back.

The typed helpers of a store are these statements passed to
:meth:`server.storage.store.Store.write`. Pass several to one write to make
them atomic, e.g. the last move and the table's new status. Reading goes the
other way: :func:`decode_table` turns a selected row (:data:`TABLE_COLUMNS`)
and its moves back into a :class:`~server.storage.rows.StoredTable`.
Other groups keep the SQL of their own tables beside their code (accounts,
ratings, casual counts, mutes, chat).
"""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

from .rows import SET_ASIDE_REASON, STATUSES, DamagedTable, MoveRow, StoredTable, TableRow, dump_json, text_pair
from .store import Statement, StoreError

__all__ = [
    "APPEND_MOVES",
    "IS_SET_ASIDE",
    "MERGED_ROWS",
    "TABLE_COLUMNS",
    "append_move_sql",
    "append_ply_sql",
    "create_table_sql",
    "decode_table",
    "delete_session_sql",
    "delete_table_sql",
    "save_session_sql",
    "set_aside_sql",
    "takeback_clocks_sql",
    "truncate_moves_sql",
    "update_table_sql",
]

TABLE_COLUMNS = (
    "id, game, options, seed, seed_is_int, time_control, seat0_name, seat1_name, seat0_token, "
    "seat1_token, status, created, started, finished, outcome, clocks, seed_chosen, computer, hints, rated"
)
"""The columns of ``tables``, in the order :func:`create_table_sql` writes and :func:`decode_table` reads them."""

_STATUS_COLUMN = [name.strip() for name in TABLE_COLUMNS.split(",")].index("status")
"""Where ``status`` is in a row selected with :data:`TABLE_COLUMNS`."""

IS_SET_ASIDE = "(CASE WHEN json_valid(outcome) THEN json_extract(outcome, '$.set_aside') IS NOT NULL ELSE 0 END)"
"""SQL true for a table set aside (its outcome JSON, written by :func:`set_aside_sql`, has ``set_aside``)."""


_UPDATABLE = ("status", "seat_names", "seat_tokens", "outcome", "started", "finished", "clocks", "time_control", "seed")


def create_table_sql(row: TableRow) -> Statement:
    """The statement that inserts ``row`` (fails if the id exists)."""
    return (
        f"INSERT INTO tables ({TABLE_COLUMNS}) VALUES ({', '.join('?' * 20)})",
        (
            row.id, row.game, dump_json(row.options), *_seed_columns(row.seed), row.time_control,
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


MERGED_ROWS = 16
"""At most this many move rows share one multi-row ``INSERT`` in a group commit
(each row count is one more statement in sqlite3's statement cache)."""


def _multi_row(sql: str) -> tuple[str, ...]:
    """``sql`` (an INSERT of one row), then the same INSERT of 2, 3, ... :data:`MERGED_ROWS` rows."""
    values = sql[sql.rindex("(") :]
    return tuple(sql + f", {values}" * (rows - 1) for rows in range(1, MERGED_ROWS + 1))


APPEND_MOVES = {_APPEND_MOVE: _multi_row(_APPEND_MOVE), _APPEND_TIMED_MOVE: _multi_row(_APPEND_TIMED_MOVE)}
"""``APPEND_MOVES[sql][n - 1]`` inserts ``n`` moves (untimed or timed) in one statement."""


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
        clocks: ``{"remaining_ms": [ms, ms], "running": seat or None, ...}`` (:meth:`server.tables.clock.Clock.snapshot`).
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
            values += text_pair(name, value)
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


def _dump_or_none(value: Any) -> str | None:
    return None if value is None else dump_json(value)


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
        (dump_json(outcome), time.time() if at is None else at, table.id),
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


def decode_table(row: Sequence[Any], moves: list[Sequence[Any]], damaged: list[DamagedTable] | None) -> StoredTable | None:
    """The table of ``row`` (selected with :data:`TABLE_COLUMNS`) and its ``moves``, ply by ply.

    Returns ``None``, noting the table in ``damaged``, if they cannot be read back.

    Raises:
        StoreError: they cannot be read back and ``damaged`` is ``None``.
    """
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
