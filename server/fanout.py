"""Fan-out: one table event to everyone at the table, each receiving its own view.

Every table event is one publish on the table's topic of the bus
(:mod:`server.bus`). A message that depends on the seat is built and encoded
at most once per distinct view that has subscribers (seat 0, seat 1,
spectators), never once per connection; every spectator gets the very same
bytes. Views of one position are made once per seat (:class:`ViewCache`).
"""

from __future__ import annotations

from typing import Any, Callable

import games
from protocol import Message, encode_message

from .bus import View
from .session import Session
from .table import Table, view_of

__all__ = ["ViewCache", "send_to_table", "send_views"]


def send_to_table(table: Table, message: Message, *, skip: Session | None = None) -> None:
    """Publish ``message``, the same for every seat, to everyone at ``table`` (but ``skip``): encoded once."""
    table.bus.publish(table.topic, encode_message(message), message, skip=skip)


def send_views(table: Table, make: Callable[[View], Message]) -> None:
    """Publish to everyone at ``table`` the message ``make(view)`` builds for its view (a seat, or ``None``).

    ``make`` is called, and its message encoded, once per view that has
    subscribers: at most three (seat 0, seat 1, spectators); every
    spectator gets the very same bytes.
    """
    bus, topic = table.bus, table.topic
    frames: dict[View, tuple[bytes, Message]] = {}
    for view in bus.views(topic):
        message = make(view)
        frames[view] = (encode_message(message), message)
    bus.publish_views(topic, frames)


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
