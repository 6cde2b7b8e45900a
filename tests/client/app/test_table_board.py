"""The table pane's board and seats at small terminals, against a real in-process server.

What is checked is what the screen shows (the compositor's rows), so a line
cut off by a panel or a widget that did not grow fails here.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from rich.console import Console

from client.app.boards import BoardWidget
from client.session import ClientSession

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
