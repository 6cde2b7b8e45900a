"""Tests of the Nine Men's Morris engine and renderer (RULES.md "Nine Men's Morris"; seed 001)."""

from __future__ import annotations

import doctest
import random
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games.morris
from client.render.morris import render
from games.base import IllegalMove, InvalidOption
from games.morris import (
    MILLS,
    NEIGHBOURS,
    POINTS,
    Morris,
    MorrisState,
    Position,
    PositionError,
    format_position,
    is_adjacent,
    parse_point,
    parse_position,
)

GAME = Morris()

# Written out independently of the engine's tables: the 16 lines, by name.
LINES = [
    "a7 d7 g7", "b6 d6 f6", "c5 d5 e5", "a4 b4 c4", "e4 f4 g4", "c3 d3 e3", "b2 d2 f2", "a1 d1 g1",
    "a7 a4 a1", "b6 b4 b2", "c5 c4 c3", "d7 d6 d5", "d3 d2 d1", "e5 e4 e3", "f6 f4 f2", "g7 g4 g1",
]  # fmt: skip
EDGES = {frozenset(pair) for line in LINES for pair in zip(line.split(), line.split()[1:])}
SEED_ORDER = "a7 d7 g7 b6 d6 f6 c5 d5 e5 a4 b4 c4 e4 f4 g4 c3 d3 e3 b2 d2 f2 a1 d1 g1".split()


def position(
    p1: str = "", p2: str = "", hands: tuple[int, int] = (0, 0), player: int = 1, sep: str = ", "
) -> str:
    """The seed's four-line text for counters given as space-separated point names."""
    mine, theirs = p1.split(), p2.split()
    values = ["1" if name in mine else "2" if name in theirs else "0" for name in SEED_ORDER]
    return f"{sep.join(values)}\n{hands[0]}\n{hands[1]}\n{player}\n"


def load(p1: str = "", p2: str = "", hands: tuple[int, int] = (0, 0), player: int = 1, **options: Any) -> MorrisState:
    return MorrisState.from_position_text(position(p1, p2, hands, player), options)


def reason(state: MorrisState, move: str) -> str:
    with pytest.raises(IllegalMove) as info:
        state.play(move)
    return info.value.reason


def owners(state: MorrisState) -> dict[str, int | None]:
    return state.view(None)["board"]


def play_all(state: MorrisState, moves: str) -> MorrisState:
    for move in moves.split():
        state = state.play(move)
    return state


# --- the board ----------------------------------------------------------------


def test_seed_numbering() -> None:
    assert list(POINTS) == SEED_ORDER
    assert (POINTS[0], POINTS[1], POINTS[2], POINTS[3]) == ("a7", "d7", "g7", "b6")
    assert (POINTS[21], POINTS[22], POINTS[23]) == ("a1", "d1", "g1")
    assert [parse_point(str(i)) for i in range(24)] == list(range(24))


def test_sixteen_lines() -> None:
    assert len(MILLS) == 16
    assert {" ".join(POINTS[p] for p in mill) for mill in MILLS} == set(LINES)
    for point in range(24):
        assert sum(point in mill for mill in MILLS) == 2


def test_seed_adjacency_examples() -> None:
    # The seed, task 1, and RULES.md's check.
    assert is_adjacent(21, 22) is True
    assert is_adjacent(21, 23) is False
    assert is_adjacent(21, 20) is False


def test_adjacency_is_the_board_lines() -> None:
    found = {frozenset((POINTS[i], POINTS[j])) for i in range(24) for j in range(24) if is_adjacent(i, j)}
    assert found == EDGES and len(EDGES) == 32
    assert not any(is_adjacent(i, i) for i in range(24))
    assert all(is_adjacent(i, j) == is_adjacent(j, i) for i in range(24) for j in range(24))
    assert {frozenset((POINTS[i], POINTS[j])) for i in range(24) for j in NEIGHBOURS[i]} == EDGES
    # No link across the centre, no diagonals.
    for a, b in [("c4", "e4"), ("d3", "d5"), ("a7", "b6"), ("a1", "b2"), ("b4", "d4")]:
        assert frozenset((a, b)) not in EDGES
    with pytest.raises(ValueError):
        is_adjacent(0, 24)


# --- metadata and options -----------------------------------------------------


def test_metadata() -> None:
    assert (GAME.name, GAME.title, GAME.seats, GAME.uses_seed) == (
        "morris", "Nine Men's Morris", ("Player 1", "Player 2"), False,
    )  # fmt: skip
    described = {o["name"]: o for o in GAME.describe()["options"]}
    assert set(described) == {"flying", "mill_protection", "max_plies", "position"}
    assert described["flying"]["default"] is False and described["flying"]["type"] == "bool"
    assert described["mill_protection"]["default"] is False
    assert described["max_plies"]["default"] is None and described["max_plies"]["min"] == 1
    assert described["position"]["type"] == "str" and described["position"]["default"] is None
    assert GAME.option("position").max_length == 1000


def test_default_options() -> None:
    resolved = GAME.resolve_options({})
    assert resolved == {"flying": False, "mill_protection": False, "max_plies": None, "position": None}
    assert GAME.resolve_options({"flying": None, "position": None}) == resolved


@pytest.mark.parametrize(
    "options",
    [
        {"flying": 1},
        {"flying": "true"},
        {"mill_protection": 0},
        {"max_plies": "8"},
        {"max_plies": 0},
        {"max_plies": -5},
        {"max_plies": 1.5},
        {"position": 5},
        {"position": ["0"] * 24},
        {"position": "0, " * 400},
        {"size": 8},
    ],
)
def test_bad_options(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOption) as info:
        GAME.new_state(options)
    assert info.value.option == next(iter(options))


def test_start() -> None:
    state = GAME.new_state()
    assert (state.ply, state.to_move, state.outcome, state.last_move) == (0, 0, None, None)
    assert state.hands == (9, 9) and state.on_board == (0, 0)
    assert state.legal_moves() == sorted(POINTS)
    assert state.board == (0,) * 24


# --- notation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, canonical",
    [("d2", "d2"), ("D2", "d2"), ("  d2 ", "d2"), ("19", "d2"), ("0", "a7"), ("23", "g1"), ("019", "d2")],
)
def test_placement_forms(text: str, canonical: str) -> None:
    state = GAME.new_state().play(text)
    assert state.last_move == canonical
    assert owners(state)[canonical] == 0


@pytest.mark.parametrize(
    "text",
    ["d2-d3", "D2-D3", "d2 - d3", "d2 d3", "19-16", "19 16", "d2-16", "19-D3", " 19 - 16 "],
)
def test_slide_forms(text: str) -> None:
    state = load("d2 a7 g7", "a1 g1 f4").play(text)
    assert state.last_move == "d2-d3"
    assert owners(state)["d3"] == 0 and owners(state)["d2"] is None


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("a4xd1", "a4xd1"),
        ("A4XD1", "a4xd1"),
        ("a4 x d1", "a4xd1"),
        ("9x22", "a4xd1"),
        ("a4x22", "a4xd1"),
        ("9XD1", "a4xd1"),
    ],
)
def test_placement_with_removal_forms(text: str, canonical: str) -> None:
    state = load("a7 a1", "d1 g1 d7", hands=(1, 1)).play(text)
    assert state.last_move == canonical
    assert owners(state)["d1"] is None and state.on_board == (3, 2)


@pytest.mark.parametrize("text", ["b4-a4xd1", "10-9x22", "B4 - A4 X D1", "b4 a4 x d1", "10 9x22", "b4-9xd1"])
def test_slide_with_removal_forms(text: str) -> None:
    state = load("a7 a1 b4", "d1 g1 d7").play(text)
    assert state.last_move == "b4-a4xd1"
    assert owners(state)["d1"] is None and owners(state)["a4"] == 0


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "cannot read"),
        ("   ", "cannot read"),
        ("zz", "'zz' is not a point"),
        ("d2-", "cannot read"),
        ("-d2", "cannot read"),
        ("d2-d3-d5", "cannot read"),
        ("d2 d3 d5", "cannot read"),
        ("d2x", "cannot read"),
        ("xd2", "cannot read"),
        ("d2xa1xa7", "cannot read"),
        ("b1", "b1 is not a point of the board"),
        ("d4", "d4 is not a point of the board"),
        ("h1", "'h1' is not a point"),
        ("24", "24 is not a point: the points are numbered 0 to 23"),
        ("-1", "cannot read"),
        ("d2-99", "99 is not a point"),
    ],
)
def test_unreadable(text: str, fragment: str) -> None:
    assert fragment in reason(GAME.new_state(), text)


def test_unreadable_reason_explains_the_notation() -> None:
    text = reason(GAME.new_state(), "d2--d3")
    assert "d2-d3" in text and "d2xa1" in text and "0-23" in text


# --- placing and sliding ----------------------------------------------------------------


def test_place_on_occupied_point() -> None:
    state = play_all(GAME.new_state(), "d2")
    assert reason(state, "d2") == "d2 is occupied"
    assert reason(state, "19") == "d2 is occupied"


def test_players_alternate_and_hands_count_down() -> None:
    state = play_all(GAME.new_state(), "d2 d3 a1")
    assert state.to_move == 1 and state.ply == 3 and state.hands == (7, 8) and state.on_board == (2, 1)
    assert owners(state)["d2"] == 0 and owners(state)["d3"] == 1 and owners(state)["a1"] == 0


def test_must_place_while_counters_in_hand() -> None:
    state = load("a7 d2 g7", "a1 g1 f4", hands=(1, 0))
    assert reason(state, "d2-d3") == "Player 1 has 1 counter in hand and must place one, e.g. a4"
    assert all("-" not in move for move in state.legal_moves())


def test_hands_are_per_player() -> None:
    # Player 1 has placed all counters while Player 2 still holds some.
    state = load("a7 d2 g7", "a1 g1 f4", hands=(0, 2))
    assert "d2-d3" in state.legal_moves() and "d3" not in state.legal_moves()
    assert reason(state, "d3") == "Player 1 has no counters in hand: move a counter along a line, e.g. a7-a4"
    after = state.play("d2-d3")
    assert "e4" in after.legal_moves() and not any("-" in move for move in after.legal_moves())


def test_slide_rules() -> None:
    state = load("a7 d2 g7", "a1 g1 f4")
    assert reason(state, "a7-d1") == "a7 is not adjacent to d1"
    assert reason(state, "a7-g1") == "g1 is occupied"
    assert reason(state, "d3-d5") == "d3 is empty"
    assert reason(state, "a1-a4") == "a1 holds Player 2's counter"
    assert state.play("a7-d7").last_move == "a7-d7"
    assert reason(load("a7 d2 g7", "d1 g1 f4"), "d2-d1") == "d1 is occupied"
    assert reason(state, "d2-d2") == "d2 is occupied"
    assert sorted(state.legal_moves()) == sorted(
        ["a7-a4", "a7-d7", "d2-b2", "d2-d1", "d2-d3", "d2-f2", "g7-d7", "g7-g4"]
    )


def test_seed_adjacency_examples_as_moves() -> None:
    # 21 = a1, 22 = d1, 23 = g1, 20 = f2.
    state = load("a1 a7 g7", "b4 d6 f4")
    assert state.play("21-22").last_move == "a1-d1"
    assert reason(state, "21-23") == "a1 is not adjacent to g1"
    assert reason(state, "21-20") == "a1 is not adjacent to f2"


# --- mills -----------------------------------------------------------------------------------


def far_counters(avoid: set[str], count: int = 3) -> str:
    """``count`` points, not in ``avoid``, none adjacent to each other in a line."""
    chosen: list[str] = []
    for name in SEED_ORDER:
        if name not in avoid and len(chosen) < count:
            chosen.append(name)
    return " ".join(chosen)


@pytest.mark.parametrize("line", LINES)
def test_placement_forms_a_mill_on_every_line(line: str) -> None:
    first, second, third = line.split()
    p2 = far_counters({first, second, third}, 2)
    state = load(f"{first} {second}", p2, hands=(1, 1))
    removals = sorted(p2.split())
    closing = [move for move in state.legal_moves() if move.startswith(third)]
    assert closing == [f"{third}x{r}" for r in removals]
    assert reason(state, third) == f"this move forms a mill: name a counter to remove, e.g. {third}x{removals[0]}"
    after = state.play(f"{third}x{removals[0]}")
    assert owners(after)[removals[0]] is None and after.on_board == (3, 1)
    # Every other placement forms no mill and removes nothing.
    assert all("x" not in move for move in state.legal_moves() if not move.startswith(third))


@pytest.mark.parametrize("line, index", [(line, i) for line in LINES for i in range(3)])
def test_slide_forms_a_mill_on_every_line(line: str, index: int) -> None:
    points = line.split()
    target = points[index]
    others = [p for p in points if p != target]
    source = next(
        POINTS[n] for n in NEIGHBOURS[POINTS.index(target)] if POINTS[n] not in points
    )
    p2 = far_counters({*points, source}, 3)
    state = load(f"{others[0]} {others[1]} {source}", p2)
    expected = {f"{source}-{target}x{r}" for r in p2.split()}
    assert {m for m in state.legal_moves() if m.startswith(f"{source}-{target}")} == expected
    assert reason(state, f"{source}-{target}").startswith("this move forms a mill")
    removed = p2.split()[-1]
    after = state.play(f"{source}-{target}x{removed}")
    assert after.last_move == f"{source}-{target}x{removed}" and owners(after)[removed] is None


def test_three_in_a_row_off_a_line_is_no_mill() -> None:
    # c4, (centre), e4 is not a line; nor is a corner "L".
    state = load("c4 a4 c3", "a1 g1 d6", hands=(1, 1))
    assert "e4" in state.legal_moves()  # a4 b4 c4 would be; e4 is not on it
    assert reason(state, "e4xa1") == "e4 forms no mill, so no counter may be removed"
    assert "c5xa1" in state.legal_moves()  # c5 c4 c3 is a line
    state = load("a7 d7", "a1 g1 f4", hands=(1, 1))
    assert "a4" in state.legal_moves() and "d6" in state.legal_moves()


def test_sliding_along_a_line_does_not_complete_it() -> None:
    # a7 d7 with g4: sliding g4-g7 completes a7 d7 g7; sliding d7-g7 cannot.
    state = load("a7 d7 g4", "a1 d1 f4")
    assert {m for m in state.legal_moves() if m.startswith("g4-g7")} == {"g4-g7xa1", "g4-g7xd1", "g4-g7xf4"}
    assert "d7-g7" in state.legal_moves()


def test_reopening_and_closing_a_mill_forms_it_again() -> None:
    state = load("a7 d7 g7 b4", "a1 d1 f4 c3")
    opened = state.play("g7-g4").play("c3-c4")
    assert {m for m in opened.legal_moves() if m.startswith("g4-g7")} == {
        "g4-g7xa1", "g4-g7xc4", "g4-g7xd1", "g4-g7xf4",
    }  # fmt: skip


def test_double_mill_removes_exactly_one() -> None:
    state = load("d7 g7 a4 a1", "d1 g1 f4 b6", hands=(1, 1))
    double = [m for m in state.legal_moves() if m.startswith("a7")]
    assert double == ["a7xb6", "a7xd1", "a7xf4", "a7xg1"]
    after = state.play("a7xf4")
    assert after.on_board == (5, 3) and owners(after)["f4"] is None
    assert reason(state, "a7xf4xd1").startswith("cannot read")


def test_removal_when_opponent_has_nothing_on_the_board() -> None:
    state = load("a7 d7", "", hands=(7, 9))
    assert "g7" in state.legal_moves() and not any("x" in m for m in state.legal_moves())
    assert reason(state, "g7xa1") == "Player 2 has no counter on the board to remove"
    after = state.play("g7")
    assert after.last_move == "g7" and after.hands == (6, 9) and after.to_move == 1


def test_removal_must_name_an_opponent_counter() -> None:
    state = load("a7 d7", "a1", hands=(7, 8))
    assert reason(state, "g7xd1") == "d1 is not a counter of Player 2"
    assert reason(state, "g7xa7") == "a7 is not a counter of Player 2"
    assert reason(state, "d2xa1") == "d2 forms no mill, so no counter may be removed"


def test_player_two_mills_remove_player_one_counters() -> None:
    state = load("a7 d5 f6", "a1 d1", hands=(6, 7), player=2)
    assert [m for m in state.legal_moves() if m.startswith("g1")] == ["g1xa7", "g1xd5", "g1xf6"]
    assert reason(state, "g1xa1") == "a1 is not a counter of Player 1"
    assert state.play("g1xd5").on_board == (2, 3)


def test_any_counter_may_be_removed_by_default() -> None:
    state = load("a7 d7 g7 d2", "a1 d1", hands=(5, 6), player=2)
    assert [m for m in state.legal_moves() if m.startswith("g1")] == ["g1xa7", "g1xd2", "g1xd7", "g1xg7"]
    assert state.play("g1xa7").on_board == (3, 3)


def test_mill_protection() -> None:
    state = load("a7 d7 g7 d2", "a1 d1", hands=(5, 6), player=2, mill_protection=True)
    assert [m for m in state.legal_moves() if m.startswith("g1")] == ["g1xd2"]
    assert reason(state, "g1xa7") == "a7 is in a mill (mill protection)"
    assert reason(state, "g1") == "this move forms a mill: name a counter to remove, e.g. g1xd2"
    assert state.play("g1xd2").on_board == (3, 3)


def test_mill_protection_when_all_counters_are_in_mills() -> None:
    state = load("a7 d7 g7 a4 a1", "d2 d3", hands=(4, 7), player=2, mill_protection=True)
    assert [m for m in state.legal_moves() if m.startswith("d1")] == ["d1xa1", "d1xa4", "d1xa7", "d1xd7", "d1xg7"]
    state = load("a7 d7 g7", "d1 g1", hands=(6, 7), player=2, mill_protection=True)
    assert [m for m in state.legal_moves() if m.startswith("a1")] == ["a1xa7", "a1xd7", "a1xg7"]
    assert state.play("a1xd7").on_board == (2, 3)


# --- flying ------------------------------------------------------------------------------------


def test_flying_with_three_counters() -> None:
    state = load("a7 d2 g4", "a1 d1 f4 b6", flying=True)
    assert state.view(None)["phase"] == ["flying", "moving"]
    moves = state.legal_moves()
    assert len(moves) == 3 * 17  # every counter to every empty point, no mill possible
    assert state.play("a7-g7").last_move == "a7-g7"
    assert state.play("14-1").last_move == "g4-d7"


def test_flying_forms_mills() -> None:
    state = load("a7 d7 e3", "a1 d1 f4", flying=True)
    assert {m for m in state.legal_moves() if m.startswith("e3-g7")} == {"e3-g7xa1", "e3-g7xd1", "e3-g7xf4"}


def test_no_flying_by_default() -> None:
    state = load("a7 d2 g4", "a1 d1 f4 b6")
    assert state.view(None)["phase"] == ["moving", "moving"]
    assert reason(state, "a7-g7") == "a7 is not adjacent to g7"
    assert "a1-g7" not in state.legal_moves()


def test_flying_needs_exactly_three_on_board_and_none_in_hand() -> None:
    four = load("a7 d2 g4 c3", "a1 d1 f4 b6", flying=True)
    assert reason(four, "a7-g7") == "a7 is not adjacent to g7 (flying needs exactly three counters on the board)"
    in_hand = load("a7 d2 g4", "a1 d1 f4 b6", hands=(1, 0), flying=True)
    assert in_hand.view(None)["phase"] == ["placing", "moving"]
    assert all("-" not in move for move in in_hand.legal_moves())


def test_flying_player_is_never_blocked() -> None:
    blocked = ("a7 d7 g7", "a4 d6 g4 b6 f6 c5 d5 e5")
    assert load(*blocked, flying=True).outcome is None
    assert load(*blocked).outcome is not None


# --- the end of the game ------------------------------------------------------------------------


def test_loss_by_fewer_than_three_counters() -> None:
    state = load("a7 d7 g4", "a1 d1 f4")
    over = state.play("g4-g7xf4")
    assert over.outcome is not None and over.outcome.winner == 0
    assert over.outcome.reason == "Player 2 has fewer than three counters"
    assert over.to_move is None and over.legal_moves() == []
    assert reason(over, "a1-a4") == "the game is over"
    assert over.view(1)["outcome"] == {"winner": 0, "reason": "Player 2 has fewer than three counters", "score": None}


def test_counters_in_hand_count_towards_three() -> None:
    state = load("a7 d7", "a1 d1", hands=(1, 1), player=2)
    assert state.outcome is None
    assert load("a7 d7", "a1 d1", hands=(1, 0), player=2).outcome.reason == "Player 2 has fewer than three counters"
    during_placing = load("a7 d7", "a1 d1 f4", hands=(1, 0))
    over = during_placing.play("g7xf4")
    assert over.outcome.winner == 0 and over.outcome.reason == "Player 2 has fewer than three counters"


def test_loss_by_no_legal_move() -> None:
    # Player 2's d7 g7 a7 are boxed in once Player 1 closes d6... here by g4.
    state = load("a4 d6 b6 f6 c5 d5 e5 f4", "a7 d7 g7 a1", player=1)
    assert state.outcome is None
    over = state.play("f4-g4")
    assert over.outcome is None  # a1 can still move
    state = load("a4 d6 b6 f6 c5 e5 f4", "a7 d7 g7", player=1)
    over = state.play("f4-g4")
    assert over.outcome is not None and over.outcome.winner == 0
    assert over.outcome.reason == "Player 2 cannot move" and over.to_move is None


def test_loaded_position_can_be_over_at_once() -> None:
    state = load("a7 d7 g7", "a4 d6 g4 b6 f6 c5 d5 e5")
    assert state.outcome.winner == 1 and state.outcome.reason == "Player 1 cannot move"
    assert state.legal_moves() == [] and state.to_move is None
    short = load("a7 d7", "a4 d6 g4", player=1)
    assert short.outcome.reason == "Player 1 has fewer than three counters"


def test_fewer_than_three_is_checked_before_blocked() -> None:
    state = load("a7 d7", "a4 d6 g7 b6 f6", player=1)
    assert state.outcome.reason == "Player 1 has fewer than three counters"


def test_max_plies_draw() -> None:
    state = GAME.new_state({"max_plies": 3})
    state = play_all(state, "a1 a4 a7")
    assert state.outcome is not None and state.outcome.winner is None
    assert state.outcome.reason == "draw: 3 plies played (max_plies)" and state.to_move is None
    assert play_all(GAME.new_state({"max_plies": 4}), "a1 a4 a7").outcome is None


def test_max_plies_does_not_hide_a_loss() -> None:
    state = load("a7 d7 g4", "a1 d1 f4", max_plies=1)
    over = state.play("g4-g7xf4")
    assert over.outcome.winner == 0 and over.outcome.reason == "Player 2 has fewer than three counters"
    drawn = state.play("a7-a4")
    assert drawn.outcome.winner is None


# --- position files ----------------------------------------------------------------------------


def test_start_position_text() -> None:
    text = GAME.new_state().position_text()
    assert text == ", ".join(["0"] * 24) + "\n9\n9\n1\n"


def test_position_text_after_moves() -> None:
    state = play_all(GAME.new_state(), "a7 d7 g7 a1")
    assert state.position_text() == (
        "1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0\n7\n7\n1\n"
    )
    assert parse_position(state.position_text()) == Position(state.board, (7, 7), 1)


@pytest.mark.parametrize(
    "variant",
    [
        lambda t: t,
        lambda t: t.rstrip("\n"),  # the seed's save_state writes no final newline
        lambda t: t.replace(", ", ","),  # the seed's save_state writes "," alone
        lambda t: t.replace(", ", " ,  "),
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t + "\n\n  \n",
        lambda t: "\n".join(f"  {line} " for line in t.splitlines()),
    ],
)
def test_position_text_accepted_forms(variant: Any) -> None:
    original = load("a7 d2 g4", "a1 d1 f4 b6", hands=(2, 3), player=2)
    again = MorrisState.from_position_text(variant(original.position_text()))
    assert again.position_text() == original.position_text()
    assert again.to_move == 1 and again.hands == (2, 3) and again.on_board == (3, 4)


def test_position_option_starts_the_game() -> None:
    text = position("a7 d7", "a1", hands=(7, 8))
    state = GAME.new_state({"position": text, "mill_protection": True})
    assert state.ply == 0 and state.last_move is None and state.to_move == 0
    assert state.position_text() == text
    assert state.options["mill_protection"] is True
    assert "g7xa1" in state.legal_moves()


def test_format_position() -> None:
    board = tuple(int(v) for v in "120000000000000000000012")
    assert format_position(Position(board, (0, 1), 2)) == (
        "1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2\n0\n1\n2\n"
    )


GOOD = position("a7 d2 g4", "a1 d1 f4 b6", hands=(2, 3))
GOOD_LINES = GOOD.splitlines()


def with_line(index: int, text: str) -> str:
    lines = list(GOOD_LINES)
    lines[index] = text
    return "\n".join(lines)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("", 1, "position line 1: missing (expected four lines; missing: the board, Player 1's"),
        (GOOD_LINES[0], 2, "position line 2: missing (expected four lines; missing: Player 1's counters in hand,"),
        ("\n".join(GOOD_LINES[:2]), 3, "position line 3: missing"),
        (
            "\n".join(GOOD_LINES[:3]) + "\n\n",
            4,
            "position line 4: missing (expected four lines; missing: the player to move)",
        ),
        (GOOD + "1\n", 5, "position line 5: unexpected text after the four lines"),
        (
            with_line(0, ", ".join(["0"] * 23)),
            1,
            "position line 1: expected 24 point values separated by commas, found 23",
        ),
        (with_line(0, ", ".join(["0"] * 25)), 1, "found 25"),
        (with_line(0, " ".join(["0"] * 24)), 1, "found 1"),
        (with_line(0, ", ".join(["0"] * 23) + ","), 1, "found 23"),
        (
            with_line(0, "3, " + ", ".join(["0"] * 23)),
            1,
            "position line 1: value 1 (point a7) must be 0, 1 or 2, not '3'",
        ),
        (with_line(0, ", ".join(["0"] * 23) + ", x"), 1, "value 24 (point g1) must be 0, 1 or 2, not 'x'"),
        (with_line(0, ", ".join(["0"] * 23) + ", -1"), 1, "not '-1'"),
        (
            with_line(1, "10"),
            2,
            "position line 2: Player 1's counters in hand must be an integer from 0 to 9, not '10'",
        ),
        (with_line(1, "-1"), 2, "not '-1'"),
        (with_line(1, "two"), 2, "not 'two'"),
        (with_line(1, ""), 2, "not ''"),
        (
            with_line(2, "12"),
            3,
            "position line 3: Player 2's counters in hand must be an integer from 0 to 9, not '12'",
        ),
        (with_line(3, "0"), 4, "position line 4: the player to move must be 1 or 2, not '0'"),
        (with_line(3, "3"), 4, "not '3'"),
        (with_line(3, "1 2"), 4, "not '1 2'"),
        (position("a7 d2 g4", "a1 d1 f4 b6", hands=(7, 3)), 1,
         "position lines 1 and 2: Player 1 has 10 counters (3 on the board + 7 in hand); at most nine"),
        (position("a7", "a1 d1 f4 b6 g1 g7 g4 d7 d2 d3", hands=(0, 0)), 1,
         "position lines 1 and 3: Player 2 has 10 counters (10 on the board + 0 in hand); at most nine"),
    ],
)
def test_malformed_positions(text: str, line: int, message: str) -> None:
    with pytest.raises(PositionError) as info:
        parse_position(text)
    assert message in str(info.value)
    assert info.value.line == line and info.value.option == "position"
    # Through the option it is an InvalidOption for "position", as the server expects.
    with pytest.raises(InvalidOption) as option_info:
        GAME.new_state({"position": text})
    assert option_info.value.option == "position" and message in str(option_info.value)
    with pytest.raises(InvalidOption):
        GAME.resolve_options({"position": text})


def test_nine_counters_of_one_player_is_accepted() -> None:
    state = load("a7 d7 g7 b6 d6 f6", "a1", hands=(3, 8))
    assert state.hands == (3, 8) and state.on_board == (6, 1)


# --- random play: against a plain reference, round trips, immutability ----------------------------


REF_NEAR = {i: {j for j in range(24) if frozenset((SEED_ORDER[i], SEED_ORDER[j])) in EDGES} for i in range(24)}
REF_LINES = [[SEED_ORDER.index(n) for n in line.split()] for line in LINES]


def reference_moves(board: list[int], hands: list[int], player: int, flying: bool, protect: bool) -> set[str]:
    """The legal moves, computed the seed's way on a list board (player is 1 or 2)."""
    other = 3 - player
    near, lines = REF_NEAR, REF_LINES

    def in_mill(b: list[int], i: int) -> bool:
        return any(i in line and all(b[k] == b[i] for k in line) for line in lines)

    theirs = [i for i in range(24) if board[i] == other]
    if protect and not all(in_mill(board, i) for i in theirs):
        theirs = [i for i in theirs if not in_mill(board, i)]
    empty = [i for i in range(24) if board[i] == 0]
    steps: list[tuple[int | None, int]]
    if hands[player - 1]:
        steps = [(None, j) for j in empty]
    else:
        mine = [i for i in range(24) if board[i] == player]
        flies = flying and len(mine) == 3
        steps = [(i, j) for i in mine for j in empty if flies or j in near[i]]
    moves = set()
    for source, target in steps:
        after = list(board)
        if source is not None:
            after[source] = 0
        after[target] = player
        text = SEED_ORDER[target] if source is None else f"{SEED_ORDER[source]}-{SEED_ORDER[target]}"
        if in_mill(after, target) and theirs:
            moves.update(f"{text}x{SEED_ORDER[r]}" for r in theirs)
        else:
            moves.add(text)
    return moves


def random_game(rng: random.Random, options: dict[str, Any]) -> list[MorrisState]:
    states = [GAME.new_state(options)]
    while states[-1].outcome is None:
        states.append(states[-1].play(rng.choice(states[-1].legal_moves())))
    return states


@pytest.mark.parametrize("flying", [False, True])
@pytest.mark.parametrize("protect", [False, True])
def test_random_games_match_the_reference(flying: bool, protect: bool) -> None:
    rng = random.Random(f"{flying}{protect}")
    endings = set()
    for _ in range(40):
        states = random_game(rng, {"flying": flying, "mill_protection": protect, "max_plies": 400})
        for state in states[:-1]:
            board, hands, player = list(state.board), list(state.hands), state.to_move + 1
            moves = state.legal_moves()
            assert len(moves) == len(set(moves)) and moves == sorted(moves)
            assert set(moves) == reference_moves(board, hands, player, flying, protect)
        final = states[-1]
        endings.add(final.outcome.reason.split(" ", 2)[-1])
        if final.outcome.winner is not None:
            loser = 1 - final.outcome.winner
            assert final.hands[loser] + final.on_board[loser] < 3 or not reference_moves(
                list(final.board), list(final.hands), loser + 1, flying, protect
            )
    assert "has fewer than three counters" in endings


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.booleans(), st.booleans())
def test_round_trip_and_immutability(seed: int, flying: bool, protect: bool) -> None:
    rng = random.Random(seed)
    options = {"flying": flying, "mill_protection": protect, "max_plies": 200}
    state = GAME.new_state(options)
    while state.outcome is None:
        text, moves, board = state.position_text(), state.legal_moves(), state.board
        again = MorrisState.from_position_text(text, options)
        assert again.position_text() == text and again.legal_moves() == moves
        move = rng.choice(moves)
        after = state.play(move)
        assert after.last_move == move and after.ply == state.ply + 1
        assert state.position_text() == text and state.legal_moves() == moves and state.board == board
        total = [after.hands[s] + after.on_board[s] for s in (0, 1)]
        removed = 1 if "x" in move else 0
        mover = state.to_move
        assert total[1 - mover] == state.hands[1 - mover] + state.on_board[1 - mover] - removed
        # A move not in the list is refused.
        bogus = rng.choice(POINTS) + "-" + rng.choice(POINTS)
        if bogus not in moves:
            with pytest.raises(IllegalMove):
                state.play(bogus)
        state = after


def test_states_are_immutable() -> None:
    state = GAME.new_state()
    with pytest.raises(AttributeError):
        state.ply = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        state.to_move = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del state.outcome
    moves = state.legal_moves()
    moves.clear()
    assert len(state.legal_moves()) == 24


# --- the view --------------------------------------------------------------------------------------


def test_view_contents() -> None:
    state = load("a7 d7 g4", "a1 d1 f4 b6", hands=(1, 0), flying=True, max_plies=50).play("g7xb6")
    for seat in (0, 1, None):
        view = state.view(seat)
        assert msgpack.unpackb(msgpack.packb(view)) == view
        assert view["game"] == "morris" and view["ply"] == 1 and view["to_move"] == 1
        assert list(view["board"]) == SEED_ORDER
        assert view["board"]["a7"] == 0 and view["board"]["a1"] == 1 and view["board"]["b6"] is None
        assert view["in_hand"] == [0, 0] and view["on_board"] == [4, 3]
        assert view["phase"] == ["moving", "flying"]
        assert (view["flying"], view["mill_protection"], view["max_plies"]) == (True, False, 50)
        assert view["last_move"] == "g7xb6"
        assert view["position"] == state.position_text()
        assert parse_position(view["position"]).player == 2
        assert ("legal_moves" in view) == (seat == 1)
    assert set(state.view(1)["legal_moves"]) == set(state.legal_moves())


def test_view_of_a_finished_game_keeps_the_position() -> None:
    over = load("a7 d7 g4", "a1 d1 f4").play("g4-g7xf4")
    view = over.view(0)
    assert view["to_move"] is None and "legal_moves" not in view
    assert parse_position(view["position"]) == Position(over.board, (0, 0), 2)


# --- rendering --------------------------------------------------------------------------------------


def test_render_board() -> None:
    state = load("a7 d2 g4", "a1 d1 f4 b6", hands=(2, 3))
    picture = render(state.view(0), 0)
    rows = picture.splitlines()
    assert rows[0] == "7  X-----------+-----------+"
    assert rows[1] == "   |           |           |"
    assert rows[2] == "6  |   O-------+-------+   |"
    assert rows[6] == "4  +---+---+       +---O---X"
    assert rows[10] == "2  |   +-------X-------+   |"
    assert rows[12] == "1  O-----------O-----------+"
    assert rows[13] == "   a   b   c   d   e   f   g"
    assert "Player 1 (X) (you): 2 in hand, 3 on board, placing" in picture
    assert "Player 2 (O): 3 in hand, 4 on board, placing" in picture
    assert picture.count("X") == 3 + 1 and picture.count("O") == 4 + 1


def test_render_status_lines() -> None:
    state = load("a7 d7 g4", "a1 d1 f4 b6", flying=True, mill_protection=True, max_plies=80).play("g4-g7xb6")
    picture = render(state.view(None), None)
    assert "(you)" not in picture
    assert "Player 2 (O): 0 in hand, 3 on board, flying" in picture
    assert "Rules: flying, mill protection, draw after 80 plies" in picture
    assert "Last move: g4-g7xb6" in picture
    assert render(GAME.new_state().view(1), 1).count("+") == 24


def test_render_through_the_registry_entry_point() -> None:
    from client.render import render as render_any

    assert render_any(GAME.new_state().view(None), None) == render(GAME.new_state().view(None), None)


def test_doctests() -> None:
    assert doctest.testmod(games.morris).failed == 0
