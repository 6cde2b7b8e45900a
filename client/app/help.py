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

- **F1** this help · **F2** (Ctrl+N) a new table · **F3** the archive of finished games
- **F4** (Ctrl+W) close the table's tab: stop watching, or leave your seat (asks first while your game runs)
- **F6** (Ctrl+PageDown) the next tab · **F5** (Ctrl+PageUp) the previous tab; a table's tab puts you on its board
- **Ctrl+Q** quit (asks first) · **Ctrl+C** quit; during a game it asks first
- **Ctrl+R** while the connection is lost (the red bar above the tabs; clocks paused): reconnect now;
  after signing in elsewhere, take the session back here
- Lobby list: **Enter** or **j** joins the highlighted table (watches it when full), **w** watches it;
  click a column header to sort (again: reversed); type in the filter to narrow the list
- Lobby: **t** the table list, **e** the open seeks, **o** who is online (the highlighted row shows);
  **s** (or the button) seeks a game (game, clock, rated, rating range); **Enter** on an open seek
  plays that seeker; **Enter** on a name in the online list opens their card: ratings and record,
  a message field (focused: type and Enter to tell them something), **Challenge**, **Mute**/**Unmute**;
  **u** lists the players you mute (**Enter** unmutes one)
- A challenge to you comes up as a dialog: **a** accepts (the game opens in its tab), **d** declines;
  tells come up as notifications and stay in the lobby's Messages log
- New table: **Rated** makes the result change both players' ratings (claimed names, against a person)
- At a table: click a piece or square, or move the cursor with the arrows and press Enter;
  **m** type a move in notation, **c** chat (**Escape** back to the board), **d** offer a draw, **t** takeback, **r** rematch,
  **h** hint (where allowed), **x** resign (asks first), **b** a bell when your clock runs low;
  **a** aborts the game (no result, not rated): shown only before your own first move
- Archive: **Enter** replays a game; **Right**/**Left** step, **Home**/**End** jump,
  **g** goes to a ply, **e** exports the record to a file, **m** lists more games

## Offers

A **takeback** works as on lichess: asked on your own turn it takes back your
opponent's reply and your last move (two plies); asked on your opponent's turn
it takes back your last move (one ply). Forced passes go along with them. A
**draw** offer lapses when you move; a **rematch** (after the game) swaps the
seats. Your opponent's offers come up as a question to accept or decline.
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
