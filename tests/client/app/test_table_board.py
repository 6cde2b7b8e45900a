"""The table pane's board and seats at small terminals, against a real in-process server.

What is checked is what the screen shows (the compositor's rows), so a line
cut off by a panel or a widget that did not grow fails here.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

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
