"""A stored game as a record file: Parlour's plain-text record, or GGF for an Othello game.

One place builds what ``get_record``, ``parlour games --export`` and the web
archive offer for download, so all three give the same bytes for the same game.
GGF (:mod:`games.ggf`) also carries what the plain-text record leaves out:
the players' ratings before a rated game (from ``rating_changes``) and the
time control.
"""

from __future__ import annotations

import sqlite3

from games.ggf import GgfError, format_ggf, record_to_ggf
from games.record import format_record

from .clock import TimeControl, TimeControlError
from ..storage.rows import StoredTable, table_to_record
from ..storage.store import Store

__all__ = ["FORMATS", "ExportError", "export_record"]

FORMATS = ("text", "ggf")
"""The record formats, as ``get_record.format`` and ``parlour games --format`` name them."""


class ExportError(ValueError):
    """The game cannot be exported in the format asked for (GGF of a game other than Othello); the message says why."""


def export_record(store: Store, table: StoredTable, fmt: str = "text") -> str:
    """Return the stored game ``table`` as a record in format ``fmt``, ending with a newline.

    Args:
        store: the database the table was loaded from (read for the ratings).
        table: the game, as :meth:`Store.load` returns it.
        fmt: ``"text"`` (:func:`games.record.format_record`) or ``"ggf"``
            (:func:`games.ggf.format_ggf`, Othello only).

    Raises:
        ExportError: ``fmt`` is not one of :data:`FORMATS`, or GGF was asked
            for a game other than Othello (the message names the game and the table).
        games.record.RecordError: the stored plies are not numbered 1, 2, 3, ...
        server.storage.store.StoreError: the ratings cannot be read.
    """
    if fmt not in FORMATS:
        raise ExportError(f"there is no record format {fmt!r}; the formats are {', '.join(FORMATS)}")
    record = table_to_record(table)
    if fmt == "text":
        return format_record(record)
    if record.game != "othello":
        raise ExportError(f"GGF records are for Othello games only, and game {table.id} is {record.game}; export it as text instead")
    try:
        game = record_to_ggf(record, ratings=_ratings_before(store, table.id), clock=_clock(table.row.time_control))
    except GgfError as exc:
        raise ExportError(f"game {table.id} cannot be written as GGF: {exc}") from None
    return format_ggf(game)


def _ratings_before(store: Store, table_id: int) -> tuple[float | None, float | None]:
    """Each seat's rating before the game, where the game was rated (else ``None``)."""

    def query(db: sqlite3.Connection) -> dict[int, float]:
        return dict(db.execute("SELECT seat, before FROM rating_changes WHERE table_id = ?", (table_id,)).fetchall())

    before = store.read(query)
    return before.get(0), before.get(1)


def _clock(time_control: str | None) -> tuple[float, float] | None:
    """The stored time control as ``(initial seconds, increment seconds)``; ``None`` when untimed or unreadable."""
    try:
        control = TimeControl.parse(time_control)
    except TimeControlError:
        return None
    return None if control is None else (control.initial_s, control.increment_s)
