"""The table pane: one table you sit at or watch, shown in its own tab.

Built on the session model (:class:`client.session.ClientSession`): the pane
draws its :class:`~client.session.TableState` and redraws on the model's
changes for its table; every action names the table explicitly, so a move
can never go to another table.

* The board (:mod:`client.app.boards`) in a scrolling frame (wide Tactego
  boards scroll rather than wrap), compact when the normal board does not fit.
* Both seats with names and ratings (the new ones once a rated game is
  over), whose turn it is, away status with the grace countdown, and clocks
  ticking down (low-time colour under 10 s, and a bell when the pane was
  made with ``bell=True``); a clock is never cut off (:mod:`.seats`).
* The move list (ply numbers and notation), table chat, a field to type a
  move in notation, a result banner.
* Draw, takeback, rematch, hint and resign (confirmed first) as buttons and
  keys; the opponent's offers come up as dialogs to accept or decline (a
  takeback dialog says which moves it takes back).

Everything another user wrote (names, chat) passes :func:`client.sanitize.printable`.
"""

from __future__ import annotations

from typing import Any, Awaitable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Input, RichLog, Static

from protocol import messages as m

from ..connection import ConnectionLost, ServerError
from ..line_text import plies_text
from ..ratings_text import describe_change
from ..sanitize import printable
from ..session import Change, ClientSession, SessionError, TableState
from .boards import BoardWidget, make_board, wants_mono
from .confirm import ConfirmScreen
from .offers import OfferScreen, offer_question
from .seats import SeatInfo, SeatLines
from .table_text import LOW_TIME_MS, clock_text, move_list_lines, result_text, seat_rating

__all__ = ["TableView"]

_TICK_S = 0.1
"""How often the clocks and away countdowns are redrawn, in seconds."""

_PLAYERS_ACTIONS = ("offer_draw", "takeback", "rematch", "hint", "resign", "abort")

_NARROWEST_SIDE = 18  # columns: the side panel's seats and moves still read at this width


class TableView(Widget):
    """One table of ``session`` (id ``table_id``): board, seats and clocks, moves, chat, offers.

    Args:
        session: the session model; the pane subscribes to its changes while mounted.
        table_id: the table shown (the session must be at it).
        bell: ring the terminal bell once when the viewer's own clock falls under 10 s
            (``None``: as the app's ``low_time_bell`` attribute says, off without it);
            the ``b`` key turns it on and off.

    Raises:
        client.session.SessionError: if the session is not at ``table_id``.
    """

    DEFAULT_CSS = """
    TableView { height: 1fr; }
    TableView #table-body { height: 1fr; }
    TableView #table-main { width: 1fr; }
    TableView #board-scroll { height: 1fr; overflow: auto auto; }
    TableView #table-title { height: auto; text-style: bold; }
    TableView #result-banner { height: auto; display: none; text-style: bold; background: $accent; color: $text; padding: 0 1; }
    TableView #result-banner.shown { display: block; }
    TableView #notice { height: auto; color: $warning; }
    TableView Input, TableView Input:focus { height: 1; border: none; padding: 0 1; background: $boost; }
    TableView Input:focus { background: $primary 30%; }
    TableView #table-buttons { height: 1; }
    TableView #table-buttons Button { height: 1; min-width: 6; border: none; margin-right: 1; }
    TableView #table-side { width: 32; }
    TableView .seat { height: auto; }
    TableView .seat.low-time { color: $error; text-style: bold; }
    TableView .heading { height: 1; text-style: underline; }
    TableView #move-scroll { height: 1fr; }
    TableView #chat-log { height: 1fr; }
    """

    BINDINGS = [
        Binding("d", "offer_draw", "Draw"),
        Binding("t", "takeback", "Takeback"),
        Binding("r", "rematch", "Rematch"),
        Binding("h", "hint", "Hint"),
        Binding("x", "resign", "Resign"),
        Binding("a", "abort", "Abort"),
        Binding("b", "toggle_bell", "Bell", show=False),
        Binding("m", "focus_move", "Type move", show=False),
        Binding("c", "focus_chat", "Chat", show=False),
        Binding("escape", "focus_board", "Back to the board", show=False),
    ]

    def __init__(self, session: ClientSession, table_id: int, *, bell: bool | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self.table_id = table_id
        self.bell = bell
        session.table(table_id)  # raises SessionError if the session is not at the table
        self._unsubscribe = None
        self._offer_screen: OfferScreen | None = None
        self._rang = False
        self._chat_shown = 0

    @property
    def state(self) -> TableState:
        """The table's state in the model."""
        return self.session.table(self.table_id)

    @property
    def board(self) -> BoardWidget:
        """The board widget."""
        return self.query_one("#board", BoardWidget)

    # --- building -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        state = self.state
        with Horizontal(id="table-body"):
            with Vertical(id="table-main"):
                yield Static(id="table-title", markup=False)
                with ScrollableContainer(id="board-scroll"):
                    yield make_board(state.view, state.seat, last_move=state.last_move, id="board")
                yield Static(id="result-banner", markup=False)
                yield Static(id="notice", markup=False)
                yield Input(placeholder="type a move in notation, Enter to play", id="move-input")
                with Horizontal(id="table-buttons"):
                    yield Button("Draw", id="draw")
                    yield Button("Takeback", id="takeback")
                    yield Button("Rematch", id="rematch")
                    yield Button("Hint", id="hint")
                    yield Button("Resign", id="resign", variant="error")
                    yield Button("Abort", id="abort")
            with Vertical(id="table-side"):
                yield SeatLines(id="seat-top", classes="seat")
                yield SeatLines(id="seat-bottom", classes="seat")
                address = self.session.client.web_address(self.table_id)
                if address is not None:
                    yield Static(f"In a browser: {address}", id="web-address", markup=False)
                yield Static("Moves", classes="heading")
                with VerticalScroll(id="move-scroll"):
                    yield Static(id="move-list", markup=False)
                yield Static("Chat", classes="heading")
                yield RichLog(id="chat-log", wrap=True, markup=False, max_lines=200)
                yield Input(placeholder="say something", id="chat-input", max_length=500)

    def on_mount(self) -> None:
        self._unsubscribe = self.session.subscribe(self._on_change)
        if self.bell is None:
            self.bell = bool(getattr(self.app, "low_time_bell", False))
        self.board.mono = wants_mono(self.app)
        self.redraw()
        self.set_interval(_TICK_S, self._tick)
        self.board.focus()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def on_resize(self) -> None:
        self._fit_board()

    # --- drawing ------------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw everything from the model."""
        if self.table_id not in self.session.tables:
            return
        state = self.state
        self.board.show(_playable_view(state), state.seat, last_move=state.last_move)
        self._fit_board()
        self.query_one("#table-title", Static).update(self._title(state))
        self.query_one("#move-list", Static).update("\n".join(move_list_lines(state.moves, state.forced)) or "(no moves yet)")
        self.query_one("#move-scroll", VerticalScroll).scroll_end(animate=False)
        self._draw_seats()
        self._draw_banner(state)
        self._draw_chat(state)
        self._draw_buttons(state)
        self.refresh_bindings()

    def _title(self, state: TableState) -> str:
        names = self.session.seat_names(state.game)
        role = f"you are {names[state.seat]}" if state.seat is not None else "watching"
        now = state.status
        if state.running and state.to_move in (0, 1):
            now = "your move" if state.my_turn else f"{names[state.to_move]} to move"
        return f"#{state.id} {state.game} · {role} · {now}"

    def _fit_board(self) -> None:
        """Use the compact board when the normal one would not fit the space it has."""
        board = self.board
        if board.view is None:
            return
        frame = self.query_one("#board-scroll")
        if frame.size.height == 0:
            return
        side = 24 if self.app.size.width < 80 else 32
        width, height = board.size_in(compact=False)
        compact = height > frame.size.height or self.app.size.width < 70 or width > self.app.size.width - side
        if board.compact != compact:
            board.compact = compact
            self.call_after_refresh(board.refresh, layout=True)  # changed during a layout pass, the new size would be missed
        if compact:  # a narrow side panel before a cut-off board
            width, height = board.size_in(compact=True)
            scrollbar = frame.styles.scrollbar_size_vertical if height > frame.size.height else 0
            side = max(_NARROWEST_SIDE, min(side, self.app.size.width - width - scrollbar))
        self.query_one("#table-side").styles.width = side

    def _draw_seats(self) -> None:
        state = self.state
        top, bottom = (1 - state.seat, state.seat) if state.seat is not None else (1, 0)
        remaining = state.remaining_ms(self.session.clock_time())
        for widget_id, seat in (("#seat-top", top), ("#seat-bottom", bottom)):
            widget = self.query_one(widget_id, SeatLines)
            widget.show(self._seat_info(state, seat, remaining))
            low = remaining is not None and remaining[seat] < LOW_TIME_MS and state.running
            widget.set_class(low, "low-time")
        if remaining is not None and state.seat is not None and state.running:
            mine_low = remaining[state.seat] < LOW_TIME_MS
            if mine_low and not self._rang and self.bell:
                self.app.bell()
            self._rang = mine_low

    def _seat_info(self, state: TableState, seat: int, remaining: list[int] | None) -> SeatInfo:
        names = self.session.seat_names(state.game)
        player = state.info.seats[seat] if seat < len(state.info.seats) else None
        away = seat in state.away and state.status != "over"
        paused = self.session.offline_since is not None and state.running
        return SeatInfo(
            seat_name=names[seat],
            player=printable(player) if player else None,
            rating=seat_rating(state.info.ratings, state.rating_changes, seat) if player else None,
            you=seat == state.seat,
            moving=state.running and state.to_move == seat,
            clock=clock_text(remaining[seat]) + (" paused" if paused else "") if remaining is not None else None,
            away_s=max(0, round(state.away[seat] - self.session.clock_time())) if away else None,
        )

    def _draw_banner(self, state: TableState) -> None:
        banner = self.query_one("#result-banner", Static)
        if state.outcome is None:
            banner.remove_class("shown")
            return
        names = self.session.seat_names(state.game)
        text = result_text(state.outcome, state.seat, names, list(state.info.seats))
        if state.rating_changes:
            players = tuple(name or "?" for name in state.info.seats[:2])
            text += "\n" + describe_change((players[0], players[1]), state.rating_changes)
        banner.update(text)
        banner.add_class("shown")

    def _draw_chat(self, state: TableState) -> None:
        log = self.query_one("#chat-log", RichLog)
        lines = list(state.chat)
        if len(lines) < self._chat_shown:
            self._chat_shown = 0  # the model dropped old lines: show what it has now
            log.clear()
        for line in lines[self._chat_shown :]:
            log.write(Text(f"{printable(line.name)}: {printable(line.text)}"))
        self._chat_shown = len(lines)

    def _draw_buttons(self, state: TableState) -> None:
        seated, running = state.seat is not None, state.running
        self.query_one("#draw", Button).disabled = not (seated and running)
        self.query_one("#takeback", Button).disabled = not (seated and running and state.moves)
        self.query_one("#rematch", Button).disabled = not (seated and state.status == "over")
        self.query_one("#resign", Button).disabled = not (seated and running)
        self.query_one("#abort", Button).display = state.may_abort
        self.query_one("#takeback", Button).display = not state.may_abort
        self.query_one("#hint", Button).display = bool(state.info.hints) and seated
        self.query_one("#hint", Button).disabled = not running
        self.query_one("#move-input", Input).display = seated
        self.query_one("#table-buttons").display = seated

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys apply now: hidden (``False``) or greyed (``None``) in the footer otherwise."""
        state = self.session.tables.get(self.table_id)
        if state is None:
            return True
        seated, running = state.seat is not None, state.running
        if action in _PLAYERS_ACTIONS and not seated:
            return False  # a spectator never has them
        # A game's keys until it is over, the rematch after: never both, so the footer fits 80 columns.
        over = state.status == "over"
        if action == "hint":
            return False if over or not state.info.hints else True if running else None
        if action in ("offer_draw", "resign"):
            return False if over else True if running else None
        if action == "takeback":  # nothing of ours to take back before our first move: Abort takes its place
            return False if over or state.may_abort else True if running and state.moves else None
        if action == "rematch":
            return over
        if action == "abort":
            return state.may_abort  # only before our own first move: hidden otherwise
        return True

    def _tick(self) -> None:
        state = self.session.tables.get(self.table_id)
        if state is not None and (state.clock is not None or state.away):
            self._draw_seats()

    def notice(self, text: str) -> None:
        """Show one line under the board (an error, a hint, the answer to an offer)."""
        self.query_one("#notice", Static).update(text)

    # --- the model's changes ---------------------------------------------------------------

    def _on_change(self, change: Change) -> None:
        """The model's observer: runs inside the session's pump, so the work is handed to the pane's own queue."""
        if change.table == self.table_id:
            self.call_later(self._apply_change, change)

    def _apply_change(self, change: Change) -> None:
        if self.table_id not in self.session.tables:
            return
        if change.kind == "offer":
            self._on_offer(change.event)
        if change.kind == "taken_back" and isinstance(change.event, m.TakenBack):
            self.notice(f"The takeback offer was accepted: {plies_text(change.event.plies)} taken back")
        elif change.kind in ("moved", "taken_back", "game_started"):
            self.notice("")
        self.redraw()

    def _on_offer(self, event: m.Message | None) -> None:
        state = self.state
        if self._offer_screen is not None and self._offer_screen.kind not in state.offers:
            self._offer_screen.withdraw()
            self._offer_screen = None
        if isinstance(event, m.Answered):
            self._say_answered(state, event)
        if not isinstance(event, m.Offered) or state.seat is None:
            return
        if event.seat == state.seat:
            self.notice(f"You offered: {event.kind}; waiting for the answer")
            return
        self._ask(state, event)

    def _say_answered(self, state: TableState, event: m.Answered) -> None:
        if event.kind == "takeback" and event.accepted:
            return  # taken_back comes next and says it, with the plies (by a person or the computer alike)
        if event.lapsed:
            self.notice(f"The {event.kind} offer lapsed")
        else:
            self.notice(f"The {event.kind} offer was {'accepted' if event.accepted else 'declined'}")

    def _ask(self, state: TableState, event: m.Offered) -> None:
        """Put the opponent's offer up as a dialog; answer it with the player's choice."""
        names = self.session.seat_names(state.game)
        player = state.info.seats[event.seat] or names[event.seat]
        words = state.takeback_of(event.plies).describe(state.seat, names) if event.kind == "takeback" else ""
        where = f"Table #{state.id} ({printable(state.game)}): "  # the dialog may come up over another table's tab
        screen = OfferScreen(event.kind, where + offer_question(event.kind, printable(player), words))
        if self._offer_screen is not None:
            self._offer_screen.withdraw()
        self._offer_screen = screen

        def answered(accept: bool | None) -> None:
            if self._offer_screen is screen:
                self._offer_screen = None
            if accept is not None:
                self._act(self.session.answer(self.table_id, event.kind, accept))

        self.app.push_screen(screen, answered)

    # --- input and actions -------------------------------------------------------------------

    def _act(self, action: Awaitable[Any], done: str = "", *, what: str = "") -> None:
        """Run a request to the server; show its refusal (after ``what``, e.g. the move) or ``done`` under the board."""

        async def run() -> None:
            try:
                result = await action
            except (ServerError, SessionError, ConnectionLost) as exc:
                self.notice(printable(what + (getattr(exc, "message", None) or str(exc))))
                return
            if done:
                self.notice(done.format(result=result))

        self.run_worker(run(), group="table-actions")

    @on(BoardWidget.MoveChosen)
    def _move_chosen(self, event: BoardWidget.MoveChosen) -> None:
        event.stop()
        self._act(self.session.move(self.table_id, event.move), what=f"{event.move}: ")

    @on(Input.Submitted, "#move-input")
    def _move_typed(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        event.input.clear()
        if text:
            self._act(self.session.move(self.table_id, text), what=f"{text}: ")

    @on(Input.Submitted, "#chat-input")
    def _chat_typed(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        event.input.clear()
        if text:
            self._act(self.session.say(text, self.table_id))

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        event.stop()
        action = getattr(self, f"action_{event.button.id}", None)
        if action is not None:
            action()

    def action_draw(self) -> None:
        """Offer the opponent a draw (the Draw button)."""
        self.action_offer_draw()

    def action_offer_draw(self) -> None:
        """Offer the opponent a draw."""
        self._act(self.session.offer_draw(self.table_id), "Draw offered")

    def action_takeback(self) -> None:
        """Ask to take back, lichess style: to your own last move."""
        names = self.session.seat_names(self.state.game)

        async def ask() -> str:
            plan = await self.session.takeback(self.table_id)
            return plan.describe(self.state.seat, names)

        self._act(ask(), "Asked for a takeback: it {result}")

    def action_rematch(self) -> None:
        """Offer a rematch with seats swapped (after the game)."""
        self._act(self.session.offer_rematch(self.table_id), "Rematch offered")

    def action_hint(self) -> None:
        """Ask the server's computer for a move (at tables with hints); it is said under the board and marked on it."""
        asked_at = self.state.ply

        async def ask() -> Any:
            hint = await self.session.hint(self.table_id)
            if self.table_id in self.session.tables and self.state.ply == asked_at:
                self.board.show_hint(hint.move)
            return hint

        self._act(ask(), "Hint: {result.move} (marked on the board)")

    def action_resign(self) -> None:
        """Resign, after a confirmation."""
        state = self.state
        if state.seat is None or not state.running:
            self.notice("There is no game of yours to resign here")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._act(self.session.resign(self.table_id))

        self.app.push_screen(ConfirmScreen(f"Resign the game at table {self.table_id}? You lose it.", yes="Resign"), answered)

    def action_abort(self) -> None:
        """Abort the game before our own first move (no result, not rated); the server refuses it once we have moved."""
        self._act(self.session.abort(self.table_id))

    def action_toggle_bell(self) -> None:
        """Turn the low-time bell on or off."""
        self.bell = not self.bell
        self.notice(f"Low-time bell {'on' if self.bell else 'off'}")

    def action_focus_move(self) -> None:
        """Put the cursor in the move field."""
        self.query_one("#move-input", Input).focus()

    def action_focus_board(self) -> None:
        """Leave the move or chat line for the board (Escape)."""
        self.board.focus()

    def action_focus_chat(self) -> None:
        """Put the cursor in the chat field."""
        self.query_one("#chat-input", Input).focus()


def _playable_view(state: TableState) -> dict[str, Any]:
    """The view for the board: its legal moves only while the move is ours to make (not once sent)."""
    if state.my_turn or "legal_moves" not in state.view:
        return state.view
    return {key: value for key, value in state.view.items() if key != "legal_moves"}
