"""The archive screen: the server's finished games, a replay with step and jump, and export.

The list comes from ``list_archive`` a page at a time. A replay fetches the
game's record (``get_record``) and rebuilds every position with the rules
engine (:func:`games.record.replay`), so stepping needs no further requests.
The position is drawn with the game's board widget (:mod:`client.app.boards`).
Export writes that plain-text record; to a file named ``*.ggf`` it asks the
server for the game as GGF instead (``get_record`` with ``format: "ggf"``,
Othello games only), which adds the ratings and the time control.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from games.base import State
from games.record import GameRecord, RecordError, parse_record, replay

from ..connection import ConnectionLost, ServerError
from ..sanitize import printable, printable_lines
from ..session import ClientSession
from .archive_rows import ARCHIVE_COLUMNS, archive_cells, ellipsize, fit_widths
from .boards import BoardWidget, make_board

__all__ = ["ArchiveScreen", "Replay", "PAGE"]

PAGE = 50
"""How many finished games one page of the list holds."""
SCROLLBAR_CELLS = 2
"""Room kept for the list's vertical scroll bar, in cells."""


@dataclass
class Replay:
    """A finished game being stepped through: its record, every position, and where we are.

    Every position is shown with nothing hidden (:meth:`games.State.revealed`):
    the game is over, so a hidden setup (Tactego's) is public.

    ``states[i]`` is the position after ``i`` plies (``states[0]``: the start).
    """

    table: int
    record: GameRecord
    states: list[State]
    index: int = 0

    @property
    def last(self) -> int:
        """The index of the final position."""
        return len(self.states) - 1

    def go(self, index: int) -> None:
        """Move to position ``index``, kept within the game."""
        self.index = max(0, min(index, self.last))

    @property
    def state(self) -> State:
        """The position shown."""
        return self.states[self.index]

    @property
    def last_move(self) -> str | None:
        """The move that led to the position shown (``None`` at the start)."""
        return self.record.moves[self.index - 1].move if self.index > 0 else None

    def title(self) -> str:
        """Which game this is and who played it (sanitised)."""
        seats = self.state.game.seats
        players = "  vs  ".join(f"{seats[i]}: {printable(self.record.players[i] or '?')}" for i in (0, 1))
        return f"Game {self.table} · {printable(self.record.game)} · {players}"

    def status(self) -> str:
        """The last move, the result at the end, and where in the game we are."""
        seats = self.state.game.seats
        lines = []
        if self.index > 0:
            played = self.record.moves[self.index - 1]
            lines.append(f"Ply {self.index}: {seats[played.seat]} played {printable(played.move)}" + (" (forced)" if played.forced else ""))
        if self.index == self.last and self.record.result is not None:
            result = self.record.result
            winner = result.get("winner")
            who = "Draw" if winner is None else f"{seats[winner]} wins" if winner in (0, 1) else "Over"
            if result.get("aborted") is True:
                who = "Aborted"
            lines.append(f"Result: {who} — {printable(str(result.get('reason', '')))}")
        lines.append(f"ply {self.index}/{self.last} · Right/Left step, Home/End jump, g go to a ply, e export")
        return "\n".join(lines)


class ReplayPane(Vertical, can_focus=True):
    """The replayed position (the game's board widget, read-only); with the focus, Right/Left step and Home/End jump."""

    # Grouped, so the footer fits 80 columns: "← → Step  home end Jump".
    _STEP = Binding.Group("Step", compact=True)
    _JUMP = Binding.Group("Jump")
    BINDINGS = [
        Binding("left", "screen.step(-1)", "Back a ply", group=_STEP),
        Binding("right", "screen.step(1)", "Forward", group=_STEP),
        Binding("home", "screen.jump('first')", "First", group=_JUMP),
        Binding("end", "screen.jump('last')", "Last", group=_JUMP),
    ]


class ArchiveScreen(Screen[None]):
    """Finished games on the server; Enter replays the highlighted one.

    Keys: Right/Left step and Home/End jump (on the board, which has the
    focus once a game is chosen; Tab moves between the list and the board),
    ``g`` jumps to a ply, ``e`` exports the record to a file (GGF to a file
    named ``*.ggf``, for Othello), ``m`` loads more games, Escape goes back.
    """

    DEFAULT_CSS = """
    ArchiveScreen #games { height: 1fr; min-height: 4; }
    ArchiveScreen #replay { height: 2fr; border-top: solid $primary; }
    ArchiveScreen #replay-pane { height: auto; }
    ArchiveScreen #replay-board { height: auto; }
    ArchiveScreen #ask { height: 3; }
    ArchiveScreen #ask.hidden { display: none; }
    ArchiveScreen #message { height: auto; color: $text-muted; }
    ArchiveScreen Footer.-compact FooterLabel { margin-right: 1; }  /* a group's label ("Jump") apart from the next key ("esc") */
    """
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("g", "ask('goto')", "Go to ply"),
        Binding("e", "ask('export')", "Export"),
        Binding("m", "more", "More", tooltip="list more games"),
    ]

    def __init__(self, session: ClientSession) -> None:
        super().__init__()
        self.session = session
        self.entries: list[dict[str, Any]] = []
        self.replaying: Replay | None = None
        self.asking: str | None = None
        self.exhausted = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Archive — finished games, newest first (Enter replays)")
            table: DataTable[Any] = DataTable(id="games", cursor_type="row")
            yield table
            yield Static("", id="message")
            yield Input(id="ask", classes="hidden")
            with VerticalScroll(id="replay", can_focus=False):
                with ReplayPane(id="replay-pane"):
                    yield Static("", id="replay-title")
                    yield Vertical(id="replay-board")
                    yield Static("", id="replay-status")
        yield Footer(compact=True, show_command_palette=False)  # as the main screen's: the replay's keys fit 80 columns

    def on_mount(self) -> None:
        self.load_page()

    def on_resize(self) -> None:
        self.call_after_refresh(self.show_list)

    def show_list(self) -> None:
        """Lay the list out again: one column per field, the wide ones cut with "…" so a row fits the screen's width."""
        table = self.query_one("#games", DataTable)
        welcome = self.session.client.welcome
        rows = [archive_cells(entry, welcome.games if welcome is not None else None) for entry in self.entries]
        natural = {key: max([len(header), *(len(cells[key]) for cells in rows)]) for key, header in ARCHIVE_COLUMNS}
        room = (table.size.width or self.size.width) - SCROLLBAR_CELLS - 2 * table.cell_padding * len(ARCHIVE_COLUMNS)
        widths = fit_widths(natural, room)
        cursor = table.cursor_row
        table.clear(columns=True)
        for key, header in ARCHIVE_COLUMNS:
            table.add_column(header, key=key, width=widths[key])
        for index, cells in enumerate(rows):
            table.add_row(*(Text(ellipsize(cells[key], widths[key])) for key, _ in ARCHIVE_COLUMNS), key=str(index))
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    # --- the list --------------------------------------------------------------------------

    @work(exclusive=True, group="archive-list")
    async def load_page(self) -> None:
        """Fetch the next page of finished games and add it to the list."""
        try:
            page = await self.session.client.list_archive(PAGE, len(self.entries))
        except (ServerError, ConnectionLost) as exc:
            self.say(f"cannot list the archive: {getattr(exc, 'message', None) or exc}")
            return
        self.exhausted = len(page) < PAGE
        table = self.query_one("#games", DataTable)
        self.entries.extend(page)
        self.show_list()
        if not self.entries:
            self.say("No finished games on this server yet.")
        elif not self.exhausted:
            self.say("m loads more games.")
        table.focus()

    def action_more(self) -> None:
        """Load the next page of the list, if there is one."""
        if self.exhausted:
            self.say("That is every finished game.")
        else:
            self.load_page()

    @on(DataTable.RowSelected, "#games")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        entry = self.entries[int(str(event.row_key.value))]
        game_id = entry.get("id")
        if isinstance(game_id, int):
            self.start_replay(game_id)

    @work(exclusive=True, group="archive-replay")
    async def start_replay(self, table: int) -> None:
        """Fetch game ``table``'s record and show its starting position."""
        try:
            text = await self.session.client.get_record(table)
            record = parse_record(text)
            states = replay(record)
        except (ServerError, ConnectionLost) as exc:
            self.say(f"cannot replay game {table}: {getattr(exc, 'message', None) or exc}")
            return
        except RecordError as exc:
            self.say(f"cannot replay game {table}: {printable_lines(str(exc))}")
            return
        self.replaying = Replay(table, record, states)
        self.record_text = text
        box = self.query_one("#replay-board", Vertical)
        await box.remove_children()
        board = make_board(self.replaying.state.revealed().view(None), None, id="board")
        board.can_focus = False  # the pane takes the keys: a replay picks no moves
        await box.mount(board)
        self.show()
        self.query_one("#replay-pane", ReplayPane).focus()
        self.say(f"Replaying game {table}.")

    # --- stepping --------------------------------------------------------------------------

    def show(self) -> None:
        """Draw the replay's current position."""
        replaying = self.replaying
        if replaying is None:
            return
        self.query_one("#replay-title", Static).update(Text(replaying.title()))
        self.query_one("#board", BoardWidget).show(replaying.state.revealed().view(None), None, last_move=replaying.last_move)
        self.query_one("#replay-status", Static).update(Text(replaying.status()))

    def action_step(self, plies: int) -> None:
        """Step ``plies`` forward (negative: back)."""
        if self.replaying is not None:
            self.replaying.go(self.replaying.index + plies)
            self.show()

    def action_jump(self, where: str) -> None:
        """Jump to the ``"first"`` or ``"last"`` position."""
        if self.replaying is not None:
            self.replaying.go(0 if where == "first" else self.replaying.last)
            self.show()

    def action_ask(self, what: str) -> None:
        """Ask for a ply to go to (``"goto"``) or a file to export to (``"export"``)."""
        if self.replaying is None:
            self.say("Choose a game first (Enter on the list).")
            return
        self.asking = what
        field = self.query_one("#ask", Input)
        field.value = f"game{self.replaying.table}.txt" if what == "export" else ""
        field.placeholder = f"ply 0 to {self.replaying.last}" if what == "goto" else self._export_hint()
        field.remove_class("hidden")
        field.focus()

    @on(Input.Submitted, "#ask")
    def _answered(self, event: Input.Submitted) -> None:
        event.input.add_class("hidden")
        replaying, what, text = self.replaying, self.asking, event.value.strip()
        self.asking = None
        if replaying is None or not text:
            return
        if what == "goto":
            if not (text.isdigit() and 0 <= int(text) <= replaying.last):
                self.say(f"A ply is a number from 0 to {replaying.last}, not {printable(text)!r}.")
                return
            replaying.go(int(text))
            self.show()
        elif what == "export":
            path = Path(text).expanduser()
            if path.suffix.lower() == ".ggf":
                self.export_ggf(replaying.table, path)
            else:
                self.export(path)

    def _export_hint(self) -> str:
        """What the export question's empty field says: GGF is offered for an Othello game."""
        othello = self.replaying is not None and self.replaying.record.game == "othello"
        return "file to write the record to (name it .ggf for GGF)" if othello else "file to write the record to"

    def export(self, path: Path, text: str | None = None, kind: str = "record") -> None:
        """Write the replayed game's plain-text record (or ``text``, a ``kind`` of record) to ``path``."""
        try:
            path.write_text(self.record_text if text is None else text, encoding="utf-8")
        except OSError as exc:
            self.say(f"cannot write {printable(str(path))}: {exc.strerror or exc}")
            return
        self.say(f"Saved the {kind} of game {self.replaying.table if self.replaying else '?'} to {printable(str(path))}.")

    @work(exclusive=True, group="archive-export")
    async def export_ggf(self, table: int, path: Path) -> None:
        """Fetch game ``table`` as GGF from the server and write it to ``path`` (a game other than Othello: the server's reason)."""
        try:
            text = await self.session.client.get_record(table, "ggf")
        except (ServerError, ConnectionLost) as exc:
            self.say(f"cannot export game {table} as GGF: {printable_lines(str(getattr(exc, 'message', None) or exc))}")
            return
        self.export(path, text, "GGF record")

    def say(self, text: str) -> None:
        """Show one line of news under the list."""
        self.query_one("#message", Static).update(Text(text))

    def action_back(self) -> None:
        """Close the archive (or the question being asked)."""
        field = self.query_one("#ask", Input)
        if not field.has_class("hidden"):
            field.add_class("hidden")
            self.asking = None
            return
        self.dismiss(None)
