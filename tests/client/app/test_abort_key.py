"""The table pane's Abort key and button: offered only before our own first move; an aborted game's banner."""

from __future__ import annotations

from typing import Any, Callable

from textual.widgets import Button

from client.app.archive import Replay
from client.app.table_text import result_text
from games.record import GameRecord, RecordedMove, replay
from client.session import ClientSession
from protocol import messages as m

from .test_table_view import SIZE, OneTable, _against_bob, banner, until
from .test_table_view import ann  # noqa: F401  (the fixture: ann's session model)


async def test_abort_is_offered_before_our_first_move_and_aborts_the_game(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "othello")
    app = OneTable(ann, table.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ann.table(table.id).running, "the start")
        assert app.query_one("#abort", Button).display and not app.query_one("#takeback", Button).display
        assert "a" in app.active_bindings and app.query_one("#pane").check_action("abort", ()) is True
        await pilot.press("a")
        await until(pilot, lambda: ann.table(table.id).outcome is not None, "the abort")
        assert banner(app).startswith("Game aborted, Black aborted the game: no result, not rated")
        assert not app.query_one("#abort", Button).display and app.query_one("#pane").check_action("abort", ()) is False
    over = await bob.next_event(m.GameOver, timeout_s=5.0)
    assert over.outcome["aborted"] is True


async def test_abort_is_hidden_once_we_have_moved(ann: ClientSession, connect: Callable[..., Any]) -> None:
    table, bob = await _against_bob(ann, connect, "othello")
    app = OneTable(ann, table.id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: ann.table(table.id).running, "the start")
        await ann.move(table.id, "d3")
        await until(pilot, lambda: ann.table(table.id).moves == ["d3"], "our move")
        assert not app.query_one("#abort", Button).display and app.query_one("#takeback", Button).display
        assert app.query_one("#pane").check_action("abort", ()) is False
        await pilot.press("a")  # does nothing: the key is not offered
        await pilot.pause()
        assert ann.table(table.id).running
    await bob.abort(table.id)  # bob has not moved: he still may
    assert (await bob.next_event(m.GameOver, timeout_s=5.0)).outcome["reason"] == "White aborted the game"


def test_the_banner_of_an_aborted_game_names_no_winner() -> None:
    outcome = {"winner": None, "reason": "White did not play a first move within 30 s", "score": None, "aborted": True}
    text = result_text(outcome, 0, ("Black", "White"), ["ann", "bob"])
    assert text == "Game aborted, White did not play a first move within 30 s: no result, not rated"


def test_the_archive_replay_of_an_aborted_game_says_aborted() -> None:
    result = {"winner": None, "reason": "White aborted the game", "score": None, "aborted": True}
    record = GameRecord("othello", {"size": 8}, players=("ann", "bob"), result=result, moves=(RecordedMove(1, 0, "d3"),))
    shown = Replay(1, record, replay(record), index=1)
    assert "Result: Aborted — White aborted the game" in shown.status()
