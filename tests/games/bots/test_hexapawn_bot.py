"""Hexapawn's computer player: perfect play up to 5 x 5 proved against exhaustive minimax (issue 11)."""

from __future__ import annotations

import doctest
import random

import pytest

import games
import games.bots.hexapawn
from games.base import GameError
from games.bots import Budget, chooser
from games.bots.hexapawn import Solver, evaluate, greedy_chooser, make_chooser, move_chooser
from games.bots.random_chooser import RandomChooser
from games.hexapawn import HexapawnState

from .playing import assert_legal_to_the_end, assert_same_move_each_time, assert_views_rebuild, wins

HEXAPAWN = games.get("hexapawn")
SOLVE = Budget(nodes=1_000_000)


def plain_minimax(state: HexapawnState, values: dict) -> int:
    """The winner under perfect play, by the engine's rules alone: every move of every node, no pruning,
    no table. Records each running node's value in ``values`` (output only, never read back)."""
    seat = state.to_move
    results = [child.outcome.winner if child.outcome is not None else plain_minimax(child, values)
               for child in state.children()]
    winner = seat if seat in results else 1 - seat
    values[state.key()] = winner
    return winner


def memo_minimax(state: HexapawnState, values: dict) -> int:
    """:func:`plain_minimax` with each position's value kept and reused: still every move of every
    position, no pruning. The plain tree of 4 x 4 has 4.2 million nodes (a minute), so 4 x 4 and the
    5 x 5 samples use this; 3 x 3 is checked against both."""
    known = values.get(state.key())
    if known is not None:
        return known
    seat = state.to_move
    results = [child.outcome.winner if child.outcome is not None else memo_minimax(child, values)
               for child in state.children()]
    winner = seat if seat in results else 1 - seat
    values[state.key()] = winner
    return winner


def reachable(start: HexapawnState) -> list[HexapawnState]:
    """Every running position reachable from ``start`` (``start`` included), each once."""
    seen, stack, found = {start.key()}, [start], []
    while stack:
        state = stack.pop()
        found.append(state)
        for child in state.children():
            if child.outcome is None and child.key() not in seen:
                seen.add(child.key())
                stack.append(child)
    return found


def check_perfect(positions: list[HexapawnState], values: dict) -> int:
    """In every position, the solver's verdict is minimax's, and level 5 wins every won one.

    Returns the number of won positions checked.
    """
    bot, won = make_chooser(5), 0
    solver = Solver(positions[0].size, Budget(nodes=10_000_000).start())  # one table for all the verdicts
    for index, state in enumerate(positions):
        seat = state.to_move
        assert solver.wins(state) == (values[state.key()] == seat), state
        move = bot.choose(state.view(seat), SOLVE, random.Random(index))
        if values[state.key()] != seat:
            continue
        won += 1
        after = state.play(move)
        winner = after.outcome.winner if after.outcome is not None else values[after.key()]
        assert winner == seat, (state, move)
    return won


def test_3x3_against_plain_minimax_in_every_reachable_position() -> None:
    start = HEXAPAWN.new_state({"size": 3})
    plain, memo = {}, {}
    assert plain_minimax(start, plain) == 1  # the second player wins 3 x 3 (Gardner, 1962)
    memo_minimax(start, memo)
    assert plain == memo
    positions = reachable(start)
    assert len(positions) == len(plain)
    assert check_perfect(positions, plain) > 5


def test_4x4_against_minimax_in_every_reachable_position() -> None:
    start = HEXAPAWN.new_state({"size": 4})
    values: dict = {}
    assert memo_minimax(start, values) == 0
    positions = reachable(start)
    assert len(positions) == len(values) > 2_000
    assert check_perfect(positions, values) > 1_000


def test_5x5_sample_against_minimax() -> None:
    rng = random.Random(5)
    positions, values = [], {}
    while len(positions) < 40:
        state = HEXAPAWN.new_state({"size": 5})
        stop = rng.randint(12, 16)
        while state.outcome is None and state.ply < stop:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome is None:
            memo_minimax(state, values)
            positions.append(state)
    assert 10 < check_perfect(positions, values) < 40


def test_5x5_start_is_solved_within_the_default_budget() -> None:
    state = HEXAPAWN.new_state({"size": 5})
    deadline = Budget(nodes=30_000).start()
    assert Solver(5, deadline).wins(state)  # White wins 5 x 5
    assert deadline.nodes < 20_000


def test_in_a_lost_position_level_5_plays_for_the_best_chance_against_mistakes() -> None:
    """4 x 4 after d1-d2 is lost for Black; against random replies b4-b3 keeps the best chance (0.984, the others 0.974-0.978)."""
    state = HEXAPAWN.new_state({"size": 4}).play("d1-d2")
    assert not Solver(4, Budget(nodes=100_000).start()).wins(state)
    bot = make_chooser(5)
    moves = {bot.choose(state.view(1), Budget(nodes=200_000), random.Random(seed)) for seed in range(10)}
    assert moves == {"b4-b3"}


def test_level_5_beats_random_on_a_larger_board() -> None:
    results = wins("hexapawn", {"size": 6}, make_chooser(5), RandomChooser(), Budget(nodes=600), range(8))
    assert results == [1] * 8


def test_level_5_beats_greedy_on_larger_boards() -> None:
    for size, nodes in ((6, 3_000), (7, 1_500)):
        results = wins("hexapawn", {"size": size}, make_chooser(5), greedy_chooser(), Budget(nodes=nodes),
                       range(4))
        assert results == [1] * 4, (size, results)


def test_level_5_beats_level_1() -> None:
    results = wins("hexapawn", {"size": 6}, make_chooser(5), make_chooser(1), Budget(nodes=600), range(6))
    assert results == [1] * 6


def test_never_an_illegal_move_at_any_level() -> None:
    for level in range(1, 6):
        for size in (3, 5, 8):
            state = HEXAPAWN.new_state({"size": size})
            assert_legal_to_the_end(make_chooser(level), state, Budget(nodes=300), random.Random(level * 10 + size))


def test_same_seed_same_view_same_move() -> None:
    rng = random.Random(3)
    for size in (5, 6, 8):
        state = HEXAPAWN.new_state({"size": size})
        for _ in range(4):
            state = state.play(rng.choice(state.legal_moves()))
        for level in (1, 3, 5):
            assert_same_move_each_time(make_chooser(level), state, Budget(nodes=2_000), seed=11)


def test_the_search_stops_on_time() -> None:
    state = HEXAPAWN.new_state({"size": 8})
    budget = Budget(seconds=0.05)
    found = make_chooser(5).search(state.view(0), budget, random.Random(1))
    assert found.depth >= 2 and found.move in state.legal_moves()


def test_evaluate_prefers_the_side_with_more_and_further_pawns() -> None:
    ahead = HexapawnState.from_board([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 0]], 0)
    assert evaluate(ahead, 0) > 0 > evaluate(ahead, 1)
    advanced = HexapawnState.from_board([[0, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 2, 2]], 0)
    level = HexapawnState.from_board([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 2]], 0)
    assert evaluate(advanced, 0) > evaluate(level, 0) == 0


def test_the_seeds_move_chooser_and_doctests() -> None:
    assert doctest.testmod(games.bots.hexapawn).failed == 0
    start = HexapawnState.from_board([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 2]], 0)
    best = move_chooser([s.to_board() for s in start.successors()], 1)
    after = HexapawnState.from_board(best, 1)
    assert not Solver(4, SOLVE.start()).wins(after)  # 4 x 4 is White's: the chosen board keeps the win
    with pytest.raises(ValueError):
        move_chooser([], 1)
    with pytest.raises(ValueError):
        move_chooser([start.to_board()], 3)


def test_greedy_takes_a_win_then_pawns() -> None:
    state = HexapawnState.from_board([[0, 0, 0], [2, 0, 1], [0, 2, 0]], 0)  # c2-c3 reaches the far row
    assert greedy_chooser().choose(state.view(0), Budget(nodes=1), random.Random(0)) == "c2-c3"


def test_registry() -> None:
    assert chooser("hexapawn", 4) is make_chooser(4)
    with pytest.raises(ValueError):
        make_chooser(6)


def test_state_from_view_plays_like_the_original() -> None:
    for size in (3, 4, 8):
        assert assert_views_rebuild("hexapawn", {"size": size}, range(6)) > 20


@pytest.mark.parametrize("view, words", [
    ({"game": "nimble", "board": [[0]], "to_move": 0, "ply": 0}, "not a hexapawn view"),
    ({"game": "hexapawn", "to_move": 0, "ply": 0}, "needs board"),
    ({"game": "hexapawn", "board": [[1, 1], [2, 2]], "to_move": 0, "ply": 0}, "rows"),
    ({"game": "hexapawn", "board": [[1, 1, 1], [0, 0, 0], [2, 2, 2]], "to_move": 5, "ply": 0}, "to_move 0 or 1"),
])
def test_state_from_view_refuses_what_is_not_a_hexapawn_view(view: dict, words: str) -> None:
    with pytest.raises(GameError, match=words):
        HEXAPAWN.state_from_view(view)
