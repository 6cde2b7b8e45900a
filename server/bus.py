"""The event bus: carries lobby and table events to the connections that follow them.

The server publishes each event once, already encoded; the bus hands the same
bytes to every subscriber of the event's topic. Today one process holds every
connection (:class:`LocalBus`); a deployment over several machines would put
a broker behind the same :class:`Bus` interface.
"""

from __future__ import annotations

from typing import Protocol

from protocol import Message

__all__ = ["Bus", "LocalBus", "LOBBY", "Subscriber"]

LOBBY = "lobby"
"""The topic of lobby events: ``table_updated``, ``table_closed`` and lobby ``chat``."""


class Subscriber(Protocol):
    """What the bus delivers to: a connection (:class:`server.peer.Peer`)."""

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        """Send an encoded frame; ``message`` is what it encodes (for error reports)."""


class Bus(Protocol):
    """Topics that connections subscribe to, and events published to them."""

    def subscribe(self, topic: str, subscriber: Subscriber) -> None:
        """Deliver events of ``topic`` to ``subscriber`` from now on (idempotent)."""

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        """Stop delivering ``topic`` to ``subscriber`` (no-op if it was not subscribed)."""

    def unsubscribe_all(self, subscriber: Subscriber) -> None:
        """Stop delivering anything to ``subscriber`` (its connection is gone)."""

    def is_subscribed(self, topic: str, subscriber: Subscriber) -> bool:
        """Whether ``subscriber`` follows ``topic``."""

    def has_subscribers(self, topic: str) -> bool:
        """Whether anyone follows ``topic`` (so that nobody pays for events nobody reads)."""

    def publish(self, topic: str, frame: bytes, message: Message | None = None) -> None:
        """Deliver the encoded ``frame`` (of ``message``) to every subscriber of ``topic``, in subscription order."""


class LocalBus:
    """A :class:`Bus` within one process: subscribers are this process's connections."""

    def __init__(self) -> None:
        self._topics: dict[str, dict[Subscriber, None]] = {}  # topic -> subscribers, in subscription order
        self._of: dict[Subscriber, set[str]] = {}  # subscriber -> its topics

    def subscribe(self, topic: str, subscriber: Subscriber) -> None:
        self._topics.setdefault(topic, {})[subscriber] = None
        self._of.setdefault(subscriber, set()).add(topic)

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        subscribers = self._topics.get(topic)
        if subscribers is not None:
            subscribers.pop(subscriber, None)
            if not subscribers:
                del self._topics[topic]
        topics = self._of.get(subscriber)
        if topics is not None:
            topics.discard(topic)
            if not topics:
                del self._of[subscriber]

    def unsubscribe_all(self, subscriber: Subscriber) -> None:
        for topic in list(self._of.get(subscriber, ())):
            self.unsubscribe(topic, subscriber)

    def is_subscribed(self, topic: str, subscriber: Subscriber) -> bool:
        """Whether ``subscriber`` follows ``topic``."""
        return subscriber in self._topics.get(topic, ())

    def has_subscribers(self, topic: str) -> bool:
        return bool(self._topics.get(topic))

    def publish(self, topic: str, frame: bytes, message: Message | None = None) -> None:
        for subscriber in list(self._topics.get(topic, ())):
            subscriber.send_frame(frame, message)
