"""Nine Men's Morris's computer player (issue 11): strength in a few fast games, tactics, rebuilt views."""

from __future__ import annotations

import doctest
import random
import time

import pytest

import games
import games.bots.morris
from games.base import GameError
from games.bots import Budget, chooser
from games.bots.morris import evaluate, greedy_chooser, make_chooser, material
from games.bots.random_chooser import RandomChooser
from games.morris import MorrisState, Position, format_position

from .playing import assert_legal_to_the_end, assert_same_move_each_time, assert_views_rebuild, wins

MORRIS = games.get("morris")
PLAIN = {"max_plies": 200}
TOURNAMENT = {"max_plies": 200, "flying": True, "mill_protection": True}


def position(points: dict[int, int], hands: tuple[int, int], player: int, **options: object) -> MorrisState:
    """A state from seed point numbers -> 1/2, the hands, and the player to move (1 or 2)."""
    board = tuple(points.get(p, 0) for p in range(24))
    return MorrisState.from_position_text(format_position(Position(board, hands, player)), options)


@pytest.mark.parametrize("options", [PLAIN, TOURNAMENT], ids=["seed rules", "flying+protection"])
def test_level_5_beats_random(options: dict) -> None:
    assert wins("morris", options, make_chooser(5), RandomChooser(), Budget(nodes=200), range(6)) == [1] * 6


@pytest.mark.parametrize("options", [PLAIN, TOURNAMENT], ids=["seed rules", "flying+protection"])
def test_level_5_beats_greedy(options: dict) -> None:
    assert wins("morris", options, make_chooser(5), greedy_chooser(), Budget(nodes=300), range(6)) == [1] * 6


def test_level_5_beats_level_1() -> None:
    assert wins("morris", PLAIN, make_chooser(5), make_chooser(1), Budget(nodes=300), range(4)) == [1] * 4


def test_it_closes_a_mill_when_it_can() -> None:
    state = MORRIS.new_state().play("a1").play("d7").play("d1").play("g7")
    move = make_chooser(5).choose(state.view(0), Budget(nodes=500), random.Random(1))
    assert move.startswith("g1x")


def test_it_blocks_the_opponents_mill() -> None:
    # Player 2 holds a7 and d7 (0, 1): g7 (2) closes their mill. Player 1 (a1, b2) has no line of two.
    state = position({21: 1, 18: 1, 0: 2, 1: 2}, (7, 7), 1)
    for seed in range(3):
        assert make_chooser(5).choose(state.view(0), Budget(nodes=2_000), random.Random(seed)) == "g7"


def test_a_flying_side_is_feared() -> None:
    # Player 2 flies with three counters, two of them on a line with its third point empty.
    quiet = position({0: 2, 1: 2, 23: 2, 21: 1, 22: 1, 9: 1, 10: 1}, (0, 0), 1, flying=True)
    still = position({0: 2, 1: 2, 23: 2, 21: 1, 22: 1, 9: 1, 10: 1}, (0, 0), 1, flying=False)
    assert evaluate(quiet, 0) < evaluate(still, 0)


def test_evaluate_counts_material_and_mills() -> None:
    even = position({21: 1, 0: 2}, (8, 8), 1)
    assert evaluate(even, 0) == pytest.approx(-evaluate(even, 1))
    richer = position({21: 1, 22: 1, 23: 1, 0: 2}, (5, 6), 2)  # a closed mill and one counter more
    assert evaluate(richer, 0) > 1_000 and material(richer, 0) == 1.0


def test_never_an_illegal_move_at_any_level() -> None:
    for level in range(1, 6):
        state = MORRIS.new_state(TOURNAMENT if level % 2 else PLAIN)
        assert_legal_to_the_end(make_chooser(level), state, Budget(nodes=100), random.Random(level), max_ply=80)


def test_same_seed_same_view_same_move() -> None:
    rng = random.Random(4)
    state = MORRIS.new_state(PLAIN)
    for _ in range(22):
        state = state.play(rng.choice(state.legal_moves()))
    for level in (1, 3, 5):
        assert_same_move_each_time(make_chooser(level), state, Budget(nodes=1_500), seed=8)


def test_the_search_stops_on_time() -> None:
    state = MORRIS.new_state(PLAIN)
    started = time.perf_counter()
    found = make_chooser(5).search(state.view(0), Budget(seconds=0.05), random.Random(1))
    assert time.perf_counter() - started < 0.5  # a loose bound: the machine is shared
    assert found.depth >= 1 and found.move in state.legal_moves()


def test_greedy_takes_a_mill() -> None:
    state = MORRIS.new_state().play("a1").play("d7").play("d1").play("g7")
    assert greedy_chooser().choose(state.view(0), Budget(nodes=1), random.Random(0)).startswith("g1x")


def test_registry_and_doctests() -> None:
    assert chooser("morris", 2) is make_chooser(2)
    assert doctest.testmod(games.bots.morris).failed == 0


@pytest.mark.parametrize("options", [PLAIN, TOURNAMENT, {"max_plies": 30}], ids=["seed", "tournament", "short"])
def test_state_from_view_plays_like_the_original(options: dict) -> None:
    assert assert_views_rebuild("morris", options, range(4)) > 60


def test_state_from_view_of_a_loaded_position() -> None:
    state = position({21: 1, 22: 1, 0: 2, 1: 2, 2: 2}, (0, 0), 1, flying=True)
    rebuilt = MORRIS.state_from_view(state.view(None))
    assert rebuilt.legal_moves() == state.legal_moves() and rebuilt.outcome == state.outcome


@pytest.mark.parametrize("change, words", [
    ({"game": "othello"}, "not a morris view"),
    ({"position": "0, 0\n9\n9\n1\n"}, "position"),
    ({"flying": "yes"}, "flying"),
    ({"ply": -1}, "ply"),
])
def test_state_from_view_refuses_what_is_not_a_morris_view(change: dict, words: str) -> None:
    view = MORRIS.new_state().view(None)
    view.update(change)
    with pytest.raises(GameError, match=words):
        MORRIS.state_from_view(view)


def test_state_from_view_names_a_missing_key() -> None:
    view = MORRIS.new_state().view(None)
    del view["position"]
    with pytest.raises(GameError, match="needs 'position'"):
        MORRIS.state_from_view(view)
