"""``benchmarks/openspiel_opponent.py``: the notation mapping and the message without OpenSpiel.

OpenSpiel is a benchmark-only dependency, so the checks that need it are
skipped where it is not installed; the "not installed" path always runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import openspiel_opponent

ROOT = Path(__file__).resolve().parents[3]


def test_without_open_spiel_the_command_says_so_and_exits_2() -> None:
    hide = "import sys; sys.modules['pyspiel'] = None; sys.modules['open_spiel'] = None; "
    run = "sys.argv[1:] = ['--games', '1']; import runpy; runpy.run_path(sys.argv[0], run_name='__main__')"
    script = str(ROOT / "benchmarks" / "openspiel_opponent.py")
    done = subprocess.run([sys.executable, "-c", hide + f"sys.argv = [{script!r}]; " + run],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert "open_spiel is not installed" in done.stderr
    assert "Traceback" not in done.stderr


def test_each_game_line_gives_both_sides_seconds_a_move() -> None:
    # We moved second in a 61-ply game: 30 moves of ours (15 s), 31 of OpenSpiel's (62 s).
    game = openspiel_opponent.GameResult(our_seat=1, points=1.0, score=(20, 44), plies=61, our_seconds=15.0,
                                         their_seconds=62.0)
    assert openspiel_opponent.game_line(2, game) == (
        "game 3: we played second: win (20, 44), 61 plies; s/move ours 0.50, OpenSpiel 2.00")


def test_the_wilson_interval_brackets_the_share() -> None:
    low, high = openspiel_opponent.wilson_interval(18, 20)
    assert 0.68 < low < 0.9 < high < 0.98
    assert openspiel_opponent.wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("game", ["othello", "morris"])
def test_both_engines_agree_on_every_legal_move_of_random_games(game: str) -> None:
    pytest.importorskip("pyspiel")
    assert openspiel_opponent.check_mapping(game, 5, seed=3) > 100


def test_a_short_match_against_mcts_is_scored() -> None:
    pytest.importorskip("pyspiel")
    from games.bots import chooser

    match = openspiel_opponent.play_against_mcts("othello", lambda: chooser("othello", 5), games=2, simulations=10,
                                                 seed=1, seconds=None, nodes=400)
    assert len(match.games) == 2 and [g.our_seat for g in match.games] == [0, 1]
    assert match.wins + match.draws + match.losses == 2
    assert "W " in match.summary()
