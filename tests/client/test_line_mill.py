"""The line mode tells a Morris player whose move can close a mill that the move must remove a counter."""

from __future__ import annotations

from typing import Awaitable, Callable

from client.connection import Client
from protocol import messages as m

from .test_terminal import Shell

Connect = Callable[..., Awaitable[Client]]


async def test_a_possible_mill_is_said_with_how_to_name_the_counter(connect: Connect) -> None:
    ann, bob = Shell(await connect("ann")), Shell(await connect("bob"))
    assert "Created table 1" in await ann.run("new morris")
    await bob.run("join 1")
    ann.feed(await ann.next_push(m.GameStarted))
    shown: list[str] = []
    for mine, theirs in (("d1", "a1"), ("d3", "a7")):  # then d2 closes the mill d1-d2-d3
        await ann.run(mine)
        ann.feed(await ann.next_push(m.Moved))
        await bob.term.client.move(1, theirs)
        shown.append(ann.feed(await ann.next_push(m.Moved)))
    assert "mill" not in shown[0].lower()
    assert "your turn" in shown[1]
    assert "A mill: d2 closes one, so it must remove one of your opponent's counters" in shown[1] and "e.g. d2xa1" in shown[1], shown[1]
