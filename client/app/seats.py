"""A seat in the table's side panel, laid out so its clock always shows.

Two lines, three while the player is away::

    ▶ Black            4:32
      alice_in_wonderl… (1500?) (you)
      away, forfeits in 24 s

The first line has the turn marker and the seat's name on the left and the
clock on the right; the seat's name gives way (cut with ``…``) before the
clock does. The second has the player, their rating and ``(you)``; the
player's name gives way before the rating and ``(you)`` do.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

__all__ = ["SeatInfo", "SeatLines", "seat_text"]

_INDENT = "  "


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """What a seat's lines say; every text already printable.

    Attributes:
        seat_name: the seat as the game names it (``"Black"``).
        player: the seated player's name, or ``None`` for a free seat.
        rating: the player's rating as text (``"1500?"``), ``None`` unrated.
        you: whether the viewer sits here.
        moving: whether this seat is to move.
        clock: the seat's time left as text (``"4:32"``), ``None`` untimed.
        away_s: seconds until an away player's seat is forfeited, ``None`` when present.
    """

    seat_name: str
    player: str | None
    rating: str | None = None
    you: bool = False
    moving: bool = False
    clock: str | None = None
    away_s: int | None = None

    @property
    def height(self) -> int:
        """How many lines the seat takes (2, or 3 while away)."""
        return 2 if self.away_s is None else 3


def seat_text(seat: SeatInfo, width: int) -> Text:
    """The seat's lines for ``width`` columns (at least 1); no line is longer than ``width``.

    >>> print(seat_text(SeatInfo("Black", "alice_in_wonderland1", "1500?", you=True, moving=True, clock="4:32"), 24).plain)
    ▶ Black             4:32
      alice_i… (1500?) (you)
    """
    width = max(1, width)
    clock = seat.clock or ""
    head = ("▶ " if seat.moving else _INDENT) + seat.seat_name
    room = width - len(clock) - (1 if clock else 0)
    text = Text(_cut(head, room).ljust(max(0, room)) + (" " if clock else ""))
    text.append(clock[:width], style="bold")
    text.append("\n" + _player_line(seat, width))
    if seat.away_s is not None:
        text.append("\n" + _cut(f"{_INDENT}away, forfeits in {seat.away_s} s", width), style="italic")
    return text


def _player_line(seat: SeatInfo, width: int) -> str:
    """The player, rating and ``(you)``; the name is cut first."""
    if seat.player is None:
        return _cut(f"{_INDENT}(free)", width)
    tail = (f" ({seat.rating})" if seat.rating else "") + (" (you)" if seat.you else "")
    room = width - len(_INDENT) - len(tail)
    if room < min(len(seat.player), 4):  # too narrow to keep the tail whole: cut the line as it comes
        return _cut(_INDENT + seat.player + tail, width)
    return _INDENT + _cut(seat.player, room) + tail


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, ending in ``…`` when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


class SeatLines(Widget):
    """One seat's lines (:func:`seat_text`), laid out for the widget's own width."""

    DEFAULT_CSS = """
    SeatLines { height: auto; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.seat: SeatInfo | None = None

    def show(self, seat: SeatInfo) -> None:
        """Draw ``seat`` (and take another line while the player is away)."""
        grew = self.seat is None or self.seat.height != seat.height
        self.seat = seat
        self.refresh(layout=grew)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        """The seat's lines: 2, or 3 while the player is away."""
        return self.seat.height if self.seat is not None else 2

    def render(self) -> Text:
        """The seat's lines for the widget's width."""
        if self.seat is None:
            return Text("")
        text = seat_text(self.seat, self.content_size.width)
        text.no_wrap = True
        return text

    @property
    def plain(self) -> str:
        """The lines as drawn now, without styles."""
        return self.render().plain
