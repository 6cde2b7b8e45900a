"""The table pane's board and seats at small terminals, against a real in-process server.

What is checked is what the screen shows (the compositor's rows), so a line
cut off by a panel or a widget that did not grow fails here.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from typing import Any, Callable

import pytest
from rich.console import Console

from client.app.boards import BoardWidget
from client.app.seats import SeatLines
from client.connection import Client
from client.session import ClientSession
from protocol.messages import MAX_NAME_CHARS

from .screen import screen_text
from .test_table_view import OneTable, _against_bob, ann, click_square, until

__all__ = ["ann"]  # the fixture, shared with test_table_view


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_move_that_closes_a_mill_says_on_screen_to_remove_a_counter(ann: ClientSession, connect: Callable[..., Any], size: tuple[int, int]) -> None:
    table, bob = await _against_bob(ann, connect, "morris")
    app = OneTable(ann, table.id)
    async with app.run_test(size=size) as pilot:
        for mine, theirs in (("d1", "a1"), ("d3", "a7")):
            await until(pilot, lambda: ann.table(table.id).my_turn, "ann's turn")
            await ann.move(table.id, mine)
            await until(pilot, lambda: not ann.table(table.id).my_turn, "bob's turn")
            await bob.move(table.id, theirs)
        await until(pilot, lambda: ann.table(table.id).my_turn and len(ann.table(table.id).moves) == 4, "ann's turn")
        board = app.query_one("#board", BoardWidget)
        assert "Mill!" not in screen_text(app)
        await click_square(pilot, board, "d2")  # closes d1-d2-d3
        await pilot.pause()
        assert board.path == ["d2"]
        shown = screen_text(app)
        assert "Mill! Remove" in shown and ("Player 2's counters (O)" in shown or "Remove an O" in shown), shown
        await click_square(pilot, board, "a7")
        await until(pilot, lambda: ann.table(table.id).moves[-1:] == ["d2xa7"], "the mill and the removal")
        await pilot.pause()
        assert "Mill!" not in screen_text(app)


async def test_a_hint_is_marked_on_the_board_until_the_position_changes(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "nimble", {"board": [0, 2, 1]}, hints=True)
    await ann.hint(table.id)  # starts the server's worker processes now: under a running app, stderr is not a file
    app = OneTable(ann, table.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: ann.table(table.id).my_turn, "the game to start")
        board = app.query_one("#board", BoardWidget)
        board.focus()
        marked = {name: drawn_background(board, name) for name in ("1", "2", "3")}
        assert board.hint == ()
        await pilot.press("h")
        await until(pilot, lambda: board.hint, "the hint on the board")
        move = str(app.query_one("#notice").render()).removeprefix("Hint: ").split()[0]
        assert move in ("3-1", "3-2", "2-1") and board.hint == tuple(move.split("-"))
        for name in ("1", "2", "3"):
            hinted = drawn_background(board, name)
            assert (hinted != marked[name]) == (name in board.hint), name  # the hint's squares, and only they, change colour
        assert drawn_background(board, board.hint[0]) == board.palette().hint.bgcolor
        await ann.move(table.id, move)
        await until(pilot, lambda: ann.table(table.id).ply == 1, "ann's move")
        await pilot.pause()
        assert board.hint == ()
        assert all(drawn_background(board, name) != board.palette().hint.bgcolor for name in ("1", "2", "3"))


def drawn_background(board: BoardWidget, name: str) -> Any:
    """The background colour drawn in the middle of square ``name`` (``None``: the terminal's)."""
    square = next(square for square in board.squares() if square.name == name)
    line = board.render().split("\n")[square.row]
    return line.get_style_at_offset(Console(), square.centre).bgcolor


async def _rated(configured_server: Callable[..., Any], names: tuple[str, str], game: str = "othello") -> tuple[ClientSession, Client, asyncio.Task[None], int]:
    """A rated, timed table of ``game`` between two claimed names: ann's session (seat 0) pumping, bob's client (seat 1)."""
    server = await configured_server()
    ann = ClientSession(await Client.connect("127.0.0.1", server.port, name=names[0], claim=True, secret=secrets.token_urlsafe(32), watch_lobby=True))
    pump = asyncio.create_task(ann.run())
    bob = await Client.connect("127.0.0.1", server.port, name=names[1], claim=True, secret=secrets.token_urlsafe(32))
    table = await ann.create(game, time_control="5+3", rated=True)
    await bob.join_table(table.id, 1)
    return ann, bob, pump, table.id


@pytest.mark.parametrize("length", [12, 20, MAX_NAME_CHARS])
async def test_at_eighty_by_twenty_four_both_clocks_show_whole_beside_long_rated_names(configured_server: Callable[..., Any], length: int) -> None:
    names = ("a" * (length - 1) + "1", "b" * (length - 1) + "2")
    ann, bob, pump, table = await _rated(configured_server, names)
    try:
        app = OneTable(ann, table)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: ann.table(table).my_turn and ann.table(table).info.ratings, "the rated game to start")
            await pilot.pause(0.2)
            rows = screen_text(app).splitlines()
            clocks = [row for row in rows if re.search(r"(Black|White) +\d:\d\d\s*$", row)]
            assert len(clocks) == 2, "\n".join(rows)
            assert any("▶ Black" in row for row in clocks)  # ann to move
            assert any(re.search(r"a*… \(1500\?\) \(you\)\s*$|a+1 \(1500\?\) \(you\)\s*$", row) for row in rows), "\n".join(rows)
            assert any(re.search(r"b+(…|2) \(1500\?\)\s*$", row) for row in rows), "\n".join(rows)
    finally:
        pump.cancel()
        await bob.close()
        await ann.client.close()


async def test_the_seats_show_the_new_ratings_once_a_rated_game_is_over(configured_server: Callable[..., Any]) -> None:
    ann, bob, pump, table = await _rated(configured_server, ("ann", "bob"))
    try:
        app = OneTable(ann, table)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: ann.table(table).my_turn, "the rated game to start")
            mine, theirs = app.query_one("#seat-bottom", SeatLines), app.query_one("#seat-top", SeatLines)
            assert "ann (1500?) (you)" in mine.plain and "bob (1500?)" in theirs.plain
            await ann.move(table, "d3")
            await bob.move(table, "c3")
            await bob.resign(table)
            await until(pilot, lambda: ann.table(table).rating_changes, "the rating change")
            await pilot.pause()
            assert "ann (1662?) (you)" in mine.plain and "bob (1338?)" in theirs.plain, (mine.plain, theirs.plain)
            assert "ann (1662?) (you)" in screen_text(app)
    finally:
        pump.cancel()
        await bob.close()
        await ann.client.close()
