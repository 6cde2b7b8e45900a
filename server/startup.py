"""What a server does with its database at start-up: bring back accounts, sessions and unfinished tables, set aside the rest.

A mixin of :class:`server.app.Server`, which holds the state named below.
"""

from __future__ import annotations

import logging
from typing import Callable

from .bus.local import LocalBus
from .core.session import Session
from .play.authority import Authority
from .play.stored import restore_table
from .players.accounts import Accounts
from .players.sessions import Sessions
from .ratings.rated import show_ratings
from .storage.rows import DamagedTable
from .storage.store import Store, StoreError
from .tables.table import Table

__all__ = ["Restoring"]

log = logging.getLogger("server.app")  # the server's log lines keep the logger they were always written to


class Restoring:
    """Start-up restore and set-aside, for :class:`server.app.Server`."""

    accounts: Accounts
    handshake: Sessions
    sessions: dict[str, Session]
    tables: dict[int, Table]
    bus: LocalBus
    authority: Authority
    store: Store | None
    _persist_soon: Callable[..., None]

    def _restore(self, store: Store) -> list[DamagedTable]:
        """Bring back the stored sessions and unfinished tables; return the tables that cannot come back."""
        self.accounts.load(store.accounts())
        self.handshake.restore(store.sessions())
        damaged: list[DamagedTable] = []
        for stored in store.unfinished_tables(damaged):
            try:
                table = restore_table(stored, self.sessions, self.bus)
            except Exception as exc:  # whatever a bad row makes the engine or the clock raise
                damaged.append(DamagedTable(stored.id, stored.row.status, f"it no longer replays ({type(exc).__name__}: {exc})"))
                continue
            self.tables[table.id] = table
            for seat, holder in enumerate(table.seats):
                if holder is not None:
                    holder.seats[table.id] = seat
                    self.handshake.claim_name(holder)
                    self.authority.hold_seat(table, seat, holder)
            show_ratings(self.ratings, table)
            if table.status == "playing" and table.clock is not None:
                table.start_clock()  # a side's time runs only after its own first move (a snapshot of an older server may differ)
            self.authority.schedule_flag(table)
        for session in [s for s in self.sessions.values() if not s.seats]:
            del self.sessions[session.token]  # holds nothing: its name must not stay half-reserved
            self._persist_soon(self.handshake.forget_sql(session.token))  # a cluster's: kept while another node seats it
        self.authority.next_table_id = store.next_table_id()
        return damaged

    async def _set_aside(self, damaged: list[DamagedTable]) -> None:
        """Mark tables that cannot be restored so that they are not tried again; their rows are kept."""
        assert self.store is not None
        for table in damaged:
            log.error("table %d cannot be restored and is set aside (kept in the database, out of the lobby): %s", table.id, table.reason)
            try:
                await self.store.set_aside(table)
            except StoreError as exc:
                log.error("table %d could not be marked as set aside (it will be tried again at the next start): %s", table.id, exc)
