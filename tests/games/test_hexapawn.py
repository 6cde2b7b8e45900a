"""Tests of the Hexapawn engine and renderer (RULES.md "Hexapawn"; seed 004, miniChess)."""

from __future__ import annotations

import functools
import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.render.hexapawn import render
from games.base import IllegalMove, InvalidOption
from games.hexapawn import BLACK, WHITE, Hexapawn, HexapawnState

GAME = Hexapawn()
SEED_BOARD = [[0, 1, 1], [1, 0, 0], [2, 2, 2]]


def reason(state: HexapawnState, move: str) -> str:
    with pytest.raises(IllegalMove) as info:
        state.play(move)
    return info.value.reason


# --- metadata, options, start -------------------------------------------------


def test_metadata() -> None:
    assert GAME.name == "hexapawn"
    assert GAME.seats == ("White", "Black")
    assert GAME.uses_seed is False
    (size,) = GAME.describe()["options"]
    assert (size["name"], size["default"], size["min"], size["max"]) == ("size", 3, 3, 8)


def test_default_start() -> None:
    state = GAME.new_state()
    assert state.to_board() == [[1, 1, 1], [0, 0, 0], [2, 2, 2]]
    assert state.size == 3 and state.to_move == WHITE and state.ply == 0
    assert state.outcome is None and state.last_move is None
    assert state.options == {"size": 3}
    assert state.legal_moves() == ["a1-a2", "b1-b2", "c1-c2"]


@pytest.mark.parametrize("size", range(3, 9))
def test_start_for_every_size(size: int) -> None:
    board = GAME.new_state({"size": size}).to_board()
    assert board[0] == [1] * size and board[-1] == [2] * size
    assert all(row == [0] * size for row in board[1:-1]) and len(board) == size


@pytest.mark.parametrize(
    "options", [{"size": 2}, {"size": 9}, {"size": "3"}, {"size": 3.0}, {"size": True}, {"n": 3}, {"Size": 3}]
)
def test_bad_options_are_refused(options: dict) -> None:
    with pytest.raises(InvalidOption):
        GAME.new_state(options)


def test_null_size_means_default() -> None:
    assert GAME.new_state({"size": None}).size == 3


# --- the seed's move_maker example ---------------------------------------------


def test_seed_move_maker_example() -> None:
    state = HexapawnState.from_board(SEED_BOARD, BLACK)
    assert state.to_board() == SEED_BOARD and state.to_move == BLACK
    successors = state.successors()
    assert len(successors) == 3
    boards = sorted(s.to_board() for s in successors)
    assert boards == sorted(
        [
            [[0, 1, 1], [2, 0, 0], [2, 0, 2]],
            [[0, 1, 1], [1, 2, 0], [2, 0, 2]],
            [[0, 1, 1], [1, 0, 2], [2, 2, 0]],
        ]
    )
    assert [s.last_move for s in successors] == state.legal_moves() == ["b3-b2", "b3-a2", "c3-c2"]
    for nxt in successors:
        assert nxt.to_move == WHITE and nxt.ply == 1 and nxt.outcome is None
        assert nxt.to_board() == state.play(nxt.last_move).to_board()
    assert state.to_board() == SEED_BOARD


def test_seed_board_white_to_move() -> None:
    state = HexapawnState.from_board(SEED_BOARD)
    assert state.legal_moves() == ["b1-b2", "c1-c2", "a2-b3"]


# --- from_board ----------------------------------------------------------------


@pytest.mark.parametrize(
    "board",
    [
        [[0, 1], [2, 0]],
        [[0] * 9 for _ in range(9)],
        [[0, 1, 1], [1, 0], [2, 2, 2]],
        [[0, 1, 1], [1, 0, 0, 0], [2, 2, 2]],
        [[0, 1, 1], [1, 3, 0], [2, 2, 2]],
        [[0, 1, 1], [1, True, 0], [2, 2, 2]],
        [[0, 1, 1], [1, "0", 0], [2, 2, 2]],
        "011/100/222",
        [[0, 1, 1], [1, 0, 0]],
    ],
)
def test_from_board_refuses_malformed_boards(board: object) -> None:
    with pytest.raises(ValueError):
        HexapawnState.from_board(board)  # type: ignore[arg-type]


@pytest.mark.parametrize("to_move", [2, -1, True, "1", None])
def test_from_board_refuses_bad_seats(to_move: object) -> None:
    with pytest.raises(ValueError):
        HexapawnState.from_board(SEED_BOARD, to_move)  # type: ignore[arg-type]


def test_from_board_refuses_a_mover_already_on_the_far_row() -> None:
    with pytest.raises(ValueError, match="far row"):
        HexapawnState.from_board([[0, 0, 0], [0, 2, 0], [1, 0, 2]], WHITE)


def test_from_board_judges_a_finished_position() -> None:
    won = HexapawnState.from_board([[0, 0, 0], [0, 2, 0], [1, 0, 2]], BLACK)
    assert won.outcome is not None and won.outcome.winner == WHITE and "far row" in won.outcome.reason
    assert won.to_move is None and won.successors() == [] and won.legal_moves() == []
    stuck = HexapawnState.from_board([[1, 0, 0], [2, 0, 0], [0, 0, 0]], WHITE)
    assert stuck.outcome is not None and stuck.outcome.winner == BLACK
    assert stuck.outcome.reason == "White cannot move"
    bare = HexapawnState.from_board([[0, 0, 0], [0, 0, 0], [0, 2, 0]], WHITE)
    assert bare.outcome is not None and bare.outcome.reason == "White has no pawns left"


def test_from_board_larger_sizes_and_ply() -> None:
    board = [[1, 1, 0, 1], [0, 0, 1, 0], [0, 2, 0, 0], [2, 0, 2, 2]]
    state = HexapawnState.from_board(board, WHITE, ply=6)
    assert state.size == 4 and state.ply == 6 and state.options == {"size": 4}
    assert state.legal_moves() == ["a1-a2", "b1-b2", "d1-d2", "c2-c3", "c2-b3"]
    assert state.play("c2xb3").ply == 7


# --- moves and notation --------------------------------------------------------


@pytest.mark.parametrize("text", ["b1-b2", "B1-B2", "b1 b2", "b1b2", " b1 - b2 ", "b1:b2", "b1xb2", "\tB1  b2\n"])
def test_forgiving_input_gives_canonical_straight_move(text: str) -> None:
    state = GAME.new_state().play(text)
    assert state.last_move == "b1-b2"
    assert state.to_board() == [[1, 0, 1], [0, 1, 0], [2, 2, 2]]


@pytest.mark.parametrize("text", ["a2-b3", "a2xb3", "A2XB3", "a2 x b3", "a2b3", "A2:b3"])
def test_forgiving_input_gives_canonical_capture(text: str) -> None:
    state = HexapawnState.from_board(SEED_BOARD).play(text)
    assert state.last_move == "a2-b3"
    assert state.to_board() == [[0, 1, 1], [0, 0, 0], [2, 1, 2]]


@pytest.mark.parametrize("text", ["", "b1", "b1-", "b-b2", "1-2", "b1--b2", "b1-b2-b3", "pass", "b1_b2", "bb1-b2"])
def test_unparseable_text_names_the_notation(text: str) -> None:
    assert reason(GAME.new_state(), text) == "a move is two squares, from-to, e.g. b1-b2 (a capture a1-b2, or a1xb2)"


def test_non_text_move_is_refused() -> None:
    with pytest.raises(IllegalMove):
        GAME.new_state().play(("b1", "b2"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("to_move", "move", "why"),
    [
        (WHITE, "d1-d2", "square d1 does not exist (columns a-c, rows 1-3)"),
        (WHITE, "b1-b4", "square b4 does not exist (columns a-c, rows 1-3)"),
        (WHITE, "b0-b1", "square b0 does not exist (columns a-c, rows 1-3)"),
        (WHITE, "a1-a2", "square a1 is empty"),
        (WHITE, "b3-b2", "the pawn on b3 is Black's; White is to move"),
        (WHITE, "b1-b3", "a White pawn moves one row forward, to a higher row number: b3 is not one row ahead of b1"),
        (WHITE, "a2-a1", "a White pawn moves one row forward, to a higher row number: a1 is not one row ahead of a2"),
        (WHITE, "b1-c1", "a White pawn moves one row forward, to a higher row number: c1 is not one row ahead of b1"),
        (WHITE, "a2-a3", "a3 is occupied: a pawn moves straight ahead only to an empty square"),
        (WHITE, "b1-a2", "a2 holds a White pawn: a pawn captures only an enemy pawn"),
        (WHITE, "c1-b2", "b2 is empty: a pawn moves diagonally only to capture"),
        (BLACK, "a2-a3", "the pawn on a2 is White's; Black is to move"),
        (BLACK, "a3-a2", "a2 is occupied: a pawn moves straight ahead only to an empty square"),
        (BLACK, "b3-c2", "c2 is empty: a pawn moves diagonally only to capture"),
        (BLACK, "b3-b1", "a Black pawn moves one row forward, to a lower row number: b1 is not one row ahead of b3"),
        (BLACK, "a3-a4", "square a4 does not exist (columns a-c, rows 1-3)"),
    ],
)
def test_illegal_moves_name_the_rule(to_move: int, move: str, why: str) -> None:
    assert reason(HexapawnState.from_board(SEED_BOARD, to_move), move) == why


def test_not_diagonally_ahead() -> None:
    state = GAME.new_state({"size": 4})
    assert reason(state, "a1-c2") == "c2 is not straight or diagonally ahead of a1"


def test_x_is_only_a_separator_for_a_straight_move() -> None:
    assert GAME.new_state().play("a1xa2").last_move == "a1-a2"


# --- winning, in RULES.md order ------------------------------------------------


def test_reaching_the_far_row_wins() -> None:
    state = HexapawnState.from_board([[1, 0, 0], [0, 1, 0], [2, 0, 2]], WHITE).play("b2-b3")
    assert state.outcome is not None and state.outcome.winner == WHITE
    assert state.outcome.reason == "a White pawn reached the far row"
    assert state.to_move is None and state.legal_moves() == []
    black = HexapawnState.from_board([[1, 0, 1], [0, 2, 0], [0, 0, 0]], BLACK).play("b2-b1")
    assert black.outcome is not None and black.outcome.winner == BLACK
    assert black.outcome.reason == "a Black pawn reached the far row"


def test_far_row_is_checked_before_no_pawns() -> None:
    # The capture of Black's last pawn lands on White's far row: the far row is named.
    state = HexapawnState.from_board([[0, 0, 0], [1, 0, 0], [0, 2, 0]], WHITE).play("a2xb3")
    assert state.outcome is not None and state.outcome.winner == WHITE
    assert state.outcome.reason == "a White pawn reached the far row"


def test_capturing_every_enemy_pawn_wins() -> None:
    state = HexapawnState.from_board([[1, 0, 0], [0, 2, 0], [0, 0, 0]], WHITE).play("a1-b2")
    assert state.outcome is not None and state.outcome.winner == WHITE
    assert state.outcome.reason == "Black has no pawns left"


def test_no_pawns_is_checked_before_cannot_move() -> None:
    # 4x4: Black's last pawn is captured away from the far row; Black also cannot move.
    board = [[0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0]]
    state = HexapawnState.from_board(board, WHITE).play("a2-b3")
    assert state.outcome is not None and state.outcome.reason == "Black has no pawns left"


def test_opponent_who_cannot_move_loses() -> None:
    state = HexapawnState.from_board([[1, 0, 0], [0, 0, 0], [2, 0, 0]], WHITE).play("a1-a2")
    assert state.outcome is not None and state.outcome.winner == WHITE
    assert state.outcome.reason == "Black cannot move"
    assert state.to_move is None
    assert reason(state, "a3-b2") == "the game is over"


def test_three_by_three_is_a_win_for_black() -> None:
    """The known solved value of Hexapawn (Gardner, 1962): the second player wins."""

    @functools.lru_cache(maxsize=None)
    def winner(board: tuple[tuple[int, ...], ...], to_move: int) -> int:
        state = HexapawnState.from_board([list(row) for row in board], to_move)
        if state.outcome is not None:
            return state.outcome.winner
        results = {winner(tuple(map(tuple, s.to_board())), 1 - to_move) for s in state.successors()}
        return to_move if to_move in results else 1 - to_move

    start = tuple(map(tuple, GAME.new_state().to_board()))
    assert winner(start, WHITE) == BLACK


# --- immutability and views ----------------------------------------------------


def test_playing_does_not_change_the_old_state() -> None:
    state = GAME.new_state()
    moves = state.legal_moves()
    state.play("b1-b2")
    state.successors()
    assert state.to_board() == [[1, 1, 1], [0, 0, 0], [2, 2, 2]]
    assert state.ply == 0 and state.to_move == WHITE and state.last_move is None
    assert state.legal_moves() == moves
    state.legal_moves().clear()
    state.to_board()[0][0] = 2
    assert state.legal_moves() == moves and state.to_board()[0][0] == 1


def test_state_attributes_cannot_be_set() -> None:
    state = GAME.new_state()
    with pytest.raises(AttributeError):
        state.to_move = BLACK  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state._board = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del state.size


def test_view_contents_per_seat() -> None:
    state = GAME.new_state().play("b1-b2")
    mover = state.view(BLACK)
    assert mover == {
        "size": 3,
        "board": [[1, 0, 1], [0, 1, 0], [2, 2, 2]],
        "pawns": [3, 3],
        "last_move": "b1-b2",
        "game": "hexapawn",
        "ply": 1,
        "to_move": BLACK,
        "outcome": None,
        "legal_moves": ["a3-a2", "a3-b2", "c3-c2", "c3-b2"],
    }
    other = state.view(WHITE)
    assert "legal_moves" not in other and other["board"] == mover["board"]
    assert state.view(None) == other
    msgpack.packb(mover)
    with pytest.raises(ValueError):
        state.view(3)


def test_view_of_a_finished_game() -> None:
    state = HexapawnState.from_board([[1, 0, 0], [0, 2, 0], [0, 0, 0]], WHITE).play("a1-b2")
    view = state.view(WHITE)
    assert view["outcome"] == {"winner": WHITE, "reason": "Black has no pawns left", "score": None}
    assert view["pawns"] == [1, 0] and view["to_move"] is None and "legal_moves" not in view
    msgpack.packb(view)


def test_render_shows_coordinates_and_pawns() -> None:
    picture = render(HexapawnState.from_board(SEED_BOARD, BLACK).view(None), None)
    lines = picture.splitlines()
    assert lines[0].split() == ["a", "b", "c"] and lines[4].split() == ["a", "b", "c"]
    assert lines[1].split() == ["1", "-", "w", "w", "1"]
    assert lines[2].split() == ["2", "w", "-", "-", "2"]
    assert lines[3].split() == ["3", "b", "b", "b", "3"]
    assert "White pawns: 3" in picture and "Black pawns: 3" in picture


def test_render_largest_board() -> None:
    picture = render(GAME.new_state({"size": 8}).view(WHITE), WHITE)
    lines = picture.splitlines()
    assert lines[0].split() == list("abcdefgh")
    assert lines[8].split() == ["8"] + ["b"] * 8 + ["8"]


# --- properties ----------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(st.integers(3, 8), st.randoms(use_true_random=False))
def test_random_playouts_keep_the_rules(size: int, rnd: random.Random) -> None:
    state = GAME.new_state({"size": size})
    while state.outcome is None:
        moves = state.legal_moves()
        successors = state.successors()
        assert moves and [s.last_move for s in successors] == moves
        move = rnd.choice(moves)
        mover = state.to_move
        nxt = state.play(move)
        assert nxt.to_board() == successors[moves.index(move)].to_board()
        before, after = state.pawn_counts(), nxt.pawn_counts()
        assert after[mover] == before[mover] and after[1 - mover] in (before[1 - mover], before[1 - mover] - 1)
        assert nxt.ply == state.ply + 1
        if nxt.outcome is not None:
            assert nxt.outcome.winner == mover
        else:
            assert nxt.to_move == 1 - mover
        state = nxt
        # each move advances one pawn one row; no pawn can advance more than size-1 rows
        assert state.ply <= 2 * size * (size - 1)
