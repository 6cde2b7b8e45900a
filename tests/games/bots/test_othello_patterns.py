"""The trained Othello evaluation: pattern indices, the data file (shapes, one known position), its use.

The pattern indices are checked against a square-by-square reading of the
board; the shipped tables are loaded from the package as a worker loads
them; a file of another layout is refused with a clear error.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import games
from games.bots import Budget
from games.bots import othello_patterns as patterns
from games.bots.othello_board import board
from games.bots.othello_eval import LIMIT, best_evaluator, evaluator, hand_terms, trained_evaluator
from games.bots.othello_search import Searcher
from games.othello import OthelloState

OTHELLO = games.get("othello")
START = (0x0000000810000000, 0x0000001008000000)
"""Black's and White's discs at the standard start (Black to move)."""


def _random_positions(count: int, seed: int) -> list[tuple[int, int]]:
    rng, found = random.Random(seed), []
    while len(found) < count:
        state = OTHELLO.new_state({"size": 8})
        for _ in range(rng.randrange(0, 60)):
            if state.outcome is not None:
                break
            state = state.play(rng.choice(state.legal_moves()))
        found.append((state.black, state.white) if state.to_move == 0 else (state.white, state.black))
    return found


def _zero_weights(mobility: int = 0) -> patterns.PatternWeights:
    tables = tuple({name: [0] * size for name, size in patterns.TABLE_SIZES.items()} for _ in range(patterns.STAGES))
    return patterns.PatternWeights(tables, (mobility,) * patterns.STAGES, (0,) * patterns.STAGES, {})


def test_there_are_46_pattern_copies_of_11_patterns_each_on_distinct_squares() -> None:
    counts: dict[str, int] = {}
    for pattern in patterns.PATTERNS:
        counts[pattern.name] = counts.get(pattern.name, 0) + 1
        assert len(set(pattern.squares)) == len(pattern.squares)
        assert 3 ** len(pattern.squares) == patterns.TABLE_SIZES[pattern.name]
    assert counts == {"hv2": 4, "hv3": 4, "hv4": 4, "d8": 2, "d7": 4, "d6": 4, "d5": 4, "d4": 4,
                      "edge_x": 4, "corner3x3": 4, "corner2x5": 8}


def test_the_packed_indices_equal_a_square_by_square_reading() -> None:
    for own, opp in _random_positions(150, seed=4):
        expected = [sum((1 if own >> square & 1 else 2 if opp >> square & 1 else 0) * 3 ** digit
                        for digit, square in enumerate(pattern.squares)) for pattern in patterns.PATTERNS]
        assert list(patterns.pattern_indices(own, opp)) == expected


def test_stages_cover_every_disc_count_in_order() -> None:
    stages = [patterns.stage_of(discs) for discs in range(4, 65)]
    assert stages[0] == 0 and stages[-1] == patterns.STAGES - 1
    assert all(b - a in (0, 1) for a, b in zip(stages, stages[1:]))


def _mirrored(bits: int, symmetry: int) -> int:
    """``bits`` under one of the 8x8 board's eight symmetries (0: itself; 1-7: mirrors and rotations)."""
    moved = 0
    for square in range(64):
        if bits >> square & 1:
            r, c = divmod(square, 8)
            if symmetry & 1:
                c = 7 - c
            if symmetry & 2:
                r = 7 - r
            if symmetry & 4:
                r, c = c, r
            moved |= 1 << (r * 8 + c)
    return moved


def test_symmetric_indices_pair_configurations_a_board_symmetry_makes_equal() -> None:
    classes = {name: patterns.symmetric_indices(name) for name in patterns.TABLE_SIZES}
    assert classes["hv2"][1] == classes["hv2"][3 ** 7] == 1  # one end of the row or the other
    assert classes["edge_x"][3 ** 8] == classes["edge_x"][3 ** 9] == 3 ** 8  # one X-square or the other
    assert classes["corner2x5"] == list(range(3 ** 10))  # no symmetry keeps a 2x5 block in place
    assert all(classes[name][index] <= index and classes[name][classes[name][index]] == classes[name][index]
               for name in classes for index in range(0, patterns.TABLE_SIZES[name], 97))
    assert len(set(classes["hv3"])) == (3 ** 8 + 3 ** 4) // 2  # pairs, less the palindromes


def test_tables_tied_by_symmetric_indices_score_every_mirror_image_alike() -> None:
    rng = random.Random(5)
    classes = {name: patterns.symmetric_indices(name) for name in patterns.TABLE_SIZES}
    tables = tuple({name: [rng.randrange(-500, 500) for _ in range(size)] for name, size in patterns.TABLE_SIZES.items()}
                   for _ in range(patterns.STAGES))
    for stage_tables in tables:
        for name, table in stage_tables.items():
            table[:] = [table[c] for c in classes[name]]
    evaluate = patterns.evaluator(patterns.PatternWeights(tables, (0,) * 8, (0,) * 8, {}), 10 ** 9)
    for own, opp in _random_positions(40, seed=6):
        images = {evaluate(_mirrored(own, s), _mirrored(opp, s)) for s in range(8)}
        assert len(images) == 1, (hex(own), hex(opp), images)


def test_weights_written_are_read_back_and_score_as_their_sum(tmp_path: Path) -> None:
    weights = _zero_weights(mobility=7)
    weights.tables[3]["edge_x"][5] = -300
    weights.tables[3]["hv2"][0] = 11
    path = tmp_path / "p.bin"
    patterns.save_weights(weights, path)
    loaded = patterns.load_weights(path)
    assert loaded.tables[3]["edge_x"][5] == -300 and loaded.mobility == (7,) * patterns.STAGES
    evaluate = patterns.evaluator(loaded, LIMIT)
    for own, opp in _random_positions(30, seed=9):
        stage, indices, mobility = patterns.feature_vector(own, opp)
        expected = 7 * mobility + sum(loaded.tables[stage][p.name][i] for p, i in zip(patterns.PATTERNS, indices))
        assert evaluate(own, opp) == max(-LIMIT + 1, min(LIMIT - 1, expected))


def test_a_file_of_another_layout_is_refused_with_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(b'{"format": "something else"}\n')
    with pytest.raises(ValueError, match="not a parlour-othello-patterns-1 file"):
        patterns.load_weights(path)
    weights = _zero_weights()
    weights.tables[0]["d4"].append(0)
    with pytest.raises(ValueError, match="stage 0 table d4 has 82 entries, not 81"):
        patterns.save_weights(weights, tmp_path / "long.bin")


def test_the_shipped_tables_load_with_the_right_shapes_and_are_small() -> None:
    assert patterns.DATA_FILE.stat().st_size < 3_000_000
    weights = patterns.load_weights()
    assert len(weights.tables) == len(weights.mobility) == len(weights.bias) == patterns.STAGES
    for stage_tables in weights.tables:
        assert {name: len(table) for name, table in stage_tables.items()} == patterns.TABLE_SIZES
        assert all(-32767 <= value <= 32767 for table in stage_tables.values() for value in table)
    assert 300 <= weights.hand_permille <= 3000
    assert weights.info["games"] >= 15_000 and weights.info["test_rmse_patterns"] < weights.info["test_rmse_hand_weighted"]
    # 426,047 positions labelled by 4-ply searches of earlier tables, exact to 12 empties (bootstrapping rounds),
    # mirror images tied, neighbouring stages blended at 0.3, rarely seen entries kept (--min-count 0): 5.13 discs
    info = weights.info
    assert (info["bootstrap_depth"], info["exact_to"], info["epoch"], info["min_count"]) == (4, 12, 44, 0)
    assert info["tied"] is True and info["stage_blend"] == 0.3 and info["positions"] == 426_047
    assert info["test_rmse_patterns"] <= 5.13
    assert patterns.load_weights() is weights  # read once per process


def test_known_positions_score_as_when_the_tables_were_fitted() -> None:
    evaluate = trained_evaluator(8)
    assert evaluate is not None
    assert evaluate(*START) == -26  # the start, Black to move: even within three tenths of a disc
    four_corners = OthelloState.from_diagram("\n".join(
        ["X......X", "........", "..XXO...", "...XO...", "...OX...", "..O.....", "........", "X......X"]), 0, 20)
    assert evaluate(four_corners.black, four_corners.white) == 2276  # Black holds all four corners: +23 discs
    assert evaluate(four_corners.white, four_corners.black) == -2296


def test_the_search_uses_the_trained_tables_on_8x8_only() -> None:
    assert best_evaluator(8) is trained_evaluator(8) is not None
    assert trained_evaluator(6) is None and best_evaluator(6) is evaluator(6)
    assert Searcher(8, Budget(nodes=1)).evaluate is trained_evaluator(8)
    assert Searcher(10, Budget(nodes=1)).evaluate is evaluator(10)
    hand = evaluator(8)
    assert Searcher(8, Budget(nodes=1), evaluate=hand).evaluate is hand


def test_a_player_given_a_tables_file_evaluates_with_it_and_refuses_a_bad_one(tmp_path: Path) -> None:
    from games.bots.othello import OthelloChooser, make_chooser  # noqa: PLC0415

    path = tmp_path / "flat.bin"
    patterns.save_weights(_zero_weights(mobility=100), path)  # only mobility counts: 0 at the start
    player = OthelloChooser(5, path)
    state = OTHELLO.new_state({"size": 8})
    assert player.choose(state.view(0), Budget(nodes=300), random.Random(1)) in state.legal_moves()
    assert player._evaluate is trained_evaluator(8, path)
    assert player._evaluate(*START) == 0 and make_chooser(5)._evaluate is None
    four_corners = OthelloState.from_diagram("\n".join(
        ["X......X", "........", "..XXO...", "...XO...", "...OX...", "..O.....", "........", "X......X"]), 0, 20)
    mobility = board(8).mobility(four_corners.black, four_corners.white)
    assert player._evaluate(four_corners.black, four_corners.white) == 100 * mobility  # the shipped tables: 2330
    bad = tmp_path / "bad.bin"
    bad.write_text("not tables")
    with pytest.raises(ValueError, match="JSON header"):
        OthelloChooser(5, bad)


def test_the_trained_evaluation_stays_below_a_proven_result() -> None:
    evaluate = trained_evaluator(8)
    assert evaluate is not None
    for own, opp in _random_positions(200, seed=12):
        assert -LIMIT < evaluate(own, opp) < LIMIT


def test_tables_that_correct_the_hand_evaluation_need_it() -> None:
    weights = patterns.PatternWeights(_zero_weights().tables, (0,) * 8, (0,) * 8, {}, hand_permille=760)
    with pytest.raises(ValueError, match="pass it as hand"):
        patterns.evaluator(weights, LIMIT)
    hand = evaluator(8)
    corrected = patterns.evaluator(weights, LIMIT, hand=hand_terms(8))
    for own, opp in _random_positions(20, seed=2):
        assert corrected(own, opp) == max(-LIMIT + 1, min(LIMIT - 1, hand(own, opp) * 760 // 1000))


def test_a_missing_or_damaged_data_file_leaves_the_hand_weighted_evaluation(tmp_path: Path) -> None:
    assert trained_evaluator(8, tmp_path / "absent.bin") is None
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(patterns.DATA_FILE.read_bytes()[:500])
    assert trained_evaluator(8, damaged) is None
    cut = tmp_path / "cut.bin"
    cut.write_bytes(patterns.DATA_FILE.read_bytes()[:-100])
    with pytest.raises(ValueError, match="do not decompress"):
        patterns.load_weights(cut)
    assert trained_evaluator(8, cut) is None


def test_x_and_c_squares_are_looked_up_by_which_corners_are_empty_on_every_size() -> None:
    from games.bots.othello_board import board  # noqa: PLC0415
    from games.bots.othello_eval import _near_empty_corners  # noqa: PLC0415

    for size in range(6, 17, 2):
        geometry = board(size)
        table = _near_empty_corners(geometry)
        assert len(table) == 16 and table[0] == (sum(x for _, x, _ in geometry.x_squares),
                                                 sum(c for _, _, c in geometry.x_squares))
        assert table[geometry.corners] == (0, 0)
        corner, x, c = geometry.x_squares[2]
        assert table[geometry.corners ^ corner] == (x, c)  # only that corner empty
