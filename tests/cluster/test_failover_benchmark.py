"""``benchmarks/failover.py`` runs: it kills the node holding a game, and counts against PostgreSQL the acknowledged moves lost (none)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ..e2e.harness import ROOT
from .redis_server import RedisServer

pytestmark = pytest.mark.slow


def test_the_failover_benchmark_kills_twice_and_loses_no_acknowledged_move(redis_server: RedisServer, postgres_server: object) -> None:
    """(The fixtures only make sure that redis-server and PostgreSQL are installed: the benchmark starts its own.)"""
    done = subprocess.run(
        [sys.executable, "benchmarks/failover.py", "--kills", "2", "--lease-s", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(re.findall(r"^kill +\d: next move accepted +[\d.]+ s after the SIGKILL; acknowledged moves lost: 0$", done.stdout, re.M)) == 2
    assert "Failover over 2 SIGKILLs, lease 1 s" in done.stdout
    assert "acknowledged moves lost: 0 (target 0; checked against PostgreSQL)" in done.stdout
