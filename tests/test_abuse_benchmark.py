"""benchmarks/abuse.py against a real ``parlour serve`` process, at small counts: it runs, and its figures hold the limits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_abuse_benchmark_finds_the_limits_holding() -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "abuse.py"), "--seconds", "1", "--tell-seconds", "1.5", "--addresses", "6"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["look_alikes"]["tried"] >= 96 and figures["look_alikes"]["admitted"] == []
    assert figures["guesses_one_address"]["sent"] > 5 and figures["guesses_one_address"]["checked"] == 5
    assert figures["guesses"]["then_checked"] == 0
    assert figures["lockout"] == {"owner_from_an_address_that_did_not_guess": "welcome", "owner_from_a_guessing_address": "rate_limited"}
    assert figures["tells_one_address"]["sessions"] > 6 and figures["tells_one_address"]["delivered"] <= 31
    assert figures["tells_many_addresses"]["delivered"] <= 31
    assert figures["tells_many_addresses_guests_muted"]["delivered"] == 0
