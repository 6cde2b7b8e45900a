"""The event bus's contract: topics, views, and the :class:`Bus` every bus implements.

The server publishes each event once, already encoded; the bus hands the same
bytes to every subscriber of the event's topic. A table event whose content
depends on who receives it (a move: the seat to move sees its legal moves, a
hidden setup shows each seat only its own pieces) is published as one frame
per *view* -- seat 0, seat 1, spectators (``None``) -- and each subscriber
gets the frame of the view it subscribed with, never another's.

Topics: :data:`LOBBY` (lobby watchers, which are connections) and one per
table (:func:`table_topic`; its subscribers are the sessions seated at or
watching the table, each delivering to its live connection, so a player who
reconnects needs no new subscription). Today one process holds every
connection (:class:`server.bus.local.LocalBus`); a deployment over several
machines would put a broker behind the same :class:`Bus` interface
(``docs/SCALING.md``).
"""

from __future__ import annotations

from typing import Collection, Mapping, Protocol

from protocol import Message

__all__ = ["Bus", "LOBBY", "Subscriber", "View", "table_topic"]

LOBBY = "lobby"
"""The topic of lobby events: ``table_updated``, ``table_closed`` and lobby ``chat``."""

View = int | None
"""Which frame of a per-view event a subscriber gets: a seat (0, 1), or ``None`` (a spectator, a lobby watcher)."""


def table_topic(table_id: int) -> str:
    """The topic of table ``table_id``'s events (moves, game over, chat, offers ...)."""
    return f"table:{table_id}"


class Subscriber(Protocol):
    """What the bus delivers to: a connection (:class:`server.net.peer.Peer`) or a session (:class:`server.core.session.Session`)."""

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        """Send an encoded frame; ``message`` is what it encodes (for error reports)."""


class Bus(Protocol):
    """Topics that subscribers follow, each with a view, and events published to them."""

    def subscribe(self, topic: str, subscriber: Subscriber, view: View = None) -> None:
        """Deliver events of ``topic`` to ``subscriber`` from now on, per-view ones as ``view`` sees them.

        Subscribing again changes the view (a spectator who takes a seat).
        """

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        """Stop delivering ``topic`` to ``subscriber`` (no-op if it was not subscribed)."""

    def unsubscribe_all(self, subscriber: Subscriber) -> None:
        """Stop delivering anything to ``subscriber`` (its connection is gone)."""

    def is_subscribed(self, topic: str, subscriber: Subscriber) -> bool:
        """Whether ``subscriber`` follows ``topic``."""

    def has_subscribers(self, topic: str) -> bool:
        """Whether anyone follows ``topic`` (so that nobody pays for events nobody reads)."""

    def views(self, topic: str) -> Collection[View]:
        """The views ``topic``'s subscribers have (so a per-view event is encoded only for those)."""

    def publish(self, topic: str, frame: bytes, message: Message | None = None, *, skip: Subscriber | None = None) -> None:
        """Deliver the encoded ``frame`` (of ``message``) to every subscriber of ``topic`` but ``skip``, in subscription order."""

    def publish_views(self, topic: str, frames: Mapping[View, tuple[bytes, Message]]) -> None:
        """Deliver to each subscriber of ``topic`` the frame (and its message) of its own view.

        A subscriber whose view has no frame in ``frames`` gets nothing.
        """
