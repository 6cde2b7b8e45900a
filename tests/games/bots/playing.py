"""Helpers for computer-player tests: play whole games, check rebuilt positions."""

from __future__ import annotations

import random
from typing import Any, Mapping

import games
from games.bots import Budget, MoveChooser

SEATS = (0, 1, None)


def play(state: games.State, players: Mapping[int, MoveChooser], budget: Budget, seed: int) -> games.State:
    """Play ``state`` to the end, each seat's move chosen by ``players[seat]`` from its own view.

    Every chooser gets its own generator, seeded from ``seed`` and the ply.
    """
    while state.outcome is None:
        seat = state.to_move
        move = players[seat].choose(state.view(seat), budget, random.Random(seed * 100_003 + state.ply))
        state = state.play(move)
    return state


def wins(game: str, options: Mapping[str, Any], strong: MoveChooser, weak: MoveChooser, budget: Budget,
         seeds: range) -> list[int | None]:
    """Play one game per seed, ``strong`` taking seat 0 on even seeds and seat 1 on odd ones.

    Returns:
        Per game, 1 if ``strong`` won, 0 if it lost, ``None`` for a draw.
    """
    results: list[int | None] = []
    for seed in seeds:
        strong_seat = seed % 2
        players = {strong_seat: strong, 1 - strong_seat: weak}
        start = games.get(game).new_state(options, seed)
        winner = play(start, players, budget, seed).outcome.winner
        results.append(None if winner is None else int(winner == strong_seat))
    return results


def assert_views_rebuild(game: str, options: Mapping[str, Any], seeds: range) -> int:
    """Over random games, ``state_from_view`` of every seat's and the spectator's view plays like the original.

    At every position: the rebuilt state has the same legal moves, seat to
    move, outcome and view, and after each legal move the rebuilt child has
    the same legal moves as the original child (so any history the view
    carries, such as a superko record, is rebuilt too).

    Returns:
        The number of positions checked.
    """
    engine = games.get(game)
    checked = 0
    for seed in seeds:
        rng = random.Random(seed)
        state = engine.new_state(options, seed)
        while True:
            for seat in SEATS:
                view = state.view(seat)
                rebuilt = engine.state_from_view(view)
                assert rebuilt.legal_moves() == state.legal_moves(), (seed, state.ply, seat)
                assert (rebuilt.to_move, rebuilt.outcome, rebuilt.ply) == (state.to_move, state.outcome, state.ply)
                assert rebuilt.view(seat) == view
                for move, child in zip(state.legal_moves(), state.children()):
                    assert rebuilt.play(move).legal_moves() == child.legal_moves(), (seed, state.ply, move)
            checked += 1
            if state.outcome is not None:
                break
            state = state.play(rng.choice(state.legal_moves()))
    return checked


def assert_legal_to_the_end(bot: MoveChooser, state: games.State, budget: Budget, rng: random.Random,
                            max_ply: int | None = None) -> None:
    """Let ``bot`` play both seats of ``state`` to the end (or ``max_ply``), asserting that each of its moves is legal."""
    while state.outcome is None and (max_ply is None or state.ply < max_ply):
        move = bot.choose(state.view(state.to_move), budget, rng)
        assert move in state.legal_moves(), f"{bot!r} chose {move!r} at ply {state.ply}"
        state = state.play(move)


def assert_same_move_each_time(bot: MoveChooser, state: games.State, budget: Budget, seed: int, times: int = 3) -> str:
    """Assert that ``bot`` chooses one move for the view of the seat to move, given the same seed and node budget; return it."""
    moves = {bot.choose(state.view(state.to_move), budget, random.Random(seed)) for _ in range(times)}
    assert len(moves) == 1, f"{bot!r} chose {sorted(moves)} from one view and seed"
    return moves.pop()
