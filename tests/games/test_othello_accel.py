"""The Othello engine's C accelerator against its pure-Python primitives (issue 21).

Both paths run here in one process (:func:`games.othello.use_accelerator`
switches between them): the primitives compared on random boards, perft
through ``play()`` to depth 5 and 6, and thousands of random-game positions
compared move by move (legal moves, boards after each move, every seat's
view, outcomes and refusals).
"""

from __future__ import annotations

import random
import shutil
import sysconfig
from pathlib import Path
from typing import Any, Iterator

import pytest

from games import othello
from games.base import IllegalMove
from games.othello import Othello, OthelloState

GAME = Othello()

needs_accelerator = pytest.mark.skipif(othello._othello_accel is None, reason="the C accelerator was not built here")


@pytest.fixture
def pure() -> Iterator[None]:
    """The pure-Python primitives for one test, the accelerator again after it."""
    othello.use_accelerator(False)
    try:
        yield
    finally:
        othello.use_accelerator(True)


def random_board(rng: random.Random, size: int) -> tuple[int, int]:
    """Return disjoint ``(own, opp)`` bitboards of a ``size`` board, each square empty, own or opp at random."""
    own = opp = 0
    fill = rng.random()
    for index in range(size * size):
        draw = rng.random()
        if draw < fill / 2:
            own |= 1 << index
        elif draw < fill:
            opp |= 1 << index
    return own, opp


def pure_primitives() -> tuple[Any, Any, Any, Any]:
    return othello._PRIMITIVES[False]


@pytest.mark.skipif(othello._othello_accel is not None, reason="only where the accelerator was not built")
def test_without_the_accelerator_the_engine_runs_pure_python() -> None:  # pragma: no cover - needs an install without gcc
    assert othello.use_accelerator(True) is False and not othello.accelerated()


def test_the_accelerator_is_built_where_a_c_compiler_and_the_python_headers_are() -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        pytest.skip("no Python headers here")
    assert othello._othello_accel is not None
    assert othello.accelerated() and othello.use_accelerator(True) is True


@needs_accelerator
def test_use_accelerator_switches_the_primitives_both_ways() -> None:
    try:
        assert othello.use_accelerator(False) is False and not othello.accelerated()
        assert othello._placing_moves is othello._PRIMITIVES[False][0]
    finally:
        assert othello.use_accelerator(True) is True
    assert othello.accelerated() and othello._placing_moves is othello._accelerated_placing_moves


@needs_accelerator
@pytest.mark.parametrize("size", [6, 8])
def test_moves_and_flips_agree_with_pure_python_on_random_boards(size: int) -> None:
    rng = random.Random(size)
    geo = othello._geometry(size)
    placing, flips, _, _ = pure_primitives()
    accel = othello._othello_accel
    compared = 0
    for _ in range(3000):
        own, opp = random_board(rng, size)
        assert accel.moves(own, opp, size) == placing(own, opp, geo)
        for index in range(size * size):
            if not (own | opp) >> index & 1:
                assert accel.flips(index, own, opp, size) == flips(index, own, opp, geo), (own, opp, index)
                compared += 1
    assert compared > 3000 * size * size // 4


@needs_accelerator
@pytest.mark.parametrize("size", [6, 8, 10])
def test_board_rows_and_square_names_agree_with_pure_python(size: int) -> None:
    rng = random.Random(100 + size)
    geo = othello._geometry(size)
    _, _, rows, squares = pure_primitives()
    for _ in range(2000):
        black, white = random_board(rng, size)
        assert othello._accelerated_board_rows(black, white, geo) == rows(black, white, geo)
        assert othello._accelerated_board_rows(black, white, geo) == othello._whole_board_rows(black, white, geo)
        assert othello._accelerated_squares(black, geo) == squares(black, geo)
    assert othello._accelerated_squares(0, geo) == () == squares(0, geo)
    assert othello._accelerated_squares(geo.full, geo) == geo.names


@needs_accelerator
def test_the_accelerated_board_rows_are_the_very_strings_of_the_row_table() -> None:
    geo = othello._geometry(8)
    black, white = othello._start_bitboards(8)
    rows = othello._accelerated_board_rows(black, white, geo)
    assert rows[3] is geo.row_texts[black >> 24 & 255][white >> 24 & 255]  # type: ignore[index]
    assert rows == ("........",) * 3 + ("...OX...", "...XO...") + ("........",) * 3


@needs_accelerator
@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda a: a.moves(1, 2), TypeError, "3 arguments"),
        (lambda a: a.moves("1", 2, 8), TypeError, "must be an int"),
        (lambda a: a.moves(-1, 2, 8), ValueError, r"from 0 to 2\*\*64 - 1, not -1"),
        (lambda a: a.moves(1, 1 << 64, 8), ValueError, r"from 0 to 2\*\*64 - 1, not 18446744073709551616"),
        (lambda a: a.flips(0, 1, 2, "8"), TypeError, "cannot be interpreted as an integer"),
        (lambda a: a.moves(1, 2, 9), ValueError, "1 to 8 squares a side"),
        (lambda a: a.flips(64, 1, 2, 8), ValueError, "square 64 is off a 8x8 board"),
        (lambda a: a.flips(-1, 1, 2, 8), ValueError, "off a 8x8 board"),
        (lambda a: a.rows(1, 2, ()), TypeError, "256 tuples"),
        (lambda a: a.rows(1, 2, ((),) * 256), TypeError, "256 tuples"),
        (lambda a: a.squares(1 << 40, ("a1",) * 36), ValueError, "square 40 has no name"),
        (lambda a: a.squares(1, ["a1"]), TypeError, "a tuple of square names"),
    ],
)
def test_the_accelerator_refuses_bad_arguments_with_a_clear_error(call: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        call(othello._othello_accel)


def play_perft(state: OthelloState, depth: int) -> int:
    """Leaves ``depth`` plies below ``state``, every position made by ``play()`` and asked its legal moves."""
    if depth == 0:
        return 1
    return sum(play_perft(state.play(move), depth - 1) for move in state.legal_moves())


@needs_accelerator
@pytest.mark.parametrize(("size", "depth", "leaves"), [(8, 5, 1396), (6, 6, None)])
def test_perft_through_play_is_the_same_on_both_paths(pure: None, size: int, depth: int, leaves: int | None) -> None:
    expected = play_perft(GAME.new_state({"size": size}), depth)
    othello.use_accelerator(True)
    assert play_perft(GAME.new_state({"size": size}), depth) == expected
    assert leaves is None or expected == leaves


def game_record(seed: int, size: int) -> list[tuple[Any, ...]]:
    """Play one random game; return, position by position, everything the engine says about it."""
    rng = random.Random(seed)
    state = GAME.new_state({"size": size})
    record: list[tuple[Any, ...]] = []
    while True:
        views = [state.view(seat) for seat in (0, 1, None)]
        occupied = [name for name in state._setup.geo.names if state.disc_at(name) is not None][:3]
        refusals = []
        for square in occupied + ["pass"]:
            try:
                state.play(square)
            except IllegalMove as refused:
                refusals.append(refused.reason)
        record.append((state.black, state.white, state.to_move, state.legal_moves(), state.move_count(),
                       state.must_pass, state.outcome, views, refusals))  # fmt: skip
        if state.outcome is not None:
            return record
        state = state.play(rng.choice(state.legal_moves()))


@needs_accelerator
@pytest.mark.parametrize("size", [8, 6, 10])
def test_random_games_are_the_same_position_by_position_on_both_paths(pure: None, size: int) -> None:
    seeds = range(40 if size == 8 else 15)
    expected = [game_record(seed, size) for seed in seeds]
    othello.use_accelerator(True)
    got = [game_record(seed, size) for seed in seeds]
    assert got == expected
    positions = sum(len(record) for record in got)
    assert positions > len(seeds) * size * size // 2
    assert any(record[-1][6] is not None for record in got)  # the games were played to their end


@needs_accelerator
def test_a_game_switched_midway_goes_on_the_same(pure: None) -> None:
    state = GAME.new_state()
    for move in ("f5", "d6", "c3", "d3", "c4"):
        state = state.play(move)
    othello.use_accelerator(True)
    fast = state.play("f4")
    othello.use_accelerator(False)
    slow = state.play("f4")
    assert (fast.black, fast.white, fast.view(0), fast.view(1)) == (slow.black, slow.white, slow.view(0), slow.view(1))


@needs_accelerator
def test_the_computer_players_move_generation_stays_pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = othello._fill_moves

    def counting(own: int, opp: int, steps: Any, full: int) -> int:
        calls.append(1)
        return real(own, opp, steps, full)

    monkeypatch.setattr(othello, "_fill_moves", counting)
    assert othello.accelerated()
    moves = othello.placement_generator(8)
    black, white = othello._start_bitboards(8)
    assert moves(black, white) == othello._othello_accel.moves(black, white, 8) and calls == [1]
