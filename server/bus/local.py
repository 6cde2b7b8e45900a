"""The event bus within one process: :class:`LocalBus`, whose subscribers are this process's connections and sessions.

The contract (topics, views, :class:`server.bus.bus.Bus`) is :mod:`server.bus.bus`'s.
"""

from __future__ import annotations

from typing import Collection, Mapping

from protocol import Message

from ..net.peer import deliver
from ..core.session import Session
from .bus import Subscriber, View

__all__ = ["LocalBus"]


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
        peers = []  # the sessions' live connections, sent to in one loop (server.net.peer.deliver)
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
                    peer = subscriber.peer
                    if peer is not None and not peer.closed:
                        # deliver((peer,), frame, message)'s two usual cases, written out: the first frame of this
                        # turn (the other seat's moved) and the second (the mover's moved after its ok)
                        size, outbox, pending = len(frame), peer._outbox, peer._pending
                        if pending is None and size < outbox.flush_bytes:
                            peer._pending, peer._pending_bytes = frame, size
                            if outbox._peers:
                                outbox._peers.append(peer)
                            else:
                                outbox.add(peer)
                            continue
                        if type(pending) is bytes and peer._pending_bytes + size < outbox.flush_bytes:
                            peer._pending = pending + frame  # one bytes: no list to make now, nor to join at the flush
                            peer._pending_bytes += size
                            continue
                    deliver((peer,), frame, message)
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
