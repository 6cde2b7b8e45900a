"""The main screen: the lobby tab and one tab per table you sit at or watch.

Tabs follow the session model: a table joined, watched, created, resumed or
rematched opens a tab; a table left closes it; choosing a tab focuses its
table in the model, so an action always names the table it was made at.
Closing a tab leaves the table (asking first while your own game runs).

A table tab holds the table view (:class:`client.app.table.TableView`):
board, seats, clocks, moves, chat and offers.
"""

from __future__ import annotations

from typing import Any, Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from ..sanitize import printable
from ..session import Change, ClientSession, TableState
from .lobby import LobbyPane
from .table import TableView

__all__ = ["MainScreen", "tab_id", "tab_title", "table_view"]

LOBBY_TAB = "lobby"


def tab_id(table: int) -> str:
    """The id of table ``table``'s tab pane."""
    return f"table-{table}"


def tab_title(state: TableState) -> str:
    """A tab's label: ``#3 othello``, with ``(watching)`` for a table you watch."""
    return f"#{state.id} {printable(state.game)}" + (" (watching)" if state.seat is None else "")


def table_view(session: ClientSession, table: int) -> Widget:
    """The widget for table ``table``'s tab."""
    return TableView(session, table)


class MainScreen(Screen[None]):
    """The lobby and the tables, as tabs.

    Args:
        session: the session model (its ``run`` is pumped by the app).
    """

    BINDINGS = [
        Binding("ctrl+pagedown,f6", "next_tab(1)", "Next tab", show=False),
        Binding("ctrl+pageup,f5", "next_tab(-1)", "Previous tab", show=False),
        Binding("ctrl+r", "retry_now", "Retry", tooltip="reconnect now"),
    ]
    DEFAULT_CSS = """
    MainScreen #banner { height: 1; background: $primary-background; padding: 0 1; }
    MainScreen #offline { display: none; height: auto; background: $error; color: $text; text-style: bold; padding: 0 1; }
    MainScreen #offline.shown { display: block; }
    MainScreen TabbedContent { height: 1fr; }
    MainScreen TabPane { padding: 0; }
    """

    def __init__(self, session: ClientSession) -> None:
        super().__init__()
        self.session = session
        self._unsubscribe: Callable[[], None] | None = None
        self._shown = LOBBY_TAB  # the pane the model's focus last asked for

    def compose(self) -> ComposeResult:
        welcome = self.session.client.welcome
        server = printable(welcome.server) if welcome is not None else "?"
        yield Static(f"Parlour · {server} · you are {printable(self.session.client.name)} · F1 help", id="banner")
        yield Static("", id="offline", markup=False)  # above the tabs: seen on every tab while the server is away
        with TabbedContent(id="tabs"):
            with TabPane("Lobby", id=LOBBY_TAB):
                yield LobbyPane(self.session)
        yield Footer(compact=True, show_command_palette=False)  # 80 columns hold a table's keys; Ctrl+P still opens the palette

    def on_mount(self) -> None:
        self._unsubscribe = self.session.subscribe(self._on_change)
        self.call_after_refresh(self._open_tabs)  # once the tabbed content has its tabs

    async def _open_tabs(self) -> None:
        """Open a tab for every table the model already holds (a resumed session's), and show the focused one."""
        for state in list(self.session.tables.values()):
            await self.open_tab(state.id)
        self.show_focus()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _on_change(self, change: Change) -> None:
        if change.kind == "table_added" and change.table is not None:
            self.call_later(self.open_tab, change.table)  # a table we came back to as a player (or spectator) is relabelled there
        elif change.kind == "table_removed" and change.table is not None:
            self.call_later(self.close_tab, change.table)
        elif change.kind == "focus":
            self.call_later(self.show_focus)
        elif change.kind == "disconnected":
            self.call_later(self.app.connection_lost)  # type: ignore[attr-defined]

    def show_offline(self, text: str | None) -> None:
        """Show ``text`` (the connection's state: reconnecting, gave up, signed in elsewhere) above every tab; ``None`` hides it."""
        bar = self.query_one("#offline", Static)
        bar.update(text or "")
        bar.set_class(text is not None, "shown")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The retry key only while the connection is lost."""
        if action == "retry_now":
            return self.query_one("#offline", Static).has_class("shown")
        return True

    def action_retry_now(self) -> None:
        """Reconnect now, without waiting for the next attempt (or try again after giving up)."""
        self.app.retry_now()  # type: ignore[attr-defined]

    async def open_tab(self, table: int) -> None:
        """Add table ``table``'s tab if it has none, and show it if the model focuses it."""
        tabs = self.query_one(TabbedContent)
        state = self.session.tables.get(table)
        if state is None:
            return
        if not tabs.query(f"#{tab_id(table)}"):
            await tabs.add_pane(TabPane(tab_title(state), table_view(self.session, table), id=tab_id(table)))
        else:
            self.relabel(table)
        self.show_focus()

    def relabel(self, table: int) -> None:
        """Give table ``table``'s tab the label its state asks for now (a spectator who took a seat is no longer watching)."""
        state = self.session.tables.get(table)
        tabs = self.query_one(TabbedContent)
        if state is None or not tabs.query(f"#{tab_id(table)}"):
            return
        tab = tabs.get_tab(tab_id(table))
        if tab.label_text != tab_title(state):
            tab.label = tab_title(state)

    async def close_tab(self, table: int) -> None:
        """Remove table ``table``'s tab."""
        tabs = self.query_one(TabbedContent)
        if tabs.query(f"#{tab_id(table)}"):
            await tabs.remove_pane(tab_id(table))
        self.show_focus()

    def show_focus(self) -> None:
        """Show the tab of the model's focused table (the lobby when none)."""
        tabs = self.query_one(TabbedContent)
        wanted = tab_id(self.session.focus) if self.session.focus is not None else LOBBY_TAB
        if not tabs.query(f"#{wanted}"):
            return
        self._shown = wanted
        if tabs.active != wanted:
            tabs.active = wanted
        self.call_after_refresh(self._focus_inside, wanted)

    def _focus_inside(self, pane_id: str) -> None:
        """Give the focus to the shown pane's first focusable widget (a focus left in a hidden pane would show that pane again)."""
        tabs = self.query_one(TabbedContent)
        if tabs.active != pane_id:
            return
        pane = tabs.get_pane(pane_id)
        if self.focused is not None and pane in self.focused.ancestors:
            return
        for view in pane.query(TableView):  # a table tab: its board, not the frame that scrolls it
            view.board.focus()
            return
        for widget in [*pane.query(DataTable), *pane.query("*")]:  # the lobby's list before its filter
            if widget.focusable:
                widget.focus()
                return

    @on(TabbedContent.TabActivated)
    def _chosen(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane.id or LOBBY_TAB
        if pane != self.query_one(TabbedContent).active or pane == self._shown:
            return  # not the user's choice (the first activation, a re-announcement while adding a pane, our own)
        table = int(pane.removeprefix("table-")) if pane.startswith("table-") else None
        if table is None or table in self.session.tables:
            self.session.set_focus(table)

    def action_next_tab(self, step: int = 1) -> None:
        """Show the next tab (``step=-1``: the previous one), wrapping round, and focus what it holds."""
        tabs = self.query_one(TabbedContent)
        panes = [pane.id for pane in tabs.query(TabPane) if pane.id]
        if len(panes) < 2 or tabs.active not in panes:
            return
        wanted = panes[(panes.index(tabs.active) + step) % len(panes)]
        table = int(wanted.removeprefix("table-")) if wanted.startswith("table-") else None
        if table is None or table in self.session.tables:
            self.session.set_focus(table)

    def active_table(self) -> int | None:
        """The table whose tab is shown (``None``: the lobby)."""
        active = self.query_one(TabbedContent).active
        return int(active.removeprefix("table-")) if active.startswith("table-") else None

    def active_game(self) -> Any:
        """The game of the table shown, for the help's rules (``None`` in the lobby)."""
        table = self.active_table()
        state = self.session.tables.get(table) if table is not None else None
        return state.game if state is not None else None
