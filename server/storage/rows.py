"""What a store holds, as objects: a table's row, its moves, a table loaded back, an archive entry.

These are the shapes the server hands to a store and gets back from one,
whatever the database: :class:`TableRow` and :class:`MoveRow` going in,
:class:`StoredTable` (a row with its moves), :class:`DamagedTable` and
:class:`ArchiveEntry` coming out, and :func:`table_to_record`, a stored
table as a game record. Times are Unix times in seconds (``time.time()``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

import games
from games.record import GameRecord, RecordedMove
from protocol.messages import summarize_options

__all__ = [
    "ArchiveEntry",
    "DamagedTable",
    "MoveRow",
    "SET_ASIDE_REASON",
    "STATUSES",
    "StoredTable",
    "TableRow",
    "dump_json",
    "iso_utc",
    "table_to_record",
    "text_pair",
]

SET_ASIDE_REASON = "set aside: the server could not restore this table"
"""The ``reason`` in the outcome of a table set aside (:meth:`Store.set_aside`)."""

STATUSES = ("waiting", "playing", "over")
"""The values of a table's ``status``."""


def iso_utc(unix_time: float) -> str:
    """Return a Unix time as ISO-8601 UTC text with milliseconds, e.g. ``2024-05-01T12:00:05.123Z``."""
    moment = datetime.fromtimestamp(unix_time, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
        rated: whether the game is rated (:mod:`server.ratings.ratings`).
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
        object.__setattr__(self, "seat_names", text_pair("seat_names", self.seat_names))
        object.__setattr__(self, "seat_tokens", text_pair("seat_tokens", self.seat_tokens))
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


def text_pair(name: str, value: Sequence[str | None]) -> tuple[str | None, str | None]:
    """``value`` as a pair of texts or ``None``s.

    Raises:
        ValueError: naming ``name``, when ``value`` is not two texts or ``None``s.
    """
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
    return None if value is None else json.loads(dump_json(value))


def dump_json(value: Any) -> str:
    """``value`` as compact JSON text, as the store keeps it (no NaN, non-ASCII kept)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


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


def archive_entry_map(entry: ArchiveEntry) -> dict[str, Any]:
    """One finished game as the archive lists it: the map of the ``archive`` reply's ``games`` (PROTOCOL.md), which the web archive serves too."""
    return {
        "id": entry.id,
        "game": entry.game,
        "options": summarize_options(entry.options),
        "players": list(entry.players),
        "result": entry.result,
        "plies": entry.plies,
        "finished": iso_utc(entry.finished) if entry.finished is not None else None,
    }
