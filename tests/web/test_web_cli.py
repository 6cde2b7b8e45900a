"""``--http`` on the command line: ``parlour host`` prints the web face's address and serves it; the benchmark runs."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.harness import Process

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_host_with_http_prints_the_web_address_and_serves_the_pages() -> None:
    host = Process("host", "--name", "ann", "--host", "127.0.0.1", "--port", "0", "--no-advertise", "--no-db", "--http", "0")
    try:
        host.expect(r"^Watch in a browser \(read-only\):$")
        address = host.expect(r"^    (http://127\.0\.0\.1:\d+/)$")[1]
        host.expect(r"^Connected to .* as ann\.")
        host.send("new nimble\n")
        host.expect(r"Created table 1")
        with urllib.request.urlopen(address, timeout=5) as response:
            assert response.status == 200 and b"/static/lobby.js" in response.read()
        with urllib.request.urlopen(address + "api/tv", timeout=5) as response:
            assert json.load(response) == {"table": None}  # table 1 waits for a player: nothing on TV
        host.send("quit\n")
        assert host.finish(timeout_s=30) == 0
    finally:
        host.kill()


def test_a_bad_http_option_is_refused_with_its_shape() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "client.cli", "serve", "--no-db", "--http", "80a"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "--http takes [HOST:]PORT" in result.stderr and "Traceback" not in result.stderr


def test_the_web_watchers_benchmark_runs_at_small_counts() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "web_watchers.py"), "--watchers", "4", "--moves", "20", "--rounds", "1", "--idle", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["moves"] == 20 and figures["watchers"] == 4
    assert isinstance(figures["cpu_us_per_move_per_browser"], float) and isinstance(figures["rss_bytes_per_idle_browser"], int)
