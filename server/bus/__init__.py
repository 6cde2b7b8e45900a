"""The event bus: carries lobby and table events to the connections that follow them.

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
connection (:class:`LocalBus`); a deployment over several machines would put
a broker behind the same :class:`Bus` interface (``docs/SCALING.md``).
"""

from __future__ import annotations

from typing import Collection, Mapping, Protocol

from protocol import Message

from ..peer import deliver
from ..session import Session

__all__ = ["Bus", "LocalBus", "LOBBY", "Subscriber", "View", "table_topic"]

LOBBY = "lobby"
"""The topic of lobby events: ``table_updated``, ``table_closed`` and lobby ``chat``."""

View = int | None
"""Which frame of a per-view event a subscriber gets: a seat (0, 1), or ``None`` (a spectator, a lobby watcher)."""


def table_topic(table_id: int) -> str:
    """The topic of table ``table_id``'s events (moves, game over, chat, offers ...)."""
    return f"table:{table_id}"


class Subscriber(Protocol):
    """What the bus delivers to: a connection (:class:`server.peer.Peer`) or a session (:class:`server.session.Session`)."""

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


class LocalBus:
    """A :class:`Bus` within one process: subscribers are this process's connections and sessions."""

    def __init__(self) -> None:
        self._topics: dict[str, dict[Subscriber, View]] = {}  # topic -> subscriber -> its view, in subscription order
        self._groups: dict[str, dict[View, dict[Subscriber, None]]] = {}  # topic -> view -> its subscribers
        self._of: dict[Subscriber, set[str]] = {}  # subscriber -> its topics

    def subscribe(self, topic: str, subscriber: Subscriber, view: View = None) -> None:
        subscribers = self._topics.setdefault(topic, {})
        groups = self._groups.setdefault(topic, {})
        if subscriber in subscribers:
            self._leave_group(groups, subscribers[subscriber], subscriber)
        subscribers[subscriber] = view
        groups.setdefault(view, {})[subscriber] = None
        self._of.setdefault(subscriber, set()).add(topic)

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        subscribers = self._topics.get(topic)
        if subscribers is not None and subscriber in subscribers:
            self._leave_group(self._groups[topic], subscribers.pop(subscriber), subscriber)
            if not subscribers:
                del self._topics[topic], self._groups[topic]
        topics = self._of.get(subscriber)
        if topics is not None:
            topics.discard(topic)
            if not topics:
                del self._of[subscriber]

    @staticmethod
    def _leave_group(groups: dict[View, dict[Subscriber, None]], view: View, subscriber: Subscriber) -> None:
        group = groups[view]
        del group[subscriber]
        if not group:
            del groups[view]

    def unsubscribe_all(self, subscriber: Subscriber) -> None:
        for topic in list(self._of.get(subscriber, ())):
            self.unsubscribe(topic, subscriber)

    def is_subscribed(self, topic: str, subscriber: Subscriber) -> bool:
        """Whether ``subscriber`` follows ``topic``."""
        return subscriber in self._topics.get(topic, ())

    def has_subscribers(self, topic: str) -> bool:
        return topic in self._topics

    def views(self, topic: str) -> Collection[View]:
        return self._groups.get(topic, {}).keys()

    def publish(self, topic: str, frame: bytes, message: Message | None = None, *, skip: Subscriber | None = None) -> None:
        peers = []  # the sessions' live connections, sent to in one loop (server.peer.deliver)
        for subscriber in list(self._topics.get(topic, ())):
            if type(subscriber) is Session:
                if subscriber is not skip:
                    peers.append(subscriber.peer)
            elif subscriber is not skip:
                subscriber.send_frame(frame, message)  # a lobby watcher's connection, a relay
        deliver(peers, frame, message)

    def publish_views(self, topic: str, frames: Mapping[View, tuple[bytes, Message]]) -> None:
        groups = self._groups.get(topic)
        if groups is None:
            return
        for view, group in list(groups.items()):
            pair = frames.get(view)
            if pair is None:
                continue
            frame, message = pair
            if len(group) == 1:  # a seat's group: its one session, without a list of peers (every move, twice)
                (subscriber,) = group
                if type(subscriber) is Session:
                    deliver((subscriber.peer,), frame, message)
                else:
                    subscriber.send_frame(frame, message)
                continue
            peers = []  # as in publish()
            for subscriber in list(group):
                if type(subscriber) is Session:
                    peers.append(subscriber.peer)
                else:
                    subscriber.send_frame(frame, message)
            deliver(peers, frame, message)
