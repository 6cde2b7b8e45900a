"""The Othello benchmarks run and report what they claim: the search speed comparison, the solver check.

Each tool is run in-process at the smallest counts (a few hundredths of a
second a search), and its printed table is read back.
"""

from __future__ import annotations

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


def test_the_previous_player_is_the_frozen_copy_and_plays_legal_moves() -> None:
    assert Path(othello_previous.__file__).parent == BENCHMARKS / "othello_previous"
    rng = random.Random(3)
    state = games.get("othello").new_state({"size": 8})
    player = othello_previous.make_chooser(5)
    while state.outcome is None and sum(state.disc_counts()) < 20:
        move = player.choose(state.view(state.to_move), Budget(nodes=300), rng)
        assert move in state.legal_moves()
        state = state.play(move)
