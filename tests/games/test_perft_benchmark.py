"""The Othello side-by-side benchmark: its bare bitboard yardstick counts right, and it runs.

``benchmarks/othello_bare.py`` is what the engine's public API is measured
against, so its counts are checked like the engine's; ``benchmarks/perft.py``
runs as a real process, as a person would run it.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

import games
from benchmarks import othello_bare
from games.othello import OthelloState
from games.perft import perft

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = [1, 4, 12, 56, 244, 1396, 8200]


@pytest.mark.parametrize("play_leaves", [False, True])
def test_bare_perft_matches_the_published_counts(play_leaves: bool) -> None:
    own, opp = othello_bare.START
    assert [othello_bare.perft(own, opp, depth, play_leaves) for depth in range(7)] == PUBLISHED


def test_bare_perft_passes_and_ends_like_the_engine() -> None:
    # White to move cannot place, Black can: pass, c1 or a3, pass, the other; then Black has every disc.
    black, white = 1 << 0, 1 << 1 | 1 << 8  # X on a1, O on b1 and a2
    state = OthelloState.from_diagram("X O . . . . . .\nO . . . . . . .\n" + ". . . . . . . .\n" * 6, to_move=1)
    for depth in range(6):
        expected = perft(state, depth)
        assert othello_bare.perft(white, black, depth) == othello_bare.perft(white, black, depth, True) == expected
    assert [perft(state, depth) for depth in range(6)] == [1, 1, 2, 2, 2, 0]  # the game ends after ply 4


@pytest.mark.parametrize("seed", range(4))
def test_bare_perft_agrees_with_the_engine_through_random_games(seed: int) -> None:
    rng = random.Random(seed)
    state = games.get("othello").new_state()
    while state.outcome is None:
        own, opp = (state.black, state.white) if state.to_move == 0 else (state.white, state.black)
        assert othello_bare.perft(own, opp, 2) == othello_bare.perft(own, opp, 2, True) == perft(state, 2)
        state = state.play(rng.choice(state.legal_moves()))


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "perft.py"), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_side_by_side_prints_every_pairing_and_its_median() -> None:
    done = _run("--ratio-only", "--ratio-depth", "4", "--rounds", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("othello perft(4): public API vs bare bitboards, 2 rounds")
    assert sum(line.lstrip().startswith("round ") for line in lines) == 2
    for pairing in ("counted", "played", "notation"):
        assert any(line.lstrip().startswith(f"median {pairing}") and "ratio" in line for line in lines), pairing
    assert lines[-1].strip() == "leaves: 244, expected 244: OK"


def test_full_run_checks_counts_then_compares() -> None:
    done = _run("--games", "othello,nimble", "--depth", "3", "--seconds", "0.05", "--rounds", "1", "--ratio-depth", "3")
    assert done.returncode == 0, done.stderr
    assert "check: othello perft(3) = 56, expected 56: OK" in done.stdout
    assert "othello perft(3): public API vs bare bitboards, 1 rounds" in done.stdout


def test_bad_arguments_are_refused_by_name() -> None:
    done = _run("--ratio-depth", "0")
    assert done.returncode == 2 and "--ratio-depth must be at least 1" in done.stderr
