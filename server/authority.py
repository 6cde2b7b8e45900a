"""The table authority: every action at a table, through one pipeline.

Each table request runs the same steps, in this order, with the table's lock
held from the first check to the last change, so one action at a time
happens per table:

1. who is asking: the session the connection speaks for (``hello`` done);
2. does the table exist (``no_such_table``);
3. is the game running (``not_started``, ``game_over``), for actions that need it;
4. may this seat do this (``not_seated``, ``not_your_turn``, ...);
5. is it legal (the engine's verdict): the table *plans* the change without making it;
6. commit: the planned change is written to the store, and nothing changes
   in memory if the write fails;
7. apply: the plan becomes the table's state;
8. announce: after the reply, each recipient gets its own view (:mod:`server.fanout`),
   and the lobby hears of the change (:mod:`server.lobby`).

Grace periods, flag falls and seat vacating follow the same commit-then-apply rule.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from functools import partial
from typing import Any, Awaitable, Callable, Sequence

import games
from protocol import Code, Message
from protocol.messages import (
    AbortGame,
    Answer,
    Answered,
    AskHint,
    ChatEntry,
    CreateTable,
    GameOver,
    GameStarted,
    Hint,
    JoinTable,
    LeaveTable,
    Offer,
    Offered,
    Ok,
    PlayerAway,
    PlayerBack,
    PlayMove,
    RematchStarted,
    Resign,
    Resumed,
    TableJoined,
    TakenBack,
    WatchTable,
)

from .bus import Bus
from .clock import Clock, FlagFell, TimeControl, TimeControlError
from .computer import ComputerPlayers, StaleMove, check_level, has_computer_player
from .fanout import ViewCache, send_moved, send_to_table, send_views
from .ids import issuable
from .limits import Limits
from .lobby import Lobby
from .rated import check_rated_request, check_rated_seat, settle_ending, show_ratings
from .ratings import Ratings
from .session import Push, Session, new_token
from .store import (
    Statement,
    StoredTable,
    TableRow,
    append_ply_sql,
    create_table_sql,
    delete_table_sql,
    takeback_clocks_sql,
    truncate_moves_sql,
    update_table_sql,
)
from .table import NO_COMPUTER, Played, RequestError, Table, clock_seat
from .workers import WorkerPool

__all__ = ["DEFAULT_ABORT_AFTER_S", "Authority", "restore_table"]

log = logging.getLogger(__name__)


MAX_LOCK_EXTENSION_S = 600.0
"""The most seconds an absent player's seat is held beyond the grace period because others' guesses lock their name."""
FLAG_FELL_MESSAGE = "your flag fell before the move arrived"
FLAG_FELL_FIRST_MESSAGE = "a flag fell before this arrived: the game is over"

DEFAULT_ABORT_AFTER_S = 30.0
"""How long the side to move at a timed table may take over its first move before the game is aborted."""

NO_OFFERS: tuple[str, ...] = ()
"""The offers a move lapses when the table has none (no list made per move)."""


class Authority:
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
            sets it to :meth:`server.chat.TableChat.history_for`).
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
        self.abort_after_s: float | None = DEFAULT_ABORT_AFTER_S
        self.chat_for: Callable[[Session, Table], list[ChatEntry]] = lambda session, table: []  # the table's chat history for session

    def left(self, session: Session) -> None:
        """The connection of ``session`` is gone: stop watching, hold its seats at running games, give up the others."""
        for table_id in list(session.watching):
            table = self.tables.get(table_id)
            if table is not None:
                self.unwatch(session, table)
        for table_id, seat in list(session.seats.items()):
            table = self.tables.get(table_id)
            if table is not None and table.outcome is None:
                self.hold_seat(table, seat, session)
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
                async with settle_ending(self.ratings, table, outcome) as rating_sql:
                    await self._persist(_ended_sql(table, outcome), *rating_sql)
                table.end(outcome)
                self._announce_outcome(table, outcome, lobby=False)
            self.vacate(holder, table)
            if not holder.seats and not holder.connected:
                self._forget(holder)

    def vacate(self, session: Session, table: Table) -> None:
        """Take ``session`` out of its seat at a table that is not running."""
        session.seats.pop(table.id, None)
        table.offers.pop("rematch", None)
        table.unseat(session)
        if table.status == "waiting":
            self._persist_soon(_seats_sql(table))
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
                if table.status == "waiting":
                    self._persist_soon(delete_table_sql(table.id))
        else:
            self._table_changed(table)

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

    def _welcome_back(self, session: Session, table: Table, seat: int | None) -> None:
        assert session.peer is not None
        chat = self.chat_for(session, table)
        session.peer.send(Resumed(table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves), chat=chat))
        if seat is not None:
            send_to_table(table, PlayerBack(table=table.id, seat=seat, name=session.name), skip=session)

    def _took_table_id(self) -> None:
        self.next_table_id += 1
        if self.table_id_taken is not None:
            self.table_id_taken()

    def table(self, table_id: int) -> Table:
        """The live table ``table_id``; raises ``RequestError`` (``no_such_table``) otherwise."""
        return self.lobby.get(table_id)

    def _table_changed(self, table: Table) -> None:
        self.lobby.changed(table.id)

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
        statements = [create_table_sql(_table_row(table))]
        if starting and table.outcome is not None:
            statements.append(_ended_sql(table, table.outcome))
        self._bots_committing += len(computer)  # counted while the commit is in flight, so that no other table takes them
        try:
            await self._persist(*statements)
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
            statements = [_seats_sql(table, status="playing" if starting else "waiting")]
            decided = None
            if starting:
                more, decided = _starting_sql(table, deal)
                statements += more
            try:
                await self._persist(*statements)
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

    def _start(self, table: Table) -> None:
        log.info("table %d starts: %s vs %s", table.id, *table.seat_names)
        table.start_clock()
        self.schedule_flag(table)
        views = ViewCache(table)
        seats = list(table.seat_names)
        send_views(table, lambda seat: GameStarted(table=table.id, seats=seats, view=views.get(seat)))
        self.computers.wake(table)

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
                async with settle_ending(self.ratings, table, outcome) as rating_sql:
                    await self._persist(_ended_sql(table, outcome), *rating_sql)
                table.end(outcome)
        if outcome is not None:
            then.append(lambda: self._announce_outcome(table, outcome, lobby=False))
        then.append(lambda: self.vacate(session, table))
        return Ok(id=request.id)

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

    def play_move_now(self, session: Session, request: PlayMove, then: list[Push]) -> Message | None:
        """:meth:`play_move` without waiting, or ``None`` if it must wait (call :meth:`play_move` then).

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
        if self.durable or table.rated or table.lock.locked():
            return None
        seats = table.seats  # Table.plan_move(), written out: one call fewer on every move
        seat = 0 if seats[0] is session else 1 if seats[1] is session else table.seat_of(session)  # seat_of() raises not_seated
        played = table.plan_seat_move(seat, request.move, request.ply)
        final = played[-1].state.outcome
        if final is not None:
            return None  # play_move plans again and settles the game's end (server.rated.settle_ending)
        if table.clock is not None:
            try:
                table.press_clock(played)
            except FlagFell:
                return None  # play_move plans again, finds the flag down (the clock is unchanged) and ends the game
        lapsed = self._apply_moves(table, played, final)
        return self._moves_played(table, played, lapsed, request, then)

    def _moves_played(self, table: Table, played: list[Played], lapsed: Sequence[str], request: PlayMove, then: list[Push]) -> Message:
        """Leave the announcement of applied plies (and of the offers they lapsed) in ``then``; return the mover's ``ok``."""
        then.append(partial(self._announce_moves, table, played))  # a partial: no lambda frame per move
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
        if final is not None:  # the game's end: ratings or casual counts (server.rated.settle_ending)
            await self._commit_end(table, played, final, clock_before)
        elif self.durable:
            try:
                await self._persist(*_move_sql(table, played, final))
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
        async with settle_ending(self.ratings, table, final, played) as rating_sql:
            try:
                await self._persist(*(_move_sql(table, played, final) if self.durable else ()), *rating_sql)
            except Exception:
                table.clock = clock_before
                raise

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
            await self._persist(_ended_sql(table, outcome))
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
        async with settle_ending(self.ratings, table, outcome) as rating_sql:
            await self._persist(_ended_sql(table, outcome), update_table_sql(table.id, clocks=table.clock_snapshot()), *rating_sql)
        table.end(outcome)
        self._announce_outcome(table, outcome)

    def to_table(self, table: Table, message: Message) -> None:
        """Send ``message`` to everyone at ``table``, encoded once."""
        send_to_table(table, message)

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
            await self._persist(*_takeback_sql(table, state))
            table.apply_takeback(state, taken)
            table.start_clock()
            self.schedule_flag(table)
        then.append(lambda: self.to_table(table, offered))
        then.append(lambda: self.to_table(table, Answered(table=table.id, kind="takeback", accepted=True)))
        then.append(lambda: self._announce_takeback(table, taken))
        return Ok(id=request.id)

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
            async with settle_ending(self.ratings, table, outcome) as rating_sql:
                await self._persist(_ended_sql(table, outcome), *rating_sql)
            table.end(outcome)
            then.append(lambda: self._announce_outcome(table, outcome))
        elif kind == "takeback":
            state, taken = table.plan_takeback(plies)
            await self._persist(*_takeback_sql(table, state))
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
        statements = [create_table_sql(_table_row(table))]
        if table.outcome is not None:  # decided by its setup: over as it starts
            statements.append(_ended_sql(table, table.outcome))
        await self._persist(*statements)
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

    def _announce_moves(self, table: Table, played: list[Played]) -> None:
        clock = table.clock_snapshot() if table.clock is not None else None  # one snapshot for every moved of the request
        last = played[-1]
        for ply in played:
            if ply.forced:
                log.info("table %d: %s must pass", table.id, table.game.seats[ply.seat])
            send_moved(table, ply, ply is not last, clock)  # planning passed for every ply but the last
        outcome = table.ended or table.state.outcome  # Table.outcome of a started game, one property call fewer
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
            await self._persist(_ended_sql(table, outcome))
            table.end(outcome)
        then.append(lambda: self._announce_outcome(table, outcome))
        return Ok(id=request.id)

    async def resign(self, session: Session, request: Resign, then: list[Push]) -> Message:
        """End the game: ``session``'s seat loses."""
        table = self.table(request.table)
        async with table.lock:
            await self._end_if_flag_fell(table)
            outcome = table.resign(session)
            async with settle_ending(self.ratings, table, outcome) as rating_sql:
                await self._persist(_ended_sql(table, outcome), *rating_sql)
            table.end(outcome)
        then.append(lambda: self._announce_outcome(table, outcome))
        return Ok(id=request.id)


def _table_row(table: Table) -> TableRow:
    return TableRow(
        id=table.id,
        game=table.game.name,
        options=table.options,
        seed=table.seed,
        created=table.created_at,
        time_control=str(table.clock.control) if table.clock is not None else None,
        seat_names=tuple(table.seat_names),  # type: ignore[arg-type]
        seat_tokens=_seat_tokens(table),
        status=table.status,
        started=time.time() if table.started else None,
        seed_chosen=table.seed_chosen,
        computer=(table.computer[0], table.computer[1]) if table.has_computer() else None,
        hints=table.hints,
        rated=table.rated,
    )


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


def _seat_tokens(table: Table) -> tuple[str | None, str | None]:
    first, second = (holder.token if holder is not None else None for holder in table.seats)
    return first, second


def _seats_sql(table: Table, status: str | None = None) -> Statement:
    fields: dict[str, Any] = {"seat_names": tuple(table.seat_names), "seat_tokens": _seat_tokens(table)}
    if status is not None:
        fields["status"] = status
        if status == "playing":
            fields["started"] = time.time()
    return update_table_sql(table.id, **fields)


def _starting_sql(table: Table, deal: tuple[str, games.State] | None) -> tuple[list[Statement], games.Outcome | None]:
    """What starting the game writes besides the seats and status, and the outcome it starts with.

    Returns:
        The statements (the seed of ``deal``, a setup dealt now; the outcome,
        when the starting position is already decided) and that outcome or ``None``.
    """
    statements = [update_table_sql(table.id, seed=deal[0])] if deal is not None else []
    decided = (deal[1] if deal is not None else table.state).outcome
    if decided is not None:
        statements.append(_ended_sql(table, decided))
    return statements, decided


def _move_sql(table: Table, played: list[Played], final: games.Outcome | None) -> list[Statement]:
    """What a move writes: its plies (the last one with both clocks, when timed) and the outcome it led to (``final``, if any)."""
    now = time.time()
    statements = [append_ply_sql(table.id, p.ply, p.seat, p.move, now, p.forced) for p in played]
    if table.clock is not None:  # both clocks in the last move row: no UPDATE of the table row per move
        clocks = table.clock.snapshot(time.monotonic())
        last = played[-1]
        remaining = clocks["remaining_ms"]
        statements[-1] = append_ply_sql(
            table.id, last.ply, last.seat, last.move, now, last.forced, remaining[last.seat], remaining[1 - last.seat], clocks["running"]
        )
    if final is not None:
        statements.append(_ended_sql(table, final))
    return statements


def _takeback_sql(table: Table, state: games.State) -> list[Statement]:
    """What a takeback to ``state`` writes: the moves after it go; a timed table keeps its clocks as they
    will be once the clock of the seat to move in ``state`` runs (no time is given back)."""
    statements = [truncate_moves_sql(table.id, state.ply)]
    clocks = table.clock_snapshot()
    if clocks is not None:
        running = clock_seat(state, table.movers(table.moves[: state.ply]))
        statements.append(takeback_clocks_sql(table.id, state.ply, {**clocks, "running": running}))
    return statements


def _ended_sql(table: Table, outcome: games.Outcome) -> Statement:
    return update_table_sql(table.id, status="over", outcome=outcome.to_dict(), finished=time.time())


def restore_table(stored: StoredTable, sessions: dict[str, Session], bus: Bus | None = None) -> Table:
    """Rebuild a live table from the database: its position replayed move by move; its events go through ``bus``.

    Raises:
        games.GameError: the stored game no longer replays (an engine changed).
    """
    row = stored.row
    table = Table.create(row.id, row.game, row.options, _restored_seed(row), seed_chosen=row.seed_chosen, bus=bus)
    clocks = stored.clocks
    if row.time_control is not None and clocks:
        table.clock = Clock.restore(row.time_control, clocks["remaining_ms"], clocks["running"], time.monotonic())
    elif row.time_control is not None:
        table.set_time_control(TimeControl.parse(row.time_control))
    table.created_at = row.created
    table.started = row.status == "playing"
    table.seat_names = list(row.seat_names)
    table.computer = list(row.computer) if row.computer is not None else [None, None]
    table.hints = row.hints
    table.rated = row.rated
    for seat, token in enumerate(row.seat_tokens):
        holder = sessions.get(token) if token is not None else None
        if holder is None and row.seat_names[seat] is not None and table.computer[seat] is None:
            holder = Session(name=row.seat_names[seat] or "?", token=token or new_token())
            sessions[holder.token] = holder
        if holder is not None:
            table.assign_seat(seat, holder)
    state = table.state
    played = []
    for move in stored.moves:
        state = state.play(move.move)
        played.append(Played(move.seat, move.move, move.ply, move.forced, state))
    if played:
        table.apply(played)
    return table


def _restored_seed(row: TableRow) -> str | int | None:
    """The seed to rebuild a stored table with: ``None`` (deal at start) for a waiting table's secret setup.

    A secret setup dealt by an older server while the table waited may have
    been seen by whoever sat there, so it is dealt afresh too.
    """
    if row.status == "waiting" and not row.seed_chosen and games.get(row.game).seed_is_secret(row.options):
        return None
    return row.seed
