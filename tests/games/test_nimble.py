"""Tests of the Nimble engine and renderer (RULES.md "Nimble"; seed 000, part 2)."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.render.nimble import render
from games.base import IllegalMove, InvalidOption
from games.nimble import Nimble, NimbleState

GAME = Nimble()

# The seed's worked game (part 2.2): the start, then each move with the board after it.
SEED_START = [0, 0, 1, 2, 0, 2]
SEED_GAME = [
    ("4-2", [0, 1, 1, 1, 0, 2]),
    ("2-1", [1, 0, 1, 1, 0, 2]),
    ("4-3", [1, 0, 2, 0, 0, 2]),
    ("6-1", [2, 0, 2, 0, 0, 1]),
    ("3-1", [3, 0, 1, 0, 0, 1]),
    ("6-1", [4, 0, 1, 0, 0, 0]),
    ("3-1", [5, 0, 0, 0, 0, 0]),
]


def start(board: list[int]) -> NimbleState:
    return GAME.new_state({"board": board})


def reason(state: NimbleState, move: str) -> str:
    with pytest.raises(IllegalMove) as info:
        state.play(move)
    return info.value.reason


def first_movable_draw(n: int, p: int, seed: str | int) -> tuple[list[int], int]:
    """Replay the documented setup: draw rows from random.Random(seed) until one can move."""
    rng = random.Random(seed)
    draws = 0
    while True:
        draws += 1
        board = [rng.randint(0, p) for _ in range(n)]
        if any(board[1:]):
            return board, draws


# --- metadata ---------------------------------------------------------------


def test_metadata() -> None:
    assert GAME.name == "nimble"
    assert GAME.seats == ("Player 1", "Player 2")
    assert GAME.uses_seed is True
    described = {o["name"]: o for o in GAME.describe()["options"]}
    assert described["n"]["default"] == 6 and (described["n"]["min"], described["n"]["max"]) == (1, 100)
    assert described["p"]["default"] == 3 and (described["p"]["min"], described["p"]["max"]) == (0, 100)
    assert described["board"]["default"] is None and described["board"]["type"] == "list[int]"
    assert GAME.option("board").max_length == 100


# --- the seed's worked game -------------------------------------------------


def test_seed_worked_game_move_by_move() -> None:
    state = start(SEED_START)
    assert state.board == tuple(SEED_START) and state.to_move == 0 and state.ply == 0
    # The seed's player 1 first tries square 2 (empty), then 7 (off the board).
    assert reason(state, "2-1") == "square 2 is empty"
    assert reason(state, "7-1") == "square 7 does not exist (squares 1..6)"
    for ply, (move, board) in enumerate(SEED_GAME, 1):
        assert move in state.legal_moves()
        mover = state.to_move
        state = state.play(move)
        assert list(state.board) == board
        assert state.last_move == move and state.ply == ply
        if ply < len(SEED_GAME):
            assert state.outcome is None and state.to_move == 1 - mover
    # "Winner : 1": player 1 (seat 0) made the last move; player 2 cannot move.
    assert state.outcome is not None and state.outcome.winner == 0
    assert "square 1" in state.outcome.reason
    assert state.to_move is None and state.legal_moves() == []
    assert reason(state, "1-1") == "the game is over"


def test_seed_display_matches_renderer() -> None:
    picture = render(start(SEED_START).view(0), 0)
    lines = picture.splitlines()
    assert lines[0] == " 0 | 0 | 1 | 2 | 0 | 2"
    assert set(lines[1]) == {"-", "+"}
    assert lines[2] == " 1 | 2 | 3 | 4 | 5 | 6"
    assert "Pawns: 5" in picture


# --- setup and options ------------------------------------------------------


@pytest.mark.parametrize("seed", ["abc", "000_1562508aff83c89d", 0, 12345, -7])
def test_random_setup_is_reproducible_from_the_seed(seed: str | int) -> None:
    state = GAME.new_state({}, seed)
    expected, _ = first_movable_draw(6, 3, seed)
    assert list(state.board) == expected
    assert GAME.new_state({}, seed).board == state.board
    assert state.options == {"n": 6, "p": 3, "board": None}


def test_random_setup_respects_n_and_p() -> None:
    for seed in range(50):
        state = GAME.new_state({"n": 10, "p": 7}, seed)
        assert len(state.board) == 10 and all(0 <= c <= 7 for c in state.board)
        assert any(state.board[1:]) and state.outcome is None


def test_random_setup_without_movable_pawn_is_drawn_again() -> None:
    # n=2, p=1: half the first draws have square 2 empty; find seeds that needed a redraw.
    redrawn = [seed for seed in range(40) if first_movable_draw(2, 1, seed)[1] > 1]
    assert redrawn, "no seed needed a redraw; the test would prove nothing"
    for seed in redrawn:
        state = GAME.new_state({"n": 2, "p": 1}, seed)
        assert list(state.board) == first_movable_draw(2, 1, seed)[0]
        assert state.board[1] == 1 and state.outcome is None


def test_random_setup_without_seed_uses_system_randomness() -> None:
    state = GAME.new_state({"n": 5, "p": 2})
    assert len(state.board) == 5 and any(state.board[1:])


@pytest.mark.parametrize(("options", "name"), [({"n": 1}, "n"), ({"p": 0}, "p"), ({"n": 1, "p": 0}, "n")])
def test_random_setup_that_can_never_move_is_refused(options: dict, name: str) -> None:
    with pytest.raises(InvalidOption) as info:
        GAME.new_state(options, "seed")
    assert info.value.option == name
    assert "no pawn can ever move" in str(info.value) or "nothing can move" in str(info.value)


def test_board_option_sets_the_start_and_n() -> None:
    state = start([2, 0, 5])
    assert state.board == (2, 0, 5) and state.n == 3
    assert state.options["n"] == 3 and state.options["board"] == (2, 0, 5)
    assert state.to_move == 0 and state.last_move is None and state.outcome is None


def test_board_option_ignores_p_and_seed() -> None:
    state = GAME.new_state({"board": [0, 250], "p": 0}, "any seed")
    assert state.board == (0, 250)
    assert GAME.new_state({"board": [0, 250]}, "other").board == state.board


def test_board_and_n_must_agree() -> None:
    assert GAME.new_state({"board": [1, 1, 1], "n": 3}).board == (1, 1, 1)
    with pytest.raises(InvalidOption) as info:
        GAME.new_state({"board": [1, 1, 1], "n": 6})
    assert info.value.option == "board" and "3 squares" in str(info.value) and "6" in str(info.value)


@pytest.mark.parametrize("board", [[0], [4], [0, 0], [3, 0, 0, 0], [100] + [0] * 99])
def test_board_with_no_movable_pawn_is_over_at_once(board: list[int]) -> None:
    state = start(board)
    assert state.outcome is not None and state.outcome.winner == 1
    assert state.outcome.reason == "no movable pawn: all pawns are on square 1"
    assert state.to_move is None and state.ply == 0 and state.legal_moves() == []
    assert reason(state, "2-1") == "the game is over"


@pytest.mark.parametrize(
    "options",
    [
        {"n": 0}, {"n": 101}, {"n": "6"}, {"n": 6.0}, {"n": True},
        {"p": -1}, {"p": 101}, {"p": "3"}, {"p": False},
        {"board": []}, {"board": [1] * 101}, {"board": [1, -1]}, {"board": [1, "2"]},
        {"board": "1,2"}, {"board": [1, True]}, {"board": 5},
        {"size": 6}, {"N": 6},
    ],
)
def test_bad_options_are_refused(options: dict) -> None:
    with pytest.raises(InvalidOption):
        GAME.new_state(options, "seed")


def test_null_options_mean_defaults() -> None:
    state = GAME.new_state({"n": None, "p": None, "board": None}, "s")
    assert state.options == {"n": 6, "p": 3, "board": None}
    assert state.board == GAME.new_state({}, "s").board


def test_extreme_sizes() -> None:
    state = GAME.new_state({"n": 100, "p": 100}, 1)
    assert len(state.board) == 100 and all(0 <= c <= 100 for c in state.board)
    assert GAME.new_state({"board": [0] * 99 + [1]}).legal_moves() == [f"100-{j}" for j in range(1, 100)]


# --- moves -------------------------------------------------------------------


def test_legal_moves_list_every_move_in_order() -> None:
    assert start(SEED_START).legal_moves() == [
        "3-1", "3-2",
        "4-1", "4-2", "4-3",
        "6-1", "6-2", "6-3", "6-4", "6-5",
    ]


@pytest.mark.parametrize("text", ["4-2", "4 2", " 4-2 ", "4,2", "4 - 2", "4 , 2", "4:2", "4>2", "04-002", "\t4  2\n"])
def test_forgiving_input_gives_canonical_notation(text: str) -> None:
    state = start(SEED_START).play(text)
    assert state.last_move == "4-2"
    assert state.board == (0, 1, 1, 1, 0, 2)


@pytest.mark.parametrize(
    "text", ["", "4", "4-", "-4-2", "4--2", "4-2-1", "a-b", "four-two", "4.2", "4-2x", "1234567-1"]
)
def test_unparseable_text_names_the_notation(text: str) -> None:
    assert reason(start(SEED_START), text) == "a move is two square numbers, from-to, e.g. 4-2"


def test_non_text_move_is_refused() -> None:
    with pytest.raises(IllegalMove):
        start(SEED_START).play(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("move", "why"),
    [
        ("5-1", "square 5 is empty"),
        ("1-1", "square 1 is empty"),
        ("9-1", "square 9 does not exist (squares 1..6)"),
        ("0-1", "square 0 does not exist (squares 1..6)"),
        ("4-0", "square 0 does not exist (squares 1..6)"),
        ("4-9", "square 9 does not exist (squares 1..6)"),
        ("4-4", "a pawn must move left: 4 is not below 4"),
        ("4-5", "a pawn must move left: 5 is not below 4"),
        ("3-6", "a pawn must move left: 6 is not below 3"),
    ],
)
def test_illegal_moves_name_the_rule(move: str, why: str) -> None:
    assert reason(start(SEED_START), move) == why


def test_pawn_on_square_one_cannot_move() -> None:
    assert reason(start([2, 1]), "1-1") == "a pawn must move left: 1 is not below 1"


def test_move_to_any_lower_square_including_occupied_ones() -> None:
    state = start([3, 0, 2, 1])
    assert state.play("4-3").board == (3, 0, 3, 0)
    assert state.play("4-1").board == (4, 0, 2, 0)
    assert state.play("3-2").board == (3, 1, 1, 1)


def test_player_who_cannot_move_loses() -> None:
    state = start([0, 1]).play("2-1")
    assert state.outcome is not None and state.outcome.winner == 0 and state.to_move is None
    state = start([0, 2]).play("2-1").play("2-1")
    assert state.outcome is not None and state.outcome.winner == 1


# --- immutability and views --------------------------------------------------


def test_playing_does_not_change_the_old_state() -> None:
    state = start(SEED_START)
    moves = state.legal_moves()
    state.play("4-2")
    assert state.board == tuple(SEED_START) and state.ply == 0 and state.to_move == 0
    assert state.last_move is None and state.legal_moves() == moves
    returned = state.legal_moves()
    returned.clear()
    assert state.legal_moves() == moves


def test_state_attributes_cannot_be_set() -> None:
    state = start(SEED_START)
    with pytest.raises(AttributeError):
        state.board = (1, 1)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.to_move = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del state.ply


def test_view_contents_per_seat() -> None:
    state = start(SEED_START).play("4-2")
    mover_view = state.view(1)
    assert mover_view == {
        "board": [0, 1, 1, 1, 0, 2],
        "pawns": 5,
        "movable": 5,
        "last_move": "4-2",
        "game": "nimble",
        "ply": 1,
        "to_move": 1,
        "outcome": None,
        "legal_moves": state.legal_moves(),
    }
    other = state.view(0)
    assert "legal_moves" not in other and other["board"] == mover_view["board"]
    assert state.view(None) == other
    msgpack.packb(mover_view)
    with pytest.raises(ValueError):
        state.view(2)


def test_view_of_a_finished_game() -> None:
    state = start([0, 1]).play("2-1")
    view = state.view(0)
    assert view["outcome"] == {"winner": 0, "reason": "no movable pawn: all pawns are on square 1", "score": None}
    assert view["movable"] == 0 and view["pawns"] == 1 and "legal_moves" not in view
    msgpack.packb(view)


def test_render_long_rows_wraps_and_keeps_numbers() -> None:
    state = start([7] * 100)
    picture = render(state.view(None), None)
    assert all(len(line) <= 78 for line in picture.splitlines())
    numbers = [int(tok) for line in picture.splitlines()[2::4] for tok in line.split("|") if tok.strip().isdigit()]
    assert numbers == list(range(1, 101))
    assert "Pawns: 700, of which 693 can still move" in picture


# --- properties ----------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_random_playouts_keep_the_rules(board: list[int], rnd: random.Random) -> None:
    state = start(board)
    total = sum(board)
    budget = sum(i * c for i, c in enumerate(board))  # each move lowers this by at least 1
    while state.outcome is None:
        moves = state.legal_moves()
        expected = sum(i for i in range(1, len(board)) if state.board[i]) if len(board) > 1 else 0
        assert len(moves) == expected > 0
        move = rnd.choice(moves)
        mover = state.to_move
        nxt = state.play(move)
        i, j = map(int, move.split("-"))
        assert j < i and nxt.board[i - 1] == state.board[i - 1] - 1 and nxt.board[j - 1] == state.board[j - 1] + 1
        assert sum(nxt.board) == total and nxt.ply == state.ply + 1
        if nxt.outcome is not None:
            assert nxt.outcome.winner == mover
        state = nxt
        budget -= 1
        assert budget >= 0
    assert sum(state.board[1:]) == 0
