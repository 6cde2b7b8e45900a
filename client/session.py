"""The client-side model of a session, shared by every front end.

A :class:`ClientSession` wraps a connected :class:`client.connection.Client`
and keeps what a player sees: every table they sit at or watch
(:class:`TableState`: the table, their seat, the view, the move list, clocks,
offers, chat, away seats, the outcome), the lobby, and which table is focused.
It prints nothing and imports no UI toolkit: front ends :meth:`~ClientSession.subscribe`
to small :class:`Change` descriptions and draw what changed.

Server pushes go through :meth:`ClientSession.apply`, a pure state change
(tests feed it real message objects); :meth:`ClientSession.run` reads them
from the connection. Every action names its table explicitly, so a move can
never go to a table the player is no longer looking at.

>>> session = ClientSession(client)                      # doctest: +SKIP
>>> task = asyncio.create_task(session.run())            # doctest: +SKIP
>>> table = await session.create("othello", {"size": 8}) # doctest: +SKIP
>>> await session.move(table.id, "d3")                   # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

import msgspec

from protocol import messages as m

from .connection import Client, ServerError

__all__ = [
    "ClientSession",
    "TableState",
    "PendingOffer",
    "ChatLine",
    "Change",
    "ChangeKind",
    "TakebackPlan",
    "SessionError",
    "takeback_plan",
    "taken_back_by",
    "describe_takeback",
    "unseen_lines",
    "CHAT_LINES",
    "LOBBY_MOST",
    "SEEKS_MOST",
    "CHALLENGES_MOST",
]

CHAT_LINES = 200
"""How many chat lines are kept per table and for the lobby (older ones are dropped)."""
LOBBY_MOST = 10_000
"""The most lobby tables the model holds; pushes about further tables are ignored."""
SEEKS_MOST = 1000
"""The most open seeks the model holds; pushes about further seeks are ignored."""
CHALLENGES_MOST = 100
"""The most open challenges to us the model holds; further ones wait unseen until one ends."""
OFFER_KINDS = ("draw", "takeback", "rematch")

ChangeKind = Literal[
    "table_added",  # a table was joined, watched, created, resumed, or a rematch started
    "table_removed",  # the table was left
    "table",  # the table's info changed (seats, status, spectators, clock)
    "game_started",
    "moved",
    "taken_back",
    "game_over",
    "offer",  # an offer was made or answered (see Change.event)
    "away",  # a seat lost its connection or came back
    "chat",  # a chat line at a table (``table`` set) or in the lobby (``table`` None)
    "lobby",  # the lobby's tables changed
    "focus",  # the focused table changed
    "error",  # the server sent an error that answers no request
    "shutdown",  # the server is stopping
    "disconnected",  # the connection closed (run() returned)
    "challenge",  # a challenge to us came or ended (see Change.event: ChallengeReceived / ChallengeEnded)
    "seek",  # the open seeks changed
    "told",  # a player told us something (Change.event is the Told)
]


@dataclass(frozen=True)
class Change:
    """What :meth:`ClientSession.apply` (or an action) changed.

    ``table`` is the table it concerns (``None``: the lobby or the session);
    ``event`` the server message behind it, when there is one.
    """

    kind: ChangeKind
    table: int | None = None
    event: m.Message | None = None


@dataclass(frozen=True)
class PendingOffer:
    """An offer waiting for an answer: who made it, of what kind, and (for a takeback) how many plies."""

    seat: int
    kind: str
    plies: int = 1


@dataclass(frozen=True)
class ChatLine:
    """One chat line as received (raw text: front ends sanitise before showing it)."""

    name: str
    text: str


@dataclass(frozen=True)
class TakebackPlan:
    """What a takeback of ``plies`` plies takes back.

    ``taken`` lists the plies that go, oldest first, as ``(seat, move, forced)``;
    ``plies`` is the number to send in ``offer`` (the players' plies, forced
    passes not counted, as the server counts them).
    """

    plies: int
    taken: tuple[tuple[int, str, bool], ...]

    def describe(self, viewer: int | None, seat_names: Sequence[str] = ("seat 0", "seat 1")) -> str:
        """``"takes back your move e3 and their reply f4"`` as ``viewer`` (a seat, or ``None``) reads it."""
        return describe_takeback(self.taken, viewer, seat_names)


class SessionError(Exception):
    """An action the model refuses before asking the server (not at that table, nothing to take back, ...)."""


@dataclass
class TableState:
    """One table the session sits at or watches.

    Attributes:
        info: the table as the server last described it (options in full).
        seat: our seat, or ``None`` as a spectator.
        view: the position as our seat may see it (``legal_moves`` on our turn).
        moves: every ply so far in notation, forced passes included.
        forced: per ply, whether it was a pass the server played (same length as ``moves``).
        clock: the last clock snapshot (``{"remaining_ms": [a, b], "running": 0|1|None, ...}``), ``None`` untimed.
        clock_at: the monotonic time (seconds) the snapshot arrived.
        offers: pending offers by kind (at most one of each kind at a table).
        chat: the table's latest chat lines, oldest first (those said before we came included).
        away: seats whose player lost their connection, with the monotonic
            deadline (seconds) at which the seat is forfeited.
        moved_at_ply: the ply we last sent a move for; our turn is over until a newer view arrives.
        first_seat: the seat that played the first ply (turns alternate; a forced pass is a ply), once known.
    """

    info: m.TableInfo
    seat: int | None
    view: dict[str, Any]
    moves: list[str] = field(default_factory=list)
    forced: list[bool] = field(default_factory=list)
    clock: dict[str, Any] | None = None
    clock_at: float = 0.0
    offers: dict[str, PendingOffer] = field(default_factory=dict)
    chat: deque[ChatLine] = field(default_factory=lambda: deque(maxlen=CHAT_LINES))
    away: dict[int, float] = field(default_factory=dict)
    moved_at_ply: int = -1
    first_seat: int | None = None
    rating_changes: list[m.RatingChange] | None = None
    """Per seat, the rating before and after, once a rated game is over (``game_over.ratings``)."""
    earlier: list[ChatLine] = field(default_factory=list)
    """The chat lines said before we came (``table_joined.chat``, ``resumed.chat``) that we had not seen, oldest first."""

    def __post_init__(self) -> None:
        to_move = self.view.get("to_move")
        if self.first_seat is None and to_move in (0, 1):
            self.first_seat = (to_move - len(self.moves)) % 2
    @property
    def id(self) -> int:
        """The table's id."""
        return self.info.id

    @property
    def game(self) -> str:
        """The game's name (``"othello"``)."""
        return self.info.game

    @property
    def is_player(self) -> bool:
        """Whether we sit at this table (rather than watch it)."""
        return self.seat is not None

    @property
    def ply(self) -> int:
        """The number of plies played so far."""
        return int(self.view.get("ply", len(self.moves)))

    @property
    def to_move(self) -> int | None:
        """The seat to move, or ``None`` once the game is over."""
        return self.view.get("to_move")

    @property
    def legal_moves(self) -> list[str] | None:
        """Our legal moves when it is our turn, else ``None``."""
        return self.view.get("legal_moves")

    @property
    def outcome(self) -> dict[str, Any] | None:
        """The outcome (``winner``, ``reason``, ``score``) once the game is over, else ``None``."""
        return self.view.get("outcome") or self.info.outcome

    @property
    def status(self) -> str:
        """``"waiting"``, ``"playing"`` or ``"over"``."""
        return "over" if self.outcome is not None else self.info.status

    @property
    def running(self) -> bool:
        """Whether the game is being played (both seats taken, not over)."""
        return self.status == "playing"

    @property
    def last_move(self) -> str | None:
        """The notation of the last ply, or ``None`` before the first."""
        return self.moves[-1] if self.moves else None

    @property
    def forced_pass(self) -> bool:
        """Whether the seat to move can only pass (the server passes for it)."""
        return bool(self.view.get("forced_pass"))

    @property
    def my_turn(self) -> bool:
        """Whether we may move now (our legal moves are known and we have not moved at this ply yet)."""
        return self.legal_moves is not None and self.ply > self.moved_at_ply

    @property
    def may_abort(self) -> bool:
        """Whether we may abort the game now: we sit at it, it runs, and we have not played a move of our own yet."""
        if self.seat is None or not self.running:
            return False
        return not any(mover == self.seat for mover, forced in zip(self._movers(), self.forced) if not forced)

    @property
    def leaving_aborts(self) -> bool:
        """Whether leaving our seat now aborts the game (no result, not rated) rather than forfeiting it.

        True while we sit at the running game and a side has not played a move of
        its own yet (forced passes do not count), as the server rules (PROTOCOL.md
        ``leave_table``); a game whose plies' seats are unknown counts as such.
        """
        if self.seat is None or not self.running:
            return False
        moved = {mover for mover, forced in zip(self._movers(), self.forced) if not forced}
        return not {0, 1} <= moved

    def opponent_offer(self, kind: str | None = None) -> PendingOffer | None:
        """The opponent's pending offer of ``kind`` (``None``: the latest of any kind), for a player."""
        if self.seat is None:
            return None
        offers = [offer for offer in self.offers.values() if offer.seat != self.seat and kind in (None, offer.kind)]
        return offers[-1] if offers else None

    def seat_of_ply(self, index: int) -> int | None:
        """The seat that played ply ``index`` (0 is the first), from the alternation of turns; ``None`` when unknown."""
        to_move = self.to_move
        if to_move in (0, 1):
            return (to_move - (len(self.moves) - index)) % 2
        return (self.first_seat + index) % 2 if self.first_seat is not None else None

    def remaining_ms(self, now: float) -> list[int] | None:
        """Both seats' clock time in milliseconds at monotonic time ``now``, counted down locally; ``None`` untimed."""
        if self.clock is None:
            return None
        try:
            remaining = [int(ms) for ms in self.clock["remaining_ms"]][:2]
            running = self.clock.get("running")
        except (KeyError, TypeError, ValueError):
            return None
        if running in (0, 1) and len(remaining) == 2:
            remaining[running] = max(0, remaining[running] - max(0, round((now - self.clock_at) * 1000)))
        return remaining

    def takeback_plan(self) -> TakebackPlan:
        """What ``takeback`` asks for here, as on lichess (see :func:`takeback_plan`).

        Raises:
            SessionError: we are not seated, the game is not running, or we have no move to take back.
        """
        if self.seat is None:
            raise SessionError(f"only the players can ask for a takeback; you are watching table {self.id}")
        if not self.running:
            raise SessionError("a takeback is only possible while the game runs")
        return takeback_plan(self.moves, self.forced, self._movers(), self.seat)

    def takeback_of(self, plies: int) -> TakebackPlan:
        """What a takeback of ``plies`` players' plies (an ``offered`` request) would take back here."""
        return TakebackPlan(plies, taken_back_by(self.moves, self.forced, self._movers(), plies))

    def _movers(self) -> list[int | None]:
        return [self.seat_of_ply(index) for index in range(len(self.moves))]


def unseen_lines(known: Sequence[ChatLine], history: Sequence[ChatLine]) -> list[ChatLine]:
    """The lines of ``history`` (the server's last lines at a table) after those ``known`` ends with.

    The longest run of lines that ends ``known`` and starts ``history`` is
    taken to be the same lines (seen before a reconnection); the rest of
    ``history`` is new. With nothing in common, all of ``history`` is new.
    """
    for overlap in range(min(len(known), len(history)), 0, -1):
        if list(known[len(known) - overlap :]) == list(history[:overlap]):
            return list(history[overlap:])
    return list(history)


def takeback_plan(moves: Sequence[str], forced: Sequence[bool], movers: Sequence[int | None], seat: int) -> TakebackPlan:
    """The lichess takeback for ``seat``: back to its own last move, whoever is to move.

    On ``seat``'s turn that is the opponent's reply and ``seat``'s move (two
    plies); on the opponent's turn ``seat``'s last move (one ply). Forced
    passes go along but are not counted, as the server counts plies.

    Args:
        moves, forced, movers: per ply, its notation, whether the server played
            it as a forced pass, and the seat that played it.

    Raises:
        SessionError: ``seat`` has played no move yet.
    """
    plies = 0
    for index in range(len(moves) - 1, -1, -1):
        if forced[index]:
            continue
        plies += 1
        if movers[index] == seat:
            return TakebackPlan(plies, taken_back_by(moves, forced, movers, plies))
    raise SessionError("you have no move of your own to take back yet")


def taken_back_by(moves: Sequence[str], forced: Sequence[bool], movers: Sequence[int | None], plies: int) -> tuple[tuple[int, str, bool], ...]:
    """The plies a takeback of ``plies`` players' plies removes, oldest first, as ``(seat, move, forced)``.

    As the server does it: back from the last ply until ``plies`` plies that
    were not forced passes are counted, every forced pass crossed going too.
    """
    keep, counted = len(moves), 0
    while counted < plies and keep > 0:
        keep -= 1
        if not forced[keep]:
            counted += 1
    return tuple((movers[i] if movers[i] is not None else -1, moves[i], forced[i]) for i in range(keep, len(moves)))


def describe_takeback(taken: Sequence[tuple[int, str, bool]], viewer: int | None, seat_names: Sequence[str] = ("seat 0", "seat 1")) -> str:
    """Say what a takeback removes, as ``viewer`` reads it: ``"takes back your move e3 and their reply f4"``.

    Forced passes are left out of the words (they go along silently).
    """
    words = []
    for number, (seat, move, _forced) in enumerate(entry for entry in taken if not entry[2]):
        if viewer is not None and seat in (0, 1):
            whose = "your" if seat == viewer else "their"
        else:
            whose = f"{seat_names[seat]}'s" if seat in (0, 1) else "the"
        words.append(f"{whose} {'move' if number == 0 else 'reply'} {move}")
    if not words:
        return "takes back nothing"
    return "takes back " + (" and ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " and " + words[-1])


Observer = Callable[[Change], None]


class ClientSession:
    """Everything one connection's player sees, kept up to date from the server's pushes.

    Args:
        client: a connected :class:`Client` (replace it after a reconnect with :meth:`reattach`).
        now: the monotonic clock (seconds) used to time clock snapshots and away deadlines.

    Attributes:
        tables: every table we sit at or watch, by id, in the order we came to them.
        focus: the focused table's id (``None``: the lobby).
        lobby: the lobby's tables by id (after :meth:`refresh_lobby`, kept by ``watch_lobby`` pushes).
        lobby_chat: the lobby's latest chat lines.
        challenges: the open challenges to us by id (``challenge_received`` until ``challenge_ended``).
        seeks: the open seeks by id (after :meth:`refresh_seeks`, kept by ``seek_added``/``seek_removed``
            pushes to lobby watchers).
        tells: the latest private messages to us (raw text: sanitise before showing), oldest first.
    """

    def __init__(self, client: Client, now: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.now = now
        self.tables: dict[int, TableState] = {}
        self.focus: int | None = None
        self.lobby: dict[int, m.TableInfo] = {}
        self.lobby_chat: deque[ChatLine] = deque(maxlen=CHAT_LINES)
        self.challenges: dict[int, m.ChallengeInfo] = {}
        self.seeks: dict[int, m.SeekInfo] = {}
        self.tells: deque[ChatLine] = deque(maxlen=CHAT_LINES)
        self.offline_since: float | None = None
        """The monotonic time the connection was lost, while it is (``None``: connected); clocks read as paused meanwhile."""
        self._observers: list[Observer] = []

    # --- observers ---------------------------------------------------------------------

    def subscribe(self, callback: Observer) -> Callable[[], None]:
        """Call ``callback(change)`` after every change; returns a function that unsubscribes it.

        Callbacks run synchronously inside :meth:`apply` and the actions: they
        should only record or schedule work (post a message, print).
        """
        self._observers.append(callback)
        return lambda: self._observers.remove(callback) if callback in self._observers else None

    def _notify(self, change: Change) -> Change:
        for callback in list(self._observers):
            callback(change)
        return change

    # --- reading ---------------------------------------------------------------------------

    @property
    def focused(self) -> TableState | None:
        """The focused table, or ``None``."""
        return self.tables.get(self.focus) if self.focus is not None else None

    def table(self, table: int) -> TableState:
        """The table ``table`` we sit at or watch.

        Raises:
            SessionError: we are not at that table.
        """
        state = self.tables.get(table)
        if state is None:
            raise SessionError(f"you are not at table {table}; tables lists yours")
        return state

    def set_focus(self, table: int | None) -> None:
        """Focus table ``table`` (``None``: the lobby).

        Raises:
            SessionError: we are not at that table.
        """
        if table is not None:
            self.table(table)
        if table != self.focus:
            self.focus = table
            self._notify(Change("focus", table))

    def seat_names(self, game: str) -> tuple[str, str]:
        """The names of ``game``'s two seats (``("Black", "White")``) from ``welcome``; ``("seat 0", "seat 1")`` if unknown."""
        welcome = self.client.welcome
        for entry in welcome.games if welcome is not None else []:
            if entry.get("name") == game:
                seats = entry.get("seats") or []
                if len(seats) >= 2:
                    return (str(seats[0]), str(seats[1]))
        return ("seat 0", "seat 1")

    def clock_time(self) -> float:
        """The monotonic time to read clocks and away countdowns at: now, or the moment the connection was lost.

        While the server is away nothing it decides can be known, so the clocks
        are shown paused at their last reading rather than running on a guess.
        """
        return self.offline_since if self.offline_since is not None else self.now()

    def mark_offline(self) -> None:
        """Note that the connection is lost (clocks pause, see :meth:`clock_time`); :meth:`reattach` ends it."""
        if self.offline_since is None:
            self.offline_since = self.now()

    # --- the pump ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Apply every push from the connection until it closes, then mark the session offline and report ``disconnected``."""
        async for event in self.client.events():
            self.apply(event)
        self.mark_offline()
        self._notify(Change("disconnected"))

    async def reattach(self, client: Client) -> list[str]:
        """Carry on with ``client`` (a resumed session) and watch our spectated tables again.

        Seats come back by themselves (``resumed`` pushes); a restarted server
        forgets spectators, so they are asked for again. Returns a line per
        table that could not be watched again (the table is then dropped).
        """
        self.client = client
        self._resume_clocks()
        problems = []
        for state in [state for state in self.tables.values() if state.seat is None]:
            try:
                joined = await client.watch_table(state.id)
            except (ServerError, ConnectionError) as exc:
                problems.append(f"could not watch table {state.id} again: {exc}")
                self._drop(state.id)
                continue
            self._add(joined.table, None, joined.view, joined.moves, joined)
        return problems

    def _resume_clocks(self) -> None:
        """End the offline pause: each clock runs on from its paused reading until the server's next snapshot."""
        paused_at = self.offline_since
        self.offline_since = None
        if paused_at is None:
            return
        for state in self.tables.values():
            remaining = state.remaining_ms(paused_at)
            if remaining is not None and state.clock is not None:
                self._set_clock(state, dict(state.clock, remaining_ms=remaining))

    def apply(self, event: m.Message) -> list[Change]:
        """Update the model from one server push; notify observers; return what changed.

        Pushes about tables we are not at only touch the lobby. Never raises
        on a well-formed message.
        """
        handler = _HANDLERS.get(type(event))
        changes = handler(self, event) if handler is not None else []
        for change in changes:
            self._notify(change)
        return changes

    def _here(self, event: Any) -> TableState | None:
        return self.tables.get(getattr(event, "table", None))

    def _on_table_updated(self, event: m.TableUpdated) -> list[Change]:
        changes = []
        info = event.table
        if info.id in self.lobby or len(self.lobby) < LOBBY_MOST:
            self.lobby[info.id] = info
            changes.append(Change("lobby", info.id, event))
        state = self.tables.get(info.id)
        if state is not None:
            state.info = msgspec.structs.replace(info, options=state.info.options)  # the lobby summarises long options
            self._set_clock(state, info.clock)
            changes.append(Change("table", info.id, event))
        return changes

    def _on_table_closed(self, event: m.TableClosed) -> list[Change]:
        return [Change("lobby", event.table, event)] if self.lobby.pop(event.table, None) is not None else []

    def _on_game_started(self, event: m.GameStarted) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        state.view = event.view
        state.info = msgspec.structs.replace(state.info, seats=list(event.seats), status="playing")
        state.away.clear()
        return [Change("game_started", state.id, event)]

    def _on_moved(self, event: m.Moved) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        if state.first_seat is None:
            state.first_seat = (event.seat - len(state.moves)) % 2
        state.view = event.view
        state.moves.append(event.move)
        state.forced.append(event.forced)
        state.info = msgspec.structs.replace(state.info, ply=event.ply)
        self._set_clock(state, event.clock)
        state.offers.pop("takeback", None)  # lapses when either seat moves
        draw = state.offers.get("draw")
        if draw is not None and draw.seat == event.seat:
            del state.offers["draw"]  # lapses when its maker moves
        return [Change("moved", state.id, event)]

    def _on_game_over(self, event: m.GameOver) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        view = dict(event.view if event.view is not None else state.view, outcome=event.outcome, to_move=None)
        view.pop("legal_moves", None)
        view.pop("forced_pass", None)
        state.view = view
        state.info = msgspec.structs.replace(state.info, status="over", outcome=event.outcome)
        self._stop_clock(state)
        state.offers.pop("draw", None)
        state.offers.pop("takeback", None)
        state.rating_changes = list(event.ratings) if event.ratings is not None else None
        return [Change("game_over", state.id, event)]

    def _on_offered(self, event: m.Offered) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        state.offers.pop(event.kind, None)  # re-inserted last: the latest offer comes last
        state.offers[event.kind] = PendingOffer(event.seat, event.kind, event.plies)
        return [Change("offer", state.id, event)]

    def _on_answered(self, event: m.Answered) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        state.offers.pop(event.kind, None)
        return [Change("offer", state.id, event)]

    def _on_taken_back(self, event: m.TakenBack) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        kept = len(event.moves)
        forced = state.forced[:kept] if len(state.forced) >= kept else [move == "pass" for move in event.moves]
        state.view = event.view
        state.moves = list(event.moves)
        state.forced = forced
        state.info = msgspec.structs.replace(state.info, ply=int(event.view.get("ply", kept)))
        state.offers.clear()
        state.moved_at_ply = -1
        self._set_clock(state, event.clock)
        return [Change("taken_back", state.id, event)]

    def _on_rematch(self, event: m.RematchStarted) -> list[Change]:
        """A rematch began: a player gets the new table beside the old; a spectator moves from the old to the new."""
        self._add(event.table, event.seat, event.view, [], event)
        previous = self.tables.get(event.previous)
        if previous is not None:
            previous.offers.pop("rematch", None)
        changes = [Change("table_added", event.table.id, event)]
        if event.seat is None and previous is not None and previous.seat is None:
            del self.tables[event.previous]  # the server watches the new table for us instead
            changes.append(Change("table_removed", event.previous, event))
        if self.focus in (None, event.previous):
            self.focus = event.table.id
            changes.append(Change("focus", event.table.id, event))
        return changes

    def _on_resumed(self, event: m.Resumed) -> list[Change]:
        self._add(event.table, event.seat, event.view, event.moves, event)
        changes = [Change("table_added", event.table.id, event)]
        if self.focus is None:
            self.focus = event.table.id
            changes.append(Change("focus", event.table.id, event))
        return changes

    def _on_paired(self, event: m.Paired) -> list[Change]:
        """An accepted challenge or a seek pairing seated us: the table is ours and focused (PROTOCOL.md §17)."""
        self._add(event.table, event.seat, event.view, event.moves, event)
        self.focus = event.table.id
        return [Change("table_added", event.table.id, event), Change("focus", event.table.id, event)]

    def _on_chat(self, event: m.Chat) -> list[Change]:
        line = ChatLine(event.name, event.text)
        if event.table is None:
            self.lobby_chat.append(line)
            return [Change("chat", None, event)]
        state = self._here(event)
        if state is None:
            return []
        state.chat.append(line)
        return [Change("chat", state.id, event)]

    def _on_player_away(self, event: m.PlayerAway) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        state.away[event.seat] = self.now() + max(0.0, event.forfeit_in_s)
        return [Change("away", state.id, event)]

    def _on_player_back(self, event: m.PlayerBack) -> list[Change]:
        state = self._here(event)
        if state is None:
            return []
        state.away.pop(event.seat, None)
        return [Change("away", state.id, event)]

    def _on_challenge_received(self, event: m.ChallengeReceived) -> list[Change]:
        challenge = event.challenge
        if challenge.id not in self.challenges and len(self.challenges) >= CHALLENGES_MOST:
            return []
        self.challenges[challenge.id] = challenge
        return [Change("challenge", None, event)]

    def _on_challenge_ended(self, event: m.ChallengeEnded) -> list[Change]:
        return [Change("challenge", None, event)] if self.challenges.pop(event.challenge, None) is not None else []

    def _on_seek_added(self, event: m.SeekAdded) -> list[Change]:
        if event.seek.id not in self.seeks and len(self.seeks) >= SEEKS_MOST:
            return []
        self.seeks[event.seek.id] = event.seek
        return [Change("seek", None, event)]

    def _on_seek_removed(self, event: m.SeekRemoved) -> list[Change]:
        return [Change("seek", None, event)] if self.seeks.pop(event.seek, None) is not None else []

    def _on_told(self, event: m.Told) -> list[Change]:
        self.tells.append(ChatLine(event.name, event.text))
        return [Change("told", None, event)]

    def _on_error(self, event: m.Error) -> list[Change]:
        return [Change("error", None, event)]

    def _on_shutdown(self, event: m.Shutdown) -> list[Change]:
        return [Change("shutdown", None, event)]

    # --- state helpers ------------------------------------------------------------------------

    def _add(self, info: m.TableInfo, seat: int | None, view: dict[str, Any], moves: Sequence[str], event: m.Message | None) -> TableState:
        """Make (or remake) the state of a table we came to; keeps its chat if we were there already.

        The chat history a ``table_joined`` or ``resumed`` brings is added
        after the lines we already hold (those seen before are not repeated);
        :attr:`TableState.earlier` lists the lines it added.
        """
        old = self.tables.get(info.id)
        state = TableState(info, seat, view, list(moves), [move == "pass" for move in moves])
        if old is not None:
            state.chat = old.chat
        history = getattr(event, "chat", None)
        if history:
            state.earlier = unseen_lines(list(state.chat), [ChatLine(entry.name, entry.text) for entry in history])
            state.chat.extend(state.earlier)
        self._set_clock(state, info.clock)
        self.tables[info.id] = state
        return state

    def _drop(self, table: int) -> None:
        self.tables.pop(table, None)
        if self.focus == table:
            self.focus = next(reversed(self.tables), None) if self.tables else None

    def _set_clock(self, state: TableState, snapshot: Mapping[str, Any] | None) -> None:
        if snapshot is not None:
            state.clock = dict(snapshot)
            state.clock_at = self.now()

    def _stop_clock(self, state: TableState) -> None:
        """Freeze the local countdown (the game is over)."""
        remaining = state.remaining_ms(self.now())
        if remaining is None or state.clock is None or state.clock.get("running") is None:
            return
        self._set_clock(state, dict(state.clock, remaining_ms=remaining, running=None))

    def _joined(self, joined: m.TableJoined) -> TableState:
        state = self._add(joined.table, joined.seat, joined.view, joined.moves, joined)
        self._notify(Change("table_added", state.id, joined))
        self.set_focus(state.id)
        return state

    # --- actions ------------------------------------------------------------------------------

    async def refresh_lobby(self, most: int = LOBBY_MOST) -> list[m.TableInfo]:
        """Ask for the whole lobby (at most ``most`` tables) and return it, by id.

        Raises:
            ServerError, ConnectionLost: as :meth:`Client.request`.
        """
        tables = await self.client.list_tables(most=min(most, LOBBY_MOST))
        self.lobby = {info.id: info for info in tables}
        self._notify(Change("lobby"))
        return tables

    async def watch_lobby(self, watch: bool = True) -> None:
        """Start (or stop) the lobby's pushes: ``table_updated``, ``table_closed``, lobby chat."""
        if self.client.watching_lobby != watch:
            await self.client.watch_lobby(watch)

    async def create(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        *,
        seed: str | int | None = None,
        seat: int | None = 0,
        time_control: str | None = None,
        computer: Mapping[int, int] | None = None,
        hints: bool = False,
        rated: bool = False,
    ) -> TableState:
        """Create a table (see :meth:`Client.create_table`), add it and focus it.

        Raises:
            ServerError, ConnectionLost: as :meth:`Client.create_table`.
        """
        joined = await self.client.create_table(
            game, options, seed=seed, seat=seat, time_control=time_control, computer=computer, hints=hints, rated=rated
        )
        return self._joined(joined)

    async def join(self, table: int, seat: int | None = None) -> TableState:
        """Sit at ``table`` (``seat`` ``None``: any free one) and focus it.

        Where we already sit, this only focuses the table (no request).

        Raises:
            ServerError: the server refused (``table_full``, ...).
            ConnectionLost: as :meth:`Client.request`.
        """
        state = self.tables.get(table)
        if state is not None and state.seat is not None and seat in (None, state.seat):
            self.set_focus(table)
            return state
        return self._joined(await self.client.join_table(table, seat))

    async def watch(self, table: int) -> TableState:
        """Watch ``table`` and focus it; where we already sit or watch, this only focuses it.

        Raises:
            ServerError: the server refused (``too_many_watched``, ``no_such_table``, ...).
            ConnectionLost: as :meth:`Client.request`.
        """
        state = self.tables.get(table)
        if state is not None:
            self.set_focus(table)
            return state
        return self._joined(await self.client.watch_table(table))

    async def leave(self, table: int) -> None:
        """Leave ``table``: give up the seat or stop watching.

        Leaving a running game forfeits it, or aborts it while a side has not
        played a move of its own yet (:attr:`TableState.leaving_aborts`).

        The focus moves to the table we came to most recently, or the lobby.

        Raises:
            SessionError: we are not at that table.
            ServerError, ConnectionLost: as :meth:`Client.request`.
        """
        self.table(table)
        try:
            await self.client.leave_table(table)
        except ServerError as exc:
            if exc.code not in ("no_such_table", "not_seated"):
                raise  # else: the server has already forgotten us there
        focus = self.focus
        self._drop(table)
        self._notify(Change("table_removed", table))
        if self.focus != focus:
            self._notify(Change("focus", self.focus))

    async def move(self, table: int, notation: str) -> None:
        """Play ``notation`` at ``table`` for our seat (sent with the ply we saw, so a stale move is refused).

        Raises:
            SessionError: we are not at that table, or only watch it.
            ServerError: ``illegal_move``, ``not_your_turn``, ``stale_ply``, ...
            ConnectionLost: as :meth:`Client.request`.
        """
        state = self._seated(table, "move")
        ply = state.ply
        await self.client.move(table, notation)
        state.moved_at_ply = max(state.moved_at_ply, ply)

    async def resign(self, table: int) -> None:
        """Resign the game at ``table``."""
        self._seated(table, "resign")
        await self.client.resign(table)

    async def abort(self, table: int) -> None:
        """Abort the game at ``table`` before our own first move: it ends with no result and is not rated.

        Raises:
            SessionError: we are not seated there.
            ServerError: ``bad_action`` once we have moved; ``game_over``, ``not_started``.
            ConnectionLost: as :meth:`Client.request`.
        """
        self._seated(table, "abort the game")
        await self.client.abort(table)

    async def offer_draw(self, table: int) -> None:
        """Offer the opponent a draw at ``table``."""
        self._seated(table, "offer a draw")
        await self.client.offer(table, "draw")

    async def takeback(self, table: int) -> TakebackPlan:
        """Ask to take back, as on lichess, and return what was asked for.

        On our turn: the opponent's reply and our move (two plies); on the
        opponent's turn: our last move (one ply). Against the computer the
        server grants it at once.

        Raises:
            SessionError: we are not seated, the game is not running, or we have played no move.
            ServerError, ConnectionLost: as :meth:`Client.request`.
        """
        plan = self._seated(table, "ask for a takeback").takeback_plan()
        await self.client.offer(table, "takeback", plies=plan.plies)
        return plan

    async def offer_rematch(self, table: int) -> None:
        """Offer a rematch with seats swapped at ``table`` (once its game is over)."""
        self._seated(table, "offer a rematch")
        await self.client.offer(table, "rematch")

    async def answer(self, table: int, kind: str, accept: bool) -> None:
        """Accept or decline the opponent's pending offer of ``kind`` at ``table``.

        Raises:
            SessionError: we are not seated there, or ``kind`` is not an offer kind.
            ServerError: ``bad_action`` when nothing of that kind is pending, ...
        """
        if kind not in OFFER_KINDS:
            raise SessionError(f"an offer is a draw, takeback or rematch, not {kind!r}")
        state = self._seated(table, "answer an offer")
        await self.client.answer(table, kind, accept)
        offer = state.offers.get(kind)
        if offer is not None and offer.seat != state.seat:
            del state.offers[kind]
            self._notify(Change("offer", table))

    async def say(self, text: str, table: int | None = None) -> None:
        """Chat at ``table`` (``None``: in the lobby)."""
        if table is not None:
            self.table(table)
        await self.client.say(text, table=table)

    async def hint(self, table: int) -> m.Hint:
        """Ask the server's computer for a move for our seat at ``table`` (see :meth:`Client.hint`)."""
        self._seated(table, "ask for a hint")
        return await self.client.hint(table)

    # --- challenges, seeks, tells (PROTOCOL.md §17) -----------------------------------------

    async def accept_challenge(self, challenge: int) -> None:
        """Accept the challenge ``challenge``; the ``paired`` push that follows adds and focuses the table.

        Raises:
            ServerError: ``no_such_challenge`` when it has ended meanwhile, ...
            ConnectionLost: as :meth:`Client.request`.
        """
        try:
            await self.client.accept_challenge(challenge)
        finally:
            self._forget_challenge(challenge)

    async def decline_challenge(self, challenge: int) -> None:
        """Decline the challenge ``challenge`` (it is forgotten even when the server says it had ended)."""
        try:
            await self.client.decline_challenge(challenge)
        finally:
            self._forget_challenge(challenge)

    def _forget_challenge(self, challenge: int) -> None:
        if self.challenges.pop(challenge, None) is not None:
            self._notify(Change("challenge"))

    async def refresh_seeks(self, most: int = SEEKS_MOST) -> list[m.SeekInfo]:
        """Ask for the open seeks (page by page, at most ``most``) and return them by id.

        Raises:
            ServerError, ConnectionLost: as :meth:`Client.request`.
        """
        seeks: dict[int, m.SeekInfo] = {}
        after: int | None = None
        while len(seeks) < min(most, SEEKS_MOST):
            page = await self.client.list_seeks(after=after)
            seeks.update((seek.id, seek) for seek in page.seeks)
            if page.next is None or not page.seeks:
                break
            after = page.next
        self.seeks = dict(list(seeks.items())[: min(most, SEEKS_MOST)])
        self._notify(Change("seek"))
        return list(self.seeks.values())

    async def seek(
        self,
        game: str,
        options: Mapping[str, Any] | None = None,
        *,
        time_control: str | None = None,
        rated: bool = False,
        rating_min: int | None = None,
        rating_max: int | None = None,
    ) -> m.SeekPosted:
        """Post a seek (see :meth:`Client.seek`); a matching open seek pairs at once and a ``paired`` push seats us.

        Raises:
            ServerError, ConnectionLost: as :meth:`Client.request`.
        """
        return await self.client.seek(game, options, time_control=time_control, rated=rated, rating_min=rating_min, rating_max=rating_max)

    async def answer_seek(self, seek: int) -> m.SeekPosted:
        """Post a seek that matches the open seek ``seek`` (same game, options, time control, rated) so the server pairs us.

        Raises:
            SessionError: the seek is not (or no longer) open, or is our own.
            ServerError, ConnectionLost: as :meth:`Client.request`.
        """
        found = self.seeks.get(seek)
        if found is None:
            raise SessionError(f"seek {seek} is not open any more")
        if found.name.casefold() == self.client.name.casefold():
            raise SessionError("that seek is your own: wait for someone to answer it")
        return await self.seek(found.game, found.options, time_control=found.time_control, rated=found.rated)

    def _seated(self, table: int, what: str) -> TableState:
        state = self.table(table)
        if state.seat is None:
            raise SessionError(f"only the players can {what}; you are watching table {table}")
        return state


_HANDLERS: dict[type, Callable[[ClientSession, Any], list[Change]]] = {
    m.TableUpdated: ClientSession._on_table_updated,
    m.TableClosed: ClientSession._on_table_closed,
    m.GameStarted: ClientSession._on_game_started,
    m.Moved: ClientSession._on_moved,
    m.GameOver: ClientSession._on_game_over,
    m.Offered: ClientSession._on_offered,
    m.Answered: ClientSession._on_answered,
    m.TakenBack: ClientSession._on_taken_back,
    m.RematchStarted: ClientSession._on_rematch,
    m.Resumed: ClientSession._on_resumed,
    m.Paired: ClientSession._on_paired,
    m.Chat: ClientSession._on_chat,
    m.PlayerAway: ClientSession._on_player_away,
    m.PlayerBack: ClientSession._on_player_back,
    m.ChallengeReceived: ClientSession._on_challenge_received,
    m.ChallengeEnded: ClientSession._on_challenge_ended,
    m.SeekAdded: ClientSession._on_seek_added,
    m.SeekRemoved: ClientSession._on_seek_removed,
    m.Told: ClientSession._on_told,
    m.Error: ClientSession._on_error,
    m.Shutdown: ClientSession._on_shutdown,
}
