"""A table tab drawn as text: the board picture of :mod:`client.render`, the status, and a command line.

The plain stand-in for the board widgets' table view (``client/app/table.py``):
everything works by typing — a move in the game's notation, or ``resign``,
``draw``, ``takeback``, ``rematch``, ``accept``, ``decline``, ``say TEXT``.
Resigning asks first (through the app's confirmation).
"""

from __future__ import annotations

from typing import Any, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, RichLog, Static

from protocol import messages as m

from ..connection import ConnectionLost, ServerError
from ..render import render
from ..sanitize import printable
from ..session import Change, ClientSession, SessionError, TableState

__all__ = ["TextTable", "status_text"]

COMMANDS = ("resign", "draw", "takeback", "rematch", "accept", "decline", "say")


def status_text(session: ClientSession, state: TableState) -> str:
    """Who plays whom, whose turn it is, the clocks, pending offers and the result, in a few lines (sanitised)."""
    seats = session.seat_names(state.game)
    names = [printable(state.info.seats[i] or "(free)") if i < len(state.info.seats) else "?" for i in (0, 1)]
    lines = [f"{seats[0]}: {names[0]}  vs  {seats[1]}: {names[1]}" + ("" if state.seat is None else f"  (you: {seats[state.seat]})")]
    remaining = state.remaining_ms(session.now())
    if remaining is not None:
        lines.append(f"Clock: {seats[0]} {_clock(remaining[0])} · {seats[1]} {_clock(remaining[1])}")
    outcome = state.outcome
    if outcome is not None:
        winner = outcome.get("winner")
        who = "Draw" if winner is None else f"{seats[winner]} wins" if winner in (0, 1) else "Over"
        lines.append(f"{who} — {printable(str(outcome.get('reason', '')))}")
    elif state.status == "waiting":
        lines.append("Waiting for an opponent.")
    elif state.to_move in (0, 1):
        lines.append("Your move." if state.my_turn else f"{seats[state.to_move]} to move.")
    offer = state.opponent_offer()
    if offer is not None:
        lines.append(f"Your opponent offers: {offer.kind} — type accept or decline.")
    for seat, deadline in state.away.items():
        lines.append(f"{names[seat]} is away: their seat is forfeited in {max(0, deadline - session.now()):.0f} s.")
    return "\n".join(lines)


def _clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


class TextTable(Vertical):
    """One table as text, kept up to date from the session model.

    Args:
        session: the session model.
        table: the table's id (the model must hold it).
    """

    DEFAULT_CSS = """
    TextTable #board-scroll { height: 1fr; }
    TextTable #status { height: auto; color: $text; }
    TextTable #table-log { height: 4; }
    TextTable #command { height: 1; }
    """

    def __init__(self, session: ClientSession, table: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.table = table
        self._unsubscribe: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="board-scroll"):
            yield Static("", id="board")
        yield Static("", id="status")
        yield RichLog(id="table-log", wrap=True, markup=False, max_lines=200)
        yield Input(placeholder="a move, or resign / draw / takeback / accept / decline / say TEXT", id="command", max_length=m.MAX_CHAT_CHARS + 4, compact=True)

    def on_mount(self) -> None:
        self._unsubscribe = self.session.subscribe(self._on_change)
        self.redraw()
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _on_change(self, change: Change) -> None:
        if change.table != self.table:
            return
        if change.kind == "chat" and isinstance(change.event, m.Chat):
            self.log_line(f"{printable(change.event.name)}: {printable(change.event.text)}")
        elif change.kind == "moved" and isinstance(change.event, m.Moved):
            self.log_line(f"ply {change.event.ply}: {printable(change.event.move)}" + (" (forced)" if change.event.forced else ""))
        if change.kind != "table_removed":
            self.redraw()

    def _tick(self) -> None:
        state = self.session.tables.get(self.table)
        if state is not None and (state.clock is not None or state.away):
            self.query_one("#status", Static).update(Text(status_text(self.session, state)))

    def redraw(self) -> None:
        """Draw the board and status from the model."""
        state = self.session.tables.get(self.table)
        if state is None:
            return
        try:
            picture = render(state.view, state.seat)
        except (KeyError, ValueError, TypeError) as exc:
            picture = f"(cannot draw this {printable(state.game)} position: {exc})"
        self.query_one("#board", Static).update(Text(picture))
        self.query_one("#status", Static).update(Text(status_text(self.session, state)))

    def log_line(self, text: str) -> None:
        """Add a line to the table's log (chat, moves, refusals)."""
        self.query_one("#table-log", RichLog).write(Text(text))

    @on(Input.Submitted, "#command")
    def _command(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        if not text:
            return
        word, _, rest = text.partition(" ")
        if word.lower() == "resign":
            self.app.ask_resign(self.table)  # type: ignore[attr-defined]
        elif word.lower() in COMMANDS:
            self._act(word.lower(), rest.strip())
        else:
            self._act("move", text)

    @work(group="table-action")
    async def _act(self, what: str, argument: str) -> None:
        session, table = self.session, self.table
        try:
            if what == "move":
                await session.move(table, argument)
            elif what == "draw":
                await session.offer_draw(table)
                self.log_line("You offered a draw.")
            elif what == "takeback":
                plan = await session.takeback(table)
                self.log_line(f"You asked for a takeback: it {plan.describe(session.table(table).seat, session.seat_names(session.table(table).game))}.")
            elif what == "rematch":
                await session.offer_rematch(table)
                self.log_line("You offered a rematch.")
            elif what in ("accept", "decline"):
                offer = session.table(table).opponent_offer(argument or None)
                if offer is None:
                    self.log_line("There is no offer to answer.")
                    return
                await session.answer(table, offer.kind, what == "accept")
            elif what == "say" and argument:
                await session.say(argument, table)
        except (ServerError, SessionError, ConnectionLost) as exc:
            self.log_line(f"Refused: {printable(getattr(exc, 'message', None) or str(exc))}")
