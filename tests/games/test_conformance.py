"""Random-playout conformance of every registered game against the engine contract.

For random games of every game and option set: every listed move is accepted,
moves listed in other positions but not here are refused, states never change,
every game ends, views are plain data that only the seat to move gets legal
moves in, and ``children()`` / ``move_count()`` agree with ``legal_moves()``
and ``play()``.
"""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
from games import IllegalMove

# Option sets per game; games that can cycle get max_plies so every playout ends.
OPTION_SETS: dict[str, list[dict[str, Any]]] = {
    "othello": [{}, {"size": 6}, {"size": 10}],
    "nimble": [{}, {"n": 12, "p": 5}, {"board": [0, 3, 0, 2]}],
    "hexapawn": [{}, {"size": 4}, {"size": 6}],
    "mingmang": [{"max_plies": 150}, {"size": 5, "superko": True, "max_plies": 150}],
    "morris": [{"max_plies": 200}, {"flying": True, "mill_protection": True, "max_plies": 200}],
    "tactego": [{"max_plies": 200}, {"rows": 6, "cols": 4, "hidden": False, "pieces": "3 2\n1 2\nF 1", "max_plies": 200}],
}

CASES = [(name, options) for name in games.names() for options in OPTION_SETS.get(name, [{}])]


def _playout(name: str, options: dict[str, Any], rng: random.Random, seed: str) -> list[games.State]:
    state = games.get(name).new_state(options, seed)
    states = [state]
    while state.outcome is None:
        assert len(states) < 5000, f"{name} {options} did not end in 5000 plies"
        state = state.play(rng.choice(state.legal_moves()))
        states.append(state)
    return states


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_random_games_follow_the_contract(name: str, options: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    states = _playout(name, options, rng, str(seed))
    final = states[-1]
    assert final.to_move is None and final.legal_moves() == []
    everything_listed = {move for state in states for move in state.legal_moves()}
    walked = set(rng.sample(range(len(states) - 1), min(6, len(states) - 1)))
    for index, state in enumerate(states[:-1]):
        legal = state.legal_moves()
        assert legal, "a running game must offer a move"
        assert len(legal) == len(set(legal)), "legal moves must not repeat"
        assert state.ply == index and state.to_move in (0, 1)
        successor = states[index + 1]
        assert successor.last_move in legal, "the canonical form of a played move is one of the listed moves"
        before = msgpack.packb(state.view(0))
        for move in rng.sample(legal, min(3, len(legal))):
            assert state.play(move).last_move == move
        unlisted = sorted(everything_listed - set(legal))
        for move in rng.sample(unlisted, min(3, len(unlisted))):
            with pytest.raises(IllegalMove):
                state.play(move)
        if index in walked:
            _check_children(state, legal, rng)
        assert msgpack.packb(state.view(0)) == before, "playing must not change a state"
        _check_views(state)
    _check_views(final)
    assert final.children() == [] and final.move_count() == 0
    with pytest.raises(IllegalMove, match="over"):
        final.play(states[1].last_move or "x")


def _check_children(state: games.State, legal: list[str], rng: random.Random) -> None:
    children = state.children()
    assert state.move_count() == len(legal) == len(children)
    assert [child.last_move for child in children] == legal, "children() follows legal_moves() order"
    index = rng.randrange(len(legal))
    played = state.play(legal[index])
    for seat in (0, 1, None):
        assert children[index].view(seat) == played.view(seat)


def _check_views(state: games.State) -> None:
    for seat in (0, 1, None):
        view = state.view(seat)
        msgpack.packb(view)  # plain data only
        assert view["game"] == state.game.name and view["ply"] == state.ply
        assert ("legal_moves" in view) == (seat is not None and seat == state.to_move)


@pytest.mark.parametrize("name", games.names())
def test_options_are_validated(name: str) -> None:
    game = games.get(name)
    with pytest.raises(games.InvalidOption, match="no option 'colour'"):
        game.new_state({"colour": "red"})
    for option in game.options:
        wrong = "8" if option.type != "str" else 8
        with pytest.raises(games.InvalidOption, match=option.name):
            game.new_state({option.name: wrong})
        if option.type == "int" and option.maximum is not None:
            with pytest.raises(games.InvalidOption, match=option.name):
                game.new_state({option.name: option.maximum + 1})
        if option.type == "int" and option.minimum is not None:
            with pytest.raises(games.InvalidOption, match=option.name):
                game.new_state({option.name: option.minimum - 1})


def test_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(games.UnknownGame) as raised:
        games.get("chess")
    for name in games.names():
        assert name in str(raised.value)


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_turn_says_what_to_move_outcome_and_legal_moves_say(name: str, options: dict[str, Any], seed: int) -> None:
    states = _playout(name, options, random.Random(seed), str(seed))
    expected = [(state.to_move, state.outcome, state.legal_moves() == ["pass"]) for state in states]
    assert expected[-1][1] is not None and not expected[-1][2]
    fresh = games.get(name).new_state(options, str(seed))  # the same game again, each position asked turn() first
    for index, state in enumerate(states):
        assert fresh.turn() == expected[index], f"ply {index}"
        if index + 1 < len(states):
            fresh = fresh.play(states[index + 1].last_move)  # type: ignore[arg-type]
    some = states[len(states) // 2]
    for child, move in zip(some.children(), some.legal_moves()):  # children() may be cheaper positions: the same answers
        assert child.turn() == (lambda played: (played.to_move, played.outcome, played.legal_moves() == ["pass"]))(some.play(move))
