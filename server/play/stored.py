"""A live table in the store: what each step of its life writes, and a table restored from its rows.

The table authority (:mod:`server.play.authority`) builds these statements and
commits them before it changes the table in memory: a new table's row
(:func:`table_row`), a change of seats (:func:`seats_sql`), the start of the
game (:func:`starting_sql`), a move (:func:`move_sql`), a takeback
(:func:`takeback_sql`), the end (:func:`ended_sql`). At start the server
rebuilds each unfinished table from what was committed (:func:`restore_table`).
"""

from __future__ import annotations

import time
from typing import Any

import games

from ..bus.bus import Bus
from ..core.session import Session, new_token
from ..storage.rows import StoredTable, TableRow
from ..storage.statements import append_ply_sql, takeback_clocks_sql, truncate_moves_sql, update_table_sql
from ..storage.store import Statement
from ..tables.clock import Clock, TimeControl
from ..tables.table import Played, Table
from ..tables.timing import clock_seat

__all__ = ["ended_sql", "move_sql", "restore_table", "seats_sql", "starting_sql", "table_row", "takeback_sql"]


def table_row(table: Table) -> TableRow:
    """The row a new table is stored with (:func:`server.storage.statements.create_table_sql`)."""
    return TableRow(
        id=table.id,
        game=table.game.name,
        options=table.options,
        seed=table.seed,
        created=table.created_at,
        time_control=str(table.clock.control) if table.clock is not None else None,
        seat_names=tuple(table.seat_names),  # type: ignore[arg-type]
        seat_tokens=_seat_tokens(table),
        status=table.status,
        started=time.time() if table.started else None,
        seed_chosen=table.seed_chosen,
        computer=(table.computer[0], table.computer[1]) if table.has_computer() else None,
        hints=table.hints,
        rated=table.rated,
    )


def _seat_tokens(table: Table) -> tuple[str | None, str | None]:
    first, second = (holder.token if holder is not None else None for holder in table.seats)
    return first, second


def seats_sql(table: Table, status: str | None = None) -> Statement:
    """What a change of seats writes: who sits where, and ``status`` if it changes (``"playing"`` also notes when it started)."""
    fields: dict[str, Any] = {"seat_names": tuple(table.seat_names), "seat_tokens": _seat_tokens(table)}
    if status is not None:
        fields["status"] = status
        if status == "playing":
            fields["started"] = time.time()
    return update_table_sql(table.id, **fields)


def starting_sql(table: Table, deal: tuple[str, games.State] | None, decided: games.Outcome | None) -> list[Statement]:
    """What starting the game writes besides the seats and status: the seed of ``deal`` (a setup dealt now) and the
    outcome the game starts with, ``decided``, when the starting position is already decided."""
    statements = [update_table_sql(table.id, seed=deal[0])] if deal is not None else []
    if decided is not None:
        statements.append(ended_sql(table, decided))
    return statements


def move_sql(table: Table, played: list[Played], final: games.Outcome | None) -> list[Statement]:
    """What a move writes: its plies (the last one with both clocks, when timed) and the outcome it led to (``final``, if any)."""
    now = time.time()
    statements = [append_ply_sql(table.id, p.ply, p.seat, p.move, now, p.forced) for p in played]
    if table.clock is not None:  # both clocks in the last move row: no UPDATE of the table row per move
        clocks = table.clock.snapshot(time.monotonic())
        last = played[-1]
        remaining = clocks["remaining_ms"]
        statements[-1] = append_ply_sql(
            table.id, last.ply, last.seat, last.move, now, last.forced, remaining[last.seat], remaining[1 - last.seat], clocks["running"]
        )
    if final is not None:
        statements.append(ended_sql(table, final))
    return statements


def takeback_sql(table: Table, state: games.State) -> list[Statement]:
    """What a takeback to ``state`` writes: the moves after it go; a timed table keeps its clocks as they
    will be once the clock of the seat to move in ``state`` runs (no time is given back)."""
    statements = [truncate_moves_sql(table.id, state.ply)]
    clocks = table.clock_snapshot()
    if clocks is not None:
        running = clock_seat(state, table.movers(table.moves[: state.ply]))
        statements.append(takeback_clocks_sql(table.id, state.ply, {**clocks, "running": running}))
    return statements


def ended_sql(table: Table, outcome: games.Outcome) -> Statement:
    """What the end of the game writes: status ``over``, the ``outcome`` and when."""
    return update_table_sql(table.id, status="over", outcome=outcome.to_dict(), finished=time.time())


def restore_table(stored: StoredTable, sessions: dict[str, Session], bus: Bus | None = None) -> Table:
    """Rebuild a live table from the database: its position replayed move by move; its events go through ``bus``.

    Raises:
        games.GameError: the stored game no longer replays (an engine changed).
    """
    row = stored.row
    table = Table.create(row.id, row.game, row.options, _restored_seed(row), seed_chosen=row.seed_chosen, bus=bus)
    clocks = stored.clocks
    if row.time_control is not None and clocks:
        table.clock = Clock.restore(row.time_control, clocks["remaining_ms"], clocks["running"], time.monotonic())
    elif row.time_control is not None:
        table.set_time_control(TimeControl.parse(row.time_control))
    table.created_at = row.created
    table.started = row.status == "playing"
    table.seat_names = list(row.seat_names)
    table.computer = list(row.computer) if row.computer is not None else [None, None]
    table.hints = row.hints
    table.rated = row.rated
    for seat, token in enumerate(row.seat_tokens):
        holder = sessions.get(token) if token is not None else None
        if holder is None and row.seat_names[seat] is not None and table.computer[seat] is None:
            holder = Session(name=row.seat_names[seat] or "?", token=token or new_token())
            sessions[holder.token] = holder
        if holder is not None:
            table.assign_seat(seat, holder)
    state = table.state
    played = []
    for move in stored.moves:
        state = state.play(move.move)
        played.append(Played(move.seat, move.move, move.ply, move.forced, state))
    if played:
        table.apply(played)
    return table


def _restored_seed(row: TableRow) -> str | int | None:
    """The seed to rebuild a stored table with: ``None`` (deal at start) for a waiting table's secret setup.

    A secret setup dealt by an older server while the table waited may have
    been seen by whoever sat there, so it is dealt afresh too.
    """
    if row.status == "waiting" and not row.seed_chosen and games.get(row.game).seed_is_secret(row.options):
        return None
    return row.seed
