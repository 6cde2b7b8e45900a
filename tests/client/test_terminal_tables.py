"""The line client at several tables: focus, switching, leaving, watching, history, confirmations, narrow terminals.

Each shell is a real :class:`TerminalClient` on a real connection to an
in-process server, reading its pushes as ``parlour play`` does, and is driven
line by line as a script drives it through piped stdin.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from client import Client
from client.line_input import INTERRUPT
from client.terminal import TerminalClient
from server.net.limits import Limits

Connect = Callable[..., Awaitable[Client]]


class Live:
    """A TerminalClient following its pushes, with what it printed and the answers its confirmations get."""

    def __init__(self, client: Client, size: tuple[int, int] = (100, 40), answers: list[bool] | None = None) -> None:
        self.out: list[str] = []
        self.asked: list[str] = []
        self.answers = answers
        self.size = size
        confirm = self._confirm if answers is not None else None
        self.term = TerminalClient(client, self.out.append, confirm=confirm, terminal_size=lambda: self.size)
        self.task = asyncio.create_task(self.term.follow_events())

    async def _confirm(self, question: str) -> bool:
        self.asked.append(question)
        assert self.answers, f"unexpected question: {question}"
        return self.answers.pop(0)

    async def run(self, line: str) -> str:
        """Run one command; return what it printed."""
        start = len(self.out)
        await asyncio.wait_for(self.term.handle(line), 10)
        return "\n".join(self.out[start:])

    async def until(self, test: Callable[[TerminalClient], bool]) -> None:
        """Wait (at most 5 s) until ``test`` holds."""
        async def wait() -> None:
            while not test(self.term):
                await asyncio.sleep(0.01)

        await asyncio.wait_for(wait(), 5)


@pytest.fixture
async def live(connect: Connect) -> AsyncIterator[Callable[..., Awaitable[Live]]]:
    shells: list[Live] = []

    async def factory(name: str, **kwargs: Any) -> Live:
        shells.append(Live(await connect(name, watch_lobby=False), **kwargs))
        return shells[-1]

    yield factory
    for shell in shells:
        shell.task.cancel()
        await asyncio.gather(shell.task, return_exceptions=True)


async def _game(live: Callable[..., Awaitable[Live]], **kwargs: Any) -> tuple[Live, Live]:
    """ann (Black) and bob (White) at table 1, an Othello game of size 6 that has started."""
    ann, bob = await live("ann", **kwargs), await live("bob")
    await ann.run("new othello size=6")
    await bob.run("join 1")
    await ann.run("wait turn")
    return ann, bob


async def test_join_and_watch_of_your_own_game_switch_to_it_and_moves_go_to_the_focused_table(live: Any) -> None:
    ann, bob = await _game(live)
    await ann.run("new hexapawn")
    assert ann.term.prompt_text() == "[t2 hexapawn, waiting] "
    move = ann.term.session.tables[1].legal_moves[0]
    assert (await ann.run(move)).startswith("error (not_started)")  # went to the focused table 2, not to 1
    assert ann.term.session.tables[1].moves == []
    out = await ann.run("join 1")
    assert out.startswith("Switched to table 1 (othello, playing as Black).") and "error" not in out
    assert ann.term.prompt_text() == "[t1 othello, your move] "
    await ann.run(move)
    await bob.until(lambda term: term.at is not None and term.at.moves == [move])
    await ann.run("t 2")
    assert (await ann.run("watch 1")).startswith("Switched to table 1")
    assert set(ann.term.session.tables) == {1, 2}


async def test_tables_switch_and_leave_n_or_all(live: Any) -> None:
    ann, bob = await _game(live)
    await ann.run("new hexapawn")
    carl = await live("carl")
    await carl.run("new nimble")
    await ann.run("watch 3")
    listing = await ann.run("tables")
    assert "  t1 othello (Size: 6) — ann vs bob — you are Black, your move" in listing
    assert "  t2 hexapawn — ann vs (free) — you are White, waiting for a player" in listing
    assert "* t3 nimble — carl vs (free) — watching, waiting for a player" in listing
    assert (await ann.run("switch 2")).startswith("Switched to table 2 (hexapawn, playing as White).")
    assert await ann.run("switch 9") == "you are not at table 9; tables lists yours"
    assert (await ann.run("leave")).startswith("Left table 2.")  # the focused one
    assert set(ann.term.session.tables) == {1, 3}
    assert (await ann.run("leave 3")) == "Left table 3.\nNow at table 1 (othello); tables lists yours."
    await ann.run("leave all")  # piped input: no question, the running game is left (aborted: nobody had moved)
    assert ann.term.session.tables == {} and ann.term.prompt_text() == "> "
    await bob.run("wait end")
    assert "Result: aborted — Black left the table before both sides had moved" in "\n".join(bob.out)  # nobody had moved


async def test_watch_replaces_the_watched_table_keeps_seats_and_explains_the_limit(configured_server: Any) -> None:
    server = await configured_server(limits=Limits(max_tables_per_client=2))
    clients = [await Client.connect("127.0.0.1", server.port, name=name) for name in ("ann", "bob")]
    ann, bob = Live(clients[0]), Live(clients[1])
    try:
        await bob.run("new nimble")
        await bob.run("new hexapawn")
        await ann.run("new othello size=6")
        await ann.run("watch 1")
        out = await ann.run("watch 2")
        assert "Stopped watching table 1." in out and set(ann.term.session.tables) == {2, 3}
        await ann.run("switch 3")  # focus on the seat: a watch now adds a table, and hits the limit
        out = await ann.run("watch 1")
        assert "error (too_many_tables)" in out and "leave one first (tables lists them)" in out
        assert set(ann.term.session.tables) == {2, 3}
    finally:
        for shell in (ann, bob):
            shell.task.cancel()
            await shell.term.client.close()


async def _two_plies(ann: Any, bob: Any) -> tuple[str, str]:
    """Ann plays her first legal move, bob replies with his; return both (ann is to move again)."""
    first = ann.term.at.legal_moves[0]
    await ann.run(first)
    await bob.run("wait turn")
    second = bob.term.at.legal_moves[0]
    await bob.run(second)
    await ann.run("wait turn")
    return first, second


async def test_history_numbers_plies_and_the_board_marks_the_last_move(live: Any) -> None:
    ann, bob = await _game(live)
    first, second = await _two_plies(ann, bob)
    assert await ann.run("history") == f"Moves at table 1 (othello), by ply:\n1.{first}  2.{second}"
    column, row = "abcdef".index(second[0]), int(second[1:])
    board = (await ann.run("board")).splitlines()
    assert board[1 + row][3 + 2 * column : 6 + 2 * column] == "[O]"


async def test_takeback_on_your_turn_takes_back_your_move_and_their_reply(live: Any) -> None:
    ann, bob = await _game(live)
    first, second = await _two_plies(ann, bob)
    said = await ann.run("takeback")
    assert said == f"You asked for a takeback, which takes back your move {first} and their reply {second}; waiting for bob to accept or decline."
    await bob.until(lambda term: term.at.opponent_offer() is not None)
    assert f"ann asks for a takeback, which takes back their move {first} and your reply {second} — type accept or decline" in bob.out
    await bob.run("accept")
    await ann.until(lambda term: term.at.moves == [])
    assert ann.term.at.my_turn and ann.term.prompt_text() == "[t1 othello, your move] "


async def test_resign_leave_and_quit_ask_on_a_terminal(live: Any) -> None:
    ann, bob = await _game(live, answers=[False] * 6)
    assert await ann.run("resign") == "Not resigned."
    assert await ann.run("leave") == "Not left."  # nobody has moved: leaving would abort the game
    assert await ann.term.handle("quit") and await ann.term.handle(INTERRUPT)  # said no: still running
    await _two_plies(ann, bob)
    assert await ann.run("leave") == "Not left."  # both sides have moved: leaving would forfeit it
    assert await ann.term.handle("quit")
    assert ann.asked == [
        "Resign the game at table 1 (othello)?",
        "Leave table 1? Your game at table 1 is aborted if you leave (no result: a side has not moved yet).",
        "Quit now? Your game at t1 is aborted unless you return (no result: a side has not moved yet).",
        "Ctrl-C: quit now? Your game at t1 is aborted unless you return (no result: a side has not moved yet).",
        "Leave table 1? Your game at table 1 is forfeited if you leave.",
        "Quit now? Your game at t1 is forfeited unless you return.",
    ]
    assert ann.term.at.running
    ann.answers = [True]
    await ann.run("resign")
    await ann.run("wait end")
    assert not await ann.term.handle("quit")  # no game running: no question
    assert len(ann.asked) == 7


async def test_leave_all_says_which_games_are_forfeited_and_which_aborted(live: Any) -> None:
    ann, bob = await _game(live, answers=[False])
    await _two_plies(ann, bob)
    await bob.run("new hexapawn")
    await ann.run("join 2")
    await ann.until(lambda term: term.session.tables[2].running)
    assert await ann.run("leave all") == "Not left."
    assert ann.asked == [
        "Leave table 1, table 2? Your game at table 1 is forfeited if you leave;"
        " your game at table 2 is aborted if you leave (no result: a side has not moved yet)."
    ]


async def test_quit_in_parlour_host_always_asks_and_says_it_stops_the_server(connect: Connect) -> None:
    asked: list[str] = []

    async def confirm(question: str) -> bool:
        asked.append(question)
        return False

    term = TerminalClient(await connect("ann"), [].append, confirm=confirm, quit_warning=lambda: "Quitting stops this server (2 connected).")
    assert await term.handle("quit")
    assert asked == ["Quitting stops this server (2 connected). Quit?"]


@pytest.mark.parametrize("game", ["othello", "hexapawn", "mingmang", "nimble", "tactego", "morris"])
async def test_every_board_fits_60x20_and_a_turn_does_not_wrap_at_80(live: Any, game: str) -> None:
    ann, bob = await live("ann", size=(60, 20)), await live("bob", size=(80, 24))
    await ann.run(f"new {game} seed=1")
    await bob.run("join 1")
    await ann.run("wait turn")
    shown = await ann.run("board")
    assert len(shown.splitlines()) <= 20 and max(map(len, shown.splitlines())) <= 60, shown
    await ann.run(ann.term.at.legal_moves[0])
    await bob.run("wait turn")
    await bob.run(bob.term.at.legal_moves[0])
    await ann.run("wait turn")
    await bob.until(lambda term: len(term.at.moves) == 2)
    printed = "\n".join(bob.out)
    assert max(len(line) for line in printed.splitlines()) < 80, printed
    assert printed.count("Type a move") == 1  # the hint on how to move: once per table


async def test_the_host_quit_warning_counts_the_others_connected(server: Any, connect: Connect) -> None:
    from client.cli import _host_quit_warning

    await connect("host")
    assert _host_quit_warning(server) == "Quitting stops this server for everyone connected (nobody else is connected now)."
    await connect("bob")
    await connect("carl")
    assert _host_quit_warning(server) == "Quitting stops this server for everyone connected (2 other players are connected now)."


async def test_watch_prints_the_tables_web_address_when_the_server_has_a_web_face(configured_server: Any) -> None:
    server = await configured_server(http=("127.0.0.1", 0))
    ann, bob = [Live(await Client.connect("127.0.0.1", server.port, name=name)) for name in ("ann", "bob")]
    try:
        await bob.run("new nimble")
        out = await ann.run("watch 1")
        assert f"Watch it in a browser too: http://127.0.0.1:{server.http_address[1]}/table/1" in out
    finally:
        for shell in (ann, bob):
            shell.task.cancel()
            await shell.term.client.close()
