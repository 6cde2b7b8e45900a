"""``parlour bot``'s logic (client/bot.py) against a real in-process server, with real worker processes.

A person (a plain :class:`Client`) plays the bot: offers are answered by the
stated policy (and at once, while the bot thinks), rematches are accepted, a
stop forfeits the running game; two ``auto`` bots find each other.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator

import pytest

import games
from client import Client
from client.bot import Bot, BotSettings, material, resume_or_renew
from protocol import messages as m
from server.app import Server

LONG_NIMBLE = {"board": [0, 0, 3, 3, 3]}
"""A Nimble setup with enough moves for offers in the middle of the game."""


class Running:
    """A bot playing in a task of this event loop; ``lines`` is what it said."""

    def __init__(self, bot: Bot, lines: list[str]) -> None:
        self.bot = bot
        self.lines = lines
        self.task = asyncio.create_task(bot.run())

    async def stopped(self, timeout_s: float = 10.0) -> int:
        return await asyncio.wait_for(self.task, timeout_s)


@pytest.fixture
async def start_bot(server: Server) -> AsyncIterator[Any]:
    """Factory: ``await start_bot("botty", game="nimble", level=5, mode="join", ...)`` (BotSettings fields)."""
    running: list[Running] = []

    async def factory(name: str, **settings: Any) -> Running:
        connect = resume_or_renew("127.0.0.1", server.port, name)
        lines: list[str] = []
        bot = Bot(BotSettings(**settings), await connect(None), connect, lines.append)
        running.append(Running(bot, lines))
        return running[-1]

    yield factory
    for each in running:
        each.bot.stop("the test ended")
        await asyncio.wait_for(asyncio.gather(each.task, return_exceptions=True), 10)


async def next_of(client: Client, push: type[m.Message], /, **fields: Any) -> Any:
    """The next push of class ``push`` whose ``fields`` match."""
    while True:
        event = await client.next_event(push, timeout_s=10)
        if all(getattr(event, key) == value for key, value in fields.items()):
            return event


async def eventually(check: Any, timeout_s: float = 5.0) -> None:
    """Wait until ``check()`` is true (the bot handles pushes in its own time)."""
    async with asyncio.timeout(timeout_s):
        while not check():
            await asyncio.sleep(0.01)


async def play_my_turns_to_the_end(client: Client, table: int, seat: int, view: dict[str, Any]) -> dict[str, Any]:
    """Play the first legal move at each of ``seat``'s turns; return the outcome."""
    while True:
        if view.get("to_move") == seat and view.get("legal_moves"):
            await client.move(table, view["legal_moves"][0], ply=view["ply"])
        event = await client.next_event((m.Moved, m.GameOver), timeout_s=10)
        if isinstance(event, m.GameOver):
            return event.outcome
        view = event.view


async def test_the_bot_declines_draws_and_takebacks_accepts_a_rematch_and_forfeits_when_stopped(connect: Any, start_bot: Any) -> None:
    ann = await connect("ann")
    table = (await ann.create_table("nimble", LONG_NIMBLE)).table.id
    bot = await start_bot("botty", game="nimble", level=1, mode="join", rematch_wait_s=30)
    started = await next_of(ann, m.GameStarted, table=table)
    [info] = await ann.list_tables()
    assert info.seats == ["ann", "botty"] and info.bots == [False, True]  # it said hello as a bot

    await ann.offer(table, "draw")
    assert (await next_of(ann, m.Answered, kind="draw")).accepted is False
    await ann.move(table, started.view["legal_moves"][0])
    reply = await next_of(ann, m.Moved, seat=1)  # the bot answered the move
    await ann.offer(table, "takeback")
    assert (await next_of(ann, m.Answered, kind="takeback")).accepted is False

    outcome = await play_my_turns_to_the_end(ann, table, 0, reply.view)
    assert outcome["winner"] in (0, 1)
    await eventually(lambda: bot.bot.games_played == 1)

    await ann.offer(table, "rematch")
    rematch = await next_of(ann, m.RematchStarted, previous=table)
    assert rematch.seat == 1 and rematch.table.seats == ["botty", "ann"]
    await next_of(ann, m.Moved, table=rematch.table.id, seat=0)  # the bot moves first in the rematch
    bot.bot.stop("the test stops it")
    assert await bot.stopped() == 0
    over = await next_of(ann, m.GameOver, table=rematch.table.id)
    assert over.outcome["aborted"] is True and "left the table" in over.outcome["reason"]  # ann had not moved: aborted
    assert f"Left table {rematch.table.id} (aborting the game: a side had not moved yet): the test stops it." in bot.lines
    assert f"Left table {table}: the rematch started." in bot.lines


async def test_draw_offers_are_answered_at_once_while_the_bot_thinks_and_when_losing_it_accepts(connect: Any, start_bot: Any) -> None:
    ann = await connect("ann")
    table = (await ann.create_table("othello", {"size": 6})).table.id
    bot = await start_bot("thinker", game="othello", level=5, mode="join", seconds=1.5, accept_draws="when-losing")
    started = await next_of(ann, m.GameStarted, table=table)
    await bot.bot.thinker.ready()  # the worker process is up: what follows is thinking, not starting
    await ann.move(table, started.view["legal_moves"][0])  # Black has 4 discs to White's 1: the bot is behind
    moved_at = time.monotonic()
    await eventually(lambda: bot.bot.tables[table].thinking is not None)
    await ann.offer(table, "draw")  # while the bot thinks its 1.5 s
    answered = await next_of(ann, m.Answered, kind="draw")
    answered_after = time.monotonic() - moved_at
    thinking = bot.bot.tables[table].thinking
    assert answered.accepted is True, bot.lines
    assert answered_after < 1.0, f"the offer waited {answered_after:.2f} s for the bot's thinking"
    assert thinking is not None and not thinking.done(), "the bot was still thinking about its move"
    over = await next_of(ann, m.GameOver, table=table)
    assert over.outcome["winner"] is None and over.outcome["reason"] == "draw by agreement"


def test_material_is_what_each_game_counts() -> None:
    start = {name: games.get(name).new_state({}, seed=1).view(0) for name in games.names()}
    assert material(start["othello"], 0) == (2, 2)
    assert material(start["hexapawn"], 1) == (3, 3)
    assert material(start["morris"], 0) == (9, 9)
    assert material(start["mingmang"], 0)[0] == material(start["mingmang"], 1)[1]
    assert material(start["nimble"], 0) is None  # no material: a when-losing bot never accepts there
    opening = games.get("othello").new_state({"size": 6})
    after = opening.play(opening.legal_moves()[0]).view(1)
    assert material(after, 1) == (1, 4) and material(after, 0) == (4, 1)


async def test_two_auto_bots_started_together_find_each_other_and_play_a_game(start_bot: Any) -> None:
    common = dict(game="nimble", level=3, mode="auto", games=1, rematch_wait_s=0, options={"board": [0, 2, 2]})
    first = await start_bot("first", **common)
    second = await start_bot("second", **common)
    assert await first.stopped(20) == 0 and await second.stopped(20) == 0
    assert first.bot.games_played == second.bot.games_played == 1
    results = {line.split(": ")[1].split()[0] for bot in (first, second) for line in bot.lines if line.startswith("Game over")}
    assert results == {"won", "lost"}, first.lines + second.lines


async def test_a_bot_signed_in_elsewhere_stops_and_does_not_take_its_session_back(server: Server, start_bot: Any) -> None:
    running = await start_bot("botty", game="nimble", level=1, mode="create")
    await eventually(lambda: server.names.get("botty") is not None and server.names["botty"].seats)
    elsewhere = await Client.connect("127.0.0.1", server.port, name="botty", token=running.bot.client.token)
    try:
        assert await running.stopped() == 1
        said = "Signed in elsewhere: another connection took over this session; stopping so as not to take it back."
        assert said in running.lines and not any("reconnecting" in line for line in running.lines), running.lines
        await asyncio.sleep(0.5)
        await elsewhere.ping()
        assert not elsewhere.closed.is_set()
    finally:
        await elsewhere.close()


async def test_the_shutdown_notice_says_shutting_down_once(server: Server, start_bot: Any) -> None:
    bot = await start_bot("botty", game="nimble", level=1, mode="create", give_up_s=0.5)
    await eventually(lambda: any(line.startswith("Created table") for line in bot.lines))
    await server.close()
    await eventually(lambda: any("shutting down" in line for line in bot.lines))
    await eventually(lambda: any("reconnecting" in line.lower() for line in bot.lines))
    notices = [line for line in bot.lines if "shutting down" in line]
    assert notices == ["The server is shutting down."], bot.lines
    assert "Reconnecting when the server is back..." in bot.lines
