"""Snapshots pinning each game's board as drawn (pytest-textual-snapshot).

Each view is built by the real engine: the game's starting position and a
few moves, seen from one seat. Update the SVGs after a deliberate change of
the drawing with ``pytest tests/client/app/test_board_snapshots.py --snapshot-update``
and look at them before committing.
"""

from __future__ import annotations

from typing import Any

import games
from textual.app import App, ComposeResult

from client.app.boards import BoardWidget, make_board

TACTEGO_TO_A_COMBAT = [
    "g2-f3", "h7-g6", "a2-b3", "a7-b6", "a1-a2", "e7-e6", "h1-g2", "a8-a7", "c2-d3", "g6-f5", "d2-e3",
    "e8-e7", "e3-e4", "e6-e5", "d3-d4", "f7-e6", "b2-a3", "d7-d6", "d4-c5", "f8-f7", "e4-e5",
]  # fmt: skip
"""Red's 9 takes Blue's 6 on e5 (the seed ``demo``)."""


def view(game: str, moves: list[str], seat: int | None, options: dict[str, Any] | None = None, seed: str | None = None) -> dict[str, Any]:
    """The view ``seat`` has after ``moves`` from the start of ``game``."""
    state = games.get(game).new_state(options, seed=seed)
    for move in moves:
        state = state.play(move)
    return state.view(seat)


class BoardApp(App[None]):
    """One board and nothing else; ``picks`` are squares picked on it before the picture is taken."""

    def __init__(self, board_view: dict[str, Any], seat: int | None, *, picks: tuple[str, ...] = (), last_move: str | None = None, **style: Any) -> None:
        super().__init__()
        self.board_view, self.seat, self.picks, self.last, self.style = board_view, seat, picks, last_move, style

    def compose(self) -> ComposeResult:
        yield make_board(self.board_view, self.seat, last_move=self.last, **self.style)

    def on_mount(self) -> None:
        board = self.query_one(BoardWidget)
        for square in self.picks:
            board.pick(square)


def test_othello_shows_where_a_disc_may_go(snap_compare: Any) -> None:
    assert snap_compare(BoardApp(view("othello", ["d3", "c3"], 0), 0), terminal_size=(40, 14))


def test_othello_in_monochrome_marks_without_colour(snap_compare: Any) -> None:
    app = BoardApp(view("othello", ["d3", "c3"], 0), 0, mono=True)
    assert snap_compare(app, terminal_size=(40, 14))


def test_hexapawn_from_black_with_a_pawn_selected(snap_compare: Any) -> None:
    assert snap_compare(BoardApp(view("hexapawn", ["b1-b2"], 1), 1, picks=("a3",)), terminal_size=(30, 8))


def test_hexapawn_is_turned_for_white(snap_compare: Any) -> None:
    assert snap_compare(BoardApp(view("hexapawn", ["b1-b2", "a3-a2"], 0), 0), terminal_size=(30, 8))


def test_mingmang_is_turned_for_black_and_marks_captures(snap_compare: Any) -> None:
    board = view("mingmang", ["a2-b2", "c1-c2", "d6-d2"], 1, {"size": 6})  # d6-d2 takes c2
    assert snap_compare(BoardApp(board, 1, picks=("b1",)), terminal_size=(40, 12))


def test_morris_asks_which_counter_to_remove_after_a_mill(snap_compare: Any) -> None:
    board = view("morris", ["d1", "a1", "d3", "a7"], 0)
    assert snap_compare(BoardApp(board, 0, picks=("d2",)), terminal_size=(44, 20))


def test_morris_compact_fits_sixty_by_twenty(snap_compare: Any) -> None:
    board = view("morris", ["d1", "a1", "d3", "a7"], 0)
    assert snap_compare(BoardApp(board, 0, picks=("d2",), compact=True), terminal_size=(60, 20))


def test_nimble_with_a_pile_selected(snap_compare: Any) -> None:
    board = view("nimble", ["4-2"], 1, {"board": [0, 0, 1, 2, 0, 2]})
    assert snap_compare(BoardApp(board, 1, picks=("6",)), terminal_size=(40, 8))


def test_tactego_from_red_turned_with_blue_hidden(snap_compare: Any) -> None:
    board = view("tactego", ["b2-c3"], 0, seed="demo")
    assert snap_compare(BoardApp(board, 0, last_move="b2-c3"), terminal_size=(52, 16))


def test_tactego_hidden_pieces_from_blue_after_a_combat(snap_compare: Any) -> None:
    board = view("tactego", TACTEGO_TO_A_COMBAT, 1, seed="demo")
    assert snap_compare(BoardApp(board, 1, last_move=TACTEGO_TO_A_COMBAT[-1], picks=("d6",)), terminal_size=(52, 17))
