"""A table keeps its last 100 chat lines and gives them to whoever comes later (real servers on 127.0.0.1).

A spectator who starts watching, a player who sits down and a player who
resumes get the history in ``table_joined`` / ``resumed``, without the lines
of players they mute (whose live lines they no longer get either). With a
database the history is committed with each line, comes back after a
restart, and holds at most 100 rows per table. The line client prints it;
the app's side is in tests/client/app/test_chat_history_app.py.
"""

from __future__ import annotations

import asyncio

from client import Client
from client.terminal import TerminalClient
from protocol import messages as m
from server.app import Server, ServerConfig
from server.social.chat import CHAT_HISTORY

from tests.pgserver import run_sql

from .conftest import TIMEOUT_S


def _lines(entries: list[m.ChatEntry]) -> list[tuple[str, str]]:
    return [(entry.name, entry.text) for entry in entries]


async def _heard(client: Client, text: str) -> None:
    """Wait until ``client`` gets the chat line ``text``."""
    while (await client.next_event(m.Chat, timeout_s=TIMEOUT_S)).text != text:
        pass


async def test_a_late_spectator_and_a_late_player_get_the_conversation(connect) -> None:
    ann, bob, cat = await connect("ann"), await connect("bob"), await connect("cat")
    created = await ann.create_table("othello")
    assert created.chat == []
    table = created.table.id
    await ann.say("anyone?", table=table)
    joined = await bob.join_table(table)
    assert _lines(joined.chat) == [("ann", "anyone?")]
    await bob.say("me", table=table)
    await ann.say("good luck", table=table)
    watched = await cat.watch_table(table)
    assert _lines(watched.chat) == [("ann", "anyone?"), ("bob", "me"), ("ann", "good luck")]


async def test_the_history_keeps_the_last_100_lines(connect) -> None:
    ann, cat = await connect("ann"), await connect("cat")
    table = (await ann.create_table("othello")).table.id
    for number in range(CHAT_HISTORY + 5):
        await ann.say(f"line {number}", table=table)
    watched = await cat.watch_table(table)
    assert CHAT_HISTORY == 100
    assert [entry.text for entry in watched.chat] == [f"line {number}" for number in range(5, CHAT_HISTORY + 5)]


async def test_a_muted_sender_stays_muted_in_the_history_and_live(connect) -> None:
    ann, bob, cat = await connect("ann"), await connect("bob"), await connect("cat")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await cat.mute("ANN")
    await ann.say("from ann", table=table)
    await bob.say("from bob", table=table)
    watched = await cat.watch_table(table)
    assert _lines(watched.chat) == [("bob", "from bob")]
    await ann.say("ann again", table=table)
    await bob.say("bob again", table=table)
    heard = await cat.next_event(m.Chat, timeout_s=TIMEOUT_S)
    assert (heard.name, heard.text) == ("bob", "bob again"), "ann's live line reached the player who mutes her"
    await _heard(ann, "bob again")  # the others still hear everyone
    await cat.mute("ann", mute=False)
    await cat.leave_table(table)
    rewatched = await cat.watch_table(table)
    assert _lines(rewatched.chat) == [("ann", "from ann"), ("bob", "from bob"), ("ann", "ann again"), ("bob", "bob again")]


async def test_a_resuming_player_gets_what_was_said_while_away(configured_server) -> None:
    server = await configured_server(grace_s=5.0)
    ann = await Client.connect("127.0.0.1", server.port, name="ann")
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    table = (await ann.create_table("othello")).table.id
    await bob.join_table(table)
    await ann.say("before", table=table)
    token = bob.token
    await bob.close()
    await ann.next_event(m.PlayerAway, timeout_s=TIMEOUT_S)
    await ann.say("while you were away", table=table)
    back = await Client.connect("127.0.0.1", server.port, name="bob", token=token)
    try:
        resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert resumed.table.id == table
        assert _lines(resumed.chat) == [("ann", "before"), ("ann", "while you were away")]
    finally:
        await back.close()
        await ann.close()


def _config(db: str) -> ServerConfig:
    return ServerConfig(host="127.0.0.1", port=0, server_name="test", grace_s=30.0, db_path=str(db))


def _stored(db: str) -> list[tuple[int, int, str]]:
    return run_sql(db, "SELECT table_id, seq, text FROM chat ORDER BY table_id, seq")  # type: ignore[return-value]


async def test_the_history_is_stored_bounded_and_comes_back_after_a_restart(any_db: str) -> None:
    db = any_db
    first = Server(_config(db))
    await first.start()
    ann = await Client.connect("127.0.0.1", first.port, name="ann")
    bob = await Client.connect("127.0.0.1", first.port, name="bob")
    playing = (await ann.create_table("othello")).table.id
    await bob.join_table(playing)
    for number in range(CHAT_HISTORY + 2):
        await ann.say(f"line {number}", table=playing)
    finished = (await bob.create_table("nimble")).table.id
    await ann.join_table(finished)
    await bob.say("a finished game's line", table=finished)
    await ann.resign(finished)
    stored = _stored(db)
    assert [row for row in stored if row[0] == playing] == [(playing, n + 1, f"line {n}") for n in range(2, CHAT_HISTORY + 2)]
    assert (finished, 1, "a finished game's line") in stored
    tokens = ann.token, bob.token
    await ann.close()
    await bob.close()
    await first.close()

    second = Server(_config(db))
    await second.start()
    try:
        back = await Client.connect("127.0.0.1", second.port, name="bob", token=tokens[1])
        resumed = await back.next_event(m.Resumed, timeout_s=TIMEOUT_S)
        assert resumed.table.id == playing
        assert [entry.text for entry in resumed.chat] == [f"line {n}" for n in range(2, CHAT_HISTORY + 2)]
        await back.say("after the restart", table=playing)
        for _ in range(50):  # the finished table's lines are deleted in the background
            if all(row[0] != finished for row in _stored(db)):
                break
            await asyncio.sleep(0.02)
        stored = _stored(db)
        assert all(row[0] != finished for row in stored), "a finished table's lines outlived the restart"
        assert stored[-1] == (playing, CHAT_HISTORY + 3, "after the restart") and len(stored) == CHAT_HISTORY
        await back.close()
    finally:
        await second.close()


async def test_the_line_client_prints_the_conversation_so_far_on_watching(connect) -> None:
    ann, cat = await connect("ann"), await connect("cat", watch_lobby=False)
    table = (await ann.create_table("othello")).table.id
    await ann.say("hello \x1b[31mwatchers", table=table)
    written: list[str] = []
    await TerminalClient(cat, written.append).handle(f"watch {table}")
    text = "\n".join(written)
    assert f"Chat at table {table} so far:\n  ann: hello" in text
    assert "\x1b" not in text
