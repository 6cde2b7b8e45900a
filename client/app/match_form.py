"""The small form that challenges a player or posts a seek: game, time control, rated, and for a seek a rating range.

>>> app.push_screen(MatchForm(session, challenge="bob"))   # doctest: +SKIP
>>> app.push_screen(MatchForm(session))                    # doctest: +SKIP  (a seek)

The form checks the time control and the rating range itself, then sends
``challenge`` or ``seek`` (PROTOCOL.md §17) and shows the server's refusal on
the form. It dismisses with ``True`` once sent (``None``: cancelled). A seek
that pairs at once, or a challenge accepted later, opens the table by the
model's ``paired`` handling.
"""

from __future__ import annotations

from dataclasses import dataclass
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from ..connection import ConnectionLost, ServerError
from ..sanitize import printable
from ..session import ClientSession
from .new_table import FormError, check_time_control
from .yes_no import YesNo

__all__ = ["MatchForm", "MatchRequest", "check_rating_bound", "MOST_RATING"]

MOST_RATING = 10_000
"""The highest rating bound a seek may name (the server's limit)."""


@dataclass
class MatchRequest:
    """What the form sends: the game, its time control (``None``: no clock), rated, and a seek's rating range."""

    game: str
    time_control: str | None = None
    rated: bool = False
    rating_min: int | None = None
    rating_max: int | None = None


def check_rating_bound(text: str, field: str) -> int | None:
    """A rating bound typed in ``field`` (``rating_min``/``rating_max``): a whole number 0..10000, ``None`` when empty.

    Raises:
        FormError: on ``field``, naming what was wrong.
    """
    text = text.strip()
    if not text:
        return None
    if not text.isdigit() or int(text) > MOST_RATING:
        raise FormError(field, f"a rating bound is a whole number from 0 to {MOST_RATING}, not {text!r}")
    return int(text)


class MatchForm(ModalScreen[bool | None]):
    """Challenge ``challenge`` (a player's name) or, with ``challenge`` ``None``, post a seek.

    Args:
        session: the session to send through.
        challenge: the name to challenge; ``None`` makes it the seek form.
        game: the game to start with (default: the first the server offers).
    """

    DEFAULT_CSS = """
    MatchForm { align: center middle; }
    MatchForm > Vertical { width: 64; max-width: 100%; height: auto; border: thick $primary; background: $surface; padding: 0 1; }
    MatchForm .row { height: auto; margin-bottom: 1; }
    MatchForm .row > Label { width: 12; text-align: right; padding-right: 1; }
    MatchForm .row > Input, MatchForm .row > Select { width: 1fr; }
    MatchForm #match-error { color: $error; height: auto; }
    MatchForm #match-buttons { height: auto; align-horizontal: right; }
    MatchForm #match-buttons Button { margin-left: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, session: ClientSession, challenge: str | None = None, game: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.challenged = challenge
        welcome = session.client.welcome
        self.games = [str(entry.get("name")) for entry in (welcome.games if welcome is not None else []) if isinstance(entry, dict)]
        self.game = game if game in self.games else (self.games[0] if self.games else "")

    def compose(self) -> ComposeResult:
        heading = f"Challenge {printable(self.challenged)}" if self.challenged is not None else "Seek a game"
        with Vertical():
            yield Static(f"{heading} — Escape cancels", id="match-heading", markup=False)
            with Horizontal(classes="row"):
                yield Label("Game")
                yield Select([(printable(name), name) for name in self.games], value=self.game or Select.BLANK, allow_blank=not self.games, id="m-game", compact=True)
            with Horizontal(classes="row"):
                yield Label("Clock")
                yield Input(placeholder="MINUTES+INCREMENT, e.g. 5+3 (empty: none)", id="m-time_control", compact=True)
            with Horizontal(classes="row"):
                yield Label("Rated")
                yield YesNo(note="claimed names only", id="m-rated")
            if self.challenged is None:
                with Horizontal(classes="row"):
                    yield Label("Ratings")
                    yield Input(placeholder="lowest (empty: any)", id="m-rating_min", compact=True, max_length=5)
                    yield Input(placeholder="highest (empty: any)", id="m-rating_max", compact=True, max_length=5)
            yield Static("", id="match-error", markup=False)
            with Horizontal(id="match-buttons"):
                yield Button("Cancel", id="m-cancel", compact=True)
                yield Button("Challenge" if self.challenged is not None else "Seek", id="m-send", variant="primary", compact=True)

    def read(self) -> MatchRequest:
        """The request the fields describe.

        Raises:
            FormError: naming the field at fault (``game``, ``time_control``, ``rating_min``, ``rating_max``).
        """
        game = self.query_one("#m-game", Select).value
        if not isinstance(game, str):
            raise FormError("game", "choose a game")
        request = MatchRequest(game, check_time_control(self.query_one("#m-time_control", Input).value), self.query_one("#m-rated", Checkbox).value)
        if self.challenged is None:
            request.rating_min = check_rating_bound(self.query_one("#m-rating_min", Input).value, "rating_min")
            request.rating_max = check_rating_bound(self.query_one("#m-rating_max", Input).value, "rating_max")
            if request.rating_min is not None and request.rating_max is not None and request.rating_min > request.rating_max:
                raise FormError("rating_min", "the lowest rating is above the highest")
        return request

    @on(Button.Pressed, "#m-send")
    @on(Input.Submitted)
    def _send_pressed(self) -> None:
        error = self.query_one("#match-error", Static)
        error.update("")
        try:
            request = self.read()
        except FormError as exc:
            error.update(f"{exc.field.replace('_', ' ')}: {exc}")
            return
        self.query_one("#m-send", Button).disabled = True
        self._send(request)

    @work(exclusive=True, group="match-form")
    async def _send(self, request: MatchRequest) -> None:
        try:
            said = await self._request(request)
        except (ServerError, ConnectionLost) as exc:
            self.query_one("#match-error", Static).update(printable(getattr(exc, "message", None) or str(exc)))
            return
        finally:
            self.query_one("#m-send", Button).disabled = False
        self.app.notify(said)
        self.dismiss(True)

    async def _request(self, request: MatchRequest) -> str:
        """Send the challenge or the seek; return what to tell the user."""
        kind = "rated" if request.rated else "casual"
        if self.challenged is not None:
            await self.session.client.challenge(self.challenged, request.game, time_control=request.time_control, rated=request.rated)
            return f"Challenged {printable(self.challenged)} to a {kind} game of {printable(request.game)}."
        posted = await self.session.seek(
            request.game, time_control=request.time_control, rated=request.rated, rating_min=request.rating_min, rating_max=request.rating_max
        )
        return "Paired: the game opens in its tab." if posted.paired else f"Seeking a {kind} game of {printable(request.game)} (seek {posted.seek.id})."

    @on(Button.Pressed, "#m-cancel")
    def action_cancel(self) -> None:
        """Close the form without sending."""
        self.dismiss(None)

