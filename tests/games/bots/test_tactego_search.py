"""Tactego level 5's opponent that cannot see our hidden ranks (games/bots/tactego_search.py, issue 22)."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import games
from games.bots import Budget
from games.bots.tactego import DeterminizingChooser, _steps
from games.bots.tactego_search import WIN, SearchBoard
from games.tactego import TactegoState

from . import tactego_positions

GAME = games.get("tactego")


def position(picture: str, to_move: int = 0) -> TactegoState:
    """A running position of a 10, a 7, two 5s and a flag a side (see :func:`tactego_positions.position`)."""
    return tactego_positions.position(picture, "10 1\n7 1\n5 2\nF 1", to_move=to_move)


def search_board(state: TactegoState) -> SearchBoard:
    return SearchBoard(state, _steps(state.options["rows"], state.options["cols"]), Budget(nodes=10**9).start())


def square(state: TactegoState, name: str) -> int:
    return (int(name[1:]) - 1) * state.options["cols"] + ord(name[0]) - ord("a")


# Red (us, seat 0) has its flag on a1 and hidden pieces on e1 (never moved), c1 and d2 (both moved); Blue's 10
# (it fought: both see it) stands two squares from the flag.
GUARDED = """
    rF .  r7+ .  r5
    .  .  .  r5+ .
    .  b10* .  .  .
    bF .  .  .  .
"""


def test_the_belief_keeps_every_piece_in_place_and_shuffles_only_our_hidden_ranks() -> None:
    state = position(GUARDED)
    board = search_board(state)
    origin, target = square(state, "d2"), square(state, "d3")
    attacker = board.board[origin]
    saved = board.make(origin, target)
    real = list(board.board)
    hidden = [square(state, name) for name in ("a1", "c1", "e1", "d3")]
    flags_at = Counter()
    for seed in range(60):
        believed = board.belief(1, origin, target, saved[0], random.Random(seed))
        assert [v > 0 for v in believed.board] == [v > 0 for v in real]
        assert [v < 0 for v in believed.board] == [v < 0 for v in real]
        assert all(believed.board[i] == real[i] for i in range(len(real)) if i not in hidden)
        assert sorted(believed.board[i] for i in hidden) == sorted(real[i] for i in hidden)
        assert believed.flags == [1, 1] and believed.ply == board.ply
        (flag,) = believed._flag_squares[0]
        flags_at[flag] += 1
    # the flag only where nothing moved (c1 and d2-d3 did), and on each such square for some belief
    assert set(flags_at) == {square(state, "a1"), square(state, "e1")}
    assert board.board == real  # the real board is not touched
    board.unmake(origin, target, attacker, saved)


def test_a_piece_that_fought_is_seen_in_the_belief() -> None:
    state = position("""
        rF .  r7+ .  r5
        .  .  .  r5+ b5
        .  b10* .  .  .
        bF .  .  .  .
    """)
    board = search_board(state)
    origin, target = square(state, "d2"), square(state, "e2")  # the 5 takes the 5: now both see it
    saved = board.make(origin, target)
    for seed in range(20):
        believed = board.belief(1, origin, target, saved[0], random.Random(seed))
        assert believed.board[target] == board.board[target] == 6
        assert sorted(believed.board[square(state, n)] for n in ("a1", "c1", "e1")) == [1, 6, 8]


def test_an_opponent_that_cannot_see_the_flag_goes_for_it_only_where_it_guesses_it() -> None:
    state = position(GUARDED)
    board = search_board(state)
    origin, target = square(state, "d2"), square(state, "d3")
    saved = board.make(origin, target)
    # seeing everything, Blue's 10 steps next to the flag and nothing of Red's can take it
    assert -board.negamax(-1, 1, -WIN - 1.0, WIN + 1.0) < -WIN / 2
    values = {}
    for seed in range(40):
        believed = board.belief(1, origin, target, saved[0], random.Random(seed))
        values[believed._flag_squares[0][0]] = board.blind_reply(1, believed)
    # it believes the flag on a1 (and stands next to the real one) or on e1 (and heads there, past the real one)
    assert values[square(state, "a1")] < -WIN / 2
    assert values[square(state, "e1")] > -WIN / 2


def test_level_5_offers_a_piece_to_a_threat_it_cannot_stop_rather_than_give_its_flag_up() -> None:
    # Red lost its 10; Blue's 10 (seen) is two steps from Red's flag, by a2 or b2, and nothing of Red's can stop
    # it. An opponent that saw the flag would take it whatever Red does; one that does not (capture-first, a
    # person) may as well take the 7 offered next to it, away from the flag. Blue's pieces are out of Red's reach.
    state = position("""
        rF r5 .  .  r5
        .  .  .  .  .
        .  b10* .  r7+ .
        .  .  .  .  .
        .  .  .  .  .
        b5 bF b5 b7 .
    """)
    state = TactegoState(GAME, state.options, "test", state._geometry, state.board, 0, 0, None, None, (4, 5),
                         (1, 1), (("10",), ()), None)
    view = state.view(0)
    offers = {"d3-c2", "d3-c3", "d3-c4"}
    for seed in range(3):  # level 5's search (level 5 adds playouts to it: tests/games/bots/test_tactego_hybrid.py)
        assert DeterminizingChooser(5).choose(view, Budget(nodes=20000), random.Random(seed)) in offers
    # both are needed: without the blind opponent every move loses alike; without searching every move, the
    # offers (a piece lost at depth 1) are not among the candidates
    for blind, widen in ((False, True), (True, False)):
        bot = DeterminizingChooser(5)
        bot.plan = dataclasses.replace(bot.plan, blind=blind, widen=widen)
        assert not {bot.choose(view, Budget(nodes=20000), random.Random(seed)) for seed in range(3)} & offers
