"""Opening, joining, watching and closing tables, and what a client or an address may hold.

Part of :class:`server.play.authority.Authority`: creating a table, taking a
seat (the second seat starts the game), watching, giving a seat up, closing an
empty table, and the budgets (tables per client, per address, computer seats).
"""

from __future__ import annotations

import logging

from protocol import Code, Message
from protocol.messages import CreateTable, JoinTable, TableJoined, WatchTable

from ..core.errors import RequestError
from ..core.ids import issuable
from ..core.session import Push, Session
from ..ratings.rated import check_rated_request, check_rated_seat, show_ratings
from ..storage.statements import create_table_sql, delete_table_sql
from ..tables.clock import TimeControl, TimeControlError
from ..tables.table import Table
from .computer import check_level, has_computer_player
from .stored import ended_sql, seats_sql, starting_sql, table_row

__all__ = ["Seating"]

log = logging.getLogger(__name__)


class Seating:
    """The authority's tables and seats: create, join, watch, vacate, close, and the budgets (a mixin of ``Authority``)."""

    def vacate(self, session: Session, table: Table) -> None:
        """Take ``session`` out of its seat at a table that is not running."""
        session.seats.pop(table.id, None)
        table.offers.pop("rematch", None)
        table.unseat(session)
        if table.status == "waiting" and self.durable:  # without a database no statement is even built
            self._persist_soon(seats_sql(table))
        self._close_if_empty(table)

    def unwatch(self, session: Session, table: Table) -> None:
        """Stop ``session`` watching ``table``; the table closes if nobody is left."""
        session.watching.discard(table.id)
        table.unwatch(session)
        self._close_if_empty(table)

    def _close_if_empty(self, table: Table) -> None:
        if table.is_empty() and table.status != "playing":
            if self.lobby.remove(table.id) is not None:
                self._uncount(table)
                if table.status == "waiting" and self.durable:
                    self._persist_soon(delete_table_sql(table.id))
        else:
            self._table_changed(table)

    async def create_table(self, session: Session, request: CreateTable, then: list[Push]) -> Message:
        """Open a table, seating (or, with ``seat`` nil, making a spectator of) its creator and any computer seats.

        The reply is ``table_joined``; a table whose two seats are filled at
        once (a computer opponent) starts at once.
        """
        try:
            control = TimeControl.parse(request.time_control)
        except TimeControlError as exc:
            raise RequestError(Code.BAD_OPTION, str(exc), "time_control") from None
        computer = _computer_seats(request)
        check_rated_request(request, self.rated_allowed)
        self._check_room(session)
        host = self._check_address_budget(session)
        table = Table.create(issuable(self.next_table_id, "table"), request.game, request.options, request.seed, seed_chosen=request.seed is not None, bus=self.lobby.bus)
        if (computer or request.hints) and not has_computer_player(table.game.name):
            raise RequestError(Code.BAD_REQUEST, f"no computer player for {table.game.name}", "computer" if computer else "hints")
        self._check_bots(len(computer))
        table.set_time_control(control)
        table.hints = request.hints
        table.rated = request.rated
        if request.seat is not None:
            check_rated_seat(table, session)
        self._took_table_id()
        seat = None
        if request.seat is not None and table.outcome is not None:
            raise RequestError(
                Code.GAME_OVER,
                f"this setup is over before the first move ({table.outcome.reason}); "
                "create the table with seat null to look at it",
            )
        if request.seat is not None:
            seat = table.sit(session, request.seat)
        for computer_seat, level in computer.items():
            table.seat_computer(computer_seat, level)
        show_ratings(self.ratings, table)
        starting = table.ready_to_start()
        if starting:  # the table is nobody's yet: it may change before its row is committed
            deal = table.plan_deal()
            if deal is not None:
                table.deal(*deal)
            table.started = True
        statements = [create_table_sql(table_row(table))] if self.durable else []  # without a database none is built
        if starting and table.outcome is not None and self.durable:
            statements.append(ended_sql(table, table.outcome))
        self._bots_committing += len(computer)  # counted while the commit is in flight, so that no other table takes them
        try:
            await self._persist(*statements, *self.lease(table.id))
        finally:
            self._bots_committing -= len(computer)
        self.lobby.add(table)
        self._count_against(host, table)
        if seat is not None:
            session.seats[table.id] = seat
        else:
            table.watch(session)
            session.watching.add(table.id)
        log.info("%s created table %d (%s %s)", session.name, table.id, table.game.name, table.options)
        if starting:
            then.append(lambda: self._start(table))
            if table.outcome is not None:
                then.append(lambda: self._announce_outcome(table, table.outcome, lobby=False))  # type: ignore[arg-type]
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, seat, session)

    def running_bots(self) -> int:
        """How many computer seats sit at tables whose game is not over (or whose creation is being committed)."""
        seated = sum(level is not None for table in self.tables.values() if table.outcome is None for level in table.computer)
        return seated + self._bots_committing

    def _check_bots(self, more: int) -> None:
        """Refuse ``more`` computer seats beyond the server's ``max_bots``.

        Raises:
            RequestError: ``too_many_bots``, giving the limit.
        """
        if not more:
            return
        most = self.limits.max_bots
        running = self.running_bots()
        if running + more > most:
            raise RequestError(
                Code.TOO_MANY_BOTS,
                f"this server runs at most {most} computer seats at once and {running} are playing; try again when a game ends",
            )

    def _took_table_id(self) -> None:
        """``next_table_id`` was given to a new table (here or a rematch's): move it on, and tell ``table_id_taken``."""
        self.next_table_id += 1
        if self.table_id_taken is not None:
            self.table_id_taken()

    def _joined(self, request_id: int, table: Table, seat: int | None, session: Session) -> TableJoined:
        chat = self.chat_for(session, table)
        return TableJoined(id=request_id, table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves), chat=chat)

    def _check_room(self, session: Session, who: str = "you") -> None:
        """Refuse one more table to a session at its limit of seats plus watched tables."""
        most = self.limits.max_tables_per_client
        if len(session.seats) + len(session.watching) >= most:
            verb = "are" if who == "you" else "is"
            raise RequestError(Code.TOO_MANY_TABLES, f"{who} {verb} already at {most} tables, the most this server allows; leave one first")

    def _check_address_budget(self, session: Session) -> str:
        """Refuse a new table to the address of ``session``'s connection at its budget; return that address.

        Every table an address created counts until its game is over or it
        closes, whether or not anyone from there is still connected.

        Raises:
            RequestError: ``too_many_tables``.
        """
        host = session.peer.host if session.peer is not None else "?"
        most = self.limits.max_tables_per_address
        counted = self._tables_by_host.get(host, ())
        if len(counted) < most:
            return host  # fewer tables than the budget, live or not: no need to look which games are over
        # At the budget: drop the tables whose games are over (a game over never runs again; a rematch is a
        # new table), so an address with many tables pays this walk only when it may be refused.
        live = {table_id for table_id in counted if self._live(table_id)}
        self._tables_by_host[host] = live
        if len(live) >= most:
            raise RequestError(
                Code.TOO_MANY_TABLES,
                f"your address already has {most} tables that are not over, the most this server allows;"
                " finish or leave one first (tables of players who left count until they close)",
            )
        return host

    def _live(self, table_id: int) -> bool:
        table = self.tables.get(table_id)
        return table is not None and table.outcome is None

    def _count_against(self, host: str, table: Table) -> None:
        """Count a new table against ``host``'s budget (see :meth:`_check_address_budget`)."""
        table.creator_host = host
        self._tables_by_host.setdefault(host, set()).add(table.id)

    def _uncount(self, table: Table) -> None:
        """Stop counting a closed table against its creator's address (restored tables count against none)."""
        host = table.creator_host
        if host is None or host not in self._tables_by_host:
            return
        ids = self._tables_by_host[host]
        ids.discard(table.id)
        if not ids:
            del self._tables_by_host[host]

    async def join_table(self, session: Session, request: JoinTable, then: list[Push]) -> Message:
        """Seat ``session``; the second seat filled deals a secret setup and starts the game."""
        table = self.table(request.table)
        if table.id not in session.watching and table.id not in session.seats:
            self._check_room(session)
        async with table.lock:
            check_rated_seat(table, session)
            seat = table.sit(session, request.seat)
            show_ratings(self.ratings, table)
            starting = table.ready_to_start()
            deal = table.plan_deal() if starting else None
            statements = [seats_sql(table, status="playing" if starting else "waiting")] if self.durable else []
            decided = None
            if starting:
                decided = (deal[1] if deal is not None else table.state).outcome  # a starting position already decided
                if self.durable:
                    statements += starting_sql(table, deal, decided)
            try:
                await self._persist(*self.fence(table.id), *statements)
            except BaseException:
                table.unseat(session)
                raise
            session.seats[table.id] = seat
            session.watching.discard(table.id)
            if starting:
                if deal is not None:
                    table.deal(*deal)
                table.started = True
                then.append(lambda: self._start(table))
            if decided is not None:
                then.append(lambda: self._announce_outcome(table, decided, lobby=False))
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, seat, session)

    async def watch_table(self, session: Session, request: WatchTable, then: list[Push]) -> Message:
        """Make ``session`` a spectator of the table."""
        table = self.table(request.table)
        if table.id in session.seats:
            raise RequestError(Code.ALREADY_SEATED, f"you sit at table {table.id}; you cannot also watch it")
        if table.id not in session.watching:
            self._check_room(session)
        table.watch(session)
        session.watching.add(table.id)
        then.append(lambda: self._table_changed(table))
        return self._joined(request.id, table, None, session)



def _computer_seats(request: CreateTable) -> dict[int, int]:
    """The computer seats ``request`` asks for: seat -> level.

    Raises:
        RequestError: ``bad_request`` naming the field: a seat other than 0 or 1,
            a seat listed twice or the creator's own, a level out of range.
    """
    seats: dict[int, int] = {}
    for index, entry in enumerate(request.computer):
        field = f"computer[{index}]"
        if entry.seat not in (0, 1):
            raise RequestError(Code.BAD_REQUEST, f"a computer seat is 0 or 1, not {entry.seat}", f"{field}.seat")
        if entry.seat in seats:
            raise RequestError(Code.BAD_REQUEST, f"seat {entry.seat} is listed twice in computer", f"{field}.seat")
        if entry.seat == request.seat:
            raise RequestError(Code.BAD_REQUEST, f"seat {entry.seat} is your own seat; the computer takes the other", f"{field}.seat")
        check_level(entry.level, f"{field}.level")
        seats[entry.seat] = entry.level
    return seats
