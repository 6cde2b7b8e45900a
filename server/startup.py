"""What a server does with its database at start-up: bring back accounts, sessions and unfinished tables, set aside the rest.

A node of a cluster also brings back, while it runs, the tables it claims from a node
that died or stopped (:meth:`Restoring._take_over`, exactly as a restart does: clocks not
charged for the outage), and drops those another node claimed from it (:meth:`Restoring._drop_lost`).

A mixin of :class:`server.app.Server`, which holds the state named below.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from .bus.local import LocalBus
from .core.session import Session
from .play.authority import Authority
from .play.stored import restore_table
from .social.chat import TableChat, stored_chat
from .players.accounts import Accounts
from .players.sessions import Sessions
from .ratings.rated import show_ratings
from .storage.rows import DamagedTable, StoredTable
from .storage.store import Store, StoreError
from .tables.table import Table

if TYPE_CHECKING:
    from .cluster import Cluster
    from .cluster.relay import RelayFront
    from .play.computer import ComputerPlayers
    from .tables.lobby import Lobby

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
    lobby: Lobby
    computers: ComputerPlayers
    table_chat: TableChat
    _relay: RelayFront | None
    cluster: Cluster | None
    _persist_soon: Callable[..., None]

    def _restore(self, store: Store, only: set[int] | None = None) -> list[DamagedTable]:
        """Bring back the stored sessions and unfinished tables (``only`` those of these ids: a node of a cluster
        restores the tables it holds); return the tables that cannot come back."""
        self.accounts.load(store.accounts())
        self.handshake.restore(store.sessions())
        damaged: list[DamagedTable] = []
        for stored in store.unfinished_tables(damaged):
            if only is None or stored.id in only:
                self._bring_back(stored, damaged)
        for session in [s for s in self.sessions.values() if not s.seats]:
            del self.sessions[session.token]  # holds nothing: its name must not stay half-reserved
            self._persist_soon(self.handshake.forget_sql(session.token))  # a cluster's: kept while another node seats it
        self.authority.next_table_id = store.next_table_id()
        return damaged

    def _bring_back(self, stored: StoredTable, damaged: list[DamagedTable]) -> Table | None:
        """Make a stored unfinished table live again, its absent players' seats held for the grace period;
        ``None`` (noted in ``damaged``) if it no longer replays. A seat goes to the session of its resume token:
        a player connected here holds it at once; one of another node gets it when its link opens again with
        ``resume`` (:mod:`server.cluster.follow`)."""
        try:
            table = restore_table(stored, self.sessions, self.bus)
        except Exception as exc:  # whatever a bad row makes the engine or the clock raise
            damaged.append(DamagedTable(stored.id, stored.row.status, f"it no longer replays ({type(exc).__name__}: {exc})"))
            return None
        self.tables[table.id] = table
        for seat, holder in enumerate(table.seats):
            if holder is not None:
                holder.seats[table.id] = seat
                self.handshake.claim_name(holder)
                if holder.peer is None:
                    self.authority.hold_seat(table, seat, holder)
        show_ratings(self.ratings, table)
        if table.status == "playing" and table.clock is not None:
            table.start_clock()  # a side's time runs only after its own first move (a snapshot of an older server may differ)
        self.authority.schedule_flag(table)
        return table

    async def _take_over(self, claimed: set[int]) -> None:
        """Bring back the tables this node just claimed from another node, announce them, and welcome back their
        players already here (those elsewhere come back through their node's relay)."""
        assert self.store is not None
        damaged: list[DamagedTable] = []
        taken: list[Table] = []
        for table_id in sorted(claimed - set(self.tables)):
            try:
                stored = self.store.load(table_id)
            except StoreError as exc:
                log.error("cannot read table %d, just claimed (it comes back at the next claim or start): %s", table_id, exc)
                continue
            if stored is not None and stored.row.status != "over":
                table = self._bring_back(stored, damaged)
                if table is not None:
                    taken.append(table)
        if taken:
            self.table_chat.restore({table.id: table for table in taken}, self.store.read(stored_chat))
        for table in taken:
            log.info("table %d taken over (%s vs %s)", table.id, *table.seat_names)
            if self.cluster is not None:
                self.cluster.mirror.adopted(table.id)  # this node's own now: no longer mirrored, never closed by the dead node's expiry
            if self._relay is not None:
                if self.cluster is not None:
                    self._relay.table_held(table.id, self.cluster.node)  # its requests relayed to the node that lost it: reply_lost
                self._relay.following.taken_over(table, self.authority.welcome_back)
            for seat, holder in enumerate(table.seats):
                if holder is not None and holder.peer is not None:
                    self.authority.welcome_back(holder, table, seat)
            self.lobby.changed(table.id)
            self.computers.wake(table)
        await self._set_aside(damaged)

    def _drop_lost(self, lost: set[int]) -> None:
        """Drop the live tables another node claimed (this node could not renew their leases): their timers stop,
        and this node's players at them follow them to that node through the relay."""
        for table_id in lost:
            table = self.tables.pop(table_id, None)  # no table_closed: the table lives on, on the node that claimed it
            if table is None:
                continue
            self.lobby.moved_away(table_id)
            for timer in [*table.grace.values(), table.flag_timer, table.abort_timer]:
                if timer is not None:
                    timer.cancel()
            for seat, holder in enumerate(table.seats):
                if holder is None:
                    continue
                table.bus.unsubscribe(table.topic, holder)
                if holder.seats.pop(table_id, None) is not None and self._relay is not None:
                    self._follow(holder, table_id, watching=False)
            for spectator in list(table.spectators):
                spectator.watching.discard(table_id)
                if self._relay is not None:
                    self._follow(spectator, table_id, watching=True)
                table.unwatch(spectator)

    def _follow(self, session: Session, table_id: int, watching: bool) -> None:
        """``session``, at a table another node claimed from this one, follows it there through the relay
        (a player of another node is left to that node's own relay)."""
        if self._relay is None or self.cluster is None or self.cluster.is_link(session):
            return
        self._relay.following.follow(session, table_id, watching, self.cluster.mirror.owner.get(table_id))

    async def _set_aside(self, damaged: list[DamagedTable]) -> None:
        """Mark tables that cannot be restored so that they are not tried again; their rows are kept."""
        assert self.store is not None
        for table in damaged:
            log.error("table %d cannot be restored and is set aside (kept in the database, out of the lobby): %s", table.id, table.reason)
            try:
                await self.store.set_aside(table)
            except StoreError as exc:
                log.error("table %d could not be marked as set aside (it will be tried again at the next start): %s", table.id, exc)
