"""Offers between the players of a table: a draw, a takeback, a rematch, and the computer's answers to them.

Part of :class:`server.play.authority.Authority`: every step runs under the
table's lock and commits before it changes memory, as the authority's pipeline does.
"""

from __future__ import annotations

import secrets

import games
from protocol import Code, Message
from protocol.messages import Answer, Answered, Offer, Offered, Ok, RematchStarted, TakenBack

from ..core.errors import RequestError
from ..core.ids import issuable
from ..core.session import Push, Session
from ..ratings.rated import settle_ending, show_ratings
from ..storage.statements import create_table_sql
from ..tables.fanout import ViewCache, send_views
from ..tables.table import Table
from .stored import ended_sql, table_row, takeback_sql

__all__ = ["Offers"]


class Offers:
    """The authority's offers: :meth:`offer` and :meth:`answer`, and what an accepted one does (a mixin of ``Authority``)."""

    async def offer(self, session: Session, request: Offer, then: list[Push]) -> Message:
        """Offer a draw, a takeback or a rematch (offering what the opponent offers accepts it)."""
        table = self.table(request.table)
        if table.has_computer():
            return await self._offer_computer(session, table, request, then)
        async with table.lock:
            await self._end_if_flag_fell(table)
            opponent_offer = table.offers.get(request.kind)
            if opponent_offer is not None and opponent_offer[0] != table.seat_of(session) and request.kind != "takeback":
                # Offering what the opponent already offers is accepting it (as on lichess).
                return await self._accept(session, table, request.kind, request.id, then)
            seat = table.offer(session, request.kind, request.plies)
        message = Offered(table=table.id, seat=seat, kind=request.kind, plies=request.plies)
        then.append(lambda: self.to_table(table, message))
        return Ok(id=request.id)

    async def _offer_computer(self, session: Session, table: Table, request: Offer, then: list[Push]) -> Message:
        """The computer answers at once: a takeback is granted back to the asker's own turn, a rematch
        accepted, a draw declined."""
        async with table.lock:
            await self._end_if_flag_fell(table)
            seat = table.offer(session, request.kind, request.plies)
            del table.offers[request.kind]
            offered = Offered(table=table.id, seat=seat, kind=request.kind, plies=request.plies)
            if request.kind == "draw":
                then.append(lambda: self.to_table(table, offered))
                then.append(lambda: self.to_table(table, Answered(table=table.id, kind="draw", accepted=False)))
                return Ok(id=request.id)
            if request.kind == "rematch":
                rematch = await self._rematch(table, session)
                then.append(lambda: self.to_table(table, offered))
                then.append(lambda: self.to_table(table, Answered(table=table.id, kind="rematch", accepted=True)))
                then.append(lambda: self._announce_rematch(table, rematch))
                return Ok(id=request.id)
            state, taken = _takeback_to_turn_of(table, seat, request.plies)
            await self._persist(*self.fence(table.id), *takeback_sql(table, state))
            table.apply_takeback(state, taken)
            table.start_clock()
            self.schedule_flag(table)
        then.append(lambda: self.to_table(table, offered))
        then.append(lambda: self.to_table(table, Answered(table=table.id, kind="takeback", accepted=True)))
        then.append(lambda: self._announce_takeback(table, taken))
        return Ok(id=request.id)

    async def answer(self, session: Session, request: Answer, then: list[Push]) -> Message:
        """Accept or decline the opponent's pending offer."""
        table = self.table(request.table)
        async with table.lock:
            await self._end_if_flag_fell(table)
            if request.accept:
                return await self._accept(session, table, request.kind, request.id, then)
            table.take_offer(session, request.kind)
        message = Answered(table=table.id, kind=request.kind, accepted=False)
        then.append(lambda: self.to_table(table, message))
        return Ok(id=request.id)

    async def _accept(self, session: Session, table: Table, kind: str, request_id: int, then: list[Push]) -> Message:
        """Carry out the opponent's offer of ``kind`` (called with the table lock held)."""
        if kind != "rematch":
            table.check_running()
        offer = table.take_offer(session, kind)
        if kind == "rematch":
            try:
                self._check_rematch(table, session)
            except RequestError:
                table.offers[kind] = offer  # refused: the offer stays pending
                raise
        _seat, plies = offer
        then.append(lambda: self.to_table(table, Answered(table=table.id, kind=kind, accepted=True)))
        if kind == "draw":
            outcome = games.Outcome(winner=None, reason="draw by agreement")
            await settle_ending(self.ratings, table, outcome, lambda rating_sql: self._persist(*self.fence(table.id), ended_sql(table, outcome), *rating_sql))
            table.end(outcome)
            then.append(lambda: self._announce_outcome(table, outcome))
        elif kind == "takeback":
            state, taken = table.plan_takeback(plies)
            await self._persist(*self.fence(table.id), *takeback_sql(table, state))
            table.apply_takeback(state, taken)
            table.start_clock()
            self.schedule_flag(table)
            then.append(lambda: self._announce_takeback(table, taken))
        else:
            rematch = await self._rematch(table, session)
            then.append(lambda: self._announce_rematch(table, rematch))
        return Ok(id=request_id)

    def _announce_takeback(self, table: Table, plies: int) -> None:
        views = ViewCache(table)
        clock = table.clock_snapshot()
        moves = list(table.moves)
        send_views(table, lambda seat: TakenBack(table=table.id, plies=plies, view=views.get(seat), moves=moves, clock=clock))
        self.computers.wake(table)

    def _check_rematch(self, old: Table, accepter: Session) -> str:
        """Raise unless the rematch of ``old`` can be played; return the address it will count against.

        Both players must still be there, each with room for a table, and the
        address of the accepter's connection within its table budget.

        Raises:
            RequestError: ``bad_action`` or ``too_many_tables``.
        """
        if old.rematch is not None:
            raise RequestError(Code.BAD_ACTION, f"the rematch of table {old.id} is table {old.rematch}")
        if any(holder is None and old.computer[seat] is None for seat, holder in enumerate(old.seats)):
            raise RequestError(Code.BAD_ACTION, "your opponent has left the table")
        for holder in old.seats:
            if holder is not None:
                self._check_room(holder, who=holder.name)
        self._check_bots(sum(level is not None for level in old.computer))
        return self._check_address_budget(accepter)

    async def _rematch(self, old: Table, accepter: Session) -> Table:
        """A new table with the same game and seats swapped, both players seated.

        Raises:
            RequestError: ``bad_action`` if a player has left or the rematch was already played;
                ``too_many_tables`` if a player or the accepter's address has no room.
        """
        host = self._check_rematch(old, accepter)
        seed = secrets.token_hex(8) if old.game.uses_seed else old.seed
        table = Table.create(issuable(self.next_table_id, "table"), old.game.name, old.options, seed, bus=self.lobby.bus)
        self._took_table_id()
        table.set_time_control(old.clock.control if old.clock is not None else None)
        table.hints = old.hints
        table.rated = old.rated and self.rated_allowed
        second, first = old.seats
        if old.has_computer():  # the computer takes the seat its player had not
            for seat, holder, level in ((0, first, old.computer[1]), (1, second, old.computer[0])):
                if holder is not None:
                    table.seat_player(seat, holder)
                else:
                    table.seat_computer(seat, level)  # type: ignore[arg-type]
        else:
            assert first is not None and second is not None  # _check_rematch: both players are still there
            table.seat_both(first, second)
        show_ratings(self.ratings, table)
        table.started = True
        statements = [create_table_sql(table_row(table))]
        if table.outcome is not None:  # decided by its setup: over as it starts
            statements.append(ended_sql(table, table.outcome))
        await self._persist(*statements, *self.lease(table.id))
        self.lobby.add(table)
        self._count_against(host, table)
        old.rematch = table.id
        for seat, holder in enumerate(table.seats):
            if holder is not None:
                holder.seats[table.id] = seat
        table.start_clock()
        self.schedule_flag(table)
        return table

    def _announce_rematch(self, old: Table, table: Table) -> None:
        self._move_spectators(old, table)
        for listener in self.rematch_listeners:
            listener(old, table)  # the web face's browsers, which are not sessions
        info = table.info()
        send_views(table, lambda seat: RematchStarted(previous=old.id, table=info, seat=seat, view=table.view_for(seat)))
        if table.outcome is not None:
            self._announce_outcome(table, table.outcome, lobby=False)
        self._table_changed(table)
        self.computers.wake(table)

    def _move_spectators(self, old: Table, table: Table) -> None:
        """The spectators of ``old`` follow its rematch: they watch ``table`` instead (one watched table for another)."""
        for session in list(old.spectators):
            old.unwatch(session)
            session.watching.discard(old.id)
            table.watch(session)
            session.watching.add(table.id)
        self._close_if_empty(old)



def _takeback_to_turn_of(table: Table, seat: int, plies: int) -> tuple[games.State, int]:
    """Plan a takeback of at least ``plies`` plies that ends on ``seat``'s turn (against the computer).

    Raises:
        RequestError: ``bad_action`` when ``seat`` has no move of its own to take back.
    """
    played = table.forced.count(False)
    for count in range(plies, played + 1):
        state, taken = table.plan_takeback(count)
        if state.to_move == seat:
            return state, taken
    raise RequestError(Code.BAD_ACTION, "you have no move of your own to take back")
