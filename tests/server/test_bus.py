"""The event bus (server/bus/): per-view delivery, and every table event going through it, over real sockets."""

from __future__ import annotations

from typing import Any

import msgpack

from protocol import Message
from protocol.messages import Ok
from server.app import Server
from server.bus.bus import table_topic
from server.bus.local import LocalBus

from .conftest import RawFactory
from .test_hot_path import seated_pair


class Inbox:
    """A subscriber that keeps what the bus delivers to it (as another node's relay would)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_frame(self, frame: bytes, message: Message | None = None) -> None:
        self.frames.append(frame)

    def maps(self) -> list[dict[str, Any]]:
        return [msgpack.unpackb(frame[4:]) for frame in self.frames]


def test_each_subscriber_gets_the_frame_of_its_own_view_only() -> None:
    bus = LocalBus()
    seat0, seat1, watcher, other = Inbox(), Inbox(), Inbox(), Inbox()
    bus.subscribe("t", seat0, 0)
    bus.subscribe("t", seat1, 1)
    bus.subscribe("t", watcher)
    bus.subscribe("elsewhere", other, 0)
    assert set(bus.views("t")) == {0, 1, None}
    bus.publish_views("t", {0: (b"zero", Ok(id=0)), 1: (b"one", Ok(id=1)), None: (b"all", Ok(id=2))})
    assert (seat0.frames, seat1.frames, watcher.frames, other.frames) == ([b"zero"], [b"one"], [b"all"], [])


def test_a_view_without_a_frame_gets_nothing_and_resubscribing_changes_the_view() -> None:
    bus = LocalBus()
    player, watcher = Inbox(), Inbox()
    bus.subscribe("t", player)
    bus.subscribe("t", watcher)
    bus.subscribe("t", player, 1)  # the spectator takes seat 1
    assert set(bus.views("t")) == {1, None}
    bus.publish_views("t", {1: (b"seat one", Ok(id=1))})
    assert (player.frames, watcher.frames) == ([b"seat one"], [])
    bus.publish("t", b"chat", skip=watcher)
    bus.unsubscribe("t", player)
    bus.publish("t", b"later")
    assert (player.frames, watcher.frames) == ([b"seat one", b"chat"], [b"later"])
    assert not bus.is_subscribed("t", player) and bus.has_subscribers("t")


async def test_table_events_reach_a_subscriber_of_the_table_topic_with_the_view_it_asked_for(server: Server, raw: RawFactory) -> None:
    ann, bob, table, move = await seated_pair(raw)  # ann holds seat 0 and moves first
    as_seat0, as_spectator = Inbox(), Inbox()
    server.bus.subscribe(table_topic(table), as_seat0, 0)
    server.bus.subscribe(table_topic(table), as_spectator, None)
    assert (await bob.request("say", table=table, text="good luck"))["type"] == "ok"
    assert (await ann.request("move", table=table, move=move))["type"] == "ok"
    ann_moved = [push for push in await ann.sync() if push["type"] == "moved"]
    bob_pushes = [push for push in await bob.sync() if push["type"] in ("chat", "moved")]
    seat0, spectator = as_seat0.maps(), as_spectator.maps()
    assert [push["type"] for push in seat0] == [push["type"] for push in spectator] == ["chat", "moved"]
    assert seat0[1] == ann_moved[0], "the seat-0 subscriber gets exactly what seat 0's connection got"
    bob_view = bob_pushes[1]["view"]
    assert bob_view["to_move"] == 1 and bob_view["legal_moves"], "seat 1 is to move and sees its moves"
    assert "legal_moves" not in seat0[1]["view"] and "legal_moves" not in spectator[1]["view"]
    assert spectator[1]["view"] == {key: value for key, value in bob_view.items() if key != "legal_moves"}
