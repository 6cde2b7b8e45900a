"""Fan-out: one table event to everyone at the table, each receiving its own view.

A message that depends on the seat is built and encoded at most once per
distinct view (seat 0, seat 1, spectators), never once per connection; every
spectator gets the very same bytes. Views of one position are made once per
seat (:class:`ViewCache`).
"""

from __future__ import annotations

from typing import Any, Callable

import games
from protocol import Message, encode_message

from .peer import Peer
from .table import Table, view_of

__all__ = ["ViewCache", "send_to_table", "send_views"]


def send_to_table(table: Table, message: Message) -> None:
    """Send ``message``, the same for every seat, to everyone at ``table``: encoded once."""
    frame = encode_message(message)
    for member, _seat in table.members():
        member.send_frame(frame, message)


def send_views(members: list[tuple[Peer, int | None]], make: Callable[[int | None], Message]) -> None:
    """Send each member the message ``make(seat)`` builds for its view, encoded once per distinct seat.

    There are at most three encodings (seat 0, seat 1, spectators); every
    spectator gets the very same bytes.
    """
    encoded: dict[int | None, tuple[bytes, Message]] = {}
    for member, seat in members:
        pair = encoded.get(seat)
        if pair is None:
            message = make(seat)
            pair = encoded[seat] = (encode_message(message), message)
        member.send_frame(*pair)


class ViewCache:
    """Views of one position, made at most once per seat (0, 1, spectator)."""

    def __init__(self, table: Table, state: games.State | None = None) -> None:
        self._table = table
        self._state = state
        self._views: dict[int | None, dict[str, Any]] = {}

    def get(self, seat: int | None) -> dict[str, Any]:
        """The view for ``seat``, made on first use."""
        view = self._views.get(seat)
        if view is None:
            current = self._state is None or self._state is self._table.state
            view = self._table.view_for(seat) if current else view_of(self._state, seat)  # type: ignore[arg-type]
            self._views[seat] = view
        return view
