"""How a game ends other than by its last move, and the timers that may end it.

Resigning, aborting, leaving, a player's absence (the grace period, resuming)
and the clock's flag and first-move abort timers. Part of
:class:`server.play.authority.Authority`: every ending is committed (with its
rating change) under the table's lock before the table ends in memory.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial

from protocol import Code, Message
from protocol.messages import AbortGame, LeaveTable, Ok, PlayerAway, PlayerBack, Resign, Resumed

from ..core.errors import RequestError
from ..core.session import Push, Session
from ..ratings.rated import settle_ending
from ..storage.statements import update_table_sql
from ..tables.fanout import send_to_table
from ..tables.table import Table
from .stored import ended_sql

__all__ = ["DEFAULT_ABORT_AFTER_S", "FLAG_FELL_FIRST_MESSAGE", "FLAG_FELL_MESSAGE", "MAX_LOCK_EXTENSION_S", "Endings"]

log = logging.getLogger(__name__)

MAX_LOCK_EXTENSION_S = 600.0
"""The most seconds an absent player's seat is held beyond the grace period because others' guesses lock their name."""

FLAG_FELL_MESSAGE = "your flag fell before the move arrived"
FLAG_FELL_FIRST_MESSAGE = "a flag fell before this arrived: the game is over"

DEFAULT_ABORT_AFTER_S = 30.0
"""How long the side to move at a timed table may take over its first move before the game is aborted."""


class Endings:
    """The authority's endings other than by a move: resign, abort, leave, grace, flag (a mixin of ``Authority``)."""

    def left(self, session: Session, moved: bool = False) -> None:
        """The connection of ``session`` is gone: stop watching, hold its seats at running games, give up the others.

        ``moved``: the session went on at another node of a cluster (it resumed there): its seats at finished
        tables are held quietly for the grace period too, for that node to bring them back (``resumed``) as a
        resume on one node does.
        """
        for table_id in list(session.watching):
            table = self.tables.get(table_id)
            if table is not None:
                self.unwatch(session, table)
        for table_id, seat in list(session.seats.items()):
            table = self.tables.get(table_id)
            if table is not None and table.outcome is None:
                self.hold_seat(table, seat, session)
            elif table is not None and moved:
                self._hold_quietly(table, seat)
            elif table is not None:
                self.vacate(session, table)
        if not session.seats:
            self._forget(session)

    def cancel_timers(self) -> None:
        """Stop every grace and abort timer (the server is closing: nobody forfeits or is aborted for that)."""
        for table in self.tables.values():
            for timer in table.grace.values():
                timer.cancel()
            if table.abort_timer is not None:
                table.abort_timer.cancel()
                table.abort_timer = None

    def hold_seat(self, table: Table, seat: int, session: Session) -> None:
        """Keep an absent player's seat for the grace period, then forfeit it."""
        self._lock_extended_s.pop((table.id, seat), None)
        self._hold_for(table, seat, session, self.grace_s)

    def _hold_quietly(self, table: Table, seat: int) -> None:
        """Keep a seat at a finished table for the grace period, telling nobody (its player went on at another node)."""
        table.grace[seat] = asyncio.get_running_loop().call_later(self.grace_s, lambda: asyncio.ensure_future(self._grace_over(table, seat)))

    def _hold_for(self, table: Table, seat: int, session: Session, hold_s: float) -> None:
        loop = asyncio.get_running_loop()
        table.grace[seat] = loop.call_later(hold_s, lambda: asyncio.ensure_future(self._grace_over(table, seat)))
        send_to_table(table, PlayerAway(table=table.id, seat=seat, name=session.name, forfeit_in_s=hold_s))

    def _locked_out_s(self, table: Table, seat: int, holder: Session) -> float:
        """How much longer to hold the seat of ``holder``, whose grace ran out while others' guesses lock their name.

        Such a player may be unable to prove their name from an address that
        guessed, so the seat waits for the lock to end, at most
        :data:`MAX_LOCK_EXTENSION_S` more in one absence (0: forfeit now).
        """
        locked_s = self.name_locked_s(holder) if holder.claimed else 0.0
        extended_s = self._lock_extended_s.get((table.id, seat), 0.0)
        hold_s = min(locked_s, MAX_LOCK_EXTENSION_S - extended_s)
        if hold_s <= 0:
            self._lock_extended_s.pop((table.id, seat), None)
            return 0.0
        self._lock_extended_s[(table.id, seat)] = extended_s + hold_s
        return hold_s

    async def _grace_over(self, table: Table, seat: int) -> None:
        async with table.lock:
            table.grace.pop(seat, None)
            holder = table.seats[seat]
            if holder is None or holder.connected or self.tables.get(table.id) is not table:
                self._lock_extended_s.pop((table.id, seat), None)
                return
            hold_s = self._locked_out_s(table, seat, holder)
            if hold_s > 0:
                log.info("the name of %s is locked by wrong guesses: their seat at table %d is held %.0f s more", holder.name, table.id, hold_s)
                self._hold_for(table, seat, holder, hold_s)
                return
            if table.status == "playing":
                if table.abortable():
                    outcome = table.aborted(seat, "abandoned the game before both sides had moved")
                else:
                    outcome = table.forfeit(seat, "abandoned the game")
                await settle_ending(self.ratings, table, outcome, lambda rating_sql: self._persist(*self.fence(table.id), ended_sql(table, outcome), *rating_sql))
                table.end(outcome)
                self._announce_outcome(table, outcome, lobby=False)
            self.vacate(holder, table)
            if not holder.seats and not holder.connected:
                self._forget(holder)

    def rejoin(self, session: Session, then: list[Push]) -> None:
        """A resumed session is back: stop its grace timers; after the ``welcome``, tell it and the others at its tables."""
        for table_id, seat in session.seats.items():
            self._lock_extended_s.pop((table_id, seat), None)
            table = self.tables[table_id]
            timer = table.grace.pop(seat, None)
            if timer is not None:
                timer.cancel()
            then.append(lambda table=table, seat=seat: self._welcome_back(session, table, seat))
        for table_id in session.watching:
            table = self.tables[table_id]
            then.append(lambda table=table: self._welcome_back(session, table, None))

    def welcome_back(self, session: Session, table: Table, seat: int | None) -> None:
        """Send ``session`` (connected) the whole of ``table`` as it may see it from ``seat`` (``resumed``), and tell the others
        at the table that the seat's player is back (a resumed connection; a table taken over from a node that died)."""
        timer = table.grace.pop(seat, None) if seat is not None else None
        if timer is not None:
            timer.cancel()
        self._welcome_back(session, table, seat)

    def _welcome_back(self, session: Session, table: Table, seat: int | None) -> None:
        assert session.peer is not None
        chat = self.chat_for(session, table)
        session.peer.send(Resumed(table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves), chat=chat))
        if seat is not None:
            send_to_table(table, PlayerBack(table=table.id, seat=seat, name=session.name), skip=session)

    async def leave_table(self, session: Session, request: LeaveTable, then: list[Push]) -> Message:
        """Take ``session`` away from the table; leaving a running game forfeits it, or aborts it while a side has not moved."""
        table = self.table(request.table)
        if table.id in session.watching:
            then.append(lambda: self.unwatch(session, table))
            return Ok(id=request.id)
        if table.id not in session.seats:
            raise RequestError(Code.NOT_AT_TABLE, f"you are not at table {table.id}")
        async with table.lock:
            outcome = None
            if table.status == "playing":
                seat = session.seats[table.id]
                if table.abortable():
                    outcome = table.aborted(seat, "left the table before both sides had moved")
                else:
                    outcome = table.forfeit(seat, "left the table (game forfeited)")
                await settle_ending(self.ratings, table, outcome, lambda rating_sql: self._persist(*self.fence(table.id), ended_sql(table, outcome), *rating_sql))
                table.end(outcome)
        if outcome is not None:
            then.append(lambda: self._announce_outcome(table, outcome, lobby=False))
        then.append(lambda: self.vacate(session, table))
        return Ok(id=request.id)

    def schedule_flag(self, table: Table) -> None:
        """Arrange for the server to notice the running seat's flag fall, even if nobody speaks.

        A flag timer already set to fire no later than the new flag time is
        kept: firing early, it finds no flag down and sets the next one
        (:meth:`_check_flag`). Most moves push the flag time later, so a timed
        move seldom cancels a timer and makes a new one.
        """
        timer = table.flag_timer
        clock = table.clock
        if clock is None or clock.running is None or table.outcome is not None:
            if timer is not None:
                timer.cancel()
                table.flag_timer = None
            self._schedule_abort(table)
            return
        if table.abort_timer is not None:  # the clock runs: the side to move has moved before
            table.abort_timer.cancel()
            table.abort_timer = None
        now = time.monotonic()
        flag_at = clock.flag_time(now)
        assert flag_at is not None
        if timer is not None:
            if table.flag_timer_for <= flag_at:
                return  # it fires first
            timer.cancel()
        table.flag_timer_for = flag_at
        table.flag_timer = asyncio.get_running_loop().call_later(max(0.0, flag_at - now) + 0.001, partial(self._flag_due, table))

    def _schedule_abort(self, table: Table) -> None:
        """Arrange for a timed game to be aborted if its side to move, which has not moved yet, stays silent.

        The timer waits :attr:`abort_after_s` from the moment that side's
        first turn began (or the server restarted); a timer already waiting at
        the same ply is kept. Untimed games are never aborted by a timer.
        """
        timer = table.abort_timer
        seat = table.state.to_move
        ply = table.state.ply
        due = self.abort_after_s is not None and table.clock is not None and table.started and table.outcome is None
        if not due or seat is None or seat in table.moved:
            if timer is not None:
                timer.cancel()
                table.abort_timer = None
            return
        if timer is not None:
            if table.abort_timer_ply == ply:
                return
            timer.cancel()
        assert self.abort_after_s is not None  # due
        table.abort_timer_ply = ply
        table.abort_timer = asyncio.get_running_loop().call_later(self.abort_after_s, partial(self._abort_due, table, ply))

    def _abort_due(self, table: Table, ply: int) -> None:
        """The abort timer fired: abort the game if the side to move still has not moved."""
        table.abort_timer = None
        asyncio.ensure_future(self._check_abort(table, ply))

    async def _check_abort(self, table: Table, ply: int) -> None:
        async with table.lock:
            seat = table.state.to_move
            if (
                table.abort_timer is not None
                or table.outcome is not None
                or table.state.ply != ply
                or seat is None
                or seat in table.moved
                or self.tables.get(table.id) is not table
            ):
                return
            outcome = table.aborted(seat, f"did not play a first move within {self.abort_after_s:g} s")
            await self._persist(*self.fence(table.id), ended_sql(table, outcome))
            table.end(outcome)
            self._announce_outcome(table, outcome)

    def _flag_due(self, table: Table) -> None:
        """The flag timer fired: check the flag (a timer that fired is no timer any more)."""
        table.flag_timer = None
        asyncio.ensure_future(self._check_flag(table))

    async def _check_flag(self, table: Table) -> None:
        async with table.lock:
            clock = table.clock
            if clock is None or table.outcome is not None:
                return
            seat = clock.flagged(time.monotonic())
            if seat is None:
                self.schedule_flag(table)
                return
            await self._flag_fell(table, seat)

    async def _end_if_flag_fell(self, table: Table) -> None:
        """End the game on time if the running seat's flag fell before now, though its timer has not fired yet.

        Called with the table's lock held, before an offer, an answer or a
        resignation is carried out: the flag fell first, so the game was lost
        on time, not drawn or resigned.

        Raises:
            RequestError: ``game_over`` when the flag fell (the game has just ended on time).
        """
        clock = table.clock
        if clock is None or table.outcome is not None:
            return
        seat = clock.flagged(time.monotonic())
        if seat is not None:
            await self._flag_fell(table, seat)
            raise RequestError(Code.GAME_OVER, FLAG_FELL_FIRST_MESSAGE)

    async def _flag_fell(self, table: Table, seat: int) -> None:
        """End the game: ``seat`` lost on time (called with the table lock held)."""
        outcome = table.forfeit(seat, "ran out of time")
        await settle_ending(self.ratings, table, outcome, lambda rating_sql: self._persist(*self.fence(table.id), ended_sql(table, outcome), update_table_sql(table.id, clocks=table.clock_snapshot()), *rating_sql))
        table.end(outcome)
        self._announce_outcome(table, outcome)

    async def abort(self, session: Session, request: AbortGame, then: list[Push]) -> Message:
        """Abort the game before ``session``'s own first move: it ends with no result and is not rated.

        Raises:
            RequestError: ``no_such_table``, ``not_seated``, ``game_over``,
                ``not_started``; ``bad_action`` once the asker has moved.
        """
        table = self.table(request.table)
        async with table.lock:
            await self._end_if_flag_fell(table)
            outcome = table.plan_abort(session)
            await self._persist(*self.fence(table.id), ended_sql(table, outcome))
            table.end(outcome)
        then.append(lambda: self._announce_outcome(table, outcome))
        return Ok(id=request.id)

    async def resign(self, session: Session, request: Resign, then: list[Push]) -> Message:
        """End the game: ``session``'s seat loses."""
        table = self.table(request.table)
        async with table.lock:
            await self._end_if_flag_fell(table)
            outcome = table.resign(session)
            await settle_ending(self.ratings, table, outcome, lambda rating_sql: self._persist(*self.fence(table.id), ended_sql(table, outcome), *rating_sql))
            table.end(outcome)
        then.append(lambda: self._announce_outcome(table, outcome))
        return Ok(id=request.id)
