"""games.bots.warm_up (issue 22): a worker loads every game's data once, at start, not inside a move's budget."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import games.bots

ROOT = Path(__file__).resolve().parents[3]

CHECK = """
import games.bots
from games.bots import othello_book, othello_patterns
before = (othello_patterns.load_weights.cache_info().currsize, othello_book.load_book.cache_info().currsize)
warmed = games.bots.warm_up()
after = (othello_patterns.load_weights.cache_info().currsize, othello_book.load_book.cache_info().currsize)
print(before, after, sorted(warmed), games.bots.warmed() == warmed)
"""


def test_warm_up_reads_othello_s_tables_and_book_and_touches_every_game() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    everything = sorted(["othello", "nimble", "mingmang", "morris", "tactego", "hexapawn"])
    assert done.stdout.split("\n")[0] == f"(0, 0) (1, 1) {everything} True"


def test_warm_up_twice_is_harmless() -> None:
    first = games.bots.warm_up()
    assert games.bots.warm_up() == first == games.bots.warmed()


def test_warm_up_of_some_games_and_of_an_unknown_one() -> None:
    assert "nimble" in games.bots.warm_up(["nimble"])
    with pytest.raises(LookupError, match="chess"):
        games.bots.warm_up(["chess"])
