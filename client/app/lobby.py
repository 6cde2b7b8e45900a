"""The lobby pane: the server's tables (sortable, filterable), the open seeks, who is online, lobby chat and messages.

Everything shown comes from the session model (:class:`client.session.ClientSession`):
its ``lobby`` tables, ``seeks``, ``lobby_chat`` and ``tells``. Names and chat are other users' text:
they are shown through :func:`client.sanitize.printable` as plain text, never markup.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Label, OptionList, RichLog, Static
from textual.widgets.option_list import Option

from protocol import messages as m

from ..connection import ConnectionLost, ServerError
from ..option_text import options_text, schema
from ..sanitize import printable
from ..session import Change, ClientSession, SessionError
from ..terminal import player_label
from .match_form import MatchForm
from .muted import MutedScreen
from .player import PlayerScreen

__all__ = ["LobbyPane", "CursorList", "COLUMNS", "row_cells", "sort_key", "seek_line", "MOST_ROWS", "SEEKS_SHOWN"]

MOST_ROWS = 1000
"""The most tables the lobby's list shows at once (narrow it with the filter)."""

SEEKS_SHOWN = 100
"""The most open seeks the lobby's seek list shows."""
WHO_MOST = 50
"""The most names the "Online" list shows."""
WHO_EVERY_S = 15.0
"""How often the lobby asks the server who is online (where the server has ``who``)."""

COLUMNS = (("id", "#"), ("game", "Game"), ("options", "Options"), ("seats", "Seats"), ("status", "Status"), ("watching", "Watch"))
"""The lobby table's columns: key and header."""


def row_cells(table: m.TableInfo, described_games: Iterable[Any] | None = None) -> dict[str, Any]:
    """The cells of one lobby row by column key (plain, sanitised text and numbers).

    Options read as their labels and values in words (``Flying: yes``), from the
    game's schema in ``described_games`` (``welcome.games``; else this client's
    own); options at their default are left out.
    """
    options = options_text(schema(table.game, described_games), table.options)
    words = [options] if options else []
    if table.time_control:
        words.append(f"Clock: {printable(table.time_control)}")
    if table.hints and table.computer is None:
        words.append("Hints: yes")
    seats = " vs ".join(player_label(table, seat) for seat in range(len(table.seats)))
    return {
        "id": table.id,
        "game": printable(table.game),
        "options": ", ".join(words),
        "seats": seats,
        "status": f"{printable(table.status)} (ply {table.ply})" if table.status == "playing" else printable(table.status),
        "watching": table.spectators,
    }


def seek_line(seek: m.SeekInfo) -> str:
    """One open seek as the lobby lists it (sanitised): ``bob (1620) othello 5+3 rated, 1400-1800``."""
    words = [printable(seek.name) + (f" ({seek.rating})" if seek.rating is not None else ""), printable(seek.game)]
    words.append(printable(seek.time_control) if seek.time_control else "no clock")
    words.append("rated" if seek.rated else "casual")
    line = " ".join(words)
    if seek.rating_min is not None or seek.rating_max is not None:
        line += f", {seek.rating_min if seek.rating_min is not None else ''}-{seek.rating_max if seek.rating_max is not None else ''}"
    return line


def sort_key(column: str) -> Callable[[dict[str, Any]], Any]:
    """How rows sort by ``column``: numbers as numbers, text without regard to case."""
    if column in ("id", "watching"):
        return lambda cells: cells[column]
    return lambda cells: str(cells[column]).casefold()


class CursorList(OptionList):
    """An option list that, while it has the focus, always highlights a row (the first, when none was).

    A plain :class:`OptionList` highlights nothing until an arrow key is
    pressed, so a focused list shows no cursor and Enter does nothing.
    """

    def on_focus(self) -> None:
        if self.highlighted is None:
            self.action_first()

    def show_cursor(self) -> None:
        """Highlight the first enabled row if the list has the focus and no row is highlighted."""
        if self.has_focus and self.highlighted is None:
            self.action_first()


class LobbyPane(Vertical):
    """The lobby: a table list, a filter, who is online and the lobby chat.

    Keys: Enter or ``j`` joins the highlighted table (sits at a free seat),
    ``w`` watches it. Clicking a column header sorts by it (again: reversed).
    ``s`` (or the button) opens the seek form; Enter on an open seek answers it
    with a matching seek, so the server pairs us; Enter on a name in the online
    list opens that player (ratings, challenge, tell, mute). ``t``, ``e`` and
    ``o`` go to the tables, the open seeks and the online list (a focused list
    always shows its highlighted row); ``u`` lists the players we mute.

    Args:
        session: the session model whose lobby is shown.
    """

    DEFAULT_CSS = """
    LobbyPane #filter { height: 1; margin: 0 1; }
    LobbyPane DataTable { height: 1fr; min-height: 4; }
    LobbyPane #seeks-row { height: 4; border-top: solid $primary; }
    LobbyPane #seeks-side { width: 1fr; }
    LobbyPane #seeks { height: 1fr; }
    LobbyPane #seek-button { margin: 1 1 0 1; }
    LobbyPane #bottom { height: 8; border-top: solid $primary; }
    LobbyPane #chat-side { width: 2fr; }
    LobbyPane #messages-side { width: 1fr; min-width: 14; }
    LobbyPane #who-side { width: 1fr; min-width: 14; }
    LobbyPane #who { height: 1fr; }
    LobbyPane RichLog { height: 1fr; }
    LobbyPane #lobby-chat-input { height: 1; }
    LobbyPane #lobby-error { color: $error; height: auto; }
    """
    BINDINGS = [
        Binding("j", "join", "Join"),
        Binding("w", "watch", "Watch"),
        Binding("s", "seek", "Seek", tooltip="post a seek: a game for anyone to take"),
        Binding("t", "focus_list('tables')", "Tables", show=False),
        Binding("e", "focus_list('seeks')", "Seeks", tooltip="the open seeks"),
        Binding("o", "focus_list('who')", "Who", tooltip="the online list"),
        Binding("u", "muted", "Muted", tooltip="the players you mute"),
    ]

    def __init__(self, session: ClientSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.sort_column = "id"
        self.sort_reverse = False
        self.filter_text = ""
        self._rebuild_pending = False
        self._unsubscribe: Callable[[], None] | None = None
        self._online: dict[str, str] | None = None  # name -> status note: the server's answer to who, where it has the request
        self._online_total = 0
        self._seeks_stale = False  # the connection dropped: the open seeks may have changed unseen

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter: part of a game, name or status", id="filter", compact=True)
        table: DataTable[Any] = DataTable(id="tables", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("", id="lobby-error")
        with Horizontal(id="seeks-row"):
            with Vertical(id="seeks-side"):
                yield Label("Open seeks (e; Enter: play)")
                yield CursorList(id="seeks", compact=True)
            yield Button("Seek a game", id="seek-button", compact=True)
        with Horizontal(id="bottom"):
            with Vertical(id="chat-side"):
                yield RichLog(id="lobby-chat-log", wrap=True, markup=False, max_lines=200)
                yield Input(placeholder="say something to the lobby", id="lobby-chat-input", max_length=m.MAX_CHAT_CHARS, compact=True)
            with Vertical(id="messages-side"):
                yield Label("Messages")
                yield RichLog(id="messages-log", wrap=True, markup=False, max_lines=200, min_width=12)
            with Vertical(id="who-side"):
                yield Label("Online (o)")
                yield CursorList(id="who", compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#tables", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self._unsubscribe = self.session.subscribe(self._on_change)
        self.rebuild()
        self._show_chat()
        self._show_seeks()
        for line in self.session.tells:
            self._write_tell(line.name, line.text)
        self.refresh_who()
        self.refresh_seeks()
        self.set_interval(WHO_EVERY_S, self.refresh_who)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _on_change(self, change: Change) -> None:
        if change.kind == "disconnected":
            self._seeks_stale = True  # asked for again once the resumed session lists the lobby
        elif change.kind == "lobby" and change.event is None and self._seeks_stale:
            self._seeks_stale = False
            self.refresh_seeks()
        if change.kind in ("lobby", "table_added", "table_removed"):
            if not self._rebuild_pending:
                self._rebuild_pending = True
                self.call_later(self.rebuild)
        elif change.kind == "chat" and change.table is None and isinstance(change.event, m.Chat):
            self._write_chat(change.event.name, change.event.text)
        elif change.kind == "seek":
            self._show_seeks()
        elif change.kind == "told" and isinstance(change.event, m.Told):
            self._write_tell(change.event.name, change.event.text)

    # --- the table list --------------------------------------------------------------

    def visible_rows(self) -> list[dict[str, Any]]:
        """The rows the list shows: filtered, sorted, at most :data:`MOST_ROWS`."""
        welcome = self.session.client.welcome
        described = welcome.games if welcome is not None else None
        rows = [row_cells(info, described) for info in self.session.lobby.values()]
        wanted = self.filter_text.casefold()
        if wanted:
            rows = [cells for cells in rows if any(wanted in str(value).casefold() for value in cells.values())]
        rows.sort(key=sort_key(self.sort_column), reverse=self.sort_reverse)
        return rows[:MOST_ROWS]

    def rebuild(self) -> None:
        """Redraw the list from the model, keeping the highlighted table if it is still there."""
        self._rebuild_pending = False
        table = self.query_one("#tables", DataTable)
        highlighted = self.highlighted_table()
        table.clear()
        for cells in self.visible_rows():
            table.add_row(*(Text(str(cells[key])) for key, _ in COLUMNS), key=str(cells["id"]))
        if highlighted is not None and str(highlighted) in table.rows:
            table.move_cursor(row=table.get_row_index(str(highlighted)))
        self._show_who()

    def highlighted_table(self) -> int | None:
        """The id of the table under the cursor, or ``None`` when the list is empty."""
        table = self.query_one("#tables", DataTable)
        if table.row_count == 0:
            return None
        try:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        except Exception:  # noqa: BLE001 - no row under the cursor
            return None
        return int(row_key.value) if row_key.value is not None else None

    @on(DataTable.HeaderSelected)
    def _sort(self, event: DataTable.HeaderSelected) -> None:
        column = str(event.column_key.value)
        self.sort_reverse = not self.sort_reverse if column == self.sort_column else False
        self.sort_column = column
        self.rebuild()

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self.rebuild()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_join()

    # --- join and watch ------------------------------------------------------------------

    def action_join(self) -> None:
        """Sit at the highlighted table (a free seat); watch it if both seats are taken."""
        table = self.highlighted_table()
        if table is not None:
            info = self.session.lobby.get(table)
            free = info is not None and info.status == "waiting" and None in info.seats
            self._open(table, join=free)

    def action_watch(self) -> None:
        """Watch the highlighted table."""
        table = self.highlighted_table()
        if table is not None:
            self._open(table, join=False)

    @work(group="lobby-open")
    async def _open(self, table: int, join: bool) -> None:
        error = self.query_one("#lobby-error", Static)
        error.update("")
        try:
            await (self.session.join(table) if join else self.session.watch(table))  # the tab opens from the model's change
        except (ServerError, SessionError, ConnectionLost) as exc:
            error.update(f"Table {table}: {printable(getattr(exc, 'message', None) or str(exc))}")

    # --- chat and who --------------------------------------------------------------------

    @on(Input.Submitted, "#lobby-chat-input")
    def _say(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            event.input.value = ""
            self._send_chat(text)

    @work(group="lobby-chat")
    async def _send_chat(self, text: str) -> None:
        try:
            await self.session.say(text)
        except (ServerError, ConnectionLost) as exc:
            self.query_one("#lobby-chat-log", RichLog).write(Text(f"(not sent: {printable(getattr(exc, 'message', None) or str(exc))})", style="red"))

    def _show_chat(self) -> None:
        for line in self.session.lobby_chat:
            self._write_chat(line.name, line.text)

    def _write_chat(self, name: str, text: str) -> None:
        self.query_one("#lobby-chat-log", RichLog).write(Text(f"{printable(name)}: {printable(text)}"))

    @work(exclusive=True, group="lobby-who")
    async def refresh_who(self) -> None:
        """Ask the server who is online, where it has a ``who`` request; else show the names seen at tables."""
        ask = getattr(self.session.client, "who", None)
        if ask is not None:
            try:
                page = await ask(limit=WHO_MOST)
            except (ServerError, ConnectionLost):
                self._online = None
            else:
                self._online = {p.name: _who_note(p) for p in page.players}
                self._online_total = int(page.total)
        self._show_who()

    def _show_who(self) -> None:
        seen = seated_names(self.session)
        if self._online is not None:  # the server's last answer, and whoever sat down at a table since
            since = [name for name in seen if name not in self._online]
            rows = list(self._online.items()) + [(name, "") for name in since]
            total = self._online_total + len(since)
        else:
            rows, total = [(name, "") for name in seen], len(seen)
        who = self.query_one("#who", CursorList)
        picked = who.highlighted_option.id if who.highlighted_option is not None else None
        who.clear_options()
        who.add_options([Option(Text(printable(name) + note), id=name) for name, note in rows[:WHO_MOST]])
        if total > min(len(rows), WHO_MOST):
            who.add_option(Option(Text(f"(+{total - min(len(rows), WHO_MOST)} more)"), disabled=True))
        if picked is not None and _has_option(who, picked):
            who.highlighted = who.get_option_index(picked)
        who.show_cursor()

    @on(OptionList.OptionSelected, "#who")
    def _player_picked(self, event: OptionList.OptionSelected) -> None:
        name = event.option.id
        if name is not None and name.casefold() != self.session.client.name.casefold():
            self.app.push_screen(PlayerScreen(self.session, name))

    # --- moving between the lists --------------------------------------------------------

    def action_focus_list(self, which: str) -> None:
        """Focus the list ``which`` (``"tables"``, ``"seeks"`` or ``"who"``); its highlighted row shows."""
        self.query_one(f"#{which}").focus()

    def action_muted(self) -> None:
        """Open the list of players we mute (Enter there unmutes)."""
        self.app.push_screen(MutedScreen(self.session))

    # --- seeks and messages --------------------------------------------------------------

    @work(exclusive=True, group="lobby-seeks")
    async def refresh_seeks(self) -> None:
        """Ask the server for the open seeks (pushes keep the model's list up to date after that)."""
        try:
            await self.session.refresh_seeks()
        except (ServerError, ConnectionLost):
            pass  # a server without seeks: the list stays empty

    def _show_seeks(self) -> None:
        seeks = self.query_one("#seeks", CursorList)
        picked = seeks.highlighted_option.id if seeks.highlighted_option is not None else None
        seeks.clear_options()
        shown = list(self.session.seeks.values())[:SEEKS_SHOWN]
        seeks.add_options([Option(Text(seek_line(seek)), id=str(seek.id)) for seek in shown])
        if picked is not None and _has_option(seeks, picked):
            seeks.highlighted = seeks.get_option_index(picked)
        seeks.show_cursor()

    @on(Button.Pressed, "#seek-button")
    def action_seek(self) -> None:
        """Open the seek form."""
        self.app.push_screen(MatchForm(self.session))

    @on(OptionList.OptionSelected, "#seeks")
    def _seek_picked(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self._answer_seek(int(event.option.id))

    @work(group="lobby-seek")
    async def _answer_seek(self, seek: int) -> None:
        error = self.query_one("#lobby-error", Static)
        error.update("")
        try:
            await self.session.answer_seek(seek)  # the table's tab opens from the model's paired change
        except (ServerError, SessionError, ConnectionLost) as exc:
            error.update(f"Seek {seek}: {printable(getattr(exc, 'message', None) or str(exc))}")

    def _write_tell(self, name: str, text: str) -> None:
        self.query_one("#messages-log", RichLog).write(Text(f"{printable(name)}: {printable(text)}"))


def seated_names(session: ClientSession) -> list[str]:
    """The names known to be online without asking: ours and everyone seated at a lobby table (raw, sorted).

    A server without a ``who`` request says no more than this; a ``who`` reply,
    where the server has one, can replace it.
    """
    names = {session.client.name}
    for info in session.lobby.values():
        names.update(name for name in info.seats if name)
    return sorted(names, key=str.casefold)


def _who_note(player: m.PlayerInfo) -> str:
    """What the online list adds to a name: the rating shown by ``who``, and the status unless idle."""
    note = f" {player.rating}" if player.rating is not None else ""
    return note + ("" if player.status == "idle" else f" ({printable(player.status)})")


def _has_option(options: OptionList, option_id: str) -> bool:
    try:
        options.get_option(option_id)
    except Exception:  # noqa: BLE001 - Textual raises OptionDoesNotExist
        return False
    return True
