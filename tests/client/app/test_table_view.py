"""The table pane against a real in-process server: moves by mouse and keys, offers, resignation, the banner.

The player in the app is ``ann`` (a :class:`ClientSession` on a real
connection); the opponent ``bob`` is a plain :class:`Client` on another.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, AsyncIterator, Callable

import pytest
from textual.app import App, ComposeResult
from textual.widgets import RichLog, Static

from client.app.boards import BoardWidget
from client.app.confirm import ConfirmScreen
from client.app.offers import OfferScreen
from client.app.seats import SeatLines
from client.app.table import TableView
from client.connection import Client
from client.session import ClientSession, TableState
from protocol import messages as m

SIZE = (100, 30)


class OneTable(App[None]):
    """Just a table pane, as the app shows one in a tab."""

    def __init__(self, session: ClientSession, table_id: int, *, bell: bool = False) -> None:
        super().__init__()
        self.session = session
        self.table_id = table_id
        self.ring = bell

    def compose(self) -> ComposeResult:
        yield TableView(self.session, self.table_id, bell=self.ring, id="pane")


@pytest.fixture
async def ann(connect: Callable[..., Any]) -> AsyncIterator[ClientSession]:
    """ann's session model, reading its pushes."""
    session = ClientSession(await connect("ann", watch_lobby=False))
    task = asyncio.create_task(session.run())
    yield session
    task.cancel()


async def until(pilot: Any, condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition()`` holds (at most 5 s), and then draw."""
    for _ in range(500):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def click_square(pilot: Any, board: BoardWidget, name: str) -> None:
    """Click the middle of square ``name`` on ``board``, as a player does."""
    square = next(s for s in board.squares() if s.name == name)
    left = board.content_region.x - board.region.x
    top = board.content_region.y - board.region.y
    await pilot.click(board, offset=(left + square.centre, top + square.row))


async def _against_bob(ann: ClientSession, connect: Callable[..., Any], game: str, *args: Any, **kwargs: Any) -> tuple[TableState, Client]:
    """A new table of ``game`` (``ann.create``'s arguments) at which ann sits in seat 0, and the client "bob" who took seat 1."""
    table = await ann.create(game, *args, **kwargs)
    bob: Client = await connect("bob", watch_lobby=False)
    await bob.join_table(table.id, 1)
    return table, bob


def banner(app: App[None]) -> str:
    return str(app.query_one("#result-banner", Static).render())


async def test_a_game_played_by_mouse_clicks_ends_with_the_banner(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "hexapawn")
    app = OneTable(ann, table.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ann.table(table.id).my_turn, "the game to start")
        board = app.query_one("#board", BoardWidget)
        assert board.flipped()  # White starts at the top of the notation: turned to face ann
        await click_square(pilot, board, "a1")
        assert board.path == ["a1"] and board.targets() == {"a2"}
        await click_square(pilot, board, "a2")
        await until(pilot, lambda: ann.table(table.id).moves == ["a1-a2"], "ann's move")
        await bob.move(table.id, "b3-b2")
        await until(pilot, lambda: ann.table(table.id).my_turn, "bob's reply")
        assert board.last_squares() == {"b3", "b2"}
        await click_square(pilot, board, "c1")
        await click_square(pilot, board, "c2")
        await until(pilot, lambda: ann.table(table.id).outcome is not None, "the end of the game")
        await pilot.pause()
        assert banner(app).startswith("You won: White (ann) wins")
        assert "1 a1-a2" in str(app.query_one("#move-list", Static).render())


async def test_a_move_by_keys_a_hint_and_typed_moves(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "nimble", {"board": [0, 2, 1]}, hints=True)
    await ann.hint(table.id)  # starts the server's worker processes now: under a running app, stderr is not a file
    app = OneTable(ann, table.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ann.table(table.id).my_turn, "the game to start")
        board = app.query_one("#board", BoardWidget)
        board.focus()
        await pilot.press("h")  # this table allows hints
        notice = app.query_one("#notice", Static)
        await until(pilot, lambda: str(notice.render()).startswith("Hint: "), "the hint")
        assert str(notice.render()).removeprefix("Hint: ").split()[0] in ("3-1", "3-2", "2-1")
        await pilot.press("enter")  # the cursor appears on the first square a move starts from
        assert board.cursor == "2"
        await pilot.press("right", "space", "left", "left", "enter")  # square 3, then square 1
        await until(pilot, lambda: ann.table(table.id).moves == ["3-1"], "ann's move by keys")
        await bob.move(table.id, "2-1")
        await until(pilot, lambda: ann.table(table.id).my_turn, "bob's reply")
        await pilot.click("#move-input")
        await pilot.press(*"2-3", "enter")
        notice = app.query_one("#notice", Static)
        await until(pilot, lambda: str(notice.render()).startswith("2-3: a pawn must move left"), "the refusal with its reason")
        assert len(ann.table(table.id).moves) == 2
        await pilot.press(*"2 1", "enter")  # typed notation, forgiving spelling
        await until(pilot, lambda: ann.table(table.id).outcome is not None, "the end of the game")
        await pilot.pause()
        assert banner(app).startswith("You won: Player 1 (ann) wins")
        assert app.focused is app.query_one("#move-input")
        await pilot.press("escape")  # back from the move line to the board
        assert app.focused is board


async def test_offers_come_up_as_dialogs_and_are_answered_there(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "othello")
    app = OneTable(ann, table.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ann.table(table.id).my_turn, "the game to start")
        await click_square(pilot, app.query_one("#board", BoardWidget), "d3")
        await until(pilot, lambda: ann.table(table.id).moves == ["d3"], "ann's move")
        await bob.offer(table.id, "takeback", plies=1)
        await until(pilot, lambda: isinstance(app.screen, OfferScreen), "the takeback dialog")
        question = str(app.screen.query_one("#offer-question", Static).render())
        assert question == f"Table #{table.id} (othello): bob asks for a takeback: it takes back your move d3."  # names the table: it may show over another
        await pilot.click("#decline")
        await until(pilot, lambda: not ann.table(table.id).offers, "the answer to reach the server")
        assert ann.table(table.id).moves == ["d3"]
        await bob.offer(table.id, "draw")
        await until(pilot, lambda: isinstance(app.screen, OfferScreen), "the draw dialog")
        await pilot.click("#accept")
        await until(pilot, lambda: ann.table(table.id).outcome is not None, "the draw")
        assert banner(app) == "Draw, draw by agreement"
        await bob.say("gg \x1b[31mred", table=table.id)
        log = app.query_one("#chat-log", RichLog)
        await until(pilot, lambda: any("bob: gg" in line.text for line in log.lines), "bob's chat line")
        assert not any("\x1b" in line.text for line in log.lines)  # made printable
        await pilot.click("#chat-input")
        await pilot.press(*"thanks", "enter")
        heard = [await bob.next_event(m.Chat), await bob.next_event(m.Chat)]  # his own line comes back first
        assert [(line.name, line.text) for line in heard][-1] == ("ann", "thanks")
        await bob.offer(table.id, "rematch")
        await until(pilot, lambda: isinstance(app.screen, OfferScreen), "the rematch dialog")
        assert "bob offers a rematch" in str(app.screen.query_one("#offer-question", Static).render())
        await pilot.press("a")
        await until(pilot, lambda: len(ann.tables) == 2, "the rematch's table")


async def test_a_takeback_says_it_was_accepted_by_a_person_or_by_the_computer(ann: ClientSession, connect: Callable[..., Any], configured_server: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "othello")
    app = OneTable(ann, table.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ann.table(table.id).my_turn, "the game to start")
        await ann.move(table.id, "d3")
        await until(pilot, lambda: ann.table(table.id).moves == ["d3"], "ann's move")
        app.query_one("#board", BoardWidget).focus()
        await pilot.press("t")
        await until(pilot, lambda: "takeback" in ann.table(table.id).offers, "ann's request to reach the server")
        await bob.answer(table.id, "takeback", True)
        notice = app.query_one("#notice", Static)
        await until(pilot, lambda: str(notice.render()) == "The takeback offer was accepted: 1 ply taken back", "the notice")
        assert not ann.table(table.id).moves

    computers = await configured_server(bot_seconds=0.02, bot_workers=1)
    cal = ClientSession(await Client.connect("127.0.0.1", computers.port, name="cal", watch_lobby=False))
    pump = asyncio.create_task(cal.run())
    try:
        against = await cal.create("othello", computer={1: 1})
        await cal.move(against.id, "d3")  # the worker process starts now: under a running app, stderr is not a file
        app = OneTable(cal, against.id)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: len(cal.table(against.id).moves) == 2 and cal.table(against.id).my_turn, "the computer's reply")
            app.query_one("#board", BoardWidget).focus()
            await pilot.press("t")  # the computer grants it at once, and the player is told, as when a person accepts
            notice = app.query_one("#notice", Static)
            await until(pilot, lambda: str(notice.render()) == "The takeback offer was accepted: 2 plies taken back", "the notice")
            await pilot.pause(0.1)
            assert not cal.table(against.id).moves and str(notice.render()).startswith("The takeback offer was accepted")
    finally:
        pump.cancel()
        await cal.client.close()


async def test_at_sixty_by_twenty_morris_is_compact_and_resigning_asks_first(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "morris")
    app = OneTable(ann, table.id)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: ann.table(table.id).my_turn, "the game to start")
        board = app.query_one("#board", BoardWidget)
        frame = app.query_one("#board-scroll")
        assert board.compact
        assert board.size.height <= frame.size.height and board.size.width <= frame.size.width  # all of it shows
        board.focus()
        await pilot.press("x")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # no: nothing happens
        assert ann.table(table.id).outcome is None
        await pilot.press("x")
        await pilot.pause()
        await pilot.click("#yes")
        await until(pilot, lambda: ann.table(table.id).outcome is not None, "the resignation")
        await pilot.pause()
        assert banner(app).startswith("You lost: Player 2 (bob) wins, Player 1 resigned")


class Ringing(OneTable):
    """Counts the terminal bells instead of ringing them."""

    bells = 0

    def bell(self) -> None:
        self.bells += 1


async def test_low_time_turns_the_clock_red_and_rings_once_and_an_away_seat_counts_down(configured_server: Callable[..., Any]) -> None:
    server = await configured_server(grace_s=30.0)
    ann = ClientSession(await Client.connect("127.0.0.1", server.port, name="ann", watch_lobby=True))  # the clock starts in table_updated
    pump = asyncio.create_task(ann.run())
    bob = await Client.connect("127.0.0.1", server.port, name="bob")
    try:
        table = await ann.create("hexapawn", time_control="0.15+0")  # 9 s: under 10 s from the start
        await bob.join_table(table.id, 1)
        app = Ringing(ann, table.id, bell=True)
        async with app.run_test(size=SIZE) as pilot:
            mine = app.query_one("#seat-bottom", SeatLines)
            await until(pilot, lambda: mine.has_class("low-time"), "the low-time colour")
            await pilot.pause(0.3)
            assert app.bells == 1
            assert re.search(r"White +0:0\d\.\d\n +ann \(you\)$", mine.plain)  # tenths under ten seconds
            await bob.close()
            theirs = app.query_one("#seat-top", SeatLines)
            await until(pilot, lambda: "away, forfeits in" in theirs.plain, "bob's away status")
            assert "bob" in theirs.plain
    finally:
        pump.cancel()
        await ann.client.close()


async def test_a_wide_tactego_board_scrolls_instead_of_wrapping(ann: ClientSession) -> None:
    table = await ann.create("tactego", {"rows": 8, "cols": 26})
    app = OneTable(ann, table.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        frame = app.query_one("#board-scroll")
        board = app.query_one("#board", BoardWidget)
        assert board.size.width > frame.size.width
        assert frame.max_scroll_x > 0
        assert board.size.height == board.layout()[0] + len(board.status_lines())  # no line wrapped


@pytest.mark.parametrize("size", [(60, 20), (80, 24)])
async def test_an_eight_by_eight_tactego_board_and_its_legend_fit_without_scrolling_sideways(ann: ClientSession, connect: Callable[..., Any], size: tuple[int, int]) -> None:
    table, bob = await _against_bob(ann, connect, "tactego")
    app = OneTable(ann, table.id)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: ann.table(table.id).running, "the game to start")
        await pilot.pause()
        frame = app.query_one("#board-scroll")
        board = app.query_one("#board", BoardWidget)
        assert frame.max_scroll_x == 0 and board.size.width <= frame.scrollable_content_region.width  # the row numbers and legend show
        assert app.query_one("#table-side").size.width >= 18  # the seats still read


async def test_at_sixty_columns_a_long_title_wraps_instead_of_being_cut(ann: ClientSession, connect: Callable[..., Any]) -> None:
    bob: Client = await connect("bob", watch_lobby=False)
    carl: Client = await connect("carl", watch_lobby=False)
    table = (await bob.create_table("othello")).table.id
    await carl.join_table(table, 1)
    await ann.watch(table)
    app = OneTable(ann, table)
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: ann.table(table).running, "the game to start")
        await pilot.pause()
        title = app.query_one("#table-title", Static)
        text = str(title.render())
        assert text.endswith("watching · Black to move") and len(text) > title.size.width  # longer than the room it has
        assert title.size.height == 2  # so it takes a second line


async def test_the_table_tab_shows_the_tables_web_address_when_the_server_has_a_web_face(configured_server: Callable[..., Any]) -> None:
    server = await configured_server(http=("127.0.0.1", 0))
    for with_web in (True, False):
        at = server if with_web else await configured_server()
        session = ClientSession(await Client.connect("127.0.0.1", at.port, name="ann"))
        task = asyncio.create_task(session.run())
        try:
            table = await session.create("othello")
            app = OneTable(session, table.id)
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                shown = app.query("#web-address")
                if with_web:
                    assert str(shown.first(Static).render()) == f"In a browser: http://127.0.0.1:{server.http_address[1]}/table/{table.id}"
                else:
                    assert not shown
        finally:
            task.cancel()
            await session.client.close()
