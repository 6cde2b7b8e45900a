"""The Parlour terminal application: the server screen, then the lobby and table tabs.

>>> ParlourApp(ServerStart(name="ann", address="127.0.0.1:7420")).run()   # doctest: +SKIP

The app holds one :class:`client.session.ClientSession` (the model every
screen reads and acts through) once connected. Quitting always asks; Ctrl-C
asks while one of your games runs; leaving a running game asks too
(:class:`client.app.confirm.ConfirmScreen`; the table view asks before resigning).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace
from typing import Callable

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.timer import Timer

from ..claims import NameClaims
from ..connection import ConnectionLost, ServerError
from ..reconnect import Reconnector
from ..sanitize import printable
from ..session import ClientSession, SessionError
from ..tokens import TokenStore
from .archive import ArchiveScreen
from .challenges import SocialNotices
from .confirm import ConfirmScreen
from .connecting import Target, open_client
from .help import HelpScreen
from .new_table import NewTableScreen
from .recent import RecentServer, RecentServers
from .server_screen import Connected, ServerScreen, ServerStart
from .tabs import MainScreen

__all__ = ["ParlourApp"]


class ParlourApp(App[int]):
    """The full-screen client.

    Args:
        start: the server screen's fields from the command line (with a name and an address it
            connects at once), and how it searches the LAN (see :class:`ServerStart`).
        tokens: where session tokens are remembered (default: the user data directory).
        recent: the recently used servers (default: ``servers.json`` in the user data directory).
        mono, low_time_bell: boards without colour (``--mono``); a bell at low time (``--bell``).
        quit_warning: what quitting does besides (``parlour host``: it stops the server); every quit then asks.
        greeting: a notice shown once connected (``parlour host``: how the others connect).
    """

    TITLE = "Parlour"
    BINDINGS = [
        Binding("f1", "help", "Help"),
        # Short labels: a table's keys and these fit the footer at 80 columns (the help screen says more).
        Binding("f2,ctrl+n", "new_table", "New", tooltip="a new table"),
        Binding("f3", "archive", "Archive", tooltip="the archive of finished games"),
        Binding("f4,ctrl+w", "close_tab", "Close", tooltip="close the table's tab"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        start: ServerStart = ServerStart(),
        *,
        tokens: TokenStore | None = None,
        recent: RecentServers | None = None,
        mono: bool = False,
        low_time_bell: bool = False,
        claims: NameClaims | None = None,
        quit_warning: Callable[[], str] | None = None,
        greeting: str | None = None,
    ) -> None:
        super().__init__()
        # Names are proved or claimed as the line client does; the app never blocks on a terminal prompt,
        # and the one-line notice of a new claim is a notification.
        self.claims = replace(claims, ask=None, say=self._claim_notice) if claims is not None else None
        self.mono = mono  # boards without colour (client.app.boards.wants_mono), as with NO_COLOR
        self.low_time_bell = low_time_bell  # the table views ring when your clock falls under 10 s
        self.tokens = tokens or TokenStore()
        self.recent = recent or RecentServers()
        self.session: ClientSession | None = None
        self.social: SocialNotices | None = None  # challenge dialogs and tell notifications, once connected
        self.target: Target | None = None
        self.quit_warning = quit_warning  # parlour host: quitting stops the server for everyone (asked on every quit)
        self.greeting = greeting  # parlour host: how the others connect, shown once connected
        self.reconnector: Reconnector | None = None  # resuming the session after the connection dropped (client.reconnect)
        self._lost_reason = ""  # why the connection closed, for the bar above the tabs
        self._gave_up: str | None = None  # why reconnecting stopped, until the retry key starts it again
        self._offline_timer: Timer | None = None  # redraws the bar's countdown while reconnecting
        self._start = start

    def _claim_notice(self, text: str) -> None:
        self.notify(printable(text), timeout=20)

    def on_mount(self) -> None:
        self.push_screen(ServerScreen(self._start), self._connected)

    def _connected(self, connected: Connected | None) -> None:
        if connected is None:
            self.exit(0)
            return
        target = connected.target
        self.target = target
        self.recent.remember(RecentServer(target.host, target.port, connected.client.name))
        self.session = ClientSession(connected.client)
        self.push_screen(MainScreen(self.session))
        self.social = SocialNotices(self, self.session)
        if self.greeting:
            self.notify("\n".join(printable(line.strip()) for line in self.greeting.splitlines()), timeout=20, markup=False)
        self._pump()

    @work(exclusive=True, group="pump")
    async def _pump(self) -> None:
        """Fetch the lobby, then apply the server's pushes to the model until the connection closes."""
        session = self.session
        assert session is not None
        try:
            await session.refresh_lobby()
        except (ServerError, ConnectionLost) as exc:
            self.notify(f"cannot list the tables: {printable(getattr(exc, 'message', None) or str(exc))}", severity="error")
        await session.run()

    # --- reconnecting ------------------------------------------------------------------

    def connection_lost(self) -> None:
        """The connection closed: say why, above every tab, and resume the session (unless it went elsewhere).

        While the server is away the clocks show paused (:meth:`ClientSession.clock_time`).
        A session another connection took over ("signed in elsewhere") is not
        resumed on its own: the two would take it from each other for ever.
        """
        session = self.session
        if session is None or session.client.closed_by_us:
            return
        session.mark_offline()
        self._lost_reason = printable(session.client.close_reason or "closed")
        if session.client.superseded:
            self.notify("Signed in elsewhere: another connection took over this session.", severity="warning", timeout=30)
            self._show_offline()
            return
        self.notify(f"Connection lost ({self._lost_reason}); reconnecting...", severity="warning")
        self._start_reconnecting()

    def _start_reconnecting(self) -> None:
        session, target = self.session, self.target
        assert session is not None and target is not None
        welcome = session.client.welcome
        self.reconnector = Reconnector(
            lambda: open_client(target, self.tokens, timeout_s=5.0, claims=self.claims), grace_s=welcome.grace_s if welcome is not None else None
        )
        if self._offline_timer is None:
            self._offline_timer = self.set_interval(0.5, self._show_offline)
        self._show_offline()
        self._reconnect(self.reconnector)

    def retry_now(self) -> None:
        """The retry key: attempt at once while reconnecting; after giving up (or being signed in elsewhere), start again."""
        session = self.session
        if session is None or session.offline_since is None:
            return
        if self.reconnector is not None and self.reconnector.running:
            self.reconnector.retry_now()
        else:
            self._gave_up = None
            self._start_reconnecting()
            self.reconnector.retry_now()  # type: ignore[union-attr]

    @work(exclusive=True, group="reconnect")
    async def _reconnect(self, reconnector: Reconnector) -> None:
        session = self.session
        assert session is not None
        client = await reconnector.run()
        if client is None:
            failure = reconnector.failure
            why = printable(getattr(failure, "message", None) or str(failure) or type(failure).__name__) if failure is not None else "no answer"
            self._gave_up = f"{getattr(failure, 'code', 'no connection')}: {why}" if isinstance(failure, ServerError) else why
            self._show_offline()
            self.notify(f"Could not reconnect ({self._gave_up}).", severity="error", timeout=30)
            return
        self.reconnector = self._gave_up = None
        for problem in await session.reattach(client):
            self.notify(printable(problem), severity="warning")
        if self._offline_timer is not None:
            self._offline_timer.stop()
            self._offline_timer = None
        self._show_offline()
        self.notify("Reconnected.")
        self._pump()

    def offline_text(self) -> str | None:
        """What the bar above the tabs says about the connection (``None``: connected, no bar)."""
        session = self.session
        if session is None or session.offline_since is None:
            return None
        lost = f"Connection lost ({self._lost_reason})"
        reconnector = self.reconnector
        if reconnector is None and session.client.superseded:
            return "Signed in elsewhere: another connection took over this session; this one stopped. Ctrl+R takes it back · Ctrl+Q quits"
        if reconnector is None or not reconnector.running:
            if self._gave_up is not None:
                return f"{lost}. Could not reconnect ({self._gave_up}). Ctrl+R tries again · Ctrl+Q quits"
            return f"{lost}. Reconnecting · clocks paused · Ctrl+R retries now"
        now = asyncio.get_running_loop().time()
        if reconnector.next_at is None:
            step = f"trying now (attempt {reconnector.attempts + 1})"
        else:
            step = f"attempt {reconnector.attempts + 1} in {max(0, math.ceil(reconnector.next_at - now))} s"
        left = max(0, math.ceil((reconnector.give_up_at or now) - now))
        return f"{lost}. Reconnecting: {step}, for {left // 60}:{left % 60:02} more · clocks paused · Ctrl+R retries now"

    def _show_offline(self) -> None:
        main = self._main()
        if main is not None and main.is_mounted:
            main.show_offline(self.offline_text())

    # --- the screens -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The new-table form, the archive and closing a tab are offered only on the main screen, once connected."""
        if action in ("new_table", "archive", "close_tab") and (self.session is None or not isinstance(self.screen, MainScreen)):
            return False  # elsewhere (the archive, the server screen) the key does nothing: no hint for it
        if action == "close_tab":  # the lobby's tab does not close: no key for it there
            main = self._main()
            return main is not None and main.active_table() is not None
        return True

    def _main(self) -> MainScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def action_help(self) -> None:
        """Show the keys, the commands and the rules of the game at hand."""
        if isinstance(self.screen, HelpScreen):
            return
        main = self._main()
        self.push_screen(HelpScreen(main.active_game() if main is not None else None))

    def action_new_table(self) -> None:
        """Open the new-table form."""
        if self.session is not None and isinstance(self.screen, MainScreen):
            self.push_screen(NewTableScreen(self.session))

    def action_archive(self) -> None:
        """Open the archive of finished games."""
        if self.session is not None and isinstance(self.screen, MainScreen):
            self.push_screen(ArchiveScreen(self.session))

    # --- leaving, resigning, quitting ------------------------------------------------------

    def action_close_tab(self) -> None:
        """Close the shown table's tab: stop watching, or leave the seat (asking first while the game runs,
        saying whether leaving forfeits the game or aborts it)."""
        main = self._main()
        table = main.active_table() if main is not None and self.screen is main else None
        if table is None or self.session is None or table not in self.session.tables:
            return
        state = self.session.tables[table]
        if state.seat is not None and state.running:
            if state.leaving_aborts:
                question = f"Leave table {table}? A side has not moved yet: leaving aborts the game (no result, not rated)."
                yes = "Leave and abort"
            else:
                question = f"Leave table {table}? Your game there is running: leaving it forfeits the game."
                yes = "Leave and forfeit"
            self.push_screen(ConfirmScreen(question, yes=yes), lambda yes: self._leave(table) if yes else None)
        else:
            self._leave(table)

    @work(group="leave")
    async def _leave(self, table: int) -> None:
        assert self.session is not None
        try:
            await self.session.leave(table)
        except (ServerError, SessionError, ConnectionLost) as exc:
            self.notify(f"Cannot leave table {table}: {printable(getattr(exc, 'message', None) or str(exc))}", severity="error")

    def running_games(self) -> list[int]:
        """The tables where we sit at a running game."""
        if self.session is None:
            return []
        return [state.id for state in self.session.tables.values() if state.seat is not None and state.running]

    async def action_quit(self) -> None:
        """Quit, after asking (saying which games the seat is held at)."""
        if isinstance(self.screen, ConfirmScreen):
            return
        running = self.running_games()
        held = f" Your seats at table {', '.join(map(str, running))} are held for a while; come back to carry on." if running else ""
        if self.quit_warning is not None:
            held = " " + self.quit_warning()  # it says what happens to the games instead
        self.push_screen(ConfirmScreen("Quit Parlour?" + held, yes="Quit"), lambda yes: self.exit(0) if yes else None)

    async def action_interrupt(self) -> None:
        """Ctrl-C: quit at once outside a game; during one, ask first."""
        if self.running_games() or self.quit_warning is not None:
            await self.action_quit()
        else:
            self.exit(0)

    async def on_unmount(self) -> None:
        if self.session is not None:
            await self.session.client.close()
