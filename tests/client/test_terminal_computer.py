"""The terminal against the computer: ``new ... vs=computer``, ``computer=L0,L1``, ``hint``, and how computer and bot seats read.

The shells run against a real in-process server whose computer players think
0.02 s a move in one real worker process.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import games
from client import Client
from client.terminal import NewTable, TerminalClient, UsageError, describe_table, player_label
from protocol import messages as m
from server.app import Server

from ..conftest import ConfiguredServer

LOST_FOR_THE_FIRST = "board=0,0,0,2"
"""A Nimble setup with nim-sum 0: whoever moves first loses against perfect play."""


class Shell:
    """A TerminalClient writing into a list, following the server's pushes as ``parlour play`` does."""

    def __init__(self, client: Client) -> None:
        self.out: list[str] = []
        self.term = TerminalClient(client, self.out.append)
        self.follower = asyncio.create_task(self.term.follow_events())

    async def run(self, line: str, timeout_s: float = 10.0) -> str:
        """Run one command; return what it printed."""
        start = len(self.out)
        assert await asyncio.wait_for(self.term.handle(line), timeout_s)
        return "\n".join(self.out[start:])

    async def until(self, done: Any, timeout_s: float = 10.0) -> None:
        """Wait until ``done(self.term)`` is true (pushes are shown meanwhile)."""
        async with asyncio.timeout(timeout_s):
            while not done(self.term):
                await asyncio.sleep(0.01)

    async def close(self) -> None:
        await self.term.client.close()
        await asyncio.wait_for(self.follower, 5.0)


@pytest.fixture
async def computers(configured_server: ConfiguredServer) -> Server:
    return await configured_server(bot_seconds=0.02, bot_workers=1)


@pytest.fixture
async def shell(computers: Server) -> Any:
    shell = Shell(await Client.connect("127.0.0.1", computers.port, name="ann"))
    yield shell
    await shell.close()


def _over(term: TerminalClient) -> bool:
    return term.at is not None and term.at.view.get("outcome") is not None


async def test_a_whole_game_against_the_computer_from_new_to_result(shell: Shell) -> None:
    created = await shell.run(f"new nimble {LOST_FOR_THE_FIRST} vs=computer level=5")
    assert "Created table 1: you play against computer (level 5); the game starts now." in created
    assert "Player 1: ann  vs  Player 2: computer (level 5)" in created
    while not _over(shell.term):
        await shell.run("wait turn")
        if not _over(shell.term):
            await shell.run(shell.term.at.view["legal_moves"][0])  # type: ignore[union-attr]
    assert "Result: Player 2 wins" in "\n".join(shell.out)  # perfect play wins the lost position
    assert not any(line.startswith("error") for line in shell.out), shell.out


async def test_vs_computer_alone_takes_the_default_level_and_seat_1_lets_it_move_first(shell: Shell) -> None:
    created = await shell.run("new nimble vs=computer seat=1")
    assert "you play against computer (level 3)" in created
    at = shell.term.at
    assert at is not None and at.seat == 1 and at.info.computer == [3, None]
    await shell.until(lambda term: term.at.view.get("ply", 0) >= 1 or _over(term))  # the computer moved first


async def test_computer_against_computer_is_watched_to_the_end(shell: Shell) -> None:
    created = await shell.run("new nimble computer=1,5")
    assert "Created table 1: computer (level 1) vs computer (level 5); you are watching." in created
    await shell.run("wait end")
    assert any(line.startswith("Result: ") for line in shell.out)
    [line] = [line for line in (await shell.run("list")).splitlines() if line.startswith("#1 ")]
    assert "computer (level 1) vs computer (level 5)" in line


async def test_hint_gives_a_legal_move_against_the_computer_and_is_refused_where_hints_are_off(shell: Shell) -> None:
    await shell.run("new othello size=6 vs=computer level=1")
    await shell.run("wait turn")
    legal = shell.term.at.view["legal_moves"]  # type: ignore[union-attr]
    hint = await shell.run("hint")
    assert hint.startswith("Hint: ") and hint.split()[1] in legal, hint
    await shell.run("leave")
    await shell.run("new othello size=6")
    assert (await shell.run("hint")).startswith("error (hints_off): ")


async def test_a_takeback_against_the_computer_says_it_is_granted_at_once(shell: Shell) -> None:
    await shell.run("new othello size=6 vs=computer level=1")
    await shell.run("wait turn")
    await shell.run(shell.term.at.view["legal_moves"][0])  # type: ignore[union-attr]
    await shell.run("wait turn")
    assert shell.term.at.view["ply"] == 2  # type: ignore[union-attr]
    before = len(shell.out)
    said = await shell.run("takeback")
    assert "the computer grants it at once" in said and said.startswith("You asked for a takeback, which takes back your move ")
    await shell.until(lambda term: "2 plies taken back." in shell.out[before:])
    assert shell.term.at.view["ply"] == 0 and shell.term.at.view.get("legal_moves")  # type: ignore[union-attr]
    after = shell.out[before:]
    # The player is told the computer accepted, as when a person does, before the plies go.
    assert after.index("The takeback request was accepted.") < after.index("2 plies taken back.")


@pytest.mark.parametrize(
    ("words", "complaint"),
    [
        ("vs=computer level=9", "a computer level is 1 (a beginner can win) to 5 (the strongest), not '9'"),
        ("computer=3", "usage: computer=L0,L1"),
        ("computer=3,5 vs=computer", "leave out vs, level and seat"),
        ("vs=ann", "vs=computer is the one opponent"),
        ("seat=2", "seat=0 (moves first) or seat=1"),
        ("hints=maybe", "hints=on or hints=off"),
    ],
)
def test_new_table_words_that_cannot_work_are_explained(words: str, complaint: str) -> None:
    with pytest.raises(UsageError) as info:
        NewTable.parse(games.get("othello"), words.split())
    assert complaint in str(info.value)


def test_new_table_reads_the_computer_hints_and_game_options_apart() -> None:
    table = NewTable.parse(games.get("othello"), ["size=6", "level=4", "seat=1", "hints=on", "tc=5+3"])
    assert (table.options, table.seat, table.computer, table.hints, table.time_control) == ({"size": 6}, 1, {0: 4}, True, "5+3")
    watched = NewTable.parse(games.get("othello"), ["computer=2,5"])
    assert (watched.seat, watched.computer) == (None, {0: 2, 1: 5})


def test_lobby_lines_show_computer_levels_bots_and_hints() -> None:
    base: dict[str, Any] = dict(id=4, game="othello", options={"size": 8}, status="playing", spectators=0, ply=3)
    against = m.TableInfo(**base, seats=["ann", "Computer 4"], computer=[None, 4], hints=True)
    assert "— ann vs computer (level 4) —" in describe_table(against)
    assert " hints" not in describe_table(against)  # always on against the computer: not worth a word
    bots = m.TableInfo(**base, seats=["bot-x", "bob"], bots=[True, False], hints=True)
    assert "— bot-x (bot) vs bob —" in describe_table(bots) and "#4 othello hints —" in describe_table(bots)
    assert player_label(m.TableInfo(**base, seats=[None, "bob"], bots=[True, False]), 0) == "(free)"
