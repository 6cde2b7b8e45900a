"""Ming Mang's level-5 search (issue 22): make/unmake PVS with capture quiescence, checked against the engine."""

from __future__ import annotations

import doctest
import random

import pytest

import games
import games.bots.mingmang_search
from games.bots import Budget
from games.bots.mingmang import _captures_first, _key, evaluate, make_chooser
from games.bots.mingmang_search import MingMangSearch, evaluate_board, lines, slides
from games.bots.search import AlphaBeta
from games.mingmang import captures

MINGMANG = games.get("mingmang")


def _random_positions(size: int, games_played: int, seed: int) -> list:
    """Every position of ``games_played`` random games on a ``size`` board."""
    rng, found = random.Random(seed), []
    for number in range(games_played):
        state = MINGMANG.new_state({"size": size, "max_plies": 200}, number)
        while state.outcome is None:
            found.append(state)
            state = state.play(rng.choice(state.legal_moves()))
    return found


@pytest.mark.parametrize("size", [4, 8, 13])
def test_slides_and_captures_agree_with_the_engine(size: int) -> None:
    for state in _random_positions(size, 3, seed=size):
        rows, columns = lines(state._board, state._geo.width)
        assert slides(rows, columns)[1:3] == [state.mobility(0), state.mobility(1)], state.diagram()
        search = MingMangSearch(state, Budget(nodes=1).start())
        me = state.to_move + 1
        expected = set()
        for move, child in zip(state.legal_moves(), state.children()):
            taken = child.counts()[state.to_move] - state.counts()[state.to_move]
            if taken:
                expected.add((move, taken))
        names = state._geo.names
        found = {(f"{names[start]}-{names[to]}", gain) for gain, start, to in search._captures(me)}
        assert found == expected, state.diagram()


@pytest.mark.parametrize("size", [4, 9])
def test_make_takes_the_engines_captures_and_unmake_restores_the_board_and_key(size: int) -> None:
    for state in _random_positions(size, 2, seed=100 + size):
        search = MingMangSearch(state, Budget(nodes=1).start())
        board, key, me, dirs = bytes(search.board), search.key, state.to_move + 1, state._geo.dirs
        for (start, to), child in zip(search._slides(me), state.children()):
            caught = search._make(start, to, me)
            assert caught == captures(board, to, me, dirs), state.diagram()
            assert (bytes(search.board), search.key) == (child._board, child.key()[0]), state.diagram()
            search._unmake(start, to, me, caught)
            assert (bytes(search.board), search.key) == (board, key)
            assert search._gain(to, me) == len(caught)


def test_the_evaluation_counts_pawns_slides_and_open_pawns() -> None:
    state = MINGMANG.from_diagram("x...\no...\n....\n....", 0)  # a2 is open (a3 empty); White has 3 slides, Black 5
    board, width = state._board, state._geo.width
    assert evaluate_board(board, 1, width) == 2 * (3 - 5) + 12 * 1
    assert evaluate_board(board, 2, width) == -evaluate_board(board, 1, width)
    apart = MINGMANG.from_diagram("x...\n....\n....\n...o", 0)
    assert evaluate_board(apart._board, 1, width) == 2 * (6 - 6)
    assert evaluate(state, 0) == evaluate_board(board, 1, width)  # one open pawn: the generic evaluation agrees


def test_quiescence_sees_the_recapture_a_one_ply_search_misses() -> None:
    # White's d5-d1 takes c1, but Black's best reply then takes back more than one pawn.
    state = MINGMANG.from_diagram(".xo.o\no...o\n.....\n.....\nxx.x.", 0)
    horizon = AlphaBeta(evaluate, _key, _captures_first).search(state, Budget(nodes=10**6).start(), random.Random(0), 1)
    assert horizon.move == "d5-d1"  # the generic search at one ply takes the pawn

    def worst_after(move: str) -> int:
        after = state.play(move)
        return min(child.counts()[0] - child.counts()[1] for child in after.children())

    chosen = MingMangSearch(state, Budget(nodes=10**6).start(), max_depth=1).run(random.Random(0))
    assert chosen.move != "d5-d1" and worst_after(chosen.move) > worst_after("d5-d1")


def test_it_takes_a_win_and_proves_it() -> None:
    state = MINGMANG.from_diagram("x...\no...\n..x.\n....", 0)
    found = MingMangSearch(state, Budget(nodes=5_000).start()).run(random.Random(3))
    assert found.move == "c3-a3" and found.proven


def _middle_game(plies: int, seed: int):
    """An 8x8 position after ``plies`` random moves (a running one)."""
    state, rng = MINGMANG.new_state({"max_plies": 400}), random.Random(seed)
    for _ in range(plies):
        state = state.play(rng.choice(state.legal_moves()))
    assert state.outcome is None
    return state


def test_null_moves_and_late_move_reductions_reach_a_ply_deeper_for_the_same_nodes() -> None:
    # Searched full width, 20,000 positions finish 4 plies here; pruned, 5.
    state = _middle_game(32, seed=3)
    found = MingMangSearch(state, Budget(nodes=20_000).start()).run(random.Random(1))
    assert found.depth >= 5 and found.move in state.legal_moves()


def test_level_5_uses_this_search_and_superko_games_the_generic_one() -> None:
    state = MINGMANG.new_state({"size": 6})
    view = state.view(0)
    assert make_chooser(5).search(view, Budget(nodes=3_000), random.Random(1)).depth >= 2
    superko = MINGMANG.new_state({"size": 5, "superko": True}).view(0)
    assert make_chooser(5).search(superko, Budget(nodes=300), random.Random(1)).move in superko["legal_moves"]
    with pytest.raises(ValueError, match="superko"):
        MingMangSearch(MINGMANG.state_from_view(superko), Budget(nodes=10).start())


def test_a_finished_game_is_refused() -> None:
    over = MINGMANG.from_diagram("x...\n....\n....\n....", 1)
    with pytest.raises(ValueError, match="over"):
        MingMangSearch(over, Budget(nodes=10).start())


def test_the_ply_limit_scores_a_draw() -> None:
    state = MINGMANG.new_state({"size": 4, "max_plies": 1})
    found = MingMangSearch(state, Budget(nodes=2_000).start()).run(random.Random(0))
    assert found.score == 0 and found.proven is False


def test_the_time_limit_holds_on_the_largest_board() -> None:
    state = MINGMANG.new_state({"size": 16})
    found = MingMangSearch(state, Budget(seconds=0.05).start()).run(random.Random(1))
    assert found.move in state.legal_moves()


def test_doctests() -> None:
    assert doctest.testmod(games.bots.mingmang_search).failed == 0
