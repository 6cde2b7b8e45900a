"""The "new table" form: one field per option of the chosen game, made from its ``options`` metadata.

Each field shows the option's doc and allowed values beside it. The form
checks every value with the option's own rules (:class:`games.base.Option`)
before asking the server, and shows an error on the field at fault, its own or
the one the server's ``bad_option``/``bad_request`` names (``options.size``,
``time_control``, ``computer...``, ``seed``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

import games
from games.base import InvalidOption, Option

from ..connection import ConnectionLost, ServerError
from ..option_text import game_options
from ..sanitize import printable
from ..session import ClientSession
from .yes_no import YesNo

__all__ = ["NewTableScreen", "TableRequest", "FormError", "game_options", "check_time_control", "COMPUTER_LEVELS"]

COMPUTER_LEVELS = range(1, 6)
DEFAULT_LEVEL = 3
MOST_INITIAL_MIN = 24 * 60
MOST_INCREMENT_S = 60 * 60
_TIME_CONTROL = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?:\+\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*)?$")
OPPONENTS = (("person", "a person"), ("computer", "the computer"))
LABEL_MIN_WIDTH = 10
"""The narrowest the label column gets, in cells (it widens to the longest label, padding included)."""


class FormError(ValueError):
    """A field holds a value that cannot be used: ``field`` is the field's key, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class TableRequest:
    """What the form asks the server for (the fields of ``create_table``)."""

    game: str
    options: dict[str, Any] = field(default_factory=dict)
    seed: str | None = None
    time_control: str | None = None
    seat: int = 0
    computer: dict[int, int] = field(default_factory=dict)
    hints: bool = False
    rated: bool = False


def check_time_control(text: str) -> str | None:
    """Check ``MINUTES+INCREMENT`` (``"5+3"``; ``"10"`` is ``10+0``) by the server's rules; ``None`` for no clock.

    Raises:
        FormError: on ``time_control``: not of that form, both parts zero, or above 24 h / 1 h.
    """
    text = text.strip()
    if text.lower() in ("", "none", "-"):
        return None
    found = _TIME_CONTROL.match(text)
    if found is None:
        raise FormError("time_control", f"a time control is MINUTES+INCREMENT, e.g. 5+3, not {text!r}")
    minutes, increment = float(found[1]), float(found[2] or 0)
    if minutes == 0 and increment == 0:
        raise FormError("time_control", "the initial time and the increment cannot both be zero")
    if minutes > MOST_INITIAL_MIN:
        raise FormError("time_control", f"the initial time is at most {MOST_INITIAL_MIN} minutes (24 h)")
    if increment > MOST_INCREMENT_S:
        raise FormError("time_control", f"the increment is at most {MOST_INCREMENT_S} seconds (1 h)")
    return text


def _default_text(option: Option) -> str:
    if option.default is None or option.type == "str":
        return ""
    if option.type == "list[int]":
        return ",".join(map(str, option.default))
    return str(option.default)


class NewTableScreen(ModalScreen[int | None]):
    """Create a table; dismisses with the new table's id (``None``: cancelled).

    Args:
        session: the session to create the table in.
        game: the game to start with (default: the first the server offers).
    """

    DEFAULT_CSS = """
    NewTableScreen { align: center middle; }
    NewTableScreen > Vertical { width: 100; max-width: 100%; height: 100%; max-height: 100%; border: thick $primary; background: $surface; }
    NewTableScreen VerticalScroll { height: 1fr; }
    NewTableScreen .row { height: auto; }
    NewTableScreen #options { height: auto; }
    NewTableScreen .row { margin-bottom: 1; }
    NewTableScreen .row > Label { width: 18; text-align: right; padding-right: 1; }
    NewTableScreen .row > Input, NewTableScreen .row > Select, NewTableScreen .row > Checkbox { width: 16; }
    NewTableScreen .doc { width: 1fr; color: $text-muted; padding: 0 1; height: auto; }
    NewTableScreen .error { color: $error; height: auto; padding-left: 19; margin-top: -1; margin-bottom: 1; }
    NewTableScreen #buttons { height: auto; align-horizontal: right; }
    NewTableScreen #buttons Button { margin-left: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, session: ClientSession, game: str | None = None) -> None:
        super().__init__()
        self.session = session
        welcome = session.client.welcome
        self.described = {str(entry.get("name")): entry for entry in (welcome.games if welcome is not None else []) if isinstance(entry, dict)}
        self.game = game if game in self.described else next(iter(self.described), "")
        self.options: list[Option] = []

    def compose(self) -> ComposeResult:
        choices = [(printable(name), name) for name in self.described]
        with Vertical():
            yield Static("New table — Escape cancels", id="heading")
            with VerticalScroll():
                with Horizontal(classes="row"):
                    yield Label("Game")
                    yield Select(choices, value=self.game, allow_blank=False, id="game", compact=True)
                    yield Static("", id="game-title", classes="doc")
                yield Vertical(id="options")
                yield from self._row("time_control", "Clock", Input(placeholder="none", id="f-time_control", compact=True),
                                     "MINUTES+INCREMENT, e.g. 5+3 (empty: no clock)")
                yield from self._row("opponent", "Opponent", Select([(label, key) for key, label in OPPONENTS], value="person", allow_blank=False, id="f-opponent", compact=True),
                                     "a person who joins from the lobby, or the server's computer player")
                yield from self._row("computer", "Level", Select([(str(level), level) for level in COMPUTER_LEVELS], value=DEFAULT_LEVEL, allow_blank=False, id="f-computer", compact=True),
                                     "the computer's strength: 1 (a beginner can win) to 5 (the strongest)")
                yield from self._row("seat", "Your seat", Select([("seat 0", 0), ("seat 1", 1)], value=0, allow_blank=False, id="f-seat", compact=True), "")
                yield from self._row("seed", "Seed", Input(id="f-seed", compact=True), "the setup seed, for a game of chance (empty: drawn at random)")
                yield from self._row("hints", "Hints", YesNo(id="f-hints"), "let the players ask the computer for a move")
                yield from self._row("rated", "Rated", YesNo(id="f-rated"), "the result changes both players' ratings (claimed names only, against a person)")
            yield Static("", id="err-form", classes="error")
            with Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel", compact=True)
                yield Button("Create", id="create", variant="primary", compact=True)

    def _row(self, key: str, label: str, widget: Any, doc: str) -> ComposeResult:
        with Horizontal(classes="row", id=f"row-{key}"):
            yield Label(label)
            yield widget
            yield Static(doc, classes="doc")
        yield Static("", id=f"err-{key}", classes="error")

    async def on_mount(self) -> None:
        await self._show_game(self.game)
        self.query_one("#f-computer", Select).disabled = True
        self.query_one("#game", Select).focus()  # not the scrolling frame: Tab then walks the fields in order

    @on(Select.Changed, "#f-opponent")
    def _opponent_changed(self, event: Select.Changed) -> None:
        self.query_one("#f-computer", Select).disabled = event.value != "computer"

    @on(Select.Changed, "#game")
    async def _game_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.game:
            await self._show_game(event.value)

    async def _show_game(self, name: str) -> None:
        """Build the option fields of game ``name``."""
        self.game = name
        described = self.described.get(name, {})
        self.options = game_options(described)
        box = self.query_one("#options", Vertical)
        await box.remove_children()  # gone before the new rows come: two games may share an option's name (and id)
        rows = []
        for option in self.options:
            widget: Any = (
                YesNo(bool(option.default), id=f"f-options-{option.name}")
                if option.type == "bool"
                else Input(_default_text(option), placeholder="a file to read" if option.type == "str" else "default", id=f"f-options-{option.name}", compact=True)
            )
            doc = option.doc if option.type == "bool" else f"{option.doc}; {option.allowed()}" + (" (type a file name)" if option.type == "str" else "")
            row = Horizontal(Label(printable(option.title)), widget, Static(printable(doc), classes="doc"), classes="row")
            rows += [row, Static("", id=f"err-options-{option.name}", classes="error")]
        await box.mount_all(rows)
        self._fit_labels()
        self.query_one("#game-title", Static).update(printable(str(described.get("title") or "")))
        seats = described.get("seats") or ["seat 0", "seat 1"]
        self.query_one("#row-seat .doc", Static).update(f"seat 0 plays {printable(str(seats[0]))} and moves first; seat 1 plays {printable(str(seats[1]))}")
        self.query_one("#row-seed").display = bool(described.get("uses_seed"))
        self._clear_errors()

    def _fit_labels(self) -> None:
        """Make the label column as wide as the longest label, so that no label is cut (the fields move right instead)."""
        labels = list(self.query(".row > Label").results(Label))
        width = max([LABEL_MIN_WIDTH, *(len(str(label.render())) + 1 for label in labels)])
        for label in labels:
            label.styles.width = width
        for line in self.query(".error").results(Static):
            if line.id != "err-form":
                line.styles.padding = (0, 0, 0, width + 1)

    # --- reading and checking --------------------------------------------------------

    def read(self) -> TableRequest:
        """The request the fields describe, checked by the options' own rules.

        Raises:
            FormError: naming the field at fault (``options.size``, ``time_control``, ...).
        """
        request = TableRequest(self.game)
        for option in self.options:
            request.options[option.name] = self._read_option(option)
        request.options = {key: value for key, value in request.options.items() if value is not None}
        try:
            games.get(self.game).resolve_options(request.options)  # the checks that involve several options
        except InvalidOption as exc:
            raise FormError(f"options.{exc.option}" if exc.option else "form", str(exc)) from None
        except games.GameError:
            pass  # a game this client does not know: the server checks it
        request.time_control = check_time_control(self.query_one("#f-time_control", Input).value)
        request.seat = int(self.query_one("#f-seat", Select).value)  # type: ignore[arg-type]
        if self.query_one("#f-opponent", Select).value == "computer":
            request.computer = {1 - request.seat: int(self.query_one("#f-computer", Select).value)}  # type: ignore[arg-type]
        seed = self.query_one("#f-seed", Input).value.strip()
        request.seed = seed if seed and self.query_one("#row-seed").display else None
        request.hints = self.query_one("#f-hints", Checkbox).value
        request.rated = self.query_one("#f-rated", Checkbox).value
        return request

    def _read_option(self, option: Option) -> Any:
        key = f"options.{option.name}"
        if option.type == "bool":
            return self.query_one(f"#f-options-{option.name}", Checkbox).value
        text = self.query_one(f"#f-options-{option.name}", Input).value.strip()
        if not text:
            return None
        if option.type == "str":
            try:
                with open(text, encoding="utf-8") as handle:
                    value: Any = handle.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise FormError(key, f"cannot read {text!r}: {exc}") from None
        else:
            try:
                value = option.parse_text(text)
            except InvalidOption as exc:
                raise FormError(key, str(exc)) from None
        try:
            return option.check(value)
        except InvalidOption as exc:
            raise FormError(key, str(exc)) from None

    # --- errors ------------------------------------------------------------------------

    def show_error(self, field: str | None, message: str) -> None:
        """Show ``message`` under the field ``field`` names (the whole form's line when it names none shown)."""
        target = _error_id(field)
        found = self.query(f"#{target}")
        line = found.first(Static) if found else self.query_one("#err-form", Static)
        line.update(printable(message))
        line.display = True

    def _clear_errors(self) -> None:
        for widget in self.query(".error"):
            if isinstance(widget, Static):
                widget.update("")
                widget.display = False

    # --- buttons ----------------------------------------------------------------------

    @on(Button.Pressed, "#create")
    @on(Input.Submitted)
    def _create(self) -> None:
        self._clear_errors()
        try:
            request = self.read()
        except FormError as exc:
            self.show_error(exc.field, str(exc))
            return
        self.query_one("#create", Button).disabled = True
        self._send(request)

    @work(exclusive=True, group="new-table")
    async def _send(self, request: TableRequest) -> None:
        try:
            state = await self.session.create(
                request.game, request.options, seed=request.seed, seat=request.seat,
                time_control=request.time_control, computer=request.computer, hints=request.hints, rated=request.rated,
            )
        except ServerError as exc:
            self.show_error(exc.field, f"{exc.message} ({exc.code})")
            return
        except ConnectionLost as exc:
            self.show_error(None, f"the connection is gone: {exc}")
            return
        finally:
            self.query_one("#create", Button).disabled = False
        self.dismiss(state.id)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Close the form without creating a table."""
        self.dismiss(None)


def _error_id(field: str | None) -> str:
    """The id of the error line for a field the server or the form names."""
    if not field:
        return "err-form"
    if field.startswith("options."):
        return "err-options-" + re.sub(r"[^A-Za-z0-9_-]", "_", field.split(".", 1)[1].split("[", 1)[0].split(".", 1)[0])
    head = re.split(r"[.\[]", field, maxsplit=1)[0]
    return f"err-{head}" if head in ("time_control", "computer", "seat", "seed", "hints", "rated") else "err-form"
