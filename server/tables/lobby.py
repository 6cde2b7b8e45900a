"""The lobby: the registry of live tables, and the changes sent to those who watch it.

Only connections that asked (``watch_lobby``) hear about tables. Changes are
collected for a short tick and sent then, one ``table_updated`` (or
``table_closed``) per changed table however often it changed, encoded once
for every watcher; with nobody watching, a change costs a set insertion.
"""

from __future__ import annotations

import heapq
from itertools import chain
from typing import Mapping

from protocol import Code, Message, encode_message
from protocol.messages import TableClosed, TableInfo, TableUpdated

from ..bus.bus import LOBBY, Bus, Subscriber
from .ticks import TickBatch
from ..core.errors import RequestError
from .table import Table

MOVED_AWAY_MESSAGE = "this table moved to another node of the server just now; nothing was changed: send it again"
"""The ``storage_unavailable`` message of a request about a table another node has just claimed from this one."""
MOVED_AWAY_KEPT = 4096
"""How many tables claimed away a lobby remembers (the oldest are forgotten first)."""

__all__ = ["Lobby", "DEFAULT_TICK_S"]

DEFAULT_TICK_S = 0.05
"""How long lobby changes are collected before they are sent, in seconds."""


class Lobby:
    """The live tables by id, and the lobby's watchers (through ``bus``).

    Args:
        bus: carries lobby events to the watchers.
        tick_s: changes to a table within this many seconds become one ``table_updated``.

    Attributes:
        tables: table id -> live table.
        remote: table id -> a table of another node (in a cluster), as that node last described it.
        bus: the server's bus (the tables' events go through it too).
    """

    def __init__(self, bus: Bus, tick_s: float = DEFAULT_TICK_S) -> None:
        self.tables: dict[int, Table] = {}
        self.remote: Mapping[int, TableInfo] = {}
        """The other nodes' tables in a cluster (:class:`server.cluster.lobby.LobbyMirror`), listed with this node's."""
        self._moved_away: dict[int, None] = {}  # tables another node claimed from this one, oldest first
        self._bus = self.bus = bus
        self._changed: TickBatch[int, None] = TickBatch(tick_s, self.flush)  # ids of tables changed within this tick

    def get(self, table_id: int) -> Table:
        """The live table ``table_id``.

        Raises:
            RequestError: ``no_such_table``; ``storage_unavailable`` for a table another node has just claimed from
                this one, until this node's lobby lists it there (its requests are relayed from then on).
        """
        table = self.tables.get(table_id)
        if table is None:
            if table_id in self._moved_away and table_id not in self.remote:
                raise RequestError(Code.STORAGE_UNAVAILABLE, MOVED_AWAY_MESSAGE)
            if table_id in self.remote:
                raise RequestError(Code.NO_SUCH_TABLE, f"table {table_id} is held by another node of this server: connect to that node to join or watch it")
            raise RequestError(Code.NO_SUCH_TABLE, f"there is no table {table_id}")
        return table

    def moved_away(self, table_id: int) -> None:
        """Note that another node claimed ``table_id`` from this one (the caller took it out of :attr:`tables`): its
        requests are answered "send it again" until the lobby lists the table on its new node, not "no such table".
        Keeps the latest :data:`MOVED_AWAY_KEPT`."""
        self._moved_away[table_id] = None
        if len(self._moved_away) > MOVED_AWAY_KEPT:
            del self._moved_away[next(iter(self._moved_away))]

    def page(self, after: int, limit: int) -> tuple[list[TableInfo], int | None]:
        """Up to ``limit`` tables with ids above ``after``, in id order, and the cursor of the next page (``None``: last page)."""
        tables, remote = self.tables, self.remote
        ids = heapq.nsmallest(limit + 1, (table_id for table_id in chain(tables, remote) if table_id > after))
        page = ids[:limit]
        cursor = page[-1] if len(ids) > limit else None
        return [tables[table_id].lobby_info() if table_id in tables else remote[table_id] for table_id in page], cursor

    # --- watchers -----------------------------------------------------------------

    def watch(self, subscriber: Subscriber) -> None:
        """Send ``subscriber`` the lobby's changes from now on."""
        self._bus.subscribe(LOBBY, subscriber)

    def unwatch(self, subscriber: Subscriber) -> None:
        """Stop sending ``subscriber`` the lobby's changes (no-op if it was not watching)."""
        self._bus.unsubscribe(LOBBY, subscriber)

    def is_watching(self, subscriber: Subscriber) -> bool:
        """Whether ``subscriber`` watches the lobby."""
        return self._bus.is_subscribed(LOBBY, subscriber)

    # --- changes ------------------------------------------------------------------

    def add(self, table: Table) -> None:
        """Register a new live table (announced at the next tick)."""
        self.tables[table.id] = table
        self.changed(table.id)

    def remove(self, table_id: int) -> Table | None:
        """Take a table out of the lobby (its ``table_closed`` goes out at the next tick); return it, if it was there."""
        table = self.tables.pop(table_id, None)
        if table is not None:
            self.changed(table_id)
        return table

    def changed(self, table_id: int) -> None:
        """Note that the table's lobby line changed; watchers hear of it at the next tick."""
        if not self._bus.has_subscribers(LOBBY):
            return
        self._changed.note(table_id, None)

    def say(self, message: Message) -> None:
        """Send a lobby chat line to the watchers, after the table changes made before it."""
        self.flush()
        self._bus.publish(LOBBY, encode_message(message), message)

    def flush(self) -> None:
        """Send the changes collected so far: the current line of each changed table, or its closing."""
        for table_id in self._changed.take():
            table = self.tables.get(table_id)
            message: Message = TableClosed(table=table_id) if table is None else TableUpdated(table=table.lobby_info())
            self._bus.publish(LOBBY, encode_message(message), message)

    def close(self) -> None:
        """Drop pending changes and the tick timer (the server is closing)."""
        self._changed.close()
