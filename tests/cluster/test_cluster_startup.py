"""``parlour serve --bus/--node`` refuses what it cannot use with one clear line, never a traceback (real processes)."""

from __future__ import annotations

import socket
import subprocess

from ..e2e.harness import ROOT
from ..e2e.test_startup_e2e import SERVE, serve_fails


def test_a_node_name_without_a_bus_is_refused() -> None:
    done = subprocess.run([*SERVE, "--no-db", "--node", "a"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--node names this node in a cluster: it needs --bus redis://HOST:PORT" in done.stderr


def test_a_bus_that_is_not_a_redis_url_is_refused() -> None:
    done = subprocess.run([*SERVE, "--no-db", "--bus", "localhost:6379"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--bus takes a Redis URL (redis://HOST:PORT), not 'localhost:6379'" in done.stderr


def test_a_redis_that_does_not_answer_is_one_line_and_status_1() -> None:
    line = serve_fails("--no-db", "--bus", "redis://127.0.0.1:1", "--node", "a")
    assert "cannot join the cluster: cannot reach Redis at redis://127.0.0.1:1" in line


def test_a_port_in_use_is_still_one_line_without_a_bus() -> None:
    """The cluster's refusal is caught after the listening one, so a port in use is not a traceback."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        line = serve_fails("--no-db", "--port", str(held.getsockname()[1]))
    assert "cannot listen on 127.0.0.1:" in line and "address already in use" in line
