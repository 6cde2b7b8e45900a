"""What the web face shows, as messages and plain maps: built from the server's own state, spectator views only.

Nothing here reads a seat's view: every position is ``view_for(None)`` or
:func:`server.table.view_of` with seat ``None``, the view a terminal spectator gets.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from games.record import RecordError, format_record, replay
from protocol.messages import MAX_TABLES_PAGE, ChatEntry, TableInfo, TableJoined, Tables

from ..tables.exports import export_record
from ..tables.lobby import Lobby
from ..storage.store import Store
from ..tables.table import Table, view_of

__all__ = ["LOBBY_PAGE", "RecordError", "archive_game", "lobby_tables", "most_watched", "record_text", "table_snapshot"]

LOBBY_PAGE = MAX_TABLES_PAGE
"""The most tables the lobby page lists (the lowest ids: the oldest tables): as ``list_tables`` pages them,
so a lobby snapshot stays well under the largest frame a server sends (PROTOCOL.md, ``TableInfo``)."""


def table_snapshot(table: Table, chat: list[ChatEntry]) -> TableJoined:
    """What a spectator's ``table_joined`` holds (id ``0``: it answers no request): the table, its view, moves and ``chat``."""
    return TableJoined(id=0, table=table.info(), seat=None, view=table.view_for(None), moves=list(table.moves), chat=chat)


def lobby_tables(lobby: Lobby) -> Tables:
    """The first :data:`LOBBY_PAGE` tables as a ``tables`` reply (id ``0``) would list them."""
    tables, cursor = lobby.page(0, LOBBY_PAGE)
    return Tables(id=0, tables=tables, next=cursor)


def most_watched(tables: Iterable[Table], browsers: Mapping[int, int], remote: Iterable[TableInfo] = ()) -> int | None:
    """The id of the running game with the most watchers (terminal spectators plus ``browsers[id]``), or ``None``.

    ``remote`` are the other nodes' tables of a cluster as their nodes last
    described them (:attr:`server.tables.lobby.Lobby.remote`): they are picked
    among too, by their spectators as listed. Ties go to the game with more
    plies, then to the newer table.
    """
    best: tuple[int, int, int] | None = None
    for table in tables:
        if table.status != "playing":
            continue
        key = (len(table.spectators) + browsers.get(table.id, 0), len(table.moves), table.id)
        if best is None or key > best:
            best = key
    for info in remote:
        if info.status != "playing":
            continue
        key = (info.spectators + browsers.get(info.id, 0), info.ply, info.id)
        if best is None or key > best:
            best = key
    return None if best is None else best[2]


def archive_game(store: Store, table_id: int) -> dict[str, Any] | None:
    """A finished game for the replay page, or ``None`` if the archive has no finished game ``table_id``.

    The map: ``id``, ``game``, ``options``, ``players``, ``result``, ``moves``
    (notation, ply 1 first), ``views`` (the spectator's view of the start and
    after each ply: one more than ``moves``; a finished game's hidden setup is
    public, so every piece is shown throughout, as the clients' replays show
    it) and ``record`` (the plain-text record).

    Raises:
        games.record.RecordError: the stored game cannot be replayed.
    """
    stored = store.load(table_id)
    if stored is None or stored.row.status != "over" or "set_aside" in (stored.row.outcome or {}):
        return None
    record = store.to_record(stored)
    states = replay(record)
    return {
        "id": table_id,
        "game": record.game,
        "options": record.options,
        "players": list(record.players),
        "result": record.result,
        "moves": [move.move for move in record.moves],
        "views": [view_of(state.revealed(), None) for state in states],
        "record": format_record(record),
    }


def record_text(store: Store, table_id: int, fmt: str = "text") -> str | None:
    """The record of finished game ``table_id`` in format ``fmt`` (``"text"`` or ``"ggf"``), or ``None`` if the archive has none.

    Raises:
        server.tables.exports.ExportError: GGF asked for a game other than Othello.
    """
    stored = store.load(table_id)
    if stored is None or stored.row.status != "over" or "set_aside" in (stored.row.outcome or {}):
        return None
    return export_record(store, stored, fmt)

