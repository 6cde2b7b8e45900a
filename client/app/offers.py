"""The opponent's draw, takeback or rematch offer, as a dialog to accept or decline.

>>> app.push_screen(OfferScreen("draw", "ann offers a draw."), on_answer)  # doctest: +SKIP

The screen dismisses with ``True`` (Accept, ``a``) or ``False`` (Decline,
``d``, Escape); :meth:`OfferScreen.withdraw` closes it without an answer when
the offer lapses or is answered elsewhere (dismissing with ``None``).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

__all__ = ["OfferScreen", "offer_question"]


def offer_question(kind: str, who: str, takeback_words: str = "") -> str:
    """The dialog's text for an offer of ``kind`` from ``who`` (already made printable).

    >>> offer_question("takeback", "ann", "takes back your move e3 and their reply f4")
    'ann asks for a takeback: it takes back your move e3 and their reply f4.'
    """
    if kind == "draw":
        return f"{who} offers a draw."
    if kind == "takeback":
        return f"{who} asks for a takeback: it {takeback_words}."
    return f"{who} offers a rematch, seats swapped."


class OfferScreen(ModalScreen[bool | None]):
    """Ask whether to accept an offer of ``kind`` (``"draw"``, ``"takeback"``, ``"rematch"``).

    Args:
        kind: the offer's kind (kept as :attr:`kind`).
        question: what is offered, in words (see :func:`offer_question`).
    """

    DEFAULT_CSS = """
    OfferScreen { align: center middle; }
    OfferScreen > Vertical { width: 56; max-width: 100%; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    OfferScreen #offer-question { width: 100%; margin-bottom: 1; }
    OfferScreen Horizontal { height: auto; align-horizontal: right; }
    OfferScreen Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("a", "answer(True)", "Accept"),
        Binding("d,escape", "answer(False)", "Decline"),
    ]

    def __init__(self, kind: str, question: str) -> None:
        super().__init__()
        self.kind = kind
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="offer-question", markup=False)
            with Horizontal():
                yield Button("Accept", id="accept", variant="success")
                yield Button("Decline", id="decline", variant="error")

    def on_mount(self) -> None:
        self.query_one("#decline", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "accept")

    def action_answer(self, accept: bool) -> None:
        """Dismiss with ``accept``."""
        self.dismiss(accept)

    def withdraw(self) -> None:
        """Close without an answer: the offer is gone (lapsed, answered, the game moved on)."""
        if self.is_attached:
            self.dismiss(None)
