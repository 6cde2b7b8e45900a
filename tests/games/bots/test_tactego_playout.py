"""Tactego level 5 by determinized playouts (games/bots/tactego_playout.py, issue 22)."""

from __future__ import annotations

import random

import games
from games.bots import Budget
from games.bots.tactego import _steps, make_chooser
from games.bots.tactego_playout import PlayoutBoard, PlayoutChooser, PlayoutPlan, _forward, _play_out, _policy
from games.tactego import TactegoState

from . import tactego_positions

GAME = games.get("tactego")
position = tactego_positions.small_set_position


def playout_board(state: TactegoState) -> PlayoutBoard:
    return PlayoutBoard(state, _steps(state.options["rows"], state.options["cols"]))


def test_a_flag_that_can_only_be_the_last_unmoved_piece_is_taken() -> None:
    # Blue's only never-moved piece on a1's row is c5: everything else of Blue's moved or fought, so it is the
    # flag. Taking Blue's 10 with Red's 10 (the attacker wins ties) is worth more material, but the flag ends it.
    state = position("""
        rF r5 .  .  .
        .  .  .  .  r7
        .  .  r10 b10* .
        .  .  .  b7+ .
        .  r5+ bF b5+ b5+
    """)
    view = state.view(0)
    assert view["board"][4][2] == [1, "?"]
    for seed in range(4):
        assert PlayoutChooser().choose(view, Budget(nodes=3000), random.Random(seed)) == "b5-c5"


def test_an_enemy_next_to_the_last_flag_is_taken_when_it_can_be() -> None:
    # Blue's 10 (seen) stands next to Red's flag: if it stays, capture-first takes the flag one time in two
    # (it cannot tell a1 from b1). Red's 10 (it moved) next to it takes it (ties go to the attacker); Red's 7 could
    # instead take a seen Blue 5.
    state = position("""
        rF r5 .  .  .
        b10* r10+ .  .  .
        .  .  .  r7+ .
        .  .  .  b5* .
        .  b7 .  b5 bF
    """, lost=(("5",), ()))
    moves = {PlayoutChooser().choose(state.view(0), Budget(nodes=3000), random.Random(seed)) for seed in range(4)}
    assert moves == {"b2-a2"}


def test_the_same_view_and_generator_give_the_same_move() -> None:
    state = GAME.new_state({"max_plies": 400}, "playout-same")
    rng = random.Random(5)
    for _ in range(30):
        state = state.play(make_chooser(2).choose(state.view(state.to_move), Budget(nodes=1), rng))
    view = state.view(state.to_move)
    moves = {PlayoutChooser().choose(view, Budget(nodes=2500), random.Random(3)) for _ in range(3)}
    assert len(moves) == 1 and moves <= set(view["legal_moves"])


def test_the_default_policy_chooses_from_its_own_sides_view() -> None:
    # Two positions Red cannot tell apart: Blue's never-fought 7 and 5 trade places (neither moved).
    # Red's policy plays the same moves on both; Blue's, which sees its own ranks, need not.
    first = position("""
        rF r5 .  .  r5
        .  .  r7 .  .
        .  .  b7 b5 .
        .  .  r10 .  .
        b10* .  .  b5 bF
    """)
    second = position("""
        rF r5 .  .  r5
        .  .  r7 .  .
        .  .  b5 b7 .
        .  .  r10 .  .
        b10* .  .  b5 bF
    """)
    assert first.view(0) == second.view(0) and first.board != second.board
    boards = [playout_board(first), playout_board(second)]
    for seed in range(40):
        red = [_policy(b.board, b.revealed, b.moved, b._chance, b.steps, 1, 0.5, _forward(b.steps, 5)[1],
                       random.Random(seed), 0.5, 5) for b in boards]
        assert red[0] == red[1]
    # Blue's 7 and 5 beside Red's unseen 7 and 10: against an unseen Red piece that never moved (a flag, a 5,
    # a 5, a 7 or a 10) a 7 wins 4 times in 5, a 5 3 in 5; with a threshold of 0.7 only the 7 attacks, and
    # it stands on c3 in one position and on d3 in the other
    blue = [_policy(b.board, b.revealed, b.moved, b._chance, b.steps, -1, 0.7, _forward(b.steps, 5)[0],
                    random.Random(0)) for b in boards]
    assert blue[0][0] == 12 and blue[1][0] == 13


def test_a_playout_leaves_the_determinization_as_it_was_and_counts_its_plies() -> None:
    state = GAME.new_state({"max_plies": 400}, "playout-count")
    board = playout_board(state)
    before = board.copy_lists()
    plan = PlayoutPlan(horizon=20)
    value, plies = board.playout(1, 9, 17, plan.horizon, plan, random.Random(1))  # b2-b3
    assert board.copy_lists() == before
    assert -1.0 <= value <= 1.0 and 1 <= plies <= plan.horizon + 1


def test_playout_plies_are_the_node_budget() -> None:
    state = GAME.new_state({"max_plies": 400}, "playout-budget")
    view = state.view(0)
    moves = [(9, 17), (10, 18), (11, 19)]
    steps = _steps(8, 8)
    deadline = Budget(nodes=1500).start()
    means = _play_out(GAME, view, 0, 1, moves, steps, deadline, PlayoutPlan(), random.Random(2))
    assert means is not None and len(means) == 3 and all(-1.0 <= m <= 1.0 for m in means)
    assert 1500 <= deadline.nodes < 1500 + 3 * (PlayoutPlan().horizon + 1)
    # the first round is always played out whole, so even the smallest budget gives a value
    tiny = Budget(nodes=1).start()
    assert _play_out(GAME, view, 0, 1, moves, steps, tiny, PlayoutPlan(), random.Random(2)) is not None
    assert tiny.nodes >= 3


def test_positions_that_look_the_same_to_the_playout_player_get_the_same_move() -> None:
    from .test_tactego import _replay, _twin_setup, play_game

    real = play_game(make_chooser(3), make_chooser(2), 21, 300)[:80]
    twin = _replay(_twin_setup(real, 0), [s.last_move for s in real[1:]])
    compared = 0
    for ply in range(10, len(real), 8):
        state, other = real[ply], twin[ply]
        if state.outcome is not None or state.to_move != 0:
            continue
        assert other.view(0) == state.view(0) and other.board != state.board
        moves = {PlayoutChooser().choose(v, Budget(nodes=900), random.Random(ply)) for v in (state.view(0), other.view(0))}
        assert len(moves) == 1
        compared += 1
    assert compared >= 3
