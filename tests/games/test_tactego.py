"""Tests for games.tactego (RULES.md "Tactego"; seed 003_6ad92695a6f9013e.txt)."""

from __future__ import annotations

import random
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client.render.tactego import render
from games.base import IllegalMove, InvalidOption
from games.tactego import (
    DEFAULT_PIECES,
    Piece,
    PiecesError,
    Tactego,
    TactegoState,
    _geometry,
    parse_pieces,
)

GAME = Tactego()


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def reference_board(seed: str, pieces_text: str, length: int, width: int) -> list[list[Any]]:
    """A literal transcription of the seed's reference procedure, using the global random module.

    random.seed(seed); load the pieces in file order; shuffle red, then blue;
    red from (0, 0) across then down; blue from (length - 1, 0) across then up.
    """
    random.seed(seed)
    red_pieces = []
    for line in pieces_text.split("\n"):
        parts = line.split()
        if len(parts) == 2:
            for _ in range(int(parts[1])):
                red_pieces.append(parts[0])
    blue_pieces = []
    for line in pieces_text.split("\n"):
        parts = line.split()
        if len(parts) == 2:
            for _ in range(int(parts[1])):
                blue_pieces.append(parts[0])
    random.shuffle(red_pieces)
    random.shuffle(blue_pieces)
    board: list[list[Any]] = [[None] * width for _ in range(length)]
    row, col = 0, 0
    for piece in red_pieces:
        board[row][col] = [0, piece]
        col += 1
        if col == width:
            col = 0
            row += 1
    row, col = length - 1, 0
    for piece in blue_pieces:
        board[row][col] = [1, piece]
        col += 1
        if col == width:
            col = 0
            row -= 1
    return board


@pytest.fixture
def keep_global_random():
    saved = random.getstate()
    yield
    random.setstate(saved)


def position(picture: str, to_move: int = 0, hidden: bool = True, max_plies: int | None = None) -> TactegoState:
    """Build a running position from a picture: rows of ``.``, ``r7``, ``bF``; ``*`` marks a revealed piece."""
    rows = [line.split() for line in picture.strip().splitlines()]
    board: list[Piece | None] = []
    for row in rows:
        for token in row:
            if token == ".":
                board.append(None)
                continue
            revealed = token.endswith("*")
            rank = token[1:].rstrip("*")
            board.append(Piece(0 if token[0] == "r" else 1, rank, 0 if rank == "F" else int(rank), revealed))
    options = GAME.resolve_options({"rows": len(rows), "cols": len(rows[0]), "hidden": hidden, "max_plies": max_plies, "pieces": "F 1"})
    counts = tuple(sum(1 for p in board if p is not None and p.owner == s) for s in (0, 1))
    flags = tuple(sum(1 for p in board if p is not None and p.owner == s and p.rank == "F") for s in (0, 1))
    return TactegoState(
        GAME, options, "test", _geometry(len(rows), len(rows[0])), tuple(board), 0, to_move, None, None,
        counts, flags, ((), ()), None,
    )


def true_board(state: TactegoState) -> list[list[Piece | None]]:
    cols = state.options["cols"]
    board = state._board
    return [list(board[r * cols:(r + 1) * cols]) for r in range(state.options["rows"])]


def ranks(state: TactegoState, seat: int | None = None) -> list[list[str | None]]:
    """The board of a view as ``"r7"``/``"b?"``/``None`` strings."""
    return [[None if c is None else "rb"[c[0]] + c[1] for c in row] for row in state.view(seat)["board"]]


def plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    return value is None or isinstance(value, (str, int, bool))


def random_game(seed: int, plies: int, options: dict[str, Any] | None = None, setup: str = "s") -> list[TactegoState]:
    rng = random.Random(seed)
    state = GAME.new_state(options or {}, setup)
    states = [state]
    while state.outcome is None and len(states) <= plies:
        state = state.play(rng.choice(state.legal_moves()))
        states.append(state)
    return states


# --------------------------------------------------------------------------
# Metadata and options
# --------------------------------------------------------------------------


def test_metadata():
    assert GAME.name == "tactego"
    assert GAME.seats == ("Red", "Blue")
    assert GAME.uses_seed is True
    names = [o.name for o in GAME.options]
    assert names == ["rows", "cols", "pieces", "hidden", "max_plies"]
    options = GAME.resolve_options({})
    assert options == {"rows": 8, "cols": 8, "pieces": None, "hidden": True, "max_plies": None}


def test_null_options_mean_defaults():
    state = GAME.new_state({"rows": None, "cols": None, "pieces": None, "hidden": None, "max_plies": None}, "x")
    assert state.options["rows"] == 8 and state.options["hidden"] is True
    assert len(state.view(0)["board"]) == 8 and len(state.view(0)["board"][0]) == 8


@pytest.mark.parametrize(
    "options",
    [
        {"rows": 1}, {"rows": 27}, {"cols": 1}, {"cols": 27}, {"rows": "8"}, {"cols": 8.0}, {"rows": True},
        {"hidden": 1}, {"hidden": "yes"}, {"max_plies": 0}, {"max_plies": "10"}, {"pieces": ["7 1"]},
        {"pieces": 7}, {"pieces": "F 1\n" + " " * 10000}, {"size": 8}, {"rows": 3},  # default set needs 4 rows
    ],
)
def test_bad_options_refused(options):
    with pytest.raises(InvalidOption):
        GAME.new_state(options, "seed")


def test_sizes_at_bounds():
    assert GAME.new_state({"rows": 2, "cols": 2, "pieces": "5 1\nF 1"}, "a").view(0)["rows"] == 2
    big = GAME.new_state({"rows": 26, "cols": 26, "pieces": "5 26\nF 1", "hidden": False}, "a")
    assert big.view(0)["cols"] == 26 and len(big.view(0)["board"]) == 26
    assert ranks(big)[25][25] is not None and ranks(big)[24][0] is not None and ranks(big)[24][1] is None
    assert any(move.endswith("-z2") for move in big.legal_moves())  # y1 or z1 is not the one flag


def test_bad_seed_type_refused():
    with pytest.raises(InvalidOption):
        GAME.new_state({}, 1.5)


def test_seed_is_secret_when_hidden():
    assert GAME.seed_is_secret({}) is True
    assert GAME.seed_is_secret({"hidden": None}) is True
    assert GAME.seed_is_secret({"hidden": True}) is True
    assert GAME.seed_is_secret({"hidden": False}) is False


# --------------------------------------------------------------------------
# Pieces files
# --------------------------------------------------------------------------


def test_parse_default_pieces():
    assert parse_pieces(DEFAULT_PIECES) == [("10", 1), ("9", 1), ("8", 2), ("7", 3), ("6", 4), ("5", 4), ("F", 1)]
    assert sum(n for _, n in parse_pieces(DEFAULT_PIECES)) == 16


def test_parse_forgiving():
    text = "\n  7   3 \r\n\n\tf 2\n007 1\n"
    assert parse_pieces(text) == [("7", 3), ("F", 2), ("7", 1)]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("7 3\n7\nF 1", "line 2: expected 'STRENGTH COUNT' or 'F COUNT'"),
        ("7 3 1\nF 1", "line 1: expected"),
        ("F 1\n\nx 3", "line 3: strength 'x' is not a positive integer"),
        ("0 3\nF 1", "line 1: strength '0' is not a positive integer"),
        ("-2 3\nF 1", "line 1: strength '-2' is not a positive integer"),
        ("2.5 3\nF 1", "line 1: strength '2.5' is not a positive integer"),
        ("7 0\nF 1", "line 1: count '0' is not a positive integer"),
        ("7 -1\nF 1", "line 1: count '-1' is not a positive integer"),
        ("F two", "line 1: count 'two' is not a positive integer"),
        ("7 3\n5 1", "no flag"),
        ("", "no flag"),
        ("7 12345678901\nF 1", "line 1: count '12345678901' is too large"),
        ("9" * 5000 + " 1\nF 1", "line 1: strength"),
    ],
)
def test_parse_errors_name_line_and_problem(text, fragment):
    with pytest.raises(PiecesError) as info:
        parse_pieces(text)
    assert fragment in str(info.value)
    assert info.value.option == "pieces"
    assert isinstance(info.value, InvalidOption)


def test_bad_pieces_refused_by_new_state():
    with pytest.raises(PiecesError, match="line 2"):
        GAME.new_state({"pieces": "7 3\nbanana\nF 1"}, "s")
    with pytest.raises(PiecesError, match="no flag"):
        GAME.new_state({"pieces": "7 3"}, "s")


def test_set_that_does_not_fit_is_refused():
    # 16 a side on 8 columns needs 2 x 2 = 4 rows.
    GAME.new_state({"rows": 4, "cols": 8}, "s")
    with pytest.raises(PiecesError, match="overlap") as info:
        GAME.new_state({"rows": 3, "cols": 8}, "s")
    assert "2 x ceil(16 / 8) = 4" in str(info.value)
    # 9 a side on 4 columns needs 2 x 3 = 6 rows.
    GAME.new_state({"rows": 6, "cols": 4, "pieces": "5 8\nF 1"}, "s")
    with pytest.raises(PiecesError, match="overlap"):
        GAME.new_state({"rows": 5, "cols": 4, "pieces": "5 8\nF 1"}, "s")
    with pytest.raises(PiecesError, match="overlap"):
        GAME.new_state({"pieces": "5 999999999\nF 1"}, "s")


# --------------------------------------------------------------------------
# Setup: exactly the seed's reference procedure
# --------------------------------------------------------------------------

PIECE_FILES = [
    DEFAULT_PIECES,
    "F 1\n5 1",
    "3 2\nF 2\n1 3\n3 1\n12 2",
    "\n7 3\n\nF 1\n2 5\n",
]


@pytest.mark.parametrize("seed", ["", "abc", "What is seed?", "12345", "0", "ümlaut seed"])
@pytest.mark.parametrize("pieces", PIECE_FILES)
@pytest.mark.parametrize("rows, cols", [(8, 8), (6, 10), (26, 3), (10, 26), (4, 8)])
def test_setup_matches_reference(keep_global_random, seed, pieces, rows, cols):
    per_side = sum(n for _, n in parse_pieces(pieces))
    if 2 * -(-per_side // cols) > rows:
        pytest.skip("set does not fit")
    state = GAME.new_state({"rows": rows, "cols": cols, "pieces": pieces, "hidden": False}, seed)
    assert state.view(None)["board"] == reference_board(seed, pieces, rows, cols)


def test_integer_seed_is_its_decimal_string(keep_global_random):
    by_int = GAME.new_state({"hidden": False}, 2024)
    by_str = GAME.new_state({"hidden": False}, "2024")
    assert by_int.seed == "2024"
    assert by_int.view(0)["board"] == by_str.view(0)["board"] == reference_board("2024", DEFAULT_PIECES, 8, 8)
    assert GAME.new_state({"hidden": False}, -7).view(0)["board"] == reference_board("-7", DEFAULT_PIECES, 8, 8)


def test_no_seed_draws_one_and_records_it():
    state = GAME.new_state({"hidden": False})
    assert isinstance(state.seed, str) and len(state.seed) >= 16
    again = GAME.new_state({"hidden": False}, state.seed)
    assert again.view(0)["board"] == state.view(0)["board"]
    assert GAME.new_state({}).seed != state.seed


def test_setup_does_not_touch_global_random(keep_global_random):
    random.seed("outside")
    expected = random.random()
    random.seed("outside")
    GAME.new_state({}, "inside")
    assert random.random() == expected


def test_golden_small_setup():
    state = GAME.new_state({"rows": 4, "cols": 3, "pieces": "1 1\n2 1\nF 1", "hidden": False}, "golden")
    picture = ranks(state, None)
    assert picture[1] == [None, None, None] and picture[2] == [None, None, None]
    assert sorted(picture[0]) == ["r1", "r2", "rF"] and sorted(picture[3]) == ["b1", "b2", "bF"]
    # The same as the reference procedure:
    assert state.view(None)["board"] == reference_board("golden", "1 1\n2 1\nF 1", 4, 3)


def test_start_position_counts_and_turn():
    state = GAME.new_state({}, "s")
    view = state.view(0)
    assert state.ply == 0 and state.to_move == 0 and state.outcome is None and state.last_move is None
    assert view["counts"] == [16, 16] and view["flags"] == [1, 1] and view["lost"] == [[], []]
    assert view["revealed"] == [] and view["last_combat"] is None
    assert [row.count(None) for row in view["board"]] == [0, 0, 8, 8, 8, 8, 0, 0]


def test_only_flags_red_loses_at_once():
    state = GAME.new_state({"rows": 2, "cols": 2, "pieces": "F 1"}, "s")
    assert state.outcome is not None and state.outcome.winner == 1
    assert state.outcome.reason == "Red has no legal move"
    assert state.to_move is None and state.legal_moves() == []


def test_red_boxed_in_at_start_loses():
    # 4 x 2 board, 4 pieces a side: Red's back row is boxed in when both flags stand in row 2.
    for n in range(500):
        state = GAME.new_state({"rows": 4, "cols": 2, "pieces": "5 2\nF 2", "hidden": False}, f"box{n}")
        if ranks(state)[1] == ["rF", "rF"]:
            break
    else:
        pytest.fail("no seed boxes Red in")
    assert state.outcome is not None and state.outcome.winner == 1
    assert state.outcome.reason == "Red has no legal move"


# --------------------------------------------------------------------------
# Moves and notation
# --------------------------------------------------------------------------

OPEN = """
.  .  .  .  .
.  .  .  .  .
.  .  r5 .  .
.  .  .  .  .
rF .  .  .  bF
"""


def test_eight_directions_in_canonical_order():
    state = position(OPEN)
    assert state.legal_moves() == ["c3-b2", "c3-c2", "c3-d2", "c3-b3", "c3-d3", "c3-b4", "c3-c4", "c3-d4"]


def test_corner_and_edge_moves():
    state = position("r5 .  .\n.  .  .\nrF .  bF")
    assert state.legal_moves() == ["a1-b1", "a1-a2", "a1-b2"]


def test_cannot_move_onto_own_piece_but_can_attack():
    state = position("r5 r6 .\nb7 .  .\nrF .  bF")
    assert state.legal_moves() == ["a1-a2", "a1-b2", "b1-c1", "b1-a2", "b1-b2", "b1-c2"]


@pytest.mark.parametrize("text", ["c3-d4", "C3-D4", " c3 d4 ", "c3d4", "c3 - d4", "c3xd4", "C3:D4", "c03-d4"])
def test_forgiving_input_canonical_output(text):
    after = position(OPEN).play(text)
    assert after.last_move == "c3-d4"
    assert ranks(after, 0)[3][3] == "r5"


@pytest.mark.parametrize(
    "move, reason",
    [
        ("c3-c3", "c3-c3 is not a one-square step"),
        ("c3-e5", "c3-e5 is not a one-square step"),
        ("c3-c1", "c3-c1 is not a one-square step"),
        ("b2-c3", "b2 is empty"),
        ("e5-e4", "e5 is not your piece"),
        ("a5-a4", "a5 is a flag: flags never move"),
        ("f1-f2", "f1 is off the 5x5 board"),
        ("c3-c6", "c6 is off the 5x5 board"),
        ("a0-a1", "a0 is off the 5x5 board"),
    ],
)
def test_illegal_moves_name_the_rule(move, reason):
    with pytest.raises(IllegalMove) as info:
        position(OPEN).play(move)
    assert info.value.reason == reason
    assert info.value.move == move


def test_reasons_from_brief():
    state = position(".  .  .  .\n.  rF r5 .\n.  .  r6 .\n.  .  .  bF")
    with pytest.raises(IllegalMove, match="c3 holds your own piece"):
        state.play("c2-c3")
    with pytest.raises(IllegalMove, match="b2 is a flag: flags never move"):
        state.play("b2-c3")
    with pytest.raises(IllegalMove, match="d4 is not your piece"):
        state.play("d4-d3")
    with pytest.raises(IllegalMove, match="c2-a4 is not a one-square step"):
        state.play("c2-a4")


@pytest.mark.parametrize("text", ["", "c3", "c3-", "hello", "3c-4d", "c3-d4-e5", "33-44", "c3 to d4"])
def test_unparseable_moves(text):
    with pytest.raises(IllegalMove, match="a move is two squares"):
        position(OPEN).play(text)


def test_non_string_move_refused():
    with pytest.raises(IllegalMove):
        position(OPEN).play(None)  # type: ignore[arg-type]


def test_legal_moves_match_play():
    for state in random_game(3, 40):
        if state.outcome is not None:
            break
        for move in state.legal_moves():
            assert state.play(move).last_move == move


def test_turns_alternate_and_ply_counts():
    states = random_game(5, 6)
    for ply, state in enumerate(states):
        assert state.ply == ply
        if state.outcome is None:
            assert state.to_move == ply % 2


# --------------------------------------------------------------------------
# Combat
# --------------------------------------------------------------------------

FIGHT = """
r7 b5 b7 b9
.  .  .  .
rF .  .  bF
"""


def test_higher_strength_wins():
    after = position(FIGHT).play("a1-b1")
    assert ranks(after, 1)[0][:2] == [None, "r7"]
    view = after.view(1)
    assert view["counts"] == [2, 3] and view["lost"] == [[], ["5"]]
    assert view["last_combat"] == {"square": "b1", "attacker": "7", "defender": "5", "attacker_seat": 0, "winner": 0}
    assert view["revealed"] == ["b1"]


def test_equal_strength_attacker_wins():
    state = position("r7 b7 .\n.  .  .\nrF .  bF")
    after = state.play("a1-b1")
    assert ranks(after, 1)[0] == [None, "r7", None]
    assert after.view(0)["lost"] == [[], ["7"]]
    assert after.view(0)["last_combat"]["winner"] == 0


def test_lower_strength_loses_and_is_removed():
    state = position("r7 .  b9\n.  .  .\nrF .  bF")
    state = state.play("a1-b1").play("c1-c2")
    after = state.play("b1-c2")
    assert ranks(after, 0)[0] == [None, None, None]
    assert ranks(after, 0)[1] == [None, None, "b9"]  # the defender stays, now known
    assert after.view(0)["counts"] == [1, 2]
    assert after.view(0)["lost"] == [["7"], []]
    assert after.view(None)["last_combat"] == {"square": "c2", "attacker": "7", "defender": "9", "attacker_seat": 0, "winner": 1}
    assert after.view(None)["revealed"] == ["c2"]


def test_weakest_piece_captures_last_flag_and_wins():
    state = position("r1 bF\nrF b9", hidden=True)
    after = state.play("a1-b1")
    assert after.outcome is not None and after.outcome.winner == 0
    assert after.outcome.reason == "Blue has no flags left"
    assert after.to_move is None and after.legal_moves() == []
    assert after.view(1)["flags"] == [1, 0]
    assert after.view(None)["last_combat"] == {"square": "b1", "attacker": "1", "defender": "F", "attacker_seat": 0, "winner": 0}
    with pytest.raises(IllegalMove, match="the game is over"):
        after.play("b2-a2")


def test_capturing_one_of_two_flags_does_not_end():
    state = position("r1 bF .\nrF .  bF\n.  .  b3")
    after = state.play("a1-b1")
    assert after.outcome is None and after.to_move == 1
    assert after.view(0)["flags"] == [1, 1]


def test_blue_wins_by_capture():
    state = position("rF r2 .\n.  .  .\nb3 .  bF", to_move=1)
    after = state.play("a3-a2").play("b1-c1").play("a2-a1")
    assert after.outcome is not None and after.outcome.winner == 1
    assert after.outcome.reason == "Red has no flags left"


def test_no_legal_move_loses():
    # Red takes Blue's last movable piece; Blue has only a flag left.
    state = position("r5 b5 .\n.  .  .\nrF .  bF")
    after = state.play("a1-b1")
    assert after.outcome is not None and after.outcome.winner == 0
    assert after.outcome.reason == "Blue has no legal move"


def test_boxed_in_is_no_legal_move():
    # Blue's only movable piece is boxed in by its own flags; Red moves elsewhere.
    state = position("r5 .  .  .\n.  .  bF bF\nrF .  bF b3")
    after = state.play("a1-b1")
    assert after.outcome is not None and after.outcome.reason == "Blue has no legal move"


# --------------------------------------------------------------------------
# max_plies
# --------------------------------------------------------------------------


def test_max_plies_draws():
    state = GAME.new_state({"max_plies": 3}, "s")
    states = [state]
    for _ in range(3):
        states.append(states[-1].play(states[-1].legal_moves()[0]))
    assert [s.outcome for s in states[:3]] == [None, None, None]
    final = states[-1]
    assert final.outcome is not None and final.outcome.winner is None
    assert final.outcome.reason == "move limit reached (3 plies)"
    assert final.to_move is None and final.legal_moves() == []


def test_max_plies_loss_beats_draw():
    after = position("r1 bF\nrF b9", max_plies=1).play("a1-b1")
    assert after.outcome.winner == 0 and after.outcome.reason == "Blue has no flags left"
    after = position("r5 b5 .\n.  .  .\nrF .  bF", max_plies=1).play("a1-b1")
    assert after.outcome.winner == 0 and after.outcome.reason == "Blue has no legal move"


def test_random_games_end_with_max_plies():
    for seed in range(5):
        states = random_game(seed, 10_000, {"max_plies": 200})
        assert states[-1].outcome is not None
        assert states[-1].ply <= 200


# --------------------------------------------------------------------------
# Immutability
# --------------------------------------------------------------------------


def test_play_does_not_change_old_state():
    state = GAME.new_state({}, "s")
    before = (state.view(0), state.view(1), state.view(None), state.legal_moves(), state.ply, state.to_move)
    moves = state.legal_moves()
    moves.clear()  # the returned list is a copy
    state.play(state.legal_moves()[0])
    state.play(state.legal_moves()[-1])
    after = (state.view(0), state.view(1), state.view(None), state.legal_moves(), state.ply, state.to_move)
    assert before == after


def test_combat_does_not_change_old_state():
    state = position(FIGHT)
    before = state.view(None)
    state.play("a1-b1")
    assert state.view(None) == before
    assert state.view(0)["counts"] == [2, 4]


def test_state_has_slots_and_repr_hides_board():
    state = GAME.new_state({}, "secret-seed")
    assert not hasattr(state, "__dict__")
    assert "secret-seed" not in repr(state) and "10" not in repr(state)


# --------------------------------------------------------------------------
# Views and hidden information
# --------------------------------------------------------------------------


def test_view_start_hidden():
    state = GAME.new_state({}, "s")
    truth = true_board(state)
    red, blue, spectator = ranks(state, 0), ranks(state, 1), ranks(state, None)
    for r in range(8):
        for c in range(8):
            piece = truth[r][c]
            if piece is None:
                assert red[r][c] is blue[r][c] is spectator[r][c] is None
                continue
            own = "rb"[piece.owner] + piece.rank
            masked = "rb"[piece.owner] + "?"
            assert spectator[r][c] == masked
            assert red[r][c] == (own if piece.owner == 0 else masked)
            assert blue[r][c] == (own if piece.owner == 1 else masked)
    assert "legal_moves" in state.view(0) and "legal_moves" not in state.view(1)
    assert "legal_moves" not in state.view(None)


def test_view_not_hidden_shows_everything():
    state = GAME.new_state({"hidden": False}, "s")
    assert ranks(state, 0) == ranks(state, 1) == ranks(state, None)
    assert all(cell is None or "?" not in cell for row in ranks(state, None) for cell in row)
    assert state.view(None)["hidden"] is False


def test_combat_reveals_both_pieces_to_everyone():
    state = position(FIGHT).play("a1-b1")  # red 7 beats blue 5 on b1
    for seat in (0, 1, None):
        assert ranks(state, seat)[0][1] == "r7"
    assert ranks(state, 1)[2][0] == "r?"  # the red flag never fought
    assert ranks(state, None)[0][2] == "b?"
    assert ranks(state, 0)[0][2] == "b?"
    state = state.play("c1-b1")  # blue 7 beats the revealed red 7
    assert ranks(state, None)[0][1] == "b7"
    assert state.view(None)["revealed"] == ["b1"]


def test_view_is_plain_and_msgpack_able():
    for state in random_game(11, 30):
        for seat in (0, 1, None):
            view = state.view(seat)
            assert plain(view)
            assert msgpack.unpackb(msgpack.packb(view)) == view
            assert {"game", "ply", "to_move", "outcome", "rows", "cols", "hidden", "board", "revealed",
                    "counts", "flags", "lost", "last_combat"} <= set(view)


def test_view_rejects_bad_seat():
    with pytest.raises(ValueError):
        GAME.new_state({}, "s").view(2)


def _visible(piece: Piece, seat: int | None, hidden: bool) -> bool:
    return not hidden or piece.revealed or piece.owner == seat


def _disguised(state: TactegoState, seat: int | None, rng: random.Random) -> TactegoState:
    """The same state with every rank ``seat`` may not see replaced by another rank."""
    board = []
    for piece in state._board:
        if piece is None or _visible(piece, seat, state.options["hidden"]):
            board.append(piece)
            continue
        rank = rng.choice(["F", "1", "42", "7"])
        board.append(piece._replace(rank=rank, strength=0 if rank == "F" else int(rank)))
    return TactegoState(
        state.game, state.options, state.seed, state._geometry, tuple(board), state.ply, state.to_move,
        state.outcome, state.last_move, state._counts, state._flags, state._lost, state._combat,
    )


pieces_sets = st.lists(
    st.tuples(st.sampled_from(["1", "2", "5", "7", "10"]), st.integers(1, 3)), min_size=1, max_size=4
).map(lambda kinds: "\n".join(f"{r} {n}" for r, n in kinds) + "\nF 1")


@settings(max_examples=60, deadline=None)
@given(
    game_seed=st.integers(0, 2**32),
    pieces=pieces_sets,
    cols=st.integers(3, 8),
    hidden=st.booleans(),
    plies=st.integers(0, 120),
)
def test_view_never_leaks_hidden_strengths(game_seed, pieces, cols, hidden, plies):
    per_side = sum(n for _, n in parse_pieces(pieces))
    rows = 2 * -(-per_side // cols) + 2
    options = {"rows": rows, "cols": cols, "pieces": pieces, "hidden": hidden}
    rng = random.Random(game_seed)
    for state in random_game(game_seed, plies, options, setup=str(game_seed)):
        truth = true_board(state)
        for seat in (0, 1, None):
            view = state.view(seat)
            for r, row in enumerate(view["board"]):
                for c, cell in enumerate(row):
                    piece = truth[r][c]
                    if piece is None:
                        assert cell is None
                        continue
                    assert cell[0] == piece.owner
                    expected = piece.rank if _visible(piece, seat, hidden) else "?"
                    assert cell[1] == expected
            # Non-interference: changing what the viewer may not see changes nothing in the view.
            assert _disguised(state, seat, rng).view(seat) == view


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def test_render_player_view():
    state = position(FIGHT).play("a1-b1")
    text = render(state.view(0), 0)
    lines = text.splitlines()
    assert lines[0].split() == ["a", "b", "c", "d"]
    assert lines[1].split() == ["1", ".", "r7*", "b?", "b?"]
    assert lines[3].split() == ["3", "rF", ".", ".", "b?"]
    assert "Red : 2 pieces, 1 flag left; lost: none" in text
    assert "Blue: 3 pieces, 1 flag left; lost: 5" in text
    assert "Combat on b1: Red 7 attacked Blue 5; Red won" in text


def test_render_spectator_and_blue():
    state = GAME.new_state({}, "s")
    spectator = render(state.view(None), None)
    assert "r?" in spectator and "b?" in spectator and "rF" not in spectator
    blue = render(state.view(1), 1)
    assert "bF" in blue and "r?" in blue and "rF" not in blue
    assert " 8 " in blue.splitlines()[8] and blue.splitlines()[0].split() == list("abcdefgh")
    assert "Blue: 16 pieces, 1 flag left" in blue


def test_render_not_hidden_and_wide_ranks():
    state = GAME.new_state({"rows": 4, "cols": 3, "pieces": "123 2\nF 1", "hidden": False}, "s")
    text = render(state.view(None), None)
    assert "r123" in text and "b123" in text and "rF" in text and "?" not in text.split("\n\n")[0]
    assert "all pieces shown" in text


def test_a_revealed_position_shows_every_strength_to_everyone_and_leaves_the_original_hidden():
    state = GAME.new_state({"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n"}, "open")
    truth = GAME.new_state({"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n", "hidden": False}, "open")
    opened = state.revealed()
    for seat in (0, 1, None):
        assert opened.view(seat)["board"] == truth.view(None)["board"]
        assert any(cell[1] == "?" for row in state.view(seat)["board"] for cell in row if cell), "the original still hides"
    assert opened.revealed() is opened and truth.revealed() is truth
    after = opened.play(opened.legal_moves()[0])
    assert any(cell[1] == "?" for row in after.view(None)["board"] for cell in row if cell), "moves lead to hiding positions"
    assert GAME.new_state({}, "x").revealed().view(0)["hidden"] is True
