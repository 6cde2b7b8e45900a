"""Tests of the Ming Mang engine and renderer (RULES.md "Ming Mang"; seed 000, part 3)."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.render.mingmang import render
from games.base import IllegalMove, InvalidOption
from games.mingmang import MingMang, MingMangState

GAME = MingMang()

SEED_START_8 = """
x o o o o o o o
x . . . . . . o
x . . . . . . o
x . . . . . . o
x . . . . . . o
x . . . . . . o
x . . . . . . o
x x x x x x x o
"""


def rows(text: str) -> list[str]:
    """Return a diagram's rows without spaces or blank lines."""
    return ["".join(line.split()) for line in text.strip().splitlines()]


def position(diagram: str, to_move: int = 0, **options: object) -> MingMangState:
    return GAME.from_diagram(diagram, to_move, options)


def reason(state: MingMangState, move: str) -> str:
    with pytest.raises(IllegalMove) as info:
        state.play(move)
    return info.value.reason


def board(state: MingMangState) -> list[str]:
    return state.view(None)["board"]


# --- a small independent reference implementation ----------------------------

DIRS = ((-1, 0), (0, -1), (0, 1), (1, 0))


def name(r: int, c: int) -> str:
    return f"{chr(ord('a') + c)}{r + 1}"


def ref_slides(grid: list[str], me: str) -> set[str]:
    """Every slide of ``me``'s pawns (row, column; through empty squares)."""
    n = len(grid)
    moves = set()
    for r in range(n):
        for c in range(n):
            if grid[r][c] != me:
                continue
            for dr, dc in DIRS:
                rr, cc = r + dr, c + dc
                while 0 <= rr < n and 0 <= cc < n and grid[rr][cc] == ".":
                    moves.add(f"{name(r, c)}-{name(rr, cc)}")
                    rr, cc = rr + dr, cc + dc
    return moves


def ref_apply(grid: list[str], move: str) -> list[str]:
    """Play ``move`` on ``grid`` with custodian captures, straight from RULES.md."""
    n = len(grid)
    start, to = move.split("-")
    (sr, sc), (tr, tc) = [(int(sq[1:]) - 1, ord(sq[0]) - ord("a")) for sq in (start, to)]
    cells = [list(row) for row in grid]
    me = cells[sr][sc]
    foe = "o" if me == "x" else "x"
    cells[sr][sc], cells[tr][tc] = ".", me
    for dr, dc in DIRS:
        run = []
        rr, cc = tr + dr, tc + dc
        while 0 <= rr < n and 0 <= cc < n and cells[rr][cc] == foe:
            run.append((rr, cc))
            rr, cc = rr + dr, cc + dc
        if run and 0 <= rr < n and 0 <= cc < n and cells[rr][cc] == me:
            for r, c in run:
                cells[r][c] = me
    return ["".join(row) for row in cells]


# --- metadata, options, start ------------------------------------------------


def test_metadata() -> None:
    assert GAME.name == "mingmang"
    assert GAME.title == "Ming Mang"
    assert GAME.seats == ("White", "Black")
    assert GAME.uses_seed is False
    options = {o["name"]: o for o in GAME.describe()["options"]}
    assert set(options) == {"size", "superko", "max_plies"}
    assert (options["size"]["default"], options["size"]["min"], options["size"]["max"]) == (8, 4, 16)
    assert (options["superko"]["type"], options["superko"]["default"]) == ("bool", False)
    max_plies = options["max_plies"]
    assert (max_plies["type"], max_plies["default"], max_plies["min"]) == ("int", None, 1)


def test_default_start_matches_the_seed_diagram() -> None:
    state = GAME.new_state()
    assert board(state) == rows(SEED_START_8)
    assert state.diagram() == "\n".join(rows(SEED_START_8))
    assert (state.ply, state.to_move, state.outcome, state.last_move) == (0, 0, None, None)
    assert state.options == {"size": 8, "superko": False, "max_plies": None}
    assert state.view(None)["counts"] == [14, 14]


@pytest.mark.parametrize("size", range(4, 17))
def test_start_for_every_size(size: int) -> None:
    grid = board(GAME.new_state({"size": size}))
    assert len(grid) == size and all(len(row) == size for row in grid)
    assert [row[0] for row in grid] == ["x"] * size  # White: the first column
    assert grid[-1] == "x" * (size - 1) + "o"  # and the last row but its corner
    assert grid[0] == "x" + "o" * (size - 1)  # Black: the first row but its corner
    assert [row[-1] for row in grid] == ["o"] * size  # and the last column
    assert all(row[1:-1] == "." * (size - 2) for row in grid[1:-1])
    assert GAME.new_state({"size": size}).view(0)["counts"] == [2 * size - 2, 2 * size - 2]
    assert len(GAME.new_state({"size": size}).legal_moves()) == 2 * (size - 2) ** 2


@pytest.mark.parametrize(
    "options",
    [
        {"size": 3},
        {"size": 17},
        {"size": "8"},
        {"size": 8.0},
        {"size": True},
        {"superko": 1},
        {"superko": "yes"},
        {"max_plies": 0},
        {"max_plies": "10"},
        {"max_plies": True},
        {"flying": True},
        {"Size": 8},
    ],
)
def test_bad_options_are_refused(options: dict) -> None:
    with pytest.raises(InvalidOption):
        GAME.new_state(options)


def test_null_options_mean_defaults() -> None:
    state = GAME.new_state({"size": None, "superko": None, "max_plies": None})
    assert state.options == {"size": 8, "superko": False, "max_plies": None}
    assert GAME.new_state({"size": 4, "superko": True, "max_plies": 9}).options == {
        "size": 4,
        "superko": True,
        "max_plies": 9,
    }


# --- moves: the seed's worked examples (3.1 and 3.2) -------------------------


def test_seed_first_move_destinations() -> None:
    """3.1: the pawn on row 4, column 1 can go to the green squares b4..g4 only."""
    state = GAME.new_state()
    assert [m for m in state.legal_moves() if m.startswith("a4-")] == [f"a4-{c}4" for c in "bcdefg"]


def test_seed_game_of_part_3_2() -> None:
    """3.1/3.2: White a4 to f4, then Black f1 can only reach f2 and f3; it goes to f2."""
    state = GAME.new_state().play("a4-f4")
    assert board(state)[3] == ".....x.o"
    assert state.to_move == 1 and state.ply == 1 and state.last_move == "a4-f4"
    assert sorted(m for m in state.legal_moves() if m.startswith("f1-")) == ["f1-f2", "f1-f3"]
    assert reason(state, "f1-f5") == "the path from f1 to f5 is blocked at f4"
    state = state.play("f1-f2")
    assert board(state)[:4] == ["xoooo.oo", "x....o.o", "x......o", ".....x.o"]
    assert state.to_move == 0 and state.ply == 2


def test_seed_capture_three_in_a_line() -> None:
    """3.1: White g2 to g4 captures the three black pawns d4, e4, f4, which turn white."""
    state = position(
        """
        x.......
        ......x.
        ........
        ..xooo..
        .o......
        ........
        ........
        .......o
        """
    )
    after = state.play("g2-g4")
    assert board(after)[3] == "..xxxxx."
    assert after.view(None)["captured"] == ["d4", "e4", "f4"]
    assert after.view(None)["counts"] == [6, 2]
    assert board(after)[4] == ".o......" and board(after)[7] == ".......o"


def test_seed_capture_in_two_directions_at_once() -> None:
    """3.1: the same move captures four black pawns, along the row and down the column."""
    state = position(
        """
        x.......
        ......x.
        ........
        ..xooo..
        ......o.
        ......x.
        ........
        .......o
        """
    )
    after = state.play("g2-g4")
    assert after.view(None)["captured"] == ["d4", "e4", "f4", "g5"]
    assert board(after)[3:6] == ["..xxxxx.", "......x.", "......x."]
    assert after.view(None)["counts"] == [8, 1]


def test_seed_no_capture_when_moving_between_two_enemies() -> None:
    """3.1: Black g4 to d4 forms a group d4-d5 stuck between white d3 and d6: no capture."""
    state = position(
        """
        x.......
        ........
        ...x....
        ......o.
        ...o....
        ...x....
        ........
        .......o
        """,
        to_move=1,
    )
    after = state.play("g4-d4")
    assert board(after)[2:6] == ["...x....", "...o....", "...o....", "...x...."]
    assert after.view(None)["captured"] == []
    assert after.view(None)["counts"] == [3, 3]


# --- capture details ------------------------------------------------------------


def test_a_single_pawn_moving_into_a_gap_is_safe() -> None:
    state = position(
        """
        ........
        ...o....
        ........
        ..x.x...
        ........
        ........
        x.......
        .......o
        """,
        to_move=1,
    )
    after = state.play("d2-d4")
    assert board(after)[3] == "..xox..." and after.view(None)["captured"] == []
    # and White does not capture it later by moving some other pawn
    later = after.play("a7-a6")
    assert board(later)[3] == "..xox..."


def test_capture_in_three_directions_at_once() -> None:
    """The moved pawn closes runs up, down and to one side in the same move."""
    state = position(
        """
        .......
        ...x...
        ...o...
        xoo...x
        ...o...
        ...x...
        .......
        """
    )
    after = state.play("g4-d4")
    assert after.view(None)["captured"] == ["d3", "b4", "c4", "d5"]
    assert board(after)[1:6] == ["...x...", "...x...", "xxxx...", "...x...", "...x..."]
    assert after.view(None)["counts"] == [8, 0]


def test_runs_reaching_the_edge_or_a_gap_are_not_captured() -> None:
    state = position(
        """
        oo..x
        .....
        .o.x.
        .....
        .....
        """
    )
    after = state.play("e1-c1")
    assert board(after)[0] == "oox.." and after.view(None)["captured"] == []
    after = state.play("d3-c3")
    assert board(after)[2] == ".ox.." and after.view(None)["captured"] == []


def test_no_diagonal_capture() -> None:
    """a1, b2, c3 are on a diagonal: White arriving on c3 leaves b2 black."""
    state = position(
        """
        x....
        .o...
        .....
        .....
        ..x..
        """
    )
    after = state.play("c5-c3")
    assert after.view(None)["captured"] == [] and board(after)[1] == ".o..."


def test_captured_pawns_do_not_capture_in_turn() -> None:
    """b4 turns white; it would sandwich b3 with b2, but only the moved pawn captures."""
    state = position(
        """
        ..x.....
        .x......
        .o......
        xo......
        ........
        ........
        ........
        .......o
        """
    )
    after = state.play("c1-c4")
    assert after.view(None)["captured"] == ["b4"]
    assert board(after)[1:4] == [".x......", ".o......", "xxx....."]


def test_moving_away_leaves_a_sandwich_alone() -> None:
    """The origin square is empty after the move: it closes nothing."""
    state = position(
        """
        .....
        xo.x.
        .....
        .....
        ....o
        """
    )
    after = state.play("d2-c2")
    assert after.view(None)["captured"] == ["b2"]
    state = position(
        """
        .....
        xox..
        .....
        .....
        ....o
        """
    )
    after = state.play("c2-c4")
    assert board(after)[1] == "xo..." and after.view(None)["captured"] == []


def test_black_captures_too() -> None:
    state = position(
        """
        o.....
        x.....
        ......
        ...o..
        ......
        .....x
        """,
        to_move=1,
    )
    after = state.play("d4-a4")  # a3 is empty: a2 is not closed in
    assert after.view(None)["captured"] == []
    after = state.play("d4-d3").play("f6-f5").play("d3-a3")
    assert after.view(None)["captured"] == ["a2"]
    assert [row[0] for row in board(after)[:3]] == ["o", "o", "o"]
    assert after.view(None)["counts"] == [1, 3]


# --- illegal moves and parsing --------------------------------------------------


def test_reasons_name_the_rule() -> None:
    state = GAME.new_state()
    assert reason(state, "b1-b2") == "b1 is not your pawn (it is Black's)"
    assert reason(state, "b2-b3") == "b2 is not your pawn (it is empty)"
    assert reason(state, "a4-f5") == "a4-f5 is not a straight line (a pawn moves along its row or column)"
    assert reason(state, "a4-a4") == "a4-a4 does not move the pawn"
    assert reason(state, "a4-a5") == "a5 is occupied"
    assert reason(state, "a4-h4") == "h4 is occupied"
    assert reason(state, "a2-a4") == "a4 is occupied"
    assert reason(state.play("a4-c4").play("h2-b2"), "a2-c2") == "the path from a2 to c2 is blocked at b2"
    assert reason(state, "i4-a4") == "i4 is off the board (columns a-h, rows 1-8)"
    assert reason(state, "a0-a4") == "a0 is off the board (columns a-h, rows 1-8)"
    assert reason(state, "a4-a9") == "a9 is off the board (columns a-h, rows 1-8)"
    for text in ("", "pass", "a4", "a4-", "4a-4f", "a4-f4-g4", "a4--f4", "a100-a1"):
        assert "like a4-f4" in reason(state, text), text


def test_vertical_path_blocked() -> None:
    state = GAME.new_state().play("b8-b3").play("h2-c2")
    assert reason(state, "b3-b1") == "b1 is occupied"
    state = GAME.new_state().play("a4-c4").play("h3-b3")
    assert reason(state, "b8-b2") == "the path from b8 to b2 is blocked at b3"


def test_non_text_and_finished_games_are_refused() -> None:
    state = GAME.new_state()
    with pytest.raises(IllegalMove):
        state.play(("a4", "f4"))  # type: ignore[arg-type]
    over = position("ox..\nx...\n....\n...x", to_move=1)
    assert reason(over, "a1-b1") == "the game is over"


@pytest.mark.parametrize(
    "text", ["a4-f4", "A4-F4", "A4 F4", "a4f4", "  a4 - f4 ", "a4 to f4", "a4–f4", "A4F4", "a4xf4", "a4:f4"]
)
def test_forgiving_input_canonical_output(text: str) -> None:
    after = GAME.new_state().play(text)
    assert after.last_move == "a4-f4"
    assert after.view(None)["last_move"] == "a4-f4"
    assert board(after)[3] == ".....x.o"


def test_two_digit_rows_on_a_big_board() -> None:
    state = GAME.new_state({"size": 16})
    assert "a10-o10" in state.legal_moves() and "a2-b2" in state.legal_moves()
    after = state.play("A10 O10")
    assert after.last_move == "a10-o10" and board(after)[9] == "." * 14 + "xo"
    assert reason(after, "o1q1") == "q1 is off the board (columns a-p, rows 1-16)"
    assert after.play("o1o9").last_move == "o1-o9"


def test_legal_move_order_and_uniqueness() -> None:
    state = GAME.new_state()
    moves = state.legal_moves()
    assert len(moves) == len(set(moves)) == 72
    assert moves[:6] == ["a2-b2", "a2-c2", "a2-d2", "a2-e2", "a2-f2", "a2-g2"]
    assert moves[-6:] == ["g8-g7", "g8-g6", "g8-g5", "g8-g4", "g8-g3", "g8-g2"]
    assert set(moves) == ref_slides(board(state), "x")


# --- end of the game --------------------------------------------------------------


def test_a_player_without_pawns_loses() -> None:
    state = position("x...\no...\n..x.\n....")
    after = state.play("c3-a3")
    assert after.view(None)["counts"] == [3, 0]
    assert after.outcome is not None and after.outcome.winner == 0
    assert after.outcome.reason == "Black has no pawns left; White wins"
    assert after.to_move is None and after.legal_moves() == []
    assert after.view(1)["outcome"] == {"winner": 0, "reason": after.outcome.reason, "score": None}


def test_a_player_without_a_legal_move_loses() -> None:
    after = position("o...\nx...\n....\n.x..").play("b4-b1")
    assert after.outcome is not None and after.outcome.winner == 0
    assert after.outcome.reason == "Black has no legal move; White wins"
    assert after.to_move is None and "legal_moves" not in after.view(1)


def test_a_diagram_with_a_blocked_mover_is_over_at_once() -> None:
    state = position("ox..\nx...\n....\n...x", to_move=1)
    assert state.outcome is not None and state.outcome.winner == 0 and state.to_move is None
    white_gone = position("o...\n....\n....\n....", to_move=0)
    assert white_gone.outcome is not None and white_gone.outcome.winner == 1
    assert white_gone.outcome.reason == "White has no pawns left; Black wins"


def test_max_plies_draws() -> None:
    state = GAME.new_state({"max_plies": 2})
    state = state.play("a4-f4")
    assert state.outcome is None and state.to_move == 1
    state = state.play("f1-f2")
    assert state.outcome is not None and state.outcome.winner is None
    assert "max_plies" in state.outcome.reason and state.to_move is None
    assert state.legal_moves() == [] and reason(state, "a2-b2") == "the game is over"


def test_a_loss_by_the_rules_beats_the_max_plies_draw() -> None:
    after = position("o...\nx...\n....\n.x..", max_plies=1).play("b4-b1")
    assert after.outcome is not None and after.outcome.winner == 0
    assert after.outcome.reason == "Black has no legal move; White wins"


# --- superko ---------------------------------------------------------------------


def test_superko_forbids_returning_to_the_start() -> None:
    cycle = ["a2-b2", "h2-g2", "b2-a2"]
    plain = GAME.new_state()
    ko = GAME.new_state({"superko": True})
    for move in cycle:
        plain, ko = plain.play(move), ko.play(move)
    assert "g2-h2" in plain.legal_moves()
    assert board(plain.play("g2-h2")) == rows(SEED_START_8)
    assert "g2-h2" not in ko.legal_moves()
    assert set(ko.legal_moves()) == set(plain.legal_moves()) - {"g2-h2"}
    assert reason(ko, "g2-h2") == "superko: this move repeats an earlier position"
    assert reason(ko, "G2 H2") == "superko: this move repeats an earlier position"


def test_superko_forbids_any_earlier_position_not_just_the_start() -> None:
    ko = GAME.new_state({"superko": True}).play("a4-f4")
    for move in ["h2-g2", "f4-e4", "g2-h2"]:
        ko = ko.play(move)
    # the board after a4-f4 would come back with e4-f4
    assert reason(ko, "e4-f4") == "superko: this move repeats an earlier position"
    assert "e4-d4" in ko.legal_moves()


def test_superko_compares_boards_after_captures() -> None:
    """Returning to a1 now captures b1, so the board is new and the move is legal.

    Without its capture, a2-a1 would recreate the starting board.
    """
    start = """
        oxo..
        .....
        .....
        .....
        ....x
        """
    ko = position(start, superko=True).play("e5-e4").play("a1-a2").play("e4-e5")
    assert "a2-a1" in ko.legal_moves()
    after = ko.play("a2-a1")
    assert after.view(None)["captured"] == ["b1"] and board(after)[0] == "ooo.."


def test_superko_forbids_a_black_repetition() -> None:
    start = """
        x...
        o...
        ....
        ..xo
        """
    ko = position(start, superko=True).play("c4-c3").play("d4-d1").play("c3-c4")
    assert reason(ko, "d1-d4") == "superko: this move repeats an earlier position"
    assert "d1-d4" in position(start).play("c4-c3").play("d4-d1").play("c3-c4").legal_moves()


def test_superko_can_leave_a_player_without_moves() -> None:
    diagram = """
        o.xx
        xxxx
        x...
        ....
        """
    ko = position(diagram, superko=True)
    ko = ko.play("a3-a4").play("a1-b1").play("a4-a3")
    assert ko.outcome is not None and ko.outcome.winner == 0
    assert "superko" in ko.outcome.reason and ko.outcome.reason.startswith("Black has no legal move")
    plain = position(diagram).play("a3-a4").play("a1-b1").play("a4-a3")
    assert plain.outcome is None and plain.legal_moves() == ["b1-a1"]


def long_cycle() -> tuple[list[str], str]:
    """Moves on a 16 x 16 board that come back to the start after 56 plies.

    White walks a2 to o2 and back; Black shuttles p10/o10 on the way out and
    n10/m10 on the way back, so no board repeats before the last move.
    Returns the moves and the last move, Black's return to p10.
    """
    cols, black, moves = "abcdefghijklmno", "p", []
    for i in range(1, 15):
        moves.append(f"{cols[i - 1]}2-{cols[i]}2")
        after = "n" if i == 14 else ("o" if black == "p" else "p")
        moves.append(f"{black}10-{after}10")
        black = after
    for i in range(14, 0, -1):
        moves.append(f"{cols[i]}2-{cols[i - 1]}2")
        if i > 1:
            after = "m" if black == "n" else "n"
            moves.append(f"{black}10-{after}10")
            black = after
    return moves, f"{black}10-p10"


def test_superko_remembers_boards_from_long_ago() -> None:
    moves, back = long_cycle()
    plain = GAME.new_state({"size": 16})
    ko = GAME.new_state({"size": 16, "superko": True})
    for move in moves:
        plain, ko = plain.play(move), ko.play(move)
    assert ko.ply == 55 and ko.to_move == 1
    assert reason(ko, back) == "superko: this move repeats an earlier position"
    assert back not in ko.legal_moves() and back in plain.legal_moves()
    assert plain.play(back).diagram() == GAME.new_state({"size": 16}).diagram()


def test_superko_history_survives_many_plies() -> None:
    """Boards far back in the history (past the internal recent-window) are remembered."""
    state = GAME.new_state({"superko": True})
    seen = [state.diagram()]
    rng = random.Random(7)
    for _ in range(150):
        moves = state.legal_moves()
        if not moves:
            break
        for move in moves:
            assert ref_diagram(state, move) not in seen
        for move in ref_slides(board(state), "xo"[state.to_move]) - set(moves):
            assert ref_diagram(state, move) in seen
        state = state.play(rng.choice(moves))
        seen.append(state.diagram())
    assert state.ply >= 100


def ref_diagram(state: MingMangState, move: str) -> str:
    return "\n".join(ref_apply(board(state), move))


# --- random play against the reference -----------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(4, 9),
    superko=st.booleans(),
    picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=80),
)
def test_random_games_agree_with_the_reference(size: int, superko: bool, picks: list[int]) -> None:
    state = GAME.new_state({"size": size, "superko": superko})
    history = [state.diagram()]
    for pick in picks:
        if state.outcome is not None:
            break
        me = "xo"[state.to_move]
        expected = ref_slides(board(state), me)
        if superko:
            expected = {m for m in expected if ref_diagram(state, m) not in history}
        moves = state.legal_moves()
        assert len(moves) == len(set(moves)) and set(moves) == expected
        move = moves[pick % len(moves)]
        before = state.diagram()
        after = state.play(move)
        assert state.diagram() == before  # the old state is untouched
        assert after.diagram() == ref_diagram(state, move)
        assert after.ply == state.ply + 1 and after.last_move == move
        state = after
        history.append(state.diagram())
    if state.outcome is not None:
        loser = 1 - state.outcome.winner  # type: ignore[operator]
        expected = ref_slides(board(state), "xo"[loser])
        if superko:
            expected = {m for m in expected if ref_diagram(state, m) not in history}
        assert expected == set()


def test_random_games_end_with_max_plies() -> None:
    rng = random.Random(3)
    for superko in (False, True):
        state = GAME.new_state({"max_plies": 120, "superko": superko})
        while state.outcome is None:
            state = state.play(rng.choice(state.legal_moves()))
        assert state.ply <= 120


# --- immutability, diagrams, views, rendering --------------------------------------


def test_states_are_immutable() -> None:
    state = GAME.new_state()
    view = state.view(0)
    moves = state.legal_moves()
    moves.clear()  # the caller's copy only
    state.play("a4-f4")
    assert state.view(0) == view and len(state.legal_moves()) == 72
    with pytest.raises(AttributeError):
        state.extra = 1  # type: ignore[attr-defined]


def test_from_diagram_round_trip_and_checks() -> None:
    text = "xo..\n.o..\n..x.\n...o"
    state = position(text, to_move=1)
    assert state.diagram() == text and state.to_move == 1 and state.ply == 0
    assert state.last_move is None and state.options["size"] == 4
    # the seed's symbols, spaces and upper case are read too
    assert position("○ ● . .\n. ● . .\n. . ○ .\n. . . ●", 1).diagram() == text
    assert position("X O . .\n. O . .\n. . X .\n. . . O", 1).diagram() == text
    assert GAME.from_diagram(text, 0, {"size": 4}).options["size"] == 4
    for bad in ["xo.\n...\n...", "xo..\n....\n....", "xo..\n.....\n....\n....", "xq..\n....\n....\n...."]:
        with pytest.raises(InvalidOption):
            position(bad)
    with pytest.raises(InvalidOption):
        GAME.from_diagram(text, 0, {"size": 5})
    with pytest.raises(InvalidOption):
        GAME.from_diagram(text, 2)
    with pytest.raises(InvalidOption):
        GAME.from_diagram(text, 0, {"superko": 1})


def test_view_contents_per_seat() -> None:
    state = GAME.new_state({"superko": True, "max_plies": 50}).play("a4-f4")
    views = {seat: state.view(seat) for seat in (0, 1, None)}
    expected_keys = {"game", "ply", "to_move", "outcome", "size", "board", "counts", "last_move", "captured",
                     "superko", "max_plies", "history"}  # fmt: skip
    assert set(views[0]) == expected_keys and set(views[None]) == expected_keys
    assert set(views[1]) == expected_keys | {"legal_moves"}
    assert views[1]["legal_moves"] == state.legal_moves()
    v = views[None]
    assert (v["game"], v["ply"], v["to_move"], v["outcome"]) == ("mingmang", 1, 1, None)
    assert (v["size"], v["counts"], v["last_move"], v["captured"]) == (8, [14, 14], "a4-f4", [])
    assert (v["superko"], v["max_plies"]) == (True, 50)
    assert v["history"] == {"board": GAME.new_state().diagram().split("\n"), "to_move": 0, "moves": ["a4-f4"]}
    assert GAME.new_state().view(None)["history"] is None
    assert v["board"][3] == ".....x.o" and all(views[s]["board"] == v["board"] for s in (0, 1))
    for view in views.values():
        assert msgpack.unpackb(msgpack.packb(view)) == view
    with pytest.raises(ValueError):
        state.view(2)


def test_render_shows_coordinates_pawns_and_counts() -> None:
    state = GAME.new_state()
    text = render(state.view(0), 0)
    lines = text.splitlines()
    assert lines[0].split() == list("abcdefgh") and lines[9].split() == list("abcdefgh")
    assert lines[1].split() == ["1", *"xooooooo", "1"]
    assert lines[8].split() == ["8", *"xxxxxxxo", "8"]
    assert "White (x): 14 pawns (you)" in text and "Black (o): 14 pawns" in text
    assert "(you)" not in render(state.view(None), None)


def test_render_marks_captures_and_big_boards() -> None:
    after = position(
        """
        x.......
        ......x.
        ........
        ..xooo..
        .o......
        ........
        ........
        .......o
        """
    ).play("g2-g4")
    text = render(after.view(1), 1)
    assert " 4 . . x x*x*x*x . 4" in text
    assert "Last move g2-g4 captured 3: d4 e4 f4" in text
    assert "White (x): 6 pawns" in text and "Black (o): 2 pawns (you)" in text
    big = render(GAME.new_state({"size": 16, "superko": True}).view(None), None)
    assert big.splitlines()[0].split() == [chr(ord("a") + c) for c in range(16)]
    assert big.splitlines()[16].startswith("16 x x") and "superko" in big
