"""The Tactego computer players (games/bots/tactego.py): fair, legal, deterministic, stronger than capture-first."""

from __future__ import annotations

import random
import time
from typing import Any

import msgpack
import pytest

import games
import games.bots
from games.bots import Budget, MoveChooser
from games.bots.tactego import _PLANS, DeterminizingChooser, GreedyChooser, greedy_chooser, make_chooser, win_chance
from games.bots.tactego_hybrid import HybridChooser
from games.bots.tactego_search import SearchBoard
from games.tactego import TactegoState

from . import tactego_positions

GAME = games.get("tactego")


def play_game(red: MoveChooser, blue: MoveChooser, seed: int, nodes: int,
              options: dict[str, Any] | None = None) -> list[TactegoState]:
    """Every state of a game between two choosers, each seeing only its own view."""
    state = GAME.new_state(options or {"max_plies": 300}, f"bots-{seed}")
    rng = random.Random(seed)
    states = [state]
    while state.outcome is None:
        seat = state.to_move
        move = (red, blue)[seat].choose(state.view(seat), Budget(nodes=nodes), rng)
        assert move in state.legal_moves()
        state = state.play(move)
        states.append(state)
    return states


def square_index(state: TactegoState, name: str) -> int:
    cols = state.options["cols"]
    return (int(name[1:]) - 1) * cols + ord(name[0]) - ord("a")


# --------------------------------------------------------------------------
# Levels and the registry
# --------------------------------------------------------------------------


def test_every_level_has_a_tactego_chooser() -> None:
    for level in range(1, 6):
        bot = games.bots.chooser("tactego", level)
        assert isinstance(bot, MoveChooser) and bot.game == "tactego" and bot.level == level
    for level in (0, 6, "5"):
        with pytest.raises(ValueError, match="level"):
            make_chooser(level)  # type: ignore[arg-type]
    assert isinstance(greedy_chooser(), GreedyChooser)
    # level 5 is the two-ply search with playouts among its near-equal moves; 3 and 4 search alone
    assert isinstance(make_chooser(5), HybridChooser) and make_chooser(5).plan.search == _PLANS[5]
    assert all(type(make_chooser(level)) is DeterminizingChooser for level in (3, 4))


def test_choose_move_works_from_plain_arguments() -> None:
    view = GAME.new_state({}, "demo").view(0)
    plain = msgpack.unpackb(msgpack.packb(view))  # what a worker process receives
    move = games.bots.choose_move("tactego", 5, plain, None, seed=3, nodes=800)
    assert move == make_chooser(5).choose(view, Budget(nodes=800), random.Random(3))
    assert move in view["legal_moves"]


# --------------------------------------------------------------------------
# The search board plays by the engine's rules
# --------------------------------------------------------------------------


def test_the_search_board_makes_and_unmakes_the_engines_moves() -> None:
    from games.bots.tactego import _steps

    rng = random.Random(11)
    for seed in range(3):
        state = GAME.new_state({"max_plies": 400}, f"board-{seed}")
        board = SearchBoard(state, _steps(8, 8), Budget(nodes=10**9).start())
        start, start_score = list(board.board), board.score
        names = state._geometry.names
        undo = []
        while state.outcome is None:
            sign = 1 if state.to_move == 0 else -1
            assert sorted(f"{names[o]}-{names[t]}" for o, t in board.moves(sign)) == sorted(state.legal_moves())
            move = rng.choice(state.legal_moves())
            origin, target = (square_index(state, half) for half in move.split("-"))
            undo.append((origin, target, board.board[origin], board.make(origin, target)))
            state = state.play(move)
            assert board.board == [0 if p is None else (p.strength + 1) * (1 - 2 * p.owner) for p in state.board]
            if state.outcome is None:
                fresh = SearchBoard(state, _steps(8, 8), Budget(nodes=1).start())
                assert board.score == pytest.approx(fresh.score)
        for origin, target, attacker, saved in reversed(undo):
            board.unmake(origin, target, attacker, saved)
        assert board.board == start and board.score == pytest.approx(start_score) and board.flags == [1, 1]


# --------------------------------------------------------------------------
# Capture-first
# --------------------------------------------------------------------------


def position(picture: str, lost: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> TactegoState:
    """A running Red-to-move position of a 9, a 5 and a flag a side, one flag each left (see :func:`tactego_positions.position`)."""
    return tactego_positions.position(picture, "9 1\n5 1\nF 1", flags=(1, 1), lost=lost)


def test_win_chance_counts_the_unseen_ranks_it_could_be() -> None:
    assert win_chance("7", "?", ["9", "5", "F"], flag_possible=True) == pytest.approx(2 / 3)
    assert win_chance("7", "?", ["9", "5", "F"], flag_possible=False) == pytest.approx(1 / 2)
    assert win_chance("5", "5", [], flag_possible=True) == 1.0  # equal strength: the attacker wins
    assert win_chance("5", "9", [], flag_possible=True) == 0.0
    assert win_chance("5", "F", [], flag_possible=True) == 1.0


def test_greedy_attacks_and_prefers_the_attack_it_expects_to_win() -> None:
    state = position("""
        rF r5 . .
        . r9 . .
        . b9* b5 .
        . . bF .
    """)
    assert state.view(0)["board"][2][1] == [1, "9"] and state.view(0)["board"][2][2] == [1, "?"]
    moves = {greedy_chooser().choose(state.view(0), Budget(nodes=1), random.Random(seed)) for seed in range(20)}
    # the 9 beats the revealed 9 (the attacker wins ties) and the unknown piece (a 5 or the flag)
    assert moves <= {"b2-b3", "b2-c3"} and moves
    weaker = position("""
        rF r9 . .
        . . . .
        . b9* r5 .
        . . b5 bF
    """)
    moves = {greedy_chooser().choose(weaker.view(0), Budget(nodes=1), random.Random(seed)) for seed in range(20)}
    assert moves == {"c3-c4", "c3-d4"}  # the 5 takes an unknown (a 5 or the flag), never the known 9


def test_greedy_steps_forward_when_it_cannot_attack() -> None:
    state = GAME.new_state({}, "demo")
    for seed in range(10):
        move = greedy_chooser().choose(state.view(0), Budget(nodes=1), random.Random(seed))
        origin, target = move.split("-")
        assert int(target[1:]) == int(origin[1:]) + 1  # Red sets up at the top: forward is down


# --------------------------------------------------------------------------
# Legal, deterministic, within its budget
# --------------------------------------------------------------------------


@pytest.mark.parametrize("options", [
    {"rows": 5, "cols": 6, "pieces": "4 2\n2 3\nF 2\n", "max_plies": 80},
    {"rows": 4, "cols": 4, "hidden": False, "pieces": "3 2\n1 1\nF 1", "max_plies": 60},
])
def test_every_level_plays_legal_moves_on_other_boards(options: dict[str, Any]) -> None:
    for level in range(1, 6):
        states = play_game(make_chooser(level), make_chooser(6 - level), level, 300, options)
        assert states[-1].outcome is not None


def test_same_view_seed_and_node_budget_give_the_same_move() -> None:
    states = play_game(make_chooser(3), greedy_chooser(), 4, 200)
    for state in states[10:60:10]:
        view = state.view(state.to_move)
        moves = {make_chooser(5).choose(view, Budget(nodes=1200), random.Random(9)) for _ in range(2)}
        assert len(moves) == 1


def test_a_time_budget_is_kept_to_within_a_few_milliseconds() -> None:
    states = play_game(make_chooser(3), greedy_chooser(), 5, 200)
    state = states[len(states) // 2]
    view = state.view(state.to_move)
    bot = make_chooser(5)
    for seconds in (0.02, 0.1):
        started = time.perf_counter()
        bot.choose(view, Budget(seconds=seconds), random.Random(1))
        assert time.perf_counter() - started < seconds + 0.1  # a few ms, plus slack for a loaded machine


# --------------------------------------------------------------------------
# Fairness: the hidden ranks never change the move
# --------------------------------------------------------------------------


def _twin_setup(states: list[TactegoState], seat: int) -> TactegoState:
    """The first state of ``states`` with the opponent's never-fought pieces' ranks shuffled.

    Pieces are followed from their setup squares: those that fought keep their
    ranks, so every combat ends the same; the flag only trades places with
    pieces that never moved, so every move stays legal. ``seat`` sees nothing
    of the difference.
    """
    opponent = 1 - seat
    start = states[0]
    origin_of = {i: i for i, p in enumerate(start.board) if p is not None}
    fought, moved = set(), set()
    for before, after in zip(states, states[1:]):
        origin, target = (square_index(before, half) for half in after.last_move.split("-"))
        mover, defender = origin_of.pop(origin), origin_of.get(target)
        moved.add(mover)
        if defender is not None:
            fought.update((mover, defender))
        if after.board[target] is before.board[target]:
            continue  # the defender held
        origin_of[target] = mover
    free = [i for i, p in enumerate(start.board) if p is not None and p.owner == opponent and i not in fought]
    board = list(start.board)
    for group in ([i for i in free if i in moved], [i for i in free if i not in moved]):
        ranks = [start.board[i] for i in group]
        for i, piece in zip(group, ranks[1:] + ranks[:1]):
            board[i] = piece
    return TactegoState(GAME, start.options, "twin", start._geometry, tuple(board), 0, 0, None, None,
                        (16, 16), (1, 1), ((), ()), None)


def _replay(start: TactegoState, moves: list[str]) -> list[TactegoState]:
    states = [start]
    for move in moves:
        states.append(states[-1].play(move))
    return states


@pytest.mark.parametrize("seed, seat", [(21, 0), (22, 1), (23, 0)])
def test_positions_that_look_the_same_to_the_bot_get_the_same_move(seed: int, seat: int) -> None:
    bots = [make_chooser(3), greedy_chooser()] if seat == 0 else [greedy_chooser(), make_chooser(3)]
    real = play_game(*bots, seed, 300)[:120]
    twin = _replay(_twin_setup(real, seat), [s.last_move for s in real[1:]])
    compared = combats = 0
    for ply, (state, other) in enumerate(zip(real, twin)):
        if state.to_move != seat or (ply % 8 and state.view(None)["last_combat"] is None):
            continue
        view = state.view(seat)
        assert other.view(seat) == view
        assert other.board != state.board  # the hidden ranks differ
        combats += bool(view["lost"][0] or view["lost"][1])
        moves = [make_chooser(level).choose(v, Budget(nodes=600), random.Random(ply))
                 for level in (2, 5) for v in (view, other.view(seat))]
        assert moves[0] == moves[1] and moves[2] == moves[3]
        compared += 1
    assert compared >= 8 and combats >= 3


# --------------------------------------------------------------------------
# Strength (the full measurement is benchmarks/strength.py)
# --------------------------------------------------------------------------


def test_level_5_beats_capture_first_in_most_games() -> None:
    wins = 0
    for seed in range(6):
        bot_seat = seed % 2
        players = [greedy_chooser(), greedy_chooser()]
        players[bot_seat] = make_chooser(5)
        wins += play_game(*players, seed, 800)[-1].outcome.winner == bot_seat
    assert wins >= 5  # of 6; longer matches: the module docstring of games.bots.tactego


def test_capture_first_level_2_beats_the_beginner_level_1_in_most_games_and_level_1_beats_random() -> None:
    from games.bots.random_chooser import RandomChooser

    def wins(strong: MoveChooser, weak: MoveChooser, games_played: int) -> int:
        """Games won by ``strong``, seated as benchmarks/strength.py seats and seeds them."""
        won = 0
        for index in range(games_played):
            seed, seat = 1 + index, index % 2
            state = GAME.new_state({"max_plies": 400}, seed)
            while state.outcome is None:
                player = strong if state.to_move == seat else weak
                rng = random.Random(seed * 100_003 + state.ply)
                state = state.play(player.choose(state.view(state.to_move), Budget(nodes=100), rng))
            won += state.outcome.winner == seat
        return won

    # >= 75 %; when level 1 played half its moves at random, capture-first won 127 of these 200
    assert wins(make_chooser(2), make_chooser(1), 200) >= 150
    assert wins(make_chooser(1), RandomChooser(), 40) >= 28
