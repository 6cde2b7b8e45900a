"""A player picked from the lobby's online list: their ratings and record (``finger``), and what to do with them.

>>> app.push_screen(PlayerScreen(session, "bob"))   # doctest: +SKIP

The card opens with the message field focused (Enter sends a tell), so
typing starts nothing else. Buttons (and, from a button, keys):
**Challenge** (``c``) opens :class:`client.app.match_form.MatchForm`;
**Mute** (``m``) mutes them (no tells or challenges from them); for a player
already muted (the server's ``list_mutes``) it reads **Unmute** and lifts
it. Escape closes. Everything the server says about the player is shown
through :func:`client.sanitize.printable`.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from protocol import messages as m

from ..connection import ConnectionLost, ServerError
from ..ratings_text import describe_finger
from ..sanitize import printable
from ..session import ClientSession
from .match_form import MatchForm
from .muted import same_name

APP_REPLAY = "Escape, then F3: the archive replays them"
"""How the card says to see a past game: the app's archive, not line mode's commands."""

__all__ = ["PlayerScreen"]


class PlayerScreen(ModalScreen[None]):
    """Show ``name``'s ratings and record; challenge, tell or mute them.

    Args:
        session: the session to ask and act through.
        name: the player (as the server's ``who`` gave it).
    """

    DEFAULT_CSS = """
    PlayerScreen { align: center middle; }
    PlayerScreen > Vertical { width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; background: $surface; padding: 0 1; }
    PlayerScreen VerticalScroll { height: auto; max-height: 12; }
    PlayerScreen #tell-text { margin: 1 0 0 0; }
    PlayerScreen #player-status { height: auto; color: $text-muted; }
    PlayerScreen #player-buttons { height: auto; align-horizontal: right; }
    PlayerScreen #player-buttons Button { margin-left: 1; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("c", "challenge", "Challenge"),
        Binding("m", "mute", "Mute or unmute"),
    ]

    def __init__(self, session: ClientSession, name: str) -> None:
        super().__init__()
        self.session = session
        self.player = name
        self.muted = False

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield Static(f"{printable(self.player)}: asking for their ratings...", id="finger", markup=False)
            yield Input(placeholder=f"tell {printable(self.player)} something (Enter sends)", id="tell-text", max_length=m.MAX_CHAT_CHARS, compact=True)
            yield Static("", id="player-status", markup=False)
            with Horizontal(id="player-buttons"):
                yield Button("Challenge", id="p-challenge", variant="primary", compact=True)
                yield Button("Mute", id="p-mute", compact=True)
                yield Button("Close", id="p-close", compact=True)

    def on_mount(self) -> None:
        self.query_one("#tell-text", Input).focus()  # typing writes a tell; no key here starts anything
        self._finger()
        self._muted()

    @work(exclusive=True, group="finger")
    async def _finger(self) -> None:
        shown = self.query_one("#finger", Static)
        try:
            shown.update(describe_finger(await self.session.client.finger(self.player), how_to_replay=APP_REPLAY))
        except (ServerError, ConnectionLost) as exc:
            shown.update(f"{printable(self.player)}: no ratings ({printable(getattr(exc, 'message', None) or str(exc))})")

    def _status(self, text: str) -> None:
        self.query_one("#player-status", Static).update(text)

    @on(Input.Submitted, "#tell-text")
    def _tell_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            event.input.value = ""
            self._tell(text)

    @work(group="tell")
    async def _tell(self, text: str) -> None:
        try:
            await self.session.client.tell(self.player, text)
        except (ServerError, ConnectionLost) as exc:
            self._status(f"not sent: {printable(getattr(exc, 'message', None) or str(exc))}")
            return
        self._status(f"told {printable(self.player)}: {printable(text)}")

    @on(Button.Pressed, "#p-challenge")
    def action_challenge(self) -> None:
        """Open the challenge form for this player (this screen closes)."""
        session, name = self.session, self.player
        self.dismiss(None)
        self.app.push_screen(MatchForm(session, challenge=name))

    @on(Button.Pressed, "#p-mute")
    def action_mute(self) -> None:
        """Mute the player (pressed again: unmute)."""
        self._mute(not self.muted)

    @work(exclusive=True, group="mute")
    async def _muted(self) -> None:
        """Ask whether we mute the player already (the button then reads Unmute)."""
        try:
            names = await self.session.client.list_mutes()
        except (ServerError, ConnectionLost):
            return  # a server without list_mutes: the button starts at Mute
        self._show_muted(any(same_name(name, self.player) for name in names))

    def _show_muted(self, muted: bool) -> None:
        self.muted = muted
        self.query_one("#p-mute", Button).label = "Unmute" if muted else "Mute"

    @work(exclusive=True, group="mute")
    async def _mute(self, mute: bool) -> None:
        try:
            await self.session.client.mute(self.player, mute)
        except (ServerError, ConnectionLost) as exc:
            self._status(f"cannot {'mute' if mute else 'unmute'}: {printable(getattr(exc, 'message', None) or str(exc))}")
            return
        self._show_muted(mute)
        self._status(f"{printable(self.player)} is muted: no tells or challenges from them." if mute else f"{printable(self.player)} is no longer muted.")

    @on(Button.Pressed, "#p-close")
    def action_close(self) -> None:
        """Close this screen."""
        self.dismiss(None)
