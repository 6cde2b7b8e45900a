"""The help screen: the keys, what the table commands do, and the rules of a game.

The rules are ``docs/RULES.md``'s section for the game (:func:`client.rules.game_rules`);
the screen opens on the game of the focused table, and a selector shows any other.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Select, Static

from ..rules import RulesNotFound, game_rules, rules_text, section_names

__all__ = ["HelpScreen", "KEYS_TEXT"]

KEYS_TEXT = """\
## Keys

| Key | Where | What |
|---|---|---|
| F1 | anywhere | this help |
| Ctrl+N | anywhere | a new table (the form shows each option's allowed values) |
| Ctrl+A | anywhere | the archive of finished games: replay, export |
| Ctrl+W | a table tab | close the tab: stop watching, or leave your seat (asks first while your game runs) |
| Ctrl+Q | anywhere | quit (asks first) |
| Ctrl+C | anywhere | quit; during a game it asks first |
| Enter / j | lobby list | join the highlighted table (watch it when it is full) |
| w | lobby list | watch the highlighted table |
| click a header | lobby list | sort by that column (click again: reversed) |

## At a table

Type a move in the game's notation, or use the board. Resigning and leaving a
running game ask for confirmation first. A **takeback** works as on lichess:
asked on your own turn it takes back your opponent's reply and your last move
(two plies); asked on your opponent's turn it takes back your last move (one
ply). Forced passes go along with them. A **draw** offer lapses when you move;
a **rematch** (after the game) swaps the seats.
"""


class HelpScreen(ModalScreen[None]):
    """Keys, table commands and the rules of ``game`` (``None``: the first game with rules)."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 100%; height: 100%; border: thick $primary; background: $surface; }
    HelpScreen VerticalScroll { height: 1fr; }
    HelpScreen #rules-game { width: 40; }
    """
    BINDINGS = [Binding("escape,f1,q", "close", "Close")]

    def __init__(self, game: str | None = None) -> None:
        super().__init__()
        try:
            self.games = section_names(rules_text())
        except RulesNotFound:
            self.games = []
        self.game = game if game in self.games else (self.games[0] if self.games else None)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Help — Escape closes", id="help-title")
            with VerticalScroll(id="help-body"):
                yield Markdown(KEYS_TEXT, id="keys")
                yield Static("Rules of:")
                yield Select([(name, name) for name in self.games], value=self.game or Select.BLANK, allow_blank=not self.games, id="rules-game")
                yield Markdown(self.rules_markdown(), id="rules")

    def rules_markdown(self) -> str:
        """The rules section of the chosen game (or why there is none)."""
        if self.game is None:
            return "The rules text is missing from this installation."
        try:
            return game_rules(self.game)
        except RulesNotFound as exc:
            return str(exc)

    @on(Select.Changed, "#rules-game")
    def _chose(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.game:
            self.game = event.value
            self.query_one("#rules", Markdown).update(self.rules_markdown())

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
