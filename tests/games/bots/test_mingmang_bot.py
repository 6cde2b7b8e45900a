"""Ming Mang's computer player (issue 11): strength in a few fast games, superko-aware rebuilt views."""

from __future__ import annotations

import doctest
import random

import pytest

import games
import games.bots.mingmang
from games.base import GameError
from games.bots import Budget, chooser
from games.bots.mingmang import evaluate, greedy_chooser, make_chooser, material, open_to_capture
from games.bots.random_chooser import RandomChooser

from .playing import assert_legal_to_the_end, assert_same_move_each_time, assert_views_rebuild, wins

MINGMANG = games.get("mingmang")
SMALL = {"size": 6, "max_plies": 120}
SUPERKO = {"size": 5, "superko": True, "max_plies": 150}


@pytest.mark.parametrize("options", [SMALL, SUPERKO], ids=["6x6", "5x5 superko"])
def test_level_5_beats_random(options: dict) -> None:
    assert wins("mingmang", options, make_chooser(5), RandomChooser(), Budget(nodes=300), range(6)) == [1] * 6


@pytest.mark.parametrize("options", [SMALL, SUPERKO, {"size": 8, "max_plies": 120}], ids=["6x6", "5x5 superko", "8x8"])
def test_level_5_beats_greedy(options: dict) -> None:
    assert wins("mingmang", options, make_chooser(5), greedy_chooser(), Budget(nodes=400), range(4)) == [1] * 4


def test_level_5_beats_level_1() -> None:
    assert wins("mingmang", SMALL, make_chooser(5), make_chooser(1), Budget(nodes=300), range(4)) == [1] * 4


def test_it_captures_and_avoids_being_captured() -> None:
    # White to move: c3-a3 takes a2 and with it Black's last pawn (the win at once).
    state = MINGMANG.from_diagram("x...\no...\n..x.\n....", 0)
    assert make_chooser(5).choose(state.view(0), Budget(nodes=300), random.Random(2)) == "c3-a3"
    # Black to move: after its move, no White reply may capture a Black pawn.
    state = MINGMANG.from_diagram("x.o.\n....\n.o..\nx...", 1)
    found = make_chooser(5).search(state.view(1), Budget(nodes=5_000), random.Random(0))
    after = state.play(found.move)
    assert all(child.counts()[1] >= after.counts()[1] for child in after.children())


def test_evaluate_counts_pawns_then_room() -> None:
    state = MINGMANG.from_diagram("xx..\n....\n....\n...o", 0)
    assert material(state, 0) == 1.0
    assert evaluate(state, 0) == pytest.approx(-evaluate(state, 1)) and evaluate(state, 0) > 100 - 20
    cramped = MINGMANG.from_diagram("x.o.\n....\no...\n....", 0)  # no pawn open to capture in either
    free = MINGMANG.from_diagram("x...\n....\n....\n.o.o", 0)
    assert evaluate(cramped, 0) < evaluate(free, 0)


def test_evaluate_rewards_pawns_open_to_capture_the_progress_term() -> None:
    threat = MINGMANG.from_diagram("x...\no...\n....\n....", 0)  # a2 is flanked by a1, a3 empty
    assert open_to_capture(threat, 0) == 1 and open_to_capture(threat, 1) == 0
    apart = MINGMANG.from_diagram("x...\n....\n....\n...o", 0)
    assert open_to_capture(apart, 0) == open_to_capture(apart, 1) == 0
    both_ways = MINGMANG.from_diagram("....\n.xo.\n.ox.\n....", 0)  # each pawn flanked, the far side empty
    assert open_to_capture(both_ways, 0) == open_to_capture(both_ways, 1) == 2
    assert evaluate(threat, 0) > 0  # equal pawns, fewer slides (-4): the threat (+12) outweighs them


def test_superko_moves_are_never_chosen() -> None:
    cycle = ["a2-b2", "h2-g2", "b2-a2"]
    state = MINGMANG.new_state({"superko": True, "max_plies": 100})
    for move in cycle:
        state = state.play(move)
    rebuilt = MINGMANG.state_from_view(state.view(0))
    assert "g2-h2" not in rebuilt.legal_moves() and rebuilt.legal_moves() == state.legal_moves()
    for level in (1, 5):
        for seed in range(5):
            move = make_chooser(level).choose(state.view(1), Budget(nodes=200), random.Random(seed))
            assert move in state.legal_moves()


def test_never_an_illegal_move_at_any_level() -> None:
    for level in range(1, 6):
        options = SUPERKO if level % 2 else {"size": 4, "max_plies": 60}
        state = MINGMANG.new_state(options)
        assert_legal_to_the_end(make_chooser(level), state, Budget(nodes=80), random.Random(level))


def test_same_seed_same_view_same_move() -> None:
    rng = random.Random(6)
    state = MINGMANG.new_state({"size": 7, "superko": True})
    for _ in range(9):
        state = state.play(rng.choice(state.legal_moves()))
    for level in (1, 3, 5):
        assert_same_move_each_time(make_chooser(level), state, Budget(nodes=1_500), seed=5)


def test_the_search_answers_within_its_time_on_the_largest_board() -> None:
    state = MINGMANG.new_state({"size": 16})
    found = make_chooser(5).search(state.view(0), Budget(seconds=0.05), random.Random(1))
    assert found.move in state.legal_moves()


def test_greedy_takes_the_win() -> None:
    state = MINGMANG.from_diagram("x...\no...\n..x.\n....", 0)
    assert greedy_chooser().choose(state.view(0), Budget(nodes=1), random.Random(0)) == "c3-a3"


def test_registry_and_doctests() -> None:
    assert chooser("mingmang", 3) is make_chooser(3)
    assert doctest.testmod(games.bots.mingmang).failed == 0


@pytest.mark.parametrize("options", [
    {"size": 4, "max_plies": 60},
    {"size": 5, "max_plies": 12},
    {"size": 4, "superko": True, "max_plies": 120},
    {"size": 6, "superko": True, "max_plies": 40},
], ids=["4x4", "draw", "4x4 superko", "6x6 superko"])
def test_state_from_view_plays_like_the_original(options: dict) -> None:
    assert assert_views_rebuild("mingmang", options, range(3)) > 30


def test_state_from_view_of_a_game_from_a_diagram() -> None:
    state = MINGMANG.from_diagram("x.o.\n....\n.o..\nx...", 1, {"superko": True}).play("b3-b4")
    rebuilt = MINGMANG.state_from_view(state.view(None))
    assert rebuilt.legal_moves() == state.legal_moves() and rebuilt.view(0) == state.view(0)


@pytest.mark.parametrize("superko, change, words", [
    (True, {"game": "morris"}, "not a mingmang view"),
    (True, {"board": "xxxx"}, "list of rows"),
    (True, {"board": ["x...", "....", "....", "...o"]}, "does not lead"),
    (True, {"ply": 3}, "does not lead"),
    (True, {"history": None}, "history"),
    (True, {"history": {"board": ["...."] * 4, "to_move": 0, "moves": ["a1-a2"]}}, "a1"),
    (True, {"superko": "on"}, "superko"),
    (False, {"board": ["x"]}, "rows"),
    (False, {"board": ["x....", ".....", ".....", ".....", "....o"]}, "4 rows, not 5"),
    (False, {"captured": ["z9"]}, "captured"),
    (False, {"to_move": None}, "do not fit"),
])
def test_state_from_view_refuses_what_is_not_a_mingmang_view(superko: bool, change: dict, words: str) -> None:
    view = MINGMANG.new_state({"size": 4, "superko": superko}).play("a2-b2").view(None)
    view.update(change)
    with pytest.raises(GameError, match=words):
        MINGMANG.state_from_view(view)


def test_state_from_view_names_a_missing_key() -> None:
    view = MINGMANG.new_state({"size": 4}).view(None)
    del view["history"]
    with pytest.raises(GameError, match="needs 'history'"):
        MINGMANG.state_from_view(view)
