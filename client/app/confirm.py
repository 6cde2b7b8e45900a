"""A yes/no question that must be answered before something that cannot be undone.

>>> app.push_screen(ConfirmScreen("Resign the game at table 3?"), on_answer)  # doctest: +SKIP

The screen dismisses with ``True`` for yes (the button, ``y``) and ``False``
for no (the button, ``n``, Escape). "No" has the focus, so Enter never
resigns or quits by accident.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``question``; dismiss with the answer (``True``: yes).

    Args:
        question: one or two sentences saying what will happen.
        yes: the label of the button that goes ahead (``"Resign"``).
    """

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 56; max-width: 100%; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ConfirmScreen #question { width: 100%; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            with Horizontal():
                yield Button(self.yes_label, id="yes", variant="error")
                yield Button("No", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Dismiss with ``yes``."""
        self.dismiss(yes)
