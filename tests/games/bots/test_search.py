"""The generic alpha-beta search (games/bots/search.py): equal to plain minimax, and proofs that hold."""

from __future__ import annotations

import random

import pytest

import games
from games.bots import Budget
from games.bots import hexapawn as hexapawn_bot
from games.bots import morris as morris_bot
from games.bots.search import MATE_ZONE, WIN, AlphaBeta, Transpositions

UNLIMITED = Budget(nodes=10_000_000)


def plain_negamax(state: games.State, depth: int, evaluate, height: int = 0) -> float:
    """Depth-limited negamax with no pruning and no table: every move of every node."""
    seat = state.to_move
    best = float("-inf")
    for child in state.children():
        if child.outcome is not None:
            winner = child.outcome.winner
            score = 0.0 if winner is None else (WIN - height - 1 if winner == seat else -(WIN - height - 1))
        elif depth <= 1:
            score = -evaluate(child, child.to_move)
        else:
            score = -plain_negamax(child, depth - 1, evaluate, height + 1)
        best = max(best, score)
    return best


def move_score(state: games.State, move: str, depth: int, evaluate) -> float:
    """The plain negamax score of one move at ``state``, searched to ``depth`` plies in all."""
    child, seat = state.play(move), state.to_move
    if child.outcome is not None:
        winner = child.outcome.winner
        return 0.0 if winner is None else (WIN - 1 if winner == seat else -(WIN - 1))
    if depth <= 1:
        return -evaluate(child, child.to_move)
    return -plain_negamax(child, depth - 1, evaluate, 1)


def random_positions(game: str, options: dict, plies: range, count: int, seed: int) -> list[games.State]:
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        state = games.get(game).new_state(options, seed)
        stop = rng.choice(plies)
        while state.outcome is None and state.ply < stop:
            state = state.play(rng.choice(state.legal_moves()))
        if state.outcome is None:
            found.append(state)
    return found


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_scores_equal_plain_negamax_in_morris_placing(depth: int) -> None:
    # Placing only adds counters, so no position recurs at another height: the table cannot change a value.
    for state in random_positions("morris", {}, range(0, 9), 6, depth):
        searcher = AlphaBeta(morris_bot.evaluate, morris_bot._key, morris_bot._removes_first)
        found = searcher.search(state, UNLIMITED.start(), random.Random(0), max_depth=depth)
        assert found.score == plain_negamax(state, depth, morris_bot.evaluate)
        assert move_score(state, found.move, depth, morris_bot.evaluate) == found.score
        assert found.depth == depth or found.proven


@pytest.mark.parametrize("size, depth", [(4, 3), (5, 5), (6, 4), (6, 5)])
def test_scores_equal_plain_negamax_in_hexapawn(size: int, depth: int) -> None:
    # Pawns only advance, so a position recurs only at the same height (pawn moves in another order),
    # with the same depth left: the table's values and bounds must give exactly the plain score.
    for index, state in enumerate(random_positions("hexapawn", {"size": size}, range(0, 10), 8, size + depth)):
        ordering = hexapawn_bot._captures_first if index % 2 else None  # good and poor move orders
        searcher = AlphaBeta(hexapawn_bot.evaluate, hexapawn_bot._key, ordering)
        found = searcher.search(state, UNLIMITED.start(), random.Random(index), max_depth=depth)
        assert found.score == plain_negamax(state, depth, hexapawn_bot.evaluate)
        assert move_score(state, found.move, depth, hexapawn_bot.evaluate) == found.score


def test_unlimited_search_proves_what_the_solver_proves() -> None:
    positions = random_positions("hexapawn", {"size": 4}, range(2, 12), 30, 9)
    for state in positions:
        solver = hexapawn_bot.Solver(4, UNLIMITED.start())
        searcher = AlphaBeta(hexapawn_bot.evaluate, hexapawn_bot._key)
        found = searcher.search(state, UNLIMITED.start(), random.Random(2))
        assert found.proven and (found.score > 0) == solver.wins(state)
        after = state.play(found.move)
        if found.score > 0:  # the move keeps the win
            assert after.outcome is not None or not solver.wins(after)


def test_a_node_budget_stops_the_search_and_repeats_exactly() -> None:
    state = games.get("hexapawn").new_state({"size": 8})
    results = {AlphaBeta(hexapawn_bot.evaluate, hexapawn_bot._key).search(state, Budget(nodes=700).start(),
                                                                        random.Random(4)) for _ in range(3)}
    assert len(results) == 1
    (found,) = results
    assert 700 <= found.nodes < 700 + 64 and 1 <= found.depth < 10


def test_a_finished_game_is_refused() -> None:
    state = games.get("hexapawn").new_state({"size": 3})
    for move in ("a1-a2", "b3-a2", "b1-b2", "a2-a1"):
        state = state.play(move)
    with pytest.raises(ValueError):
        AlphaBeta(hexapawn_bot.evaluate, hexapawn_bot._key).search(state, UNLIMITED.start(), random.Random(0))



@pytest.mark.parametrize("score", [WIN - 7, -(WIN - 7), 350, -350, 0, 350.0, float(WIN - 7)])
def test_the_table_keeps_a_proof_counted_from_its_node_and_reads_it_back_at_any_height(score: float) -> None:
    table: Transpositions[float, str] = Transpositions()
    table.store("here", 3, score, -WIN, WIN, 5, "a1")  # found 5 plies below the root, exact
    assert table.probe("here", 3, -WIN, WIN, 5) == (score, "a1")
    found, move = table.probe("here", 3, -WIN, WIN, 1)  # the same position reached 4 plies sooner
    shift = 4 if abs(score) >= MATE_ZONE else 0  # a win 7 plies from the root, 2 from the node: 3 from there
    assert (found, move) == (score + shift if score > 0 else score - shift, "a1") and type(found) is type(score)
    assert table.probe("here", 4, -WIN, WIN, 5) == (None, "a1")  # searched too shallow: only its move helps
    assert table.probe("elsewhere", 1, -WIN, WIN, 5) == (None, None)


def test_the_table_answers_with_a_bound_only_outside_the_window() -> None:
    table: Transpositions[int, str] = Transpositions()
    table.store("cut", 2, 60, 10, 50, 0, "b2")  # a cutoff: at least 60
    table.store("low", 2, 5, 10, 50, 0, "c3")  # no move beat alpha: at most 5
    assert table.probe("cut", 2, 10, 50, 0) == (60, "b2")
    assert table.probe("cut", 2, 10, 70, 0) == (None, "b2")  # at least 60 does not settle a window up to 70
    assert table.probe("low", 2, 10, 50, 0) == (5, "c3")
    assert table.probe("low", 2, 0, 50, 0) == (None, "c3")
