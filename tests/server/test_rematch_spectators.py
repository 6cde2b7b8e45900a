"""Spectators follow a rematch: when it is accepted they watch the new table instead of the old.

A real server on 127.0.0.1: ann and bob finish a game watched by cat, then
play its rematch. cat gets ``rematch_started`` with no seat, then the new
game's moves; the server counts cat at the new table and no longer at the
old. The client library and the line client follow (the library drops the
old table, the line client says so); the app's side is in
tests/client/app/test_rematch_spectator.py.
"""

from __future__ import annotations

import games
from client import Client
from client.terminal import TerminalClient
from protocol import messages as m
from server.app import Server

from .conftest import TIMEOUT_S, refused


async def _finished_and_rematched(ann: Client, bob: Client, table: int) -> int:
    """ann resigns the game at ``table``, offers a rematch, bob accepts; return the rematch's table id."""
    await ann.resign(table)
    await ann.offer(table, "rematch")
    await bob.answer(table, "rematch", True)
    return (await ann.next_event(m.RematchStarted, timeout_s=TIMEOUT_S)).table.id


async def test_the_spectators_of_a_rematched_game_watch_the_rematch(server: Server, connect) -> None:
    ann, bob, cat, dan = [await connect(name) for name in ("ann", "bob", "cat", "dan")]
    table = (await ann.create_table("othello", {"size": 6})).table.id
    await bob.join_table(table)
    for watcher in (cat, dan):
        await watcher.watch_table(table)
    rematch = await _finished_and_rematched(ann, bob, table)

    for watcher in (cat, dan):
        moved = await watcher.next_event(m.RematchStarted, timeout_s=TIMEOUT_S)
        assert moved.previous == table and moved.seat is None and moved.table.id == rematch
        assert moved.table.seats == ["bob", "ann"] and moved.table.status == "playing"
        assert moved.view == games.get("othello").new_state({"size": 6}).view(None)
    assert server.tables[rematch].info().spectators == 2
    assert server.tables[table].info().spectators == 0
    assert [info.spectators for info in await ann.list_tables() if info.id == rematch] == [2]

    await bob.move(rematch, "b3")  # bob has Black now
    for watcher in (cat, dan):
        played = await watcher.next_event(m.Moved, timeout_s=TIMEOUT_S)
        assert played.table == rematch and played.move == "b3" and "legal_moves" not in played.view
    await cat.say("well played", table=rematch)
    assert (await ann.next_event(m.Chat, timeout_s=TIMEOUT_S)).table == rematch
    await refused(cat.say("hello?", table=table), "not_at_table")
    await refused(cat.leave_table(table), "not_at_table")
    await cat.leave_table(rematch)


async def test_a_declined_rematch_leaves_the_spectators_at_the_finished_table(connect) -> None:
    """Without an accepted rematch, spectators stay at the finished table."""
    ann, bob, cat = [await connect(name) for name in ("ann", "bob", "cat")]
    table = (await ann.create_table("othello", {"size": 6})).table.id
    await bob.join_table(table)
    await cat.watch_table(table)
    await ann.resign(table)
    await ann.offer(table, "rematch")
    await bob.answer(table, "rematch", False)
    await bob.leave_table(table)
    await cat.say("still here", table=table)  # cat still watches the finished table
    assert (await cat.next_event(m.Chat, timeout_s=TIMEOUT_S)).text == "still here"


async def test_the_client_library_and_the_line_client_move_a_spectator_to_the_rematch(server: Server, connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    cat = await Client.connect("127.0.0.1", server.port, name="cat", watch_lobby=False)
    written: list[str] = []
    term = TerminalClient(cat, written.append)
    table = (await ann.create_table("othello", {"size": 6})).table.id
    await bob.join_table(table)
    await term.handle(f"watch {table}")
    assert term.session.focus == table
    rematch = await _finished_and_rematched(ann, bob, table)
    event = await cat.next_event(m.RematchStarted, timeout_s=TIMEOUT_S)
    start = len(written)
    term.on_event(event)
    said = "\n".join(written[start:])
    assert said.startswith(f"The players of table {table} started a rematch: you now watch it at table {rematch}.")
    assert "Black: bob  vs  White: ann" in said
    assert list(term.session.tables) == [rematch] and term.session.focus == rematch
    assert term.session.tables[rematch].seat is None
    await term.handle("leave")  # the focused table is the rematch: leaving it is leaving what the server has
    assert not term.session.tables
    await cat.close()
