"""Tactego's public move facts and determinization: ``has_moved``, ``unseen_ranks``, ``Tactego.sample_state``."""

from __future__ import annotations

import collections
import copy
import random
from typing import Any

import pytest

import games
from games.base import GameError
from games.tactego import FLAG, TactegoState, unseen_ranks

GAME = games.get("tactego")
ARMY = ["10", "9", "8", "8", "7", "7", "7", "6", "6", "6", "6", "5", "5", "5", "5", "F"]

OPTION_SETS = [
    {"max_plies": 200},
    {"rows": 5, "cols": 6, "pieces": "4 2\n2 3\nF 2\n", "max_plies": 120},
    {"rows": 6, "cols": 4, "hidden": False, "pieces": "3 2\n1 2\nF 1", "max_plies": 120},
]


def playout(options: dict[str, Any], seed: int) -> list[TactegoState]:
    """Every state of a game of random moves."""
    rng = random.Random(seed)
    state = GAME.new_state(options, f"sampling-{seed}")
    states = [state]
    while state.outcome is None:
        state = state.play(rng.choice(state.legal_moves()))
        states.append(state)
    return states


def hidden_squares(view: dict[str, Any], seat: int) -> list[str]:
    cols = view["cols"]
    return [f"{chr(ord('a') + c)}{r + 1}" for r, row in enumerate(view["board"]) for c, cell in enumerate(row)
            if cell is not None and cell[0] != seat and cell[1] == "?"]


def rank_at(state: TactegoState, square: str) -> str:
    cols = state.options["cols"]
    col, row = ord(square[0]) - ord("a"), int(square[1:]) - 1
    piece = state.board[row * cols + col]
    assert piece is not None
    return piece.rank


# --------------------------------------------------------------------------
# has_moved and max_plies in the view
# --------------------------------------------------------------------------


def test_has_moved_follows_each_piece_that_left_its_setup_square() -> None:
    state = GAME.new_state({"max_plies": 40}, "demo")
    assert state.view(0)["has_moved"] == [] and state.view(0)["max_plies"] == 40
    after = state.play("b2-b3")
    assert after.view(0)["has_moved"] == after.view(1)["has_moved"] == after.view(None)["has_moved"] == ["b3"]
    after = after.play(after.legal_moves()[0]).play("b3-b4")
    assert "b4" in after.view(1)["has_moved"] and "b3" not in after.view(1)["has_moved"]


def test_a_defender_keeps_its_moved_mark_and_a_winning_attacker_gets_one() -> None:
    defended = 0
    states = playout({"max_plies": 300}, 3)
    for before, state in zip(states, states[1:]):
        combat = state.view(None)["last_combat"]
        if combat is None:
            continue
        square = combat["square"]
        if combat["winner"] == combat["attacker_seat"]:
            assert square in state.view(None)["has_moved"]
        else:
            defended += 1
            assert (square in state.view(None)["has_moved"]) == (square in before.view(None)["has_moved"])
    assert defended > 0


# --------------------------------------------------------------------------
# unseen_ranks
# --------------------------------------------------------------------------


def test_unseen_ranks_at_the_start_are_the_whole_army() -> None:
    state = GAME.new_state({}, "demo")
    assert unseen_ranks(state.view(0), 0) == unseen_ranks(state.view(1), 1) == ARMY


def test_unseen_ranks_drop_what_combats_revealed() -> None:
    for state in playout({"max_plies": 300}, 5):
        for seat in (0, 1):
            view = state.view(seat)
            unseen = unseen_ranks(view, seat)
            shown = [cell[1] for row in view["board"] for cell in row
                     if cell is not None and cell[0] != seat and cell[1] != "?"]
            assert sorted(unseen + shown + view["lost"][1 - seat]) == sorted(ARMY)
            assert len(unseen) == len(hidden_squares(view, seat))


def test_unseen_ranks_refuse_a_view_that_does_not_add_up() -> None:
    view = GAME.new_state({}, "demo").view(0)
    with pytest.raises(GameError, match="seat 1's view"):
        unseen_ranks(view, 1)
    view["lost"][1].append("10")  # Blue lost a 10 but still has 16 pieces
    with pytest.raises(GameError, match="does not add up"):
        unseen_ranks(view, 0)
    view["lost"][1].append("10")
    with pytest.raises(GameError, match="more '10' pieces"):
        unseen_ranks(view, 0)
    with pytest.raises(GameError, match="seat must be 0 or 1"):
        unseen_ranks(view, None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# sample_state
# --------------------------------------------------------------------------


@pytest.mark.parametrize("options", OPTION_SETS)
def test_a_sampled_state_shows_the_seat_exactly_its_view(options: dict[str, Any]) -> None:
    rng = random.Random(7)
    checked = 0
    for seed in range(3):
        for state in playout(options, seed)[::3]:
            for seat in (0, 1):
                view = state.view(seat)
                sampled = GAME.sample_state(view, rng, seat)
                assert sampled.view(seat) == view
                for square in hidden_squares(view, seat):
                    if square in view["has_moved"]:
                        assert rank_at(sampled, square) != FLAG
                checked += 1
    assert checked > 50


def test_the_seat_to_move_is_the_default_viewer() -> None:
    state = GAME.new_state({}, "demo").play("b2-b3")
    view = state.view(1)
    assert GAME.sample_state(view, random.Random(1)).view(1) == view
    with pytest.raises(GameError, match="say whose view"):
        GAME.sample_state(state.view(0), random.Random(1))


def test_samples_spread_the_flag_over_every_unmoved_hidden_piece() -> None:
    states = playout({"max_plies": 300}, 2)
    state = next(s for s in states if s.to_move == 0 and len(s.view(0)["has_moved"]) >= 12)
    view = state.view(0)
    unmoved = [s for s in hidden_squares(view, 0) if s not in view["has_moved"]]
    moved = [s for s in hidden_squares(view, 0) if s in view["has_moved"]]
    assert unmoved and moved
    rng = random.Random(3)
    flags = collections.Counter()
    for _ in range(300):
        sampled = GAME.sample_state(view, rng)
        (flag,) = [s for s in unmoved if rank_at(sampled, s) == FLAG]
        flags[flag] += 1
        assert all(rank_at(sampled, s) != FLAG for s in moved)
    assert set(flags) == set(unmoved)


def test_sampling_never_reads_the_true_ranks() -> None:
    """Two states the seat cannot tell apart give the same samples for the same generator."""
    state = GAME.new_state({}, "one")
    other = GAME.new_state({}, "two")
    # Blue's setups differ; give Red the same view in both by copying Red's pieces.
    board = tuple(state.board[:16]) + tuple(other.board[16:])
    twin = TactegoState(GAME, state.options, "two", state._geometry, board, 0, 0, None, None,
                        (16, 16), (1, 1), ((), ()), None)
    assert twin.view(0) == state.view(0) and twin.board != state.board
    first = GAME.sample_state(state.view(0), random.Random(5))
    second = GAME.sample_state(twin.view(0), random.Random(5))
    assert first.board == second.board


def test_sample_state_refuses_bad_views() -> None:
    view = GAME.new_state({}, "demo").view(0)
    with pytest.raises(GameError, match="not a Tactego view"):
        GAME.sample_state({**view, "game": "othello"}, random.Random(1))
    with pytest.raises(GameError, match="rows must be an integer"):
        GAME.sample_state({**view, "rows": 99}, random.Random(1))
    moved = copy.deepcopy(view)
    moved["has_moved"] = hidden_squares(view, 0)  # every Blue piece has moved: where is its flag?
    with pytest.raises(GameError, match="no position fits the view"):
        GAME.sample_state(moved, random.Random(1))
