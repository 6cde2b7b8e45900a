"""Smoke test of ``benchmarks/identity_cost.py``: one tiny round of two trees, and the table it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_identity_cost_prints_cpu_per_hello_and_move_for_both_trees_and_their_ratio() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "identity_cost.py"), "--before", "HEAD", "--rounds", "1", "--hellos", "5", "--games", "1", "--seconds", "0.3"],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for what in ("hello", "move"):
        row = re.search(rf"^\| per {what} \(µs, median of 1\) \| (\d+) \| (\d+) \| (\d+\.\d\d) \|$", done.stdout, re.MULTILINE)
        assert row is not None, done.stdout
        assert int(row[1]) > 0 and int(row[2]) > 0
    assert "load average" in done.stdout
    assert "before" not in subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout  # cleaned up
