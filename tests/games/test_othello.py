"""Tests of the Othello engine, its perft counts and its renderer.

Rules: RULES.md, "Othello"; seed 002_e6146ce5720fcbb1.txt (sections 2 and 3).
"""

from __future__ import annotations

import random
import types
from typing import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.render.othello import render
from games import othello
from games.base import IllegalMove, InvalidOption, Outcome
from games.othello import Othello, OthelloState
from games.perft import perft

GAME = Othello()


def start(size: int = 8) -> OthelloState:
    return GAME.new_state({"size": size})


def play_all(state: OthelloState, *moves: str) -> OthelloState:
    for move in moves:
        state = state.play(move)
    return state


def reason_of(state: OthelloState, move: str) -> str:
    with pytest.raises(IllegalMove) as info:
        state.play(move)
    assert info.value.move == move
    return info.value.reason


# ---------------------------------------------------------------------------
# A naive reference engine on a 2-D list, to cross-check the bitboards
# ---------------------------------------------------------------------------

DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


def naive_flips(rows: list[str], row: int, col: int, mark: str) -> set[tuple[int, int]]:
    size = len(rows)
    other = "O" if mark == "X" else "X"
    if rows[row][col] != ".":
        return set()
    flips: set[tuple[int, int]] = set()
    for dr, dc in DIRECTIONS:
        run = []
        r, c = row + dr, col + dc
        while 0 <= r < size and 0 <= c < size and rows[r][c] == other:
            run.append((r, c))
            r, c = r + dr, c + dc
        if run and 0 <= r < size and 0 <= c < size and rows[r][c] == mark:
            flips.update(run)
    return flips


def naive_moves(rows: list[str], mark: str) -> list[str]:
    size = len(rows)
    return [
        f"{'abcdefghijklmnop'[c]}{r + 1}"
        for r in range(size)
        for c in range(size)
        if naive_flips(rows, r, c, mark)
    ]


# ---------------------------------------------------------------------------
# Options (RULES.md: size even, 6..16, default 8)
# ---------------------------------------------------------------------------


def test_metadata() -> None:
    assert GAME.name == "othello"
    assert GAME.seats == ("Black", "White")
    assert GAME.uses_seed is False
    assert [o.name for o in GAME.options] == ["size"]


def test_default_size_is_8() -> None:
    assert GAME.new_state().size == 8
    assert GAME.new_state({"size": None}).options == {"size": 8}


@pytest.mark.parametrize("size", [6, 8, 10, 12, 14, 16])
def test_even_sizes_accepted(size: int) -> None:
    state = start(size)
    assert state.size == size
    assert len(state.rows()) == size and all(len(row) == size for row in state.rows())


@pytest.mark.parametrize("size", [7, 9, 11, 13, 15])
def test_odd_size_refused(size: int) -> None:
    with pytest.raises(InvalidOption) as info:
        start(size)
    assert info.value.option == "size"
    assert "even" in str(info.value) and str(size) in str(info.value)


@pytest.mark.parametrize("size", [-2, 0, 4, 5, 17, 18, 100])
def test_size_out_of_range_refused(size: int) -> None:
    with pytest.raises(InvalidOption) as info:
        start(size)
    assert info.value.option == "size"
    assert "from 6 to 16" in str(info.value)


@pytest.mark.parametrize("value", ["8", 8.0, True, [8]])
def test_size_wrong_type_refused(value: object) -> None:
    with pytest.raises(InvalidOption) as info:
        GAME.new_state({"size": value})
    assert info.value.option == "size"


def test_unknown_option_refused() -> None:
    with pytest.raises(InvalidOption) as info:
        GAME.new_state({"colour": "red"})
    assert "size" in str(info.value)


# ---------------------------------------------------------------------------
# Start positions (RULES.md; seed 2.2)
# ---------------------------------------------------------------------------


def test_start_8x8() -> None:
    state = start()
    assert state.disc_at("d4") == 1 and state.disc_at("e5") == 1  # White
    assert state.disc_at("e4") == 0 and state.disc_at("d5") == 0  # Black
    assert state.disc_counts() == (2, 2)
    assert state.to_move == 0 and state.ply == 0
    assert state.last_move is None and state.outcome is None
    assert state.legal_moves() == ["d3", "c4", "f5", "e6"]


@pytest.mark.parametrize(
    ("size", "white", "black", "moves"),
    [
        (6, ("c3", "d4"), ("d3", "c4"), ["c2", "b3", "e4", "d5"]),
        (10, ("e5", "f6"), ("f5", "e6"), ["e4", "d5", "g6", "f7"]),
        (16, ("h8", "i9"), ("i8", "h9"), ["h7", "g8", "j9", "i10"]),
    ],
)
def test_start_other_sizes(size: int, white: tuple[str, str], black: tuple[str, str], moves: list[str]) -> None:
    state = start(size)
    assert [state.disc_at(square) for square in white] == [1, 1]
    assert [state.disc_at(square) for square in black] == [0, 0]
    assert state.disc_counts() == (2, 2)
    assert state.legal_moves() == moves


def test_start_16x16_corner_squares() -> None:
    state = start(16)
    assert state.disc_at("a1") is None and state.disc_at("p16") is None
    assert state.play("j9").disc_at("j9") == 0


# ---------------------------------------------------------------------------
# Placing and flipping (RULES.md; seed 2 and 2.1)
# ---------------------------------------------------------------------------


def test_first_move_flips_one_disc() -> None:
    state = start().play("d3")
    assert state.disc_at("d3") == 0 and state.disc_at("d4") == 0
    assert state.disc_counts() == (4, 1)
    assert state.to_move == 1 and state.ply == 1 and state.last_move == "d3"
    assert state.legal_moves() == ["c3", "e3", "c5"]


def test_flips_every_line_at_once() -> None:
    # Black on d4 closes a row, a column and two diagonals at once.
    state = OthelloState.from_diagram(
        """
        X . X . X .
        . O O O . .
        X O . O X .
        . O O O . .
        X . X . X .
        . . . . . .
        """
    ).play("c3")
    assert state.diagram().splitlines()[:5] == ["X.X.X.", ".XXX..", "XXXXX.", ".XXX..", "X.X.X."]
    assert state.disc_counts() == (17, 0)


def test_a_line_must_end_in_own_disc() -> None:
    # b1 O runs to the edge: no flip to the east of a1.
    state = OthelloState.from_diagram(
        """
        . O O O O O
        X O . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        """,
        to_move=0,
    )
    assert reason_of(state, "a1") == "a1 flips nothing"
    assert state.legal_moves() == ["c2"]


def test_lines_do_not_wrap_around_the_board_edge() -> None:
    # f1 is White and a2 Black: east of f1 is off the board, not a2.
    state = OthelloState.from_diagram(
        """
        . . . . O O
        X . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        """
    )
    assert state.outcome is not None  # Black cannot place on d1, nor anywhere
    assert state.outcome.reason == "mutual blocking"


def test_seed_illustration_4x4_in_a_6x6_corner() -> None:
    # Seed 2.1 uses a 4x4 board; its pictures are lost, but the text fixes it
    # uniquely: Black can flank only on d1..d4; d1 flips c2 (with b3); d3
    # flips c3 (with b3). Then White can play a1, a3, a4, c1 or d2; d2 flips
    # two discs; Black's d3 flips two along two lines; White's a4 flips b3 and b4.
    # Here it sits in the top-left corner of a 6x6 board (extra squares empty).
    corner = """
        . . . . . .
        O X O . . .
        . X O . . .
        . X O . . .
        . . . . . .
        . . . . . .
        """
    state = OthelloState.from_diagram(corner, to_move=0)
    in_corner = lambda moves: [m for m in moves if m[0] in "abcd" and int(m[1:]) <= 4]  # noqa: E731
    assert in_corner(state.legal_moves()) == ["d1", "d2", "d3", "d4"]
    assert _changed(state, state.play("d3")) == {"c3"}

    state = state.play("d1")
    assert _changed(OthelloState.from_diagram(corner), state) == {"c2"}
    assert in_corner(state.legal_moves()) == ["a1", "c1", "d2", "a3", "a4"]

    after = state.play("d2")
    assert _changed(state, after) == {"b2", "c2"}
    state, after = after, after.play("d3")
    assert _changed(state, after) == {"c3", "d2"}  # a row and a column
    state, after = after, after.play("a4")
    assert _changed(state, after) == {"b3", "b4"}


def _changed(before: OthelloState, after: OthelloState) -> set[str]:
    """Squares whose disc changed colour (the placed square excluded)."""
    return {
        f"{'abcdefghijklmnop'[c]}{r + 1}"
        for r, (old, new) in enumerate(zip(before.rows(), after.rows()))
        for c, (a, b) in enumerate(zip(old, new))
        if a != "." and a != b
    }


# ---------------------------------------------------------------------------
# Refused moves and parsing
# ---------------------------------------------------------------------------


def test_occupied_square_refused() -> None:
    assert reason_of(start(), "d4") == "d4 is occupied"
    assert reason_of(start(), "E4") == "e4 is occupied"


def test_square_that_flips_nothing_refused() -> None:
    assert reason_of(start(), "d6") == "d6 flips nothing"
    assert reason_of(start(), "a1") == "a1 flips nothing"


@pytest.mark.parametrize("move", ["z9", "i1", "a9", "d0", "Z9"])
def test_off_board_refused(move: str) -> None:
    assert reason_of(start(), move) == f"{move.lower()} is off the 8x8 board"


def test_off_board_names_the_size() -> None:
    assert reason_of(start(6), "g1") == "g1 is off the 6x6 board"
    assert reason_of(start(16), "q1") == "q1 is off the 16x16 board"
    assert reason_of(start(16), "a17") == "a17 is off the 16x16 board"


@pytest.mark.parametrize("move", ["xyz", "", "  ", "d", "3", "3d", "d-3", "d3d", "ä3", "passe"])
def test_unparseable_refused(move: str) -> None:
    assert reason_of(start(), move) == (
        f"{move.strip()!r} is not a square (notation: a column letter and a row number, e.g. d3)"
    )


@pytest.mark.parametrize("move", ["d3", "D3", " d3 ", "d 3", "\td3\n", "d03"])
def test_forgiving_input_gives_canonical_notation(move: str) -> None:
    state = start().play(move)
    assert state.last_move == "d3"
    assert state.disc_at("d3") == 0


def test_non_text_move_refused() -> None:
    with pytest.raises(IllegalMove):
        start().play(None)  # type: ignore[arg-type]


def test_canonical_names_on_large_board() -> None:
    state = start(16)
    assert all(m == m.lower() and m[0] in "abcdefghijklmnop" for m in state.legal_moves())
    assert state.play("I10").last_move == "i10"


# ---------------------------------------------------------------------------
# Forced passes (RULES.md; seed 2.3)
# ---------------------------------------------------------------------------

PASS_SEQUENCE = """
    X O . . . .
    O . . . . .
    . . . . . .
    . . . . . .
    . . . . . .
    . . . . . .
    """


def test_turn_names_a_forced_pass_and_the_end(generations: list[int]) -> None:
    passing = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1)
    assert passing.turn() == (1, None, True) and passing.last_move is None
    after = passing.play("pass")
    assert after.last_move == "pass" and after.turn() == (0, None, False)
    placed = after.play("c1")
    assert placed.last_move == "c1" and placed.turn() == (1, None, True)
    over = play_all(placed, "pass", "a3")
    assert over.last_move == "a3" and over.turn() == (None, over.outcome, False) and over.outcome is not None
    assert start().play("d3").turn() == (1, None, False) and start().play("d3").last_move == "d3"
    rebuilt = GAME.state_from_view(placed.view(None))
    assert rebuilt.last_move == "c1" and rebuilt.turn() == placed.turn()


def test_pass_only_when_no_disc_can_be_placed() -> None:
    assert reason_of(start(), "pass") == "pass is allowed only when no disc can be placed"
    assert start().must_pass is False
    assert "pass" not in start().legal_moves()


def test_forced_pass_sequence() -> None:
    state = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1, ply=7)
    assert state.to_move == 1 and state.outcome is None
    assert state.must_pass is True
    assert state.legal_moves() == ["pass"]
    assert reason_of(state, "c1") == "c1 flips nothing; White must pass"
    assert reason_of(state, "a1") == "a1 is occupied"

    state = state.play(" PASS ")
    assert state.last_move == "pass" and state.ply == 8 and state.to_move == 0
    assert state.diagram() == OthelloState.from_diagram(PASS_SEQUENCE).diagram()
    assert state.legal_moves() == ["c1", "a3"]
    assert reason_of(state, "pass") == "pass is allowed only when no disc can be placed"

    state = state.play("c1")
    assert state.to_move == 1 and state.legal_moves() == ["pass"]  # White must pass again
    state = play_all(state, "pass", "a3")
    assert state.ply == 11
    assert state.outcome == Outcome(0, "elimination", (5, 0))


def test_pass_keeps_the_board() -> None:
    state = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1)
    after = state.play("pass")
    assert (after.black, after.white) == (state.black, state.white)


# ---------------------------------------------------------------------------
# Game over (RULES.md; seed 2.4)
# ---------------------------------------------------------------------------


def test_elimination_seed_coup_de_grace() -> None:
    # Seed 2.4.1: White to play eliminates Black.
    state = OthelloState.from_diagram(
        """
        O X . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        """,
        to_move=1,
    )
    state = state.play("c1")
    assert state.outcome == Outcome(1, "elimination", (0, 3))
    assert state.to_move is None
    assert state.legal_moves() == []


def test_mutual_blocking_with_free_squares_ends_at_once() -> None:
    state = OthelloState.from_diagram(
        """
        X O . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . O O
        """
    )
    assert state.legal_moves() == ["c1"]
    state = state.play("c1")
    assert state.outcome == Outcome(0, "mutual blocking", (3, 2))
    assert state.to_move is None and state.legal_moves() == []
    assert sum(row.count(".") for row in state.rows()) == 31


def test_mutual_blocking_seed_white_wins_4_to_3() -> None:
    # Seed 2.4.2: a mutual blocking that White wins by 4 to 3.
    state = OthelloState.from_diagram(
        """
        X X X . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . O O O O
        """
    )
    assert state.outcome == Outcome(1, "mutual blocking", (3, 4))
    assert state.to_move is None


def test_board_full_draw() -> None:
    state = OthelloState.from_diagram(
        """
        O O O O O O
        O O O O O O
        O O O O O O
        X X X X X X
        X X X X X X
        X X X X O .
        """
    )
    assert state.legal_moves() == ["f6"]
    state = state.play("f6")
    assert state.outcome == Outcome(None, "board full", (18, 18))
    assert state.to_move is None


def test_board_full_win() -> None:
    state = OthelloState.from_diagram(
        """
        X X X X X X
        X X X X X X
        X X X X X X
        X X X X X X
        O O O O O O
        O O O O X .
        """,
        to_move=1,
    )
    state = state.play("f6")
    assert state.outcome == Outcome(0, "board full", (24, 12))


def test_full_board_of_one_colour_is_elimination() -> None:
    state = OthelloState.from_diagram("\n".join(["XXXXXX"] * 5 + ["XXXXO."]))
    state = state.play("f6")
    assert state.outcome == Outcome(0, "elimination", (36, 0))


def test_play_after_game_over_refused() -> None:
    state = OthelloState.from_diagram("\n".join(["XXXXXX"] * 3 + ["......"] * 3))
    assert state.outcome is not None
    assert reason_of(state, "a4") == "the game is over"
    assert reason_of(state, "pass") == "the game is over"


def test_random_games_end_and_score_by_discs() -> None:
    rng = random.Random(2)
    for size in (6, 8):
        for _ in range(10):
            state = start(size)
            while state.outcome is None:
                state = state.play(rng.choice(state.legal_moves()))
            black, white = state.disc_counts()
            assert state.outcome.score == (black, white)
            assert state.outcome.winner == (0 if black > white else 1 if white > black else None)
            assert state.outcome.reason in ("board full", "mutual blocking", "elimination")


# ---------------------------------------------------------------------------
# Cross-check against the naive engine (hypothesis)
# ---------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.sampled_from([6, 8, 10]))
def test_random_playout_matches_naive_engine(seed: int, size: int) -> None:
    rng = random.Random(seed)
    state = start(size)
    while state.outcome is None:
        rows = state.rows()
        mark = "XO"[state.to_move]
        expected = naive_moves(rows, mark)
        assert state.legal_moves() == (expected or ["pass"])
        if not expected:
            assert naive_moves(rows, "OX"[state.to_move])  # the opponent can move
            state = state.play("pass")
            continue
        move = rng.choice(expected)
        col, row = "abcdefghijklmnop".index(move[0]), int(move[1:]) - 1
        flips = naive_flips(rows, row, col, mark)
        after = state.play(move)
        counts, new_counts = state.disc_counts(), after.disc_counts()
        mover = state.to_move
        assert new_counts[mover] == counts[mover] + 1 + len(flips)
        assert new_counts[1 - mover] == counts[1 - mover] - len(flips)
        assert {(r, c) for r, c in flips if after.rows()[r][c] == mark} == flips
        state = after
    rows = state.rows()
    assert not naive_moves(rows, "X") and not naive_moves(rows, "O")


# ---------------------------------------------------------------------------
# Perft (known counts for the 8x8 start)
# ---------------------------------------------------------------------------


PERFT_8X8 = [(0, 1), (1, 4), (2, 12), (3, 56), (4, 244), (5, 1396), (6, 8200), (7, 55092), (8, 390216)]


@pytest.mark.parametrize(("depth", "leaves"), PERFT_8X8)
def test_perft_8x8(depth: int, leaves: int) -> None:
    assert perft(start(), depth) == leaves


@pytest.mark.parametrize(("depth", "leaves"), PERFT_8X8[:8])
def test_perft_8x8_playing_every_leaf(depth: int, leaves: int) -> None:
    assert perft(start(), depth, play_leaves=True) == leaves


def notation_perft(state: OthelloState, depth: int) -> int:
    """Perft through legal_moves() and play(text) alone, the way perft worked before children()."""
    if depth == 0:
        return 1
    if state.outcome is not None:
        return 0
    return sum(notation_perft(state.play(move), depth - 1) for move in state.legal_moves())


@pytest.mark.parametrize(("size", "depth"), [(6, 6), (10, 4), (12, 3), (14, 3), (16, 3)])
def test_perft_other_sizes_agrees_with_playing_by_notation(size: int, depth: int) -> None:
    expected = notation_perft(start(size), depth)
    assert perft(start(size), depth) == expected == perft(start(size), depth, play_leaves=True)


@pytest.mark.parametrize("play_leaves", [False, True])
def test_perft_counts_pass_and_stops_at_game_over(play_leaves: bool) -> None:
    passing = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1)
    assert perft(passing, 1, play_leaves=play_leaves) == 1  # the pass
    assert perft(passing, 2, play_leaves=play_leaves) == 2  # then c1 or a3
    over = passing.play("pass").play("c1").play("pass").play("a3")
    assert perft(over, 0, play_leaves=play_leaves) == 1
    assert perft(over, 1, play_leaves=play_leaves) == 0 and perft(over, 3, play_leaves=play_leaves) == 0


# ---------------------------------------------------------------------------
# Cheap states: nothing is worked out before it is needed (issue 10)
# ---------------------------------------------------------------------------


@pytest.fixture(params=[True, False], ids=["accelerated", "pure"])
def generations(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Count the engine's move generations, of one board or of siblings side by side (the real functions still do the work).

    Once with the C accelerator (where it was built), once in pure Python.
    """
    if request.param and othello._othello_accel is None:
        pytest.skip("the C accelerator was not built here")
    othello.use_accelerator(request.param)
    calls: list[int] = []
    one_board, siblings = othello._placing_moves, othello._Siblings._work_out

    def counting(own: int, opp: int, geo: object) -> int:
        calls.append(1)
        return one_board(own, opp, geo)  # type: ignore[arg-type]

    def counting_siblings(self: object) -> object:
        calls.append(1)
        return siblings(self)  # type: ignore[arg-type]

    monkeypatch.setattr(othello, "_placing_moves", counting)
    monkeypatch.setattr(othello._Siblings, "_work_out", counting_siblings)
    accelerator = othello._C
    if accelerator is not None:  # the hottest methods call the accelerator's moves() themselves

        def counting_c(own: int, opp: int, size: int) -> int:
            calls.append(1)
            return accelerator.moves(own, opp, size)

        parts = {name: getattr(accelerator, name) for name in ("moves", "flips", "rows", "squares")}
        monkeypatch.setattr(othello, "_C", types.SimpleNamespace(**{**parts, "moves": counting_c}))
    yield calls
    monkeypatch.undo()
    othello.use_accelerator(True)


def test_play_does_not_generate_the_next_sides_moves(generations: list[int]) -> None:
    state = start()
    assert state.legal_moves() == ["d3", "c4", "f5", "e6"]
    before = len(generations)
    after = state.play("d3")
    assert len(generations) == before, "play() worked out the next side's moves"
    assert after.to_move == 1 and after.outcome is None and len(generations) == before + 1
    assert after.legal_moves() == ["c3", "e3", "c5"] and after.move_count() == 3 and after.must_pass is False
    assert len(generations) == before + 1, "a state works out its moves once"


def test_children_do_not_generate_their_moves(generations: list[int]) -> None:
    state = start()
    children = state.children()
    assert [child.last_move for child in children] == ["d3", "c4", "f5", "e6"] and len(generations) == 1
    assert [child.move_count() for child in children] == [3, 3, 3, 3] and len(generations) == 2, "siblings' moves come in one pass"
    assert len(generations) == 2, "a state works out its moves once"
    assert [child.legal_moves() for child in children] == [state.play(move).legal_moves() for move in ["d3", "c4", "f5", "e6"]]


def test_move_count_counts_a_pass_and_nothing_after_the_end() -> None:
    passing = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1)
    assert passing.move_count() == 1 and [c.last_move for c in passing.children()] == ["pass"]
    over = play_all(passing, "pass", "c1", "pass", "a3")
    assert over.move_count() == 0 and over.children() == [] and over.legal_moves() == []


def _same_position(one: OthelloState, other: OthelloState) -> bool:
    return (one.black, one.white, one.ply, one.to_move, one.outcome, one.last_move, one.legal_moves()) == (
        other.black, other.white, other.ply, other.to_move, other.outcome, other.last_move, other.legal_moves()
    )


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.sampled_from([6, 8, 10, 16]))
def test_children_are_the_states_play_gives(seed: int, size: int) -> None:
    rng = random.Random(seed)
    state = start(size)
    while True:
        legal = state.legal_moves()
        children = state.children()
        assert state.move_count() == len(legal) == len(children)
        for move, child in zip(legal, children):
            played = state.play(move)
            assert (child.black, child.white, child.ply, child.last_move) == (played.black, played.white, played.ply, move)
            assert child.move_count() == played.move_count() and child.to_move == played.to_move
        if not children:
            break
        index = rng.randrange(len(children))
        chosen, played = children[index], state.play(legal[index])
        assert _same_position(chosen, played) and chosen.view(chosen.to_move) == played.view(chosen.to_move)
        state = chosen
    assert state.outcome is not None


def test_perft_negative_depth_refused() -> None:
    with pytest.raises(ValueError):
        perft(start(), -1)


# ---------------------------------------------------------------------------
# Immutability and diagrams
# ---------------------------------------------------------------------------


def test_playing_does_not_change_the_old_state() -> None:
    state = start().play("d3")
    before = (state.black, state.white, state.ply, state.to_move, state.last_move, state.legal_moves())
    state.play("c3")
    state.play("e3")
    with pytest.raises(IllegalMove):
        state.play("a1")
    assert (state.black, state.white, state.ply, state.to_move, state.last_move, state.legal_moves()) == before


def test_legal_moves_returns_a_fresh_list() -> None:
    state = start()
    state.legal_moves().clear()
    assert state.legal_moves() == ["d3", "c4", "f5", "e6"]


def test_state_has_slots() -> None:
    with pytest.raises(AttributeError):
        start().colour = "red"  # type: ignore[attr-defined]


def test_diagram_round_trip_including_render_output() -> None:
    state = play_all(start(10), "e4", "d4", "c4")
    assert OthelloState.from_diagram(state.diagram(), to_move=state.to_move).diagram() == state.diagram()
    board_part = render(state.view(None), None).split("\n\n")[0]
    assert OthelloState.from_diagram(board_part).diagram() == state.diagram()


def test_from_diagram_lowercase_and_dashes_free() -> None:
    state = OthelloState.from_diagram("\n".join(["......"] * 2 + ["..ox..", "..xo.."] + ["......"] * 2))
    assert state.diagram() == start(6).diagram()
    assert state.options == {"size": 6} and state.game.name == "othello"


@pytest.mark.parametrize(
    ("diagram", "message"),
    [
        ("\n".join(["....."] * 5), "even number of rows"),
        ("\n".join(["........"] * 4), "even number of rows"),
        ("\n".join(["......"] * 5 + [".....X"[:5]]), "row 6 has 5 squares"),
        ("\n".join(["......"] * 5 + ["....B."]), "'B'"),
        ("\n".join(["......"] * 6), "at least one disc"),
    ],
)
def test_from_diagram_errors(diagram: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OthelloState.from_diagram(diagram)


def test_from_diagram_bad_turn_or_ply() -> None:
    with pytest.raises(ValueError):
        OthelloState.from_diagram(start(6).diagram(), to_move=2)
    with pytest.raises(ValueError):
        OthelloState.from_diagram(start(6).diagram(), ply=-1)


# ---------------------------------------------------------------------------
# Views
# ---------------------------------------------------------------------------


def _plain(value: object) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, bool)


def test_view_contents() -> None:
    state = start().play("d3")
    view = state.view(1)
    assert view == {
        "game": "othello",
        "ply": 1,
        "to_move": 1,
        "outcome": None,
        "size": 8,
        "board": ["........", "........", "...X....", "...XX...", "...XO...", "........", "........", "........"],
        "discs": [4, 1],
        "must_pass": False,
        "last_move": "d3",
        "legal_moves": ["c3", "e3", "c5"],
    }
    assert _plain(view)


def test_view_per_seat() -> None:
    state = start()
    mover, other, spectator = state.view(0), state.view(1), state.view(None)
    assert mover["legal_moves"] == state.legal_moves()
    assert "legal_moves" not in other and "legal_moves" not in spectator
    mover.pop("legal_moves")
    assert mover == other == spectator
    with pytest.raises(ValueError):
        state.view(2)


def test_view_pass_and_game_over() -> None:
    state = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1)
    view = state.view(1)
    assert view["must_pass"] is True and view["legal_moves"] == ["pass"]
    over = play_all(state, "pass", "c1", "pass", "a3")
    view = over.view(None)
    assert view["must_pass"] is False and view["to_move"] is None
    assert view["outcome"] == {"winner": 0, "reason": "elimination", "score": [5, 0]}
    assert _plain(view)


# ---------------------------------------------------------------------------
# Rendering (seed 3.3)
# ---------------------------------------------------------------------------

SEED_DISPLAY = """
      A B C D E F G H
1  . . . . . . . .
2  . . . . . . . .
3  . . . . O . . .
4  . . . X O X . .
5  . . . X X . . .
6  . . . X O . . .
7  . . . . . . . .
8  . . . . . . . .
"""


def test_render_seed_display_example() -> None:
    # Seed 3.3.1: turn 5, O to play, O can play, O 3 and X 5.
    state = OthelloState.from_diagram(SEED_DISPLAY, to_move=1, ply=4)
    text = render(state.view(1), 1)
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDEFGH")
    assert lines[3].split() == ["3", ".", ".", ".", ".", "O", ".", ".", "."]
    assert lines[4].split() == ["4", ".", ".", ".", "X", "O", "X", ".", "."]
    assert lines[8].split()[0] == "8"
    assert "Discs: X Black 5, O White 3" in lines
    assert "White (O) can place a disc" in lines


def test_render_start_columns_align() -> None:
    lines = render(start().view(None), None).splitlines()
    assert lines[0] == "    A B C D E F G H"
    assert lines[4] == " 4  . . . O X . . ."
    assert lines[5] == " 5  . . . X O . . ."
    assert lines[-1] == "Black (X) can place a disc"


def test_render_must_pass_line() -> None:
    state = OthelloState.from_diagram(PASS_SEQUENCE, to_move=1)
    assert render(state.view(None), None).splitlines()[-1] == "White (O) cannot place a disc and must pass"


def test_render_game_over_has_no_turn_line() -> None:
    over = play_all(OthelloState.from_diagram(PASS_SEQUENCE, to_move=1), "pass", "c1", "pass", "a3")
    text = render(over.view(0), 0)
    assert text.splitlines()[-1] == "Discs: X Black 5, O White 0"
    assert "can place" not in text and "must pass" not in text


def test_render_16x16() -> None:
    lines = render(start(16).view(0), 0).splitlines()
    assert lines[0].split() == list("ABCDEFGHIJKLMNOP")
    assert lines[16].startswith("16  ")
    assert lines[8] == " 8  " + " ".join("......." "OX" ".......")


def test_looked_up_8x8_rows_match_the_rows_built_from_the_bitboards() -> None:
    geo = othello._geometry(8)
    rng = random.Random(10)
    state = start()
    while state.outcome is None:
        assert othello._board_rows(state.black, state.white, geo) == othello._whole_board_rows(state.black, state.white, geo)
        state = state.play(rng.choice(state.legal_moves()))
    assert state.rows() == list(othello._whole_board_rows(state.black, state.white, geo))
