"""``wait turn|start|end`` in the line client: each ends, with an error and exit status 5, once what it waits for cannot come.

Each shell is a real :class:`TerminalClient` on a real connection to an
in-process server, following its pushes as ``parlour play`` does.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Awaitable, Callable

import pytest

from client import Client
from client.line_script import EXIT_COMMAND, EXIT_OK, EXIT_REFUSED, EXIT_WAIT
from client.terminal import TerminalClient
from server.app import Server

Connect = Callable[..., Awaitable[Client]]


class Live:
    """A TerminalClient following its pushes, with what it printed."""

    def __init__(self, client: Client) -> None:
        self.out: list[str] = []
        self.term = TerminalClient(client, self.out.append)
        self.task = asyncio.create_task(self.term.follow_events())

    async def run(self, line: str, timeout_s: float = 5.0) -> tuple[int, str]:
        """Run one command (failing the test if it takes over ``timeout_s``); return its status and what it printed."""
        start = len(self.out)
        assert await asyncio.wait_for(self.term.handle(line), timeout_s)
        return self.term.status, "\n".join(self.out[start:])


Shells = Callable[[str], Awaitable[Live]]


@pytest.fixture
async def live(connect: Connect) -> AsyncIterator[Shells]:
    shells: list[Live] = []

    async def factory(name: str) -> Live:
        shells.append(Live(await connect(name, watch_lobby=False)))
        return shells[-1]

    yield factory
    for shell in shells:
        shell.task.cancel()
        await asyncio.gather(shell.task, return_exceptions=True)


async def _game(live: Shells) -> tuple[Live, Live]:
    """ann (Black, to move) and bob (White) at table 1, a 6x6 Othello game that has started."""
    ann, bob = await live("ann"), await live("bob")
    await ann.run("new othello size=6")
    await bob.run("join 1")
    assert await ann.run("wait turn") == (EXIT_OK, "")
    return ann, bob


@pytest.mark.parametrize("what", ["turn", "start", "end"])
async def test_a_wait_at_no_table_fails_at_once(live: Shells, what: str) -> None:
    ann = await live("ann")
    assert await ann.run(f"wait {what}") == (EXIT_WAIT, f"wait {what}: you are at no table (new, join or watch one first)")


async def test_wait_turn_after_a_failed_join_fails_instead_of_blocking(live: Shells) -> None:
    ann = await live("ann")
    status, said = await ann.run("join 9")
    assert status == EXIT_REFUSED and said.startswith("error (no_such_table)"), said
    assert await ann.run("wait turn") == (EXIT_WAIT, "wait turn: you are at no table (new, join or watch one first)")


async def test_wait_turn_as_a_spectator_fails_and_wait_end_waits_for_the_end(live: Shells) -> None:
    ann, bob = await _game(live)
    cy = await live("cy")
    await cy.run("watch 1")
    assert await cy.run("wait turn") == (EXIT_WAIT, "wait turn: you are watching table 1; only its players have turns")
    assert (await cy.run("wait start"))[0] == EXIT_OK
    waiting = asyncio.create_task(cy.run("wait end"))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    await ann.run("resign")
    assert (await waiting)[0] == EXIT_OK


async def test_wait_turn_fails_when_the_game_ends_before_the_turn_comes(live: Shells) -> None:
    ann, bob = await _game(live)
    waiting = asyncio.create_task(bob.run("wait turn"))
    await asyncio.sleep(0.1)
    assert not waiting.done(), "it is ann's turn"
    await ann.run("resign")
    status, said = await waiting
    assert status == EXIT_WAIT and said.endswith("\nwait turn: the game at table 1 is over"), said


async def test_at_a_finished_game_wait_turn_fails_and_wait_start_and_end_are_done(live: Shells) -> None:
    ann, bob = await _game(live)
    await ann.run("resign")
    assert (await ann.run("wait end"))[0] == EXIT_OK
    assert await ann.run("wait turn") == (EXIT_WAIT, "wait turn: the game at table 1 is over")
    assert await ann.run("wait start") == (EXIT_OK, "")
    assert await ann.run("wait end") == (EXIT_OK, "")


async def test_a_wait_fails_when_the_connection_is_lost_for_good(live: Shells, server: Server) -> None:
    ann = await live("ann")
    await ann.run("new othello size=6")
    waiting = asyncio.create_task(ann.run("wait start"))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    await server.close()
    status, said = await waiting
    assert status == EXIT_WAIT and said.endswith("wait start: the connection to the server is lost"), said


async def test_a_wait_for_something_else_is_a_usage_error(live: Shells) -> None:
    ann = await live("ann")
    assert await ann.run("wait lunch") == (EXIT_COMMAND, "usage: wait turn|start|end")
