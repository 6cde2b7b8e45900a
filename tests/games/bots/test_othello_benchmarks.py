"""The Othello benchmarks run and report what they claim: the search speed comparison, the solver check.

Each tool is run in-process at the smallest counts (a few hundredths of a
second a search), and its printed table is read back.
"""

from __future__ import annotations

import pickle
import random
import sys
from pathlib import Path

import pytest

import games
from games.bots import Budget

ROOT = Path(__file__).resolve().parents[3]
BENCHMARKS = ROOT / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import othello_previous  # noqa: E402
import othello_search_speed  # noqa: E402


def _rows(text: str, first_cell: str) -> list[list[str]]:
    """The Markdown table rows of ``text`` whose first cell is ``first_cell``, split into cells."""
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith(f"| {first_cell} |")]


def test_the_speed_comparison_runs_the_previous_search_beside_the_new(capsys: pytest.CaptureFixture[str]) -> None:
    assert othello_search_speed.main(["--compare", "--seconds", "0.02", "--positions", "1", "--depth", "2"]) == 0
    out = capsys.readouterr().out
    for name in ("previous", "new"):
        timed = [row for row in _rows(out, name) if len(row) == 7 and row[4].replace(",", "").isdigit()]
        fixed = [row for row in _rows(out, name) if len(row) == 7 and row[3] == "2"]
        assert [row[2] for row in timed] == ["opening", "middle", "end"], out
        assert [row[2] for row in fixed] == ["opening", "middle"], out
        assert all(int(row[5].replace(",", "")) > 0 for row in fixed), out


def test_the_speed_comparison_runs_the_search_of_any_commit_beside_the_new(capsys: pytest.CaptureFixture[str]) -> None:
    assert othello_search_speed.main(["--against-commit", "HEAD", "--seconds", "0.02", "--positions", "1",
                                      "--depth", "2"]) == 0
    out = capsys.readouterr().out
    for name in ("HEAD", "new"):
        fixed = [row for row in _rows(out, name) if len(row) == 7 and row[3] == "2"]
        assert [row[2] for row in fixed] == ["opening", "middle"], out
        assert all(int(row[5].replace(",", "")) > 0 for row in fixed), out
    with pytest.raises(SystemExit):
        othello_search_speed.main(["--against-commit", "no-such-revision", "--positions", "1"])
    assert "--against-commit no-such-revision" in capsys.readouterr().err


def test_the_previous_player_is_main_before_issue_22_read_from_git_and_plays_legal_moves() -> None:
    for module in othello_previous.MODULES:  # the history's text, only the shared contract's imports made absolute
        text = othello_previous.source(module)
        assert "from .base import" not in text and "from .greedy import" not in text
    assert "from games.bots.base import Budget, MoveChooser" in othello_previous.source("othello")
    othello_previous.load()
    assert othello_previous.make_chooser.__module__ == f"{othello_previous.PACKAGE}.othello"
    rng = random.Random(3)
    state = games.get("othello").new_state({"size": 8})
    player = othello_previous.make_chooser(5)
    while state.outcome is None and sum(state.disc_counts()) < 20:
        move = player.choose(state.view(state.to_move), Budget(nodes=300), rng)
        assert move in state.legal_moves()
        state = state.play(move)


def test_a_commit_the_history_lacks_is_refused_by_name() -> None:
    with pytest.raises(othello_previous.PreviousPlayerUnavailable, match="cannot read games/bots/othello.py at 000000000000"):
        othello_previous.source("othello", "0" * 40)


def test_the_solver_is_exact_against_brute_force_on_100_positions_with_up_to_8_empties() -> None:
    import othello_solver_check  # noqa: PLC0415

    checked, mismatches, seconds = othello_solver_check.check(100, 8, seed=22)
    assert checked == 100 and len(seconds["solver"]) == 100
    assert mismatches == []


def test_the_brute_force_solver_is_independent_and_agrees_with_the_engine_minimax() -> None:
    import othello_solver_check  # noqa: PLC0415

    rng = random.Random(5)
    for _ in range(5):
        own, opp = othello_solver_check.random_position(8, 6, rng)
        assert othello_solver_check.brute_force(own, opp) == othello_solver_check._by_engine(own, opp, 8)


def test_the_brute_force_prunes_with_plain_alpha_beta_at_every_depth_unless_told_not_to(
        capsys: pytest.CaptureFixture[str]) -> None:
    import othello_solver_check  # noqa: PLC0415

    rng = random.Random(8)
    for _ in range(4):
        own, opp = othello_solver_check.random_position(8, 7, rng)
        exact = othello_solver_check._by_engine(own, opp, 8)
        assert othello_solver_check.brute_force(own, opp) == exact
        assert othello_solver_check.brute_force(own, opp, prune_above=64) == exact
    assert othello_solver_check.main(["--positions", "3", "--max-empties", "6", "--prune-above", "3"]) == 0
    out = capsys.readouterr().out
    assert "brute force pruning above 3" in out and "exact: 3 of 3" in out
    assert othello_solver_check.PRUNE_ABOVE == 0


def test_the_solver_check_reports_a_wrong_solver(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import othello_solver_check  # noqa: PLC0415

    monkeypatch.setattr(othello_solver_check, "brute_force", lambda own, opp, *args, **kwargs: 99)
    assert othello_solver_check.main(["--positions", "2", "--max-empties", "4"]) == 1
    assert "exact: 0 of 2" in capsys.readouterr().out


def test_strength_plays_the_new_level_5_against_the_previous_one_from_varied_openings(
        capsys: pytest.CaptureFixture[str]) -> None:
    import strength  # noqa: PLC0415

    openings = strength.othello_openings()
    assert len(openings) == len(set(openings)) == strength.OPENING_COUNT
    assert {len(opening) for opening in openings} == set(range(4, 9))
    match = strength.Match("othello", (("size", 8),), strength.Player("level", 5), strength.Player("previous", 5))
    assert match in strength.matches_for("othello", {"size": 8}, [4, 5], openspiel=False)
    assert strength.Player("previous", 5).label == "previous level 5"
    budgets = strength.Budgets(seconds=0, nodes=150)
    first, second = (strength.play_game(match, index, 1, budgets) for index in (0, 1))
    assert first.plies > len(openings[0]) and second.plies > len(openings[0])
    assert strength.main(["--game", "othello", "--only", "previous", "--games", "2", "--seconds", "0",
                          "--nodes", "150", "--markdown"]) == 0
    rows = _rows(capsys.readouterr().out, "othello")
    assert [(row[1], row[2], row[3]) for row in rows] == [("level 5", "previous level 5", "2")]


def test_strength_plays_level_5_with_given_tables_against_the_previous_and_against_other_tables(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import strength  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415

    zero = tmp_path / "zero.bin"
    tables = tuple({name: [0] * size for name, size in othello_patterns.TABLE_SIZES.items()}
                   for _ in range(othello_patterns.STAGES))
    othello_patterns.save_weights(othello_patterns.PatternWeights(tables, (0,) * 8, (0,) * 8, {}), zero)
    shipped = str(othello_patterns.DATA_FILE)
    assert strength.main(["--game", "othello", "--only", "previous", "--games", "2", "--seconds", "0", "--nodes",
                          "150", "--tables", str(zero), "--against-tables", shipped, "--markdown"]) == 0
    rows = _rows(capsys.readouterr().out, "othello")
    assert [(row[1], row[2], row[3]) for row in rows] == [
        ("level 5 (zero.bin)", "previous level 5", "2"), ("level 5 (zero.bin)", "level 5 (othello_patterns.bin)", "2")]
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"not tables")
    with pytest.raises(SystemExit):
        strength.parse_args(["--tables", str(bad)])
    assert "not a readable Othello pattern file" in capsys.readouterr().err


def test_strength_plays_level_5_against_itself_at_a_git_revision_with_that_commits_data(
        capsys: pytest.CaptureFixture[str]) -> None:
    import strength  # noqa: PLC0415

    at_head = othello_previous.load_at("HEAD")
    assert at_head is othello_previous.load_at("HEAD")  # once per process and commit
    package = Path(at_head.__file__).parent
    assert {path.name for path in (package / "data").iterdir()} >= {"othello_patterns.bin", "othello_book.json"}
    assert (package / "othello_patterns.py").exists() and "from games.bots.base import" in (
        package / "othello_search.py").read_text()
    assert strength.main(["--game", "othello", "--only", "previous", "--games", "2", "--seconds", "0", "--nodes",
                          "150", "--against-commit", "HEAD", "--markdown"]) == 0
    rows = _rows(capsys.readouterr().out, "othello")
    assert [(row[1], row[2], row[3]) for row in rows] == [
        ("level 5", "previous level 5", "2"), ("level 5", "level 5 at HEAD", "2")]
    alone = strength.matches_for("othello", {"size": 8}, [5], openspiel=False, previous=False, against_commit="HEAD")
    assert [match.opponent for match in alone if match.opponent.kind not in ("random", "greedy")] == [
        strength.Player("commit", 5, commit="HEAD")]  # --no-previous keeps the match against the revision
    with pytest.raises(SystemExit):
        strength.parse_args(["--against-commit", "no-such-revision"])
    assert "no Othello player at 'no-such-revision'" in capsys.readouterr().err


def test_strength_checks_the_solver_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    import strength  # noqa: PLC0415

    assert strength.main(["--game", "othello", "--only", "previous", "--solver-check", "6", "--solver-empties", "7",
                          "--games", "1", "--seconds", "0", "--nodes", "50"]) == 0
    assert "othello endgame solver: exact in 6 of 6 random positions with 1-7 empties" in capsys.readouterr().out


def test_openspiel_alpha_beta_plays_othello_through_the_adapter() -> None:
    pytest.importorskip("pyspiel")
    import openspiel_opponent  # noqa: PLC0415
    from games.bots import chooser  # noqa: PLC0415

    played = openspiel_opponent.play_against_mcts("othello", lambda: chooser("othello", 2), games=2, simulations=1,
                                                  seed=1, seconds=None, nodes=50, opponent="alphabeta")
    assert [game.our_seat for game in played.games] == [0, 1]
    assert all(game.plies >= 9 for game in played.games)
    assert played.summary().startswith("othello vs alpha-beta depth 1: 2 games")
    with pytest.raises(ValueError, match="alphabeta"):
        openspiel_opponent.play_against_mcts("morris", lambda: chooser("morris", 2), games=1, opponent="alphabeta")


def test_strength_scales_each_levels_default_time() -> None:
    import strength  # noqa: PLC0415

    budgets = strength.Budgets(time_scale=0.1)
    assert budgets.for_player(strength.Player("level", 5)).seconds == pytest.approx(0.1)
    assert budgets.for_player(strength.Player("level", 4)).seconds == pytest.approx(0.05)
    assert budgets.for_player(strength.Player("previous", 5)).seconds == pytest.approx(0.1)
    assert strength.Budgets(seconds=0.3, time_scale=0.1).for_player(strength.Player("level", 4)).seconds == 0.3
    with pytest.raises(SystemExit):
        strength.parse_args(["--time-scale", "0"])


def test_the_training_script_runs_end_to_end_and_writes_tables_that_load(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415

    out = tmp_path / "tables.bin"
    assert othello_train.main(["--games", "3", "--jobs", "1", "--nodes", "40", "--solve-at", "6",
                               "--relabel-depth", "1", "--epochs", "2", "--min-count", "1", "--out", str(out)]) == 0
    weights = othello_patterns.load_weights(out)
    assert weights.info["games"] == 3 and weights.info["relabel_depth"] == 1
    assert 0 < weights.hand_permille < 10_000
    info = weights.info
    assert info["train_positions"] + info["test_positions"] == info["positions"] > 3 * 15  # a third of each game
    assert info["epoch"] in (0, 1, 2)  # the best held-out epoch (0: the tables left at 0)


def test_the_training_script_fits_tables_alone_with_a_mobility_weight_when_asked(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415

    out = tmp_path / "alone.bin"
    assert othello_train.main(["--games", "4", "--jobs", "1", "--nodes", "40", "--solve-at", "6", "--relabel-depth",
                               "1", "--epochs", "3", "--min-count", "1", "--alone", "--out", str(out)]) == 0
    weights = othello_patterns.load_weights(out)
    assert weights.hand_permille == 0 and any(weights.mobility)
    evaluate = othello_patterns.evaluator(weights, 10_000)  # stands alone: no hand-weighted evaluation needed
    assert isinstance(evaluate(0x0000000810000000, 0x0000001008000000), int)


def test_the_training_script_ties_mirror_images_and_blends_neighbouring_stages_when_asked(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415

    out = tmp_path / "tied.bin"
    assert othello_train.main(["--games", "3", "--jobs", "1", "--nodes", "40", "--solve-at", "6", "--relabel-depth",
                               "1", "--epochs", "1", "--tie", "--stage-blend", "0.5", "--out", str(out)]) == 0
    assert othello_patterns.load_weights(out).info["tied"] is True
    rng, samples = random.Random(3), []
    for number in range(300):  # labels a symmetric function of the position can learn: the disc margin
        own, opp = _early_position(rng)
        samples.append((own, opp, 100 * (own.bit_count() - opp.bit_count()), number))
    weights, info = othello_train.fit(samples, epochs=3, seed=1, tie=True, stage_blend=0.5)
    assert info["tied"] is True and info["stage_blend"] == 0.5 and info["epoch"] >= 1
    for name in othello_patterns.TABLE_SIZES:
        classes = othello_patterns.symmetric_indices(name)
        for table in (stage_tables[name] for stage_tables in weights.tables):
            assert all(table[index] == table[classes[index]] for index in range(len(table)))
    stages = {othello_patterns.stage_of((own | opp).bit_count()) for own, opp, _, number in samples if number % 10}
    learnt = {stage for stage, tables in enumerate(weights.tables) if any(any(t) for t in tables.values())}
    assert learnt - stages  # a stage without positions of its own learnt from its neighbours'


def _early_position(rng: random.Random) -> tuple[int, int]:
    """A position of 4-14 random plies from the start, the side to move's discs first (few stages, some empty)."""
    state = games.get("othello").new_state({"size": 8})
    for _ in range(rng.randrange(4, 15)):
        if state.outcome is not None:
            break
        state = state.play(rng.choice(state.legal_moves()))
    return (state.black, state.white) if state.to_move == 0 else (state.white, state.black)


def test_the_training_script_fits_games_played_in_separate_runs_as_one_data_set(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415

    small = ["--jobs", "1", "--nodes", "40", "--solve-at", "6", "--relabel-depth", "1", "--epochs", "1",
             "--min-count", "1"]
    first, second, out = tmp_path / "first.pkl", tmp_path / "second.pkl", tmp_path / "tables.bin"
    assert othello_train.main(["--games", "2", "--labelled", str(first), "--out", str(out), *small]) == 0
    assert othello_train.main(["--games", "2", "--first-game", "10", "--labelled", str(second), "--out", str(out),
                               *small]) == 0
    assert {sample[3] for sample in othello_train.load_labelled([second])} == {10, 11}
    assert othello_train.main(["--labelled", str(first), str(second), "--alone", "--out", str(out), *small]) == 0
    assert othello_patterns.load_weights(out).info["games"] == 4
    with pytest.raises(ValueError, match="games already read from an earlier file"):
        othello_train.load_labelled([first, second, first])
    with pytest.raises(SystemExit):
        othello_train.main(["--labelled", str(first), str(tmp_path / "absent.pkl"), *small])


def test_bootstrapping_relabels_by_searches_of_the_given_tables_and_solves_up_to_exact_to(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots.othello_eval import trained_evaluator  # noqa: PLC0415
    from games.bots.othello_patterns import DATA_FILE  # noqa: PLC0415
    from games.bots.othello_search import INFINITY, SCALE, Searcher  # noqa: PLC0415

    samples = othello_train.play_game(0, 1, 40, 8, 0.1, 6)
    assert min(64 - (own | opp).bit_count() for own, opp, _, _ in samples) <= 6
    relabelled = othello_train.bootstrap(samples, DATA_FILE, 2, 6, 9, 1)
    assert len(relabelled) == len(samples)
    tables = trained_evaluator(8, DATA_FILE)
    for (own, opp, label, game), after in zip(samples, relabelled):
        empties = 64 - (own | opp).bit_count()
        searcher = Searcher(8, Budget(nodes=10**12), evaluate=tables)
        if empties <= 6:
            assert after == (own, opp, label, game)  # the game's own exact label is kept
        elif empties <= 9:
            assert after == (own, opp, 100 * searcher.solve(own, opp, -64, 64), game)
        else:
            score = searcher.search(own, opp, 2, -INFINITY, INFINITY)
            expected = score * 100 // SCALE if abs(score) > 9_999 else score
            assert after[:2] == (own, opp) and after[3] == game and abs(after[2] - expected) <= 1
    every_third = othello_train.bootstrap(samples, DATA_FILE, 1, 6, 6, 1, every=3)
    assert len(every_third) == len([i for i, (own, opp, _, _) in enumerate(samples)
                                    if i % 3 == 0 or 64 - (own | opp).bit_count() <= 6])



def test_bootstrapping_can_relabel_the_first_of_a_share_and_keep_the_other_labels(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415
    from games.bots.othello_patterns import DATA_FILE  # noqa: PLC0415

    samples = othello_train.play_game(0, 1, 40, 8, 0.1, 6)
    empties = [64 - (own | opp).bit_count() for own, opp, _, _ in samples]
    chosen = [i for i in range(len(samples)) if i % 3 == 0 and empties[i] > 6][:4]
    mixed = othello_train.bootstrap(samples, DATA_FILE, 1, 6, 6, 1, every=3, keep_rest=True, limit=4)
    assert len(mixed) == len(samples) and len(chosen) == 4
    for i, (before, after) in enumerate(zip(samples, mixed)):
        if i in chosen:
            assert after == othello_train.bootstrap([before], DATA_FILE, 1, 6, 6, 1)[0]  # its 1-ply search label
        else:
            assert after == before
    assert any(mixed[i] != samples[i] for i in chosen)
    left_out = othello_train.bootstrap(samples, DATA_FILE, 1, 6, 6, 1, every=3, limit=4)
    assert left_out == [mixed[i] for i in range(len(samples)) if i in chosen or empties[i] <= 6]
    out, labelled, kept = tmp_path / "tables.bin", tmp_path / "labelled.pkl", tmp_path / "relabelled.pkl"
    labelled.write_bytes(pickle.dumps(samples))
    assert othello_train.main(["--labelled", str(labelled), "--epochs", "1", "--min-count", "1", "--solve-at", "6",
                               "--jobs", "1", "--bootstrap-rounds", "1", "--bootstrap-from", str(DATA_FILE),
                               "--bootstrap-depth", "1", "--bootstrap-every", "3", "--bootstrap-keep-rest",
                               "--bootstrap-limit", "4", "--relabelled", str(kept), "--out", str(out)]) == 0
    assert othello_train.load_labelled([kept]) == mixed
    info = othello_patterns.load_weights(out).info
    assert (info["bootstrap_every"], info["bootstrap_keep_rest"], info["bootstrap_limit"]) == (3, True, 4)

def test_the_training_script_bootstraps_rounds_of_tables_searching_their_predecessors(tmp_path: Path) -> None:
    import othello_train  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415

    out, kept = tmp_path / "tables.bin", tmp_path / "relabelled.pkl"
    small = ["--games", "3", "--jobs", "1", "--nodes", "40", "--solve-at", "6", "--relabel-depth", "1", "--epochs", "2",
             "--min-count", "1", "--exact-to", "8", "--bootstrap-depth", "2", "--out", str(out)]
    assert othello_train.main([*small, "--bootstrap-rounds", "2", "--relabelled", str(kept)]) == 0
    first, second = tmp_path / "tables.round0.bin", tmp_path / "tables.round1.bin"
    assert "bootstrap_depth" not in othello_patterns.load_weights(first).info  # fitted to the 1-ply hand labels
    info = othello_patterns.load_weights(out).info
    assert (info["bootstrap_depth"], info["bootstrap_rounds"], info["exact_to"]) == (2, 2, 8)
    assert othello_patterns.load_weights(second).info["bootstrap_depth"] == 2
    labels = othello_train.load_labelled([kept])
    assert labels == othello_train.bootstrap(othello_train.load_labelled([kept]), second, 2, 8, 8, 1)
    again = tmp_path / "again.bin"
    assert othello_train.main([*small[:-1], str(again), "--bootstrap-rounds", "2", "--relabelled", str(kept)]) == 0
    assert again.read_bytes().split(b"\n", 1)[1] == out.read_bytes().split(b"\n", 1)[1]  # the labels reused
    low, high, both = tmp_path / "low.pkl", tmp_path / "high.pkl", tmp_path / "both.bin"
    low.write_bytes(pickle.dumps([sample for sample in labels if sample[3] < 2]))  # as two runs' rounds
    high.write_bytes(pickle.dumps([sample for sample in labels if sample[3] >= 2]))
    assert othello_train.main([*small[:-1], str(both), "--bootstrap-rounds", "1", "--relabelled", str(low), str(high)]) == 0
    assert othello_patterns.load_weights(both).info["positions"] == len(labels)
    with pytest.raises(SystemExit, match="missing"):
        othello_train.main([*small, "--bootstrap-rounds", "1", "--relabelled", str(low), str(tmp_path / "none.pkl")])


def test_strength_reports_a_long_match_every_ten_games(capsys: pytest.CaptureFixture[str]) -> None:
    import strength  # noqa: PLC0415

    from games.bots.othello_patterns import DATA_FILE  # noqa: PLC0415

    assert strength.main(["--game", "othello", "--only", "previous", "--no-previous", "--games", "11", "--seconds",
                          "0", "--nodes", "30", "--against-tables", str(DATA_FILE)]) == 0
    err = capsys.readouterr().err
    tallies = [line.split(": ")[-1].split(" (")[0] for line in err.splitlines() if " vs " in line]
    assert [sum(int(part[1:]) for part in tally.split()) for tally in tallies] == [10, 11], err
