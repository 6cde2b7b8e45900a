"""The list of players we mute (the server's ``list_mutes``), where Enter unmutes one.

>>> app.push_screen(MutedScreen(session))   # doctest: +SKIP

Opened from the lobby with ``u``. The server lists each name in its compared
form (NFKC, case-folded: ``"Bob"`` reads ``"bob"``); names are shown through
:func:`client.sanitize.printable`.
"""

from __future__ import annotations

import unicodedata

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ..connection import ConnectionLost, ServerError
from ..sanitize import printable
from ..session import ClientSession

__all__ = ["MutedScreen", "same_name"]


def same_name(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one name as the server compares names (NFKC-normalised, case-folded)."""
    return _key(a) == _key(b)


def _key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


class MutedScreen(ModalScreen[None]):
    """The names we mute; Enter on one unmutes it, Escape closes.

    Args:
        session: the session to ask and unmute through.
    """

    DEFAULT_CSS = """
    MutedScreen { align: center middle; }
    MutedScreen > Vertical { width: 48; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }
    MutedScreen #muted { height: auto; max-height: 14; }
    MutedScreen #muted-status { height: auto; color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, session: ClientSession) -> None:
        super().__init__()
        self.session = session
        self.names: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Muted players (Enter: unmute, Escape: close)")
            yield OptionList(id="muted", compact=True)
            yield Static("asking the server...", id="muted-status", markup=False)

    def on_mount(self) -> None:
        self.query_one("#muted", OptionList).focus()
        self.load()

    def _status(self, text: str) -> None:
        self.query_one("#muted-status", Static).update(text)

    @work(exclusive=True, group="muted-list")
    async def load(self) -> None:
        """Ask the server whom we mute and list them."""
        try:
            self.names = await self.session.client.list_mutes()
        except (ServerError, ConnectionLost) as exc:
            self._status(f"cannot list them: {printable(getattr(exc, 'message', None) or str(exc))}")
            return
        self._show()
        self._status("" if self.names else "You mute nobody. A player's card (Enter on a name in Online) mutes them.")

    def _show(self) -> None:
        muted = self.query_one("#muted", OptionList)
        muted.clear_options()
        muted.add_options([Option(Text(printable(name)), id=name) for name in self.names])
        if self.names:
            muted.highlighted = 0

    @on(OptionList.OptionSelected, "#muted")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self._unmute(event.option.id)

    @work(exclusive=True, group="muted-unmute")
    async def _unmute(self, name: str) -> None:
        try:
            await self.session.client.mute(name, False)
        except (ServerError, ConnectionLost) as exc:
            self._status(f"cannot unmute {printable(name)}: {printable(getattr(exc, 'message', None) or str(exc))}")
            return
        self.names = [kept for kept in self.names if kept != name]
        self._show()
        self._status(f"{printable(name)} is no longer muted.")

    def action_close(self) -> None:
        """Close the list."""
        self.dismiss(None)
