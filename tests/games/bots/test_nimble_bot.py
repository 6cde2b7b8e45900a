"""Nimble's computer player: perfect play proved against a brute-force solver (issue 11)."""

from __future__ import annotations

import functools
import itertools
import random

import pytest

import games
from games.base import GameError
from games.bots import Budget, chooser
from games.bots.nimble import greedy_chooser, make_chooser, nim_sum, winning_moves
from games.bots.random_chooser import RandomChooser

from .playing import assert_views_rebuild, wins

NIMBLE = games.get("nimble")
BUDGET = Budget(nodes=1)
MAX_SQUARES, MAX_PAWNS = 8, 6


@functools.lru_cache(maxsize=None)
def to_move_wins(board: tuple[int, ...]) -> bool:
    """Brute force: whether the player to move wins ``board`` (no Nim theory, just the rules)."""
    state = NIMBLE.new_state({"board": list(board)})
    return any(not to_move_wins(child.board) for child in state.children())


def small_boards() -> list[tuple[int, ...]]:
    """Every board of 2..8 squares holding 1..6 pawns (6,000-odd positions)."""
    boards = []
    for n in range(2, MAX_SQUARES + 1):
        for pawns in range(1, MAX_PAWNS + 1):
            for squares in itertools.combinations_with_replacement(range(n), pawns):
                board = [0] * n
                for square in squares:
                    board[square] += 1
                boards.append(tuple(board))
    return boards


BOARDS = small_boards()


def test_the_solver_sees_both_kinds_of_position() -> None:
    won = sum(to_move_wins(board) for board in BOARDS)
    assert len(BOARDS) > 5_000 and 0 < won < len(BOARDS)


def test_nim_sum_is_zero_exactly_in_the_lost_positions() -> None:
    for board in BOARDS:
        assert (nim_sum(board) != 0) == to_move_wins(board), board


def test_level_5_wins_every_won_position_it_is_given() -> None:
    """The issue's proof: in every won position the move leaves the opponent a lost one."""
    bot = make_chooser(5)
    for index, board in enumerate(BOARDS):
        state = NIMBLE.new_state({"board": list(board)})
        if state.outcome is not None or not to_move_wins(board):
            continue
        move = bot.choose(state.view(0), BUDGET, random.Random(index))
        assert not to_move_wins(state.play(move).board), (board, move)


def test_every_winning_move_is_listed() -> None:
    for board in BOARDS:
        state = NIMBLE.new_state({"board": list(board)})
        expected = [move for move, child in zip(state.legal_moves(), state.children())
                    if not to_move_wins(child.board)]
        assert sorted(winning_moves(board)) == sorted(expected), board


def test_in_a_lost_position_level_5_steps_one_square() -> None:
    bot = make_chooser(5)
    lost = [board for board in BOARDS if not to_move_wins(board) and any(board[1:])]
    assert lost
    for index, board in enumerate(lost):
        state = NIMBLE.new_state({"board": list(board)})
        move = bot.choose(state.view(0), BUDGET, random.Random(index))
        source, target = map(int, move.split("-"))
        assert source - target == 1, (board, move)


def test_level_5_wins_every_won_game_against_random_play() -> None:
    bot, opponent = make_chooser(5), RandomChooser()
    for seed in range(40):
        start = NIMBLE.new_state({"n": 10, "p": 4}, seed)
        if nim_sum(start.board) == 0:
            continue
        state = start
        while state.outcome is None:
            player = bot if state.to_move == 0 else opponent
            state = state.play(player.choose(state.view(state.to_move), BUDGET, random.Random(seed + state.ply)))
        assert state.outcome.winner == 0, start.board


def test_lower_levels_blunder_and_level_5_never_does() -> None:
    won = [board for board in BOARDS if to_move_wins(board) and len(NIMBLE.new_state({"board": list(board)}).legal_moves()) > 3]
    blunders = {}
    for level in (1, 3, 5):
        bot = make_chooser(level)
        blunders[level] = 0
        for index, board in enumerate(won[:600]):
            state = NIMBLE.new_state({"board": list(board)})
            move = bot.choose(state.view(0), BUDGET, random.Random(index))
            blunders[level] += to_move_wins(state.play(move).board)
    assert blunders[5] == 0
    assert blunders[1] > blunders[3] > 0


def test_level_5_beats_greedy_from_random_starts() -> None:
    results = wins("nimble", {"n": 9, "p": 3}, make_chooser(5), greedy_chooser(), BUDGET, range(12))
    # Level 5 loses only from a lost start against perfect replies; greedy is not perfect.
    assert sum(r == 1 for r in results) >= 10, results


def test_greedy_takes_a_win_at_once() -> None:
    state = NIMBLE.new_state({"board": [3, 0, 0, 0, 1]})
    assert greedy_chooser().choose(state.view(0), BUDGET, random.Random(0)) == "5-1"


def test_registry_and_levels() -> None:
    assert chooser("nimble", 5) is make_chooser(5)
    for level in (0, 6, "5"):
        with pytest.raises(ValueError):
            make_chooser(level)


def test_same_seed_same_view_same_move() -> None:
    state = NIMBLE.new_state({"n": 20, "p": 6}, 7)
    for level in range(1, 6):
        moves = {make_chooser(level).choose(state.view(0), BUDGET, random.Random(99)) for _ in range(5)}
        assert len(moves) == 1


def test_state_from_view_plays_like_the_original() -> None:
    assert assert_views_rebuild("nimble", {"n": 7, "p": 3}, range(15)) > 100
    assert assert_views_rebuild("nimble", {"board": [0, 2]}, range(1)) == 3


def test_state_from_view_of_a_finished_game() -> None:
    state = NIMBLE.new_state({"board": [4, 0]})
    rebuilt = NIMBLE.state_from_view(state.view(None))
    assert rebuilt.outcome == state.outcome and rebuilt.legal_moves() == []


@pytest.mark.parametrize("view, words", [
    ({"game": "othello", "board": [1, 2], "to_move": 0, "ply": 0}, "not a nimble view"),
    ({"game": "nimble", "to_move": 0, "ply": 0}, "needs board"),
    ({"game": "nimble", "board": [1, 2], "to_move": 2, "ply": 0}, "to_move 0 or 1"),
    ({"game": "nimble", "board": "12", "to_move": 0, "ply": 0}, "board"),
    ({"game": "nimble", "board": [1, -2], "to_move": 0, "ply": 0}, "board"),
])
def test_state_from_view_refuses_what_is_not_a_nimble_view(view: dict, words: str) -> None:
    with pytest.raises(GameError, match=words):
        NIMBLE.state_from_view(view)
