"""The table authority: every action at a table, through one pipeline.

Each table request runs the same steps, in this order, with the table's lock
held from the first check to the last change, so one action at a time
happens per table:

1. who is asking: the session the connection speaks for (``hello`` done);
2. does the table exist (``no_such_table``);
3. is the game running (``not_started``, ``game_over``), for actions that need it;
4. may this seat do this (``not_seated``, ``not_your_turn``, ...);
5. is it legal (the engine's verdict): the table *plans* the change without making it;
6. commit: the planned change is written to the store (the statements of
   each step: :mod:`server.play.stored`), and nothing changes in memory if
   the write fails;
7. apply: the plan becomes the table's state;
8. announce: after the reply, each recipient gets its own view (:mod:`server.tables.fanout`),
   and the lobby hears of the change (:mod:`server.tables.lobby`).

Grace periods, flag falls and seat vacating follow the same commit-then-apply rule.

This module holds the pipeline of a move (:meth:`Authority.play_move` and its
hot path :meth:`Authority.play_move_now`) and the announcements every action
shares; the other actions are the authority's too, in its parts:
:mod:`server.play.seating` (create, join, watch, vacate, close; the budgets),
:mod:`server.play.endings` (resign, abort, leave, grace, flag and abort timers)
and :mod:`server.play.offers` (draw, takeback, rematch).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Awaitable, Callable, Sequence

import games
from protocol import Code, Message
from protocol.messages import Answered, AskHint, ChatEntry, GameOver, GameStarted, Hint, Ok, PlayMove

from ..core.errors import RequestError
from ..core.session import Push, Session
from ..net.limits import Limits
from ..ratings.rated import settle_ending
from ..ratings.ratings import Ratings
from ..tables.clock import Clock, FlagFell
from ..tables.fanout import ViewCache, send_moved, send_to_table, send_views
from ..tables.lobby import Lobby
from ..tables.table import NO_COMPUTER, Played, Table
from .computer import ComputerPlayers, StaleMove
from .endings import DEFAULT_ABORT_AFTER_S, FLAG_FELL_MESSAGE, Endings
from .offers import Offers
from .seating import Seating
from ..storage.store import Statement
from .stored import move_sql
from .workers import WorkerPool

__all__ = ["DEFAULT_ABORT_AFTER_S", "Authority"]

log = logging.getLogger(__name__)


NO_OFFERS: tuple[str, ...] = ()
"""The offers a move lapses when the table has none (no list made per move)."""


class Authority(Seating, Endings, Offers):
    """The one authority over every live table.

    Args:
        limits: what one client may cost (tables per client and per address).
        grace_s: how long a disconnected player's seat is held before forfeit.
        lobby: the table registry, told of every change.
        persist: ``await persist(*statements)`` commits (no-op without a database).
        persist_soon: ``persist_soon(*statements)`` commits in the background.
        forget: drops a session that holds nothing any more.

    Attributes:
        next_table_id: the id the next new table gets.
        table_id_taken: called after ``next_table_id`` moved on (a cluster hands out ids in blocks, see
            :class:`server.cluster.ids.TableIds`); ``None`` on one node.
        durable: whether changes are committed to a store (``persist`` writes); without one a
            move's statements are not even built (a server without a database).
        ratings: the players' ratings, changed in the same commit as a rated game's end.
        rated_allowed: whether rated tables may be created (``parlour serve --no-rated`` turns it off).
        abort_after_s: how long the side to move at a timed table may take over its own first move
            before the game is aborted, in seconds (``None``: never; ``parlour serve --abort-after``).
        computers: thinks for the computer seats (replace it to change its settings
            before the first computer seat).
        chat_for: ``chat_for(session, table)``: the table's chat history as the
            session may see it, for ``table_joined`` and ``resumed`` (the server
            sets it to :meth:`server.social.chat.TableChat.history_for`).
        fence: ``fence(table_id)``: the statements that begin every write about a live table, so that
            it fails unless this node still holds the table (a node of a cluster:
            :meth:`server.cluster.leases.Leases.fence`); none on one server.
        lease: ``lease(table_id)``: the statements that end the write creating a table, giving this
            node its lease (:meth:`server.cluster.leases.Leases.lease`); none on one server.
    """

    def __init__(
        self,
        limits: Limits,
        grace_s: float,
        lobby: Lobby,
        persist: Callable[..., Awaitable[None]],
        persist_soon: Callable[..., None],
        forget: Callable[[Session], None],
    ) -> None:
        self.limits = limits
        self.grace_s = grace_s
        self.lobby = lobby
        self.tables = lobby.tables
        self.next_table_id = 1
        self.table_id_taken: Callable[[], None] | None = None
        self.durable = True
        self._persist = persist
        self._persist_soon = persist_soon
        self._forget = forget
        self.name_locked_s: Callable[[Session], float] = lambda session: 0.0
        """Seconds the session's claimed name stays locked by others' wrong guesses (see :meth:`_grace_over`)."""
        self._lock_extended_s: dict[tuple[int, int], float] = {}  # (table id, seat) -> grace added for a locked name this absence
        self._tables_by_host: dict[str, set[int]] = {}  # address -> ids of tables it created (see _check_address_budget)
        self.computers = ComputerPlayers(WorkerPool(), self.play_computer_move)
        self._bots_committing = 0  # computer seats of new tables whose row is being committed
        self.ratings = Ratings()
        self.rated_allowed = True
        self.rematch_listeners: list[Callable[[Table, Table], None]] = []
        """Called with (old table, its rematch's table) when a rematch starts, after the spectators moved."""
        self.abort_after_s: float | None = DEFAULT_ABORT_AFTER_S
        self.chat_for: Callable[[Session, Table], list[ChatEntry]] = lambda session, table: []  # the table's chat history for session
        self.fence: Callable[[int], tuple[Statement, ...]] = _none
        self.lease: Callable[[int], tuple[Statement, ...]] = _none

    def table(self, table_id: int) -> Table:
        """The live table ``table_id``; raises ``RequestError`` (``no_such_table``) otherwise."""
        return self.lobby.get(table_id)

    def _table_changed(self, table: Table) -> None:
        self.lobby.changed(table.id)

    def _start(self, table: Table) -> None:
        log.info("table %d starts: %s vs %s", table.id, *table.seat_names)
        table.start_clock()
        self.schedule_flag(table)
        views = ViewCache(table)
        seats = list(table.seat_names)
        send_views(table, lambda seat: GameStarted(table=table.id, seats=seats, view=views.get(seat)))
        self.computers.wake(table)

    async def play_move(self, session: Session, request: PlayMove, then: list[Push]) -> Message:
        """Check the seat, the turn and the move, charge the clock, commit, apply, then send each view; under the table's lock.

        The hot path is :meth:`play_move_now`, the same pipeline for a move that need not wait.
        """
        table = self.tables.get(request.table)  # self.table() only to refuse: two calls fewer on every durable move
        if table is None:
            table = self.table(request.table)  # raises no_such_table
        async with table.lock:
            played = table.plan_move(session, request.move, request.ply)
            lapsed = await self._commit_moves(table, played)
        return self._moves_played(table, played, lapsed, request, then)

    def play_move_now(self, session: Session, request: PlayMove, then: list[Any]) -> Message | None:
        """:meth:`play_move` without waiting, or ``None`` if it must wait (call :meth:`play_move` then).

        What follows the reply is left in ``then`` as :data:`server.dispatch.AtOnceHandler` says: the ``(table,
        ply)`` of a game that goes on without a computer seat (every move), else a push.

        Nothing waits without a database, a rating, a game's end or a flag that fell, with
        the table's lock free: so no other action can come between plan and
        apply, and the lock is not taken. The checks and their order are
        :meth:`play_move`'s.

        Raises:
            RequestError: as :meth:`play_move`.
        """
        table = self.tables.get(request.table)  # self.table() only to refuse: one call fewer on the hot path
        if table is None:
            table = self.table(request.table)  # raises no_such_table
        if self.durable or table.rated or table.lock._held:  # TableLock.locked(), written out
            return None
        seats = table.seats  # Table.plan_move(), written out: one call fewer on every move
        seat = 0 if seats[0] is session else 1 if seats[1] is session else table.seat_of(session)  # seat_of() raises not_seated
        played, final = table.plan_turn(seat, request.move, request.ply)
        if final is not None:
            return None  # play_move plans again and settles the game's end (server.ratings.rated.settle_ending)
        if table.clock is not None:
            try:
                table.press_clock(played)
            except FlagFell:
                return None  # play_move plans again, finds the flag down (the clock is unchanged) and ends the game
        if len(played) == 1 and table.clock is None and table.flag_timer is None and not table.offers:
            # _apply_moves() and Table.apply() of one ply of an untimed game without offers, written out: most moves
            ply = played[0]
            table.moves.append(ply.move)
            table.forced.append(False)
            table.moved.add(seat)
            table.state = ply.state
            if table.computer == NO_COMPUTER:  # _announce_moves() of a game that goes on, written out: its moved
                then.append((table, ply))  # send_moved(table, ply, False, None, True), called by the dispatcher itself
            else:
                then.append(partial(self._announce_moves, table, played, True))
            return Ok(id=request.id)
        lapsed = self._apply_moves(table, played, final)
        if lapsed:
            return self._moves_played(table, played, lapsed, request, then, running=True)
        then.append(partial(self._announce_moves, table, played, True))  # _moves_played(), written out: no offer lapsed
        return Ok(id=request.id)

    def _moves_played(
        self, table: Table, played: list[Played], lapsed: Sequence[str], request: PlayMove, then: list[Push], running: bool = False
    ) -> Message:
        """Leave the announcement of applied plies (and of the offers they lapsed) in ``then``; return the mover's ``ok``.

        ``running``: the caller knows the game goes on after them (as for :meth:`_announce_moves`).
        """
        then.append(partial(self._announce_moves, table, played, running))  # a partial: no lambda frame per move
        for kind in lapsed:
            then.append(lambda kind=kind: self.to_table(table, Answered(table=table.id, kind=kind, accepted=False, lapsed=True)))
        return Ok(id=request.id)

    async def play_computer_move(self, table: Table, seat: int, move: str, moves_before: list[str]) -> None:
        """Play the computer seat's ``move``, thought out when the table's moves were ``moves_before``.

        The same pipeline as :meth:`play_move`: the rules, the clock, the
        commit, then everyone's view.

        Raises:
            StaleMove: the table closed or its moves changed since (the move is dropped).
            RequestError: the rules refuse the move (``illegal_move``), or the
                game ended (``game_over``, a flag fell).
        """
        async with table.lock:
            if self.tables.get(table.id) is not table or table.computer[seat] is None or table.moves != moves_before:
                raise StaleMove(move)
            played = table.plan_seat_move(seat, move, None)
            lapsed = await self._commit_moves(table, played)
        self._announce_moves(table, played)
        for kind in lapsed:
            self.to_table(table, Answered(table=table.id, kind=kind, accepted=False, lapsed=True))
        if table.outcome is not None:
            self._close_if_empty(table)  # two computers played it out with nobody watching

    async def _commit_moves(self, table: Table, played: list[Played]) -> Sequence[str]:
        """Charge the clock, commit and apply planned plies (called with the table lock held); return the offers they lapse.

        Raises:
            RequestError: ``game_over`` when the mover's flag fell before the move arrived.
        """
        timed = table.clock is not None
        clock_before = table.clock.copy() if timed and self.durable else None  # type: ignore[union-attr]
        if timed:
            try:
                table.press_clock(played)
            except FlagFell as fell:
                await self._flag_fell(table, fell.seat)
                raise RequestError(Code.GAME_OVER, FLAG_FELL_MESSAGE) from None
        final = played[-1].state.outcome
        if final is not None:  # the game's end: ratings or casual counts (server.ratings.rated.settle_ending)
            await self._commit_end(table, played, final, clock_before)
        elif self.durable:
            try:
                await self._persist(*self.fence(table.id), *move_sql(table, played, final))
            except Exception:
                table.clock = clock_before  # not saved: the move did not happen, nor did its time
                raise
        return self._apply_moves(table, played, final)

    def _apply_moves(self, table: Table, played: list[Played], final: games.Outcome | None) -> Sequence[str]:
        """Apply committed plies (``final``: the outcome they lead to), lapse offers, stop or re-arm the flag; return the lapsed offers."""
        timed = table.clock is not None
        table.apply(played)
        lapsed = table.lapse_offers(played[0].seat) if table.offers else NO_OFFERS
        if final is not None:
            table.stop_clock()
        elif timed or table.flag_timer is not None:  # an untimed game has no flag to watch
            self.schedule_flag(table)
        return lapsed

    async def _commit_end(self, table: Table, played: list[Played], final: games.Outcome, clock_before: Clock | None) -> None:
        """Commit the plies that end a game together with its rating change or casual counts (see :meth:`_commit_moves`)."""
        def commit(rating_sql: list[Statement]) -> Awaitable[None]:
            return self._persist(*self.fence(table.id), *(move_sql(table, played, final) if self.durable else ()), *rating_sql)

        try:
            await settle_ending(self.ratings, table, final, commit, played)
        except Exception:
            table.clock = clock_before
            raise

    def to_table(self, table: Table, message: Message) -> None:
        """Send ``message`` to everyone at ``table``, encoded once."""
        send_to_table(table, message)

    async def hint(self, session: Session, request: AskHint, then: list[Push]) -> Message:
        """The computer's best move for the asker's seat, thought out in a worker at a short budget."""
        table = self.table(request.table)
        if not table.hints_allowed():
            raise RequestError(Code.HINTS_OFF, f"table {table.id} was created without hints")
        seat = table.seat_of(session)
        table.check_running()
        if table.state.to_move != seat:
            raise RequestError(Code.NOT_YOUR_TURN, "hints are for your own turn; wait for your opponent's move")
        ply, move = await self.computers.hint(table, seat)
        return Hint(id=request.id, table=table.id, ply=ply, move=move)

    def _announce_moves(self, table: Table, played: list[Played], running: bool = False) -> None:
        """Send everyone at ``table`` the ``moved`` of each applied ply, then the game's end or the computer's turn.

        ``running``: the caller knows the game goes on after ``played`` (the table
        started, has not ended, and the last position has no outcome), so
        nobody asks the position again.
        """
        clock = table.clock_snapshot() if table.clock is not None else None  # one snapshot for every moved of the request
        last = played[-1]
        for ply in played:
            if ply.forced:
                log.info("table %d: %s must pass", table.id, table.game.seats[ply.seat])
            send_moved(table, ply, ply is not last, clock, running)  # planning passed for every ply but the last
        outcome = None if running else table.ended or table.state.outcome  # Table.outcome of a started game, one property call fewer
        if outcome is not None:
            self._announce_outcome(table, outcome)
        elif table.computer != NO_COMPUTER:  # most tables have no computer seat: no call to wake none
            self.computers.wake(table)

    def _announce_outcome(self, table: Table, outcome: games.Outcome, *, lobby: bool = True) -> None:
        log.info("table %d over: %s", table.id, outcome)
        # Ended by the table (resignation, time, agreement) in a game that hides information: the
        # setup is public now, and no moved showed it (a move that ends the game carries it itself).
        hides = table.ended is not None and table.game.seed_is_secret(table.options)
        revealed = table.view_for(None) if hides else None
        send_to_table(table, GameOver(table=table.id, outcome=outcome.to_dict(), ratings=table.rating_changes, view=revealed))
        for holder in list(table.seats):
            if holder is not None and not holder.connected:
                self.vacate(holder, table)  # nobody waits for an absent player of a finished game
                if not holder.seats:
                    self._forget(holder)
        if lobby:
            self._table_changed(table)


def _none(table_id: int) -> tuple[Statement, ...]:
    """No statements: the ``fence`` and ``lease`` of a server that is no node of a cluster."""
    return ()
