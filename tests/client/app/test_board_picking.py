"""Picking moves on a board widget by mouse and keys: only ever a move of the view's legal_moves."""

from __future__ import annotations

from typing import Any

import games
from textual.app import App, ComposeResult

from client.app.boards import BoardWidget, make_board


class Picking(App[None]):
    """One board; remembers the moves it posted."""

    def __init__(self, game: str, moves: list[str], seat: int, options: dict[str, Any] | None = None) -> None:
        super().__init__()
        state = games.get(game).new_state(options)
        for move in moves:
            state = state.play(move)
        self.view = state.view(seat)
        self.seat = seat
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield make_board(self.view, self.seat)

    def on_board_widget_move_chosen(self, event: BoardWidget.MoveChosen) -> None:
        self.chosen.append(event.move)


async def click(pilot: Any, board: BoardWidget, name: str) -> None:
    square = next(s for s in board.squares() if s.name == name)
    await pilot.click(board, offset=(board.content_region.x - board.region.x + square.centre, square.row))
    await pilot.pause()


async def test_a_morris_mill_takes_one_more_click_on_the_counter_to_remove() -> None:
    app = Picking("morris", ["d1", "a1", "d3", "a7"], 0)
    async with app.run_test(size=(60, 24)) as pilot:
        board = app.query_one(BoardWidget)
        await click(pilot, board, "d2")  # closes the mill d1-d2-d3
        assert app.chosen == [] and board.targets() == {"a1", "a7"}
        assert "Mill! Remove one of Player 2's counters (O): pick it" in str(board.render())
        await click(pilot, board, "a7")
        assert app.chosen == ["d2xa7"] and board.path == []


async def test_an_othello_placement_is_one_click_and_a_square_without_a_move_does_nothing() -> None:
    app = Picking("othello", [], 0)
    async with app.run_test(size=(40, 16)) as pilot:
        board = app.query_one(BoardWidget)
        await click(pilot, board, "a1")
        assert app.chosen == [] and board.path == []
        await click(pilot, board, "f5")
        assert app.chosen == ["f5"]


async def test_escape_drops_a_selection_and_another_piece_can_be_picked_instead() -> None:
    app = Picking("tactego", [], 0, {"rows": 4, "cols": 4, "pieces": "5 3\nF 1\n", "hidden": False})
    async with app.run_test(size=(60, 16)) as pilot:
        board = app.query_one(BoardWidget)
        start, other = sorted({board.path_of(move)[0] for move in board.legal_moves})[:2]
        await click(pilot, board, start)
        assert board.path == [start]
        await pilot.press("escape")
        assert board.path == []
        await click(pilot, board, start)
        await click(pilot, board, other)  # not a destination of the first: it is picked instead
        assert board.path == [other] and app.chosen == []
        target = sorted(board.targets())[0]
        await click(pilot, board, target)
        assert app.chosen == [f"{other}-{target}"] and app.chosen[0] in board.legal_moves


OTHELLO_TO_A_PASS = [
    "c2", "d2", "e4", "d5", "e6", "f5", "f4", "d6", "e5", "f3", "c6", "b5", "c5", "b2", "e3", "e2",
    "a1", "a2", "b4", "a4", "e1", "b6", "a5", "f6", "b3", "f1", "f2", "a6", "d1", "a3",
]  # fmt: skip
"""A 6x6 Othello game in which Black then cannot place a disc."""


async def test_othello_says_who_must_pass_and_who_passed() -> None:
    app = Picking("othello", OTHELLO_TO_A_PASS, 0, {"size": 6})
    async with app.run_test(size=(40, 16)):
        board = app.query_one(BoardWidget)
        assert "Black cannot place a disc and must pass" in str(board.render())
        passed = games.get("othello").new_state({"size": 6})
        for move in [*OTHELLO_TO_A_PASS, "pass"]:
            passed = passed.play(move)
        board.show(passed.view(1), 1)
        assert "Black could not place a disc and passed" in str(board.render())


class Mono(Picking):
    """An app asking for boards without colour, as ``parlour play --mono`` does."""

    mono = True


async def test_without_colour_a_selection_and_its_targets_are_bracketed() -> None:
    app = Mono("hexapawn", ["b1-b2"], 1)
    async with app.run_test(size=(30, 10)) as pilot:
        board = app.query_one(BoardWidget)
        await click(pilot, board, "a3")
        lines = str(board.render()).splitlines()
        assert lines[3].startswith(" 3 [b]") and lines[2].startswith(" 2  · (w)")  # a3 picked; a2 free, b2 to take


class Empty(App[None]):
    """An app to mount boards in, one after another."""


async def test_every_legal_move_of_every_game_is_picked_by_clicking_its_squares_in_order() -> None:
    positions = [
        ("othello", {}, ["d3", "c3", "c4"]), ("nimble", {"board": [0, 3, 1, 2, 0, 2]}, ["4-2"]),
        ("mingmang", {"size": 6}, ["a2-b2", "c1-c2"]), ("morris", {}, ["d1", "a1", "d3", "a7"]),
        ("morris", {"flying": True, "position": MORRIS_FLYING}, []), ("tactego", {"rows": 4, "cols": 4, "pieces": "5 3\nF 1\n"}, ["a1-b2"]),
        ("hexapawn", {"size": 4}, ["b1-b2"]),
    ]  # fmt: skip
    app = Empty()
    tried = 0
    async with app.run_test(size=(80, 24)):
        for game, options, moves in positions:
            state = games.get(game).new_state(options, seed="picking")
            for move in moves:
                state = state.play(move)
            board = make_board(state.view(state.to_move), state.to_move)
            await app.mount(board)
            assert board.legal_moves == state.legal_moves()
            on_screen = {square.name for square in board.squares()}
            for move in state.legal_moves():
                assert set(board.path_of(move)) <= on_screen, (game, move)  # every step is a square one can click
                picked = [board.pick(square) for square in board.path_of(move)]
                assert picked[-1] == move and picked[:-1] == [None] * (len(picked) - 1), (game, move)
                tried += 1
            await board.remove()
    assert tried > 100


MORRIS_FLYING = "1, 0, 2, 0, 1, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 2\n0\n0\n1\n"
"""Player 1 has three counters left (a7, d6, c3) and flies."""
