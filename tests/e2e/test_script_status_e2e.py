"""A piped ``parlour play`` script's exit status: real server, real client processes.

The first failing command stops the script with its status (3: the client could not
run it, 4: the server refused it, 5: a wait that can never end); ``--keep-going``
runs the script to its end and exits with the status of its first failure. A
connection lost for good between commands stops the script with status 1.
"""

from __future__ import annotations

import re
from typing import Iterator

import pytest

from client.line_script import EXIT_COMMAND, EXIT_LOST, EXIT_REFUSED, EXIT_WAIT

from .harness import ROOT, Process, start_server


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    server, port = start_server()
    yield f"127.0.0.1:{port}"
    server.kill()


@pytest.mark.parametrize(
    ("script", "status", "stopped_at"),
    [
        ("bogus\nnew othello\n", EXIT_COMMAND, "line 1 (bogus)"),
        ("# a comment\n\njoin 9\nnew othello\n", EXIT_REFUSED, "line 3 (join 9)"),
        ("wait turn\nnew othello\n", EXIT_WAIT, "line 1 (wait turn)"),
    ],
    ids=["unknown-command", "refused", "failed-wait"],
)
def test_the_first_failure_stops_the_script_with_its_status(address: str, script: str, status: int, stopped_at: str) -> None:
    player = Process("play", address, "--name", f"ann{status}", "--guest", stdin_text=script)
    try:
        player.expect("^" + re.escape(f"Script stopped at {stopped_at} with exit status {status}; --keep-going runs a script to its end.") + "$")
        assert player.finish(timeout_s=15) == status
        assert not any("Created table" in line for line in player.lines), player.lines
    finally:
        player.kill()


def test_keep_going_runs_to_the_end_and_exits_with_the_first_failure(address: str) -> None:
    script = "join 9\nbogus\nnew nimble\nwait lunch\nquit\n"
    player = Process("play", address, "--name", "bea", "--guest", "--keep-going", stdin_text=script)
    try:
        player.expect(r"^error \(no_such_table\)")
        player.expect(r"Created table \d+")
        player.expect(r"^usage: wait turn\|start\|end$")
        assert player.finish(timeout_s=15) == EXIT_REFUSED
        assert not any(line.startswith("Script stopped") for line in player.lines), player.lines
    finally:
        player.kill()


def test_a_script_that_works_exits_0(address: str) -> None:
    player = Process("play", address, "--name", "cid", "--guest", stdin_text="new nimble\nleave\nlist\nquit\n")
    try:
        player.expect(r"Created table \d+")
        player.expect(r"Left table \d+")
        assert player.finish(timeout_s=15) == 0
    finally:
        player.kill()


def test_a_connection_lost_for_good_between_commands_stops_the_script_with_status_1(address: str) -> None:
    first = Process("play", address, "--name", "dee", "--guest", stdin_text="new nimble\n")  # stdin stays open
    second = None
    try:
        first.expect(r"Created table \d+")
        second = Process("play", address, "--name", "dee", "--guest")  # resumes dee's session: the first connection is superseded
        first.expect("^Disconnected: ")  # superseded: it does not take the session back
        first.expect("^" + re.escape(f"Script stopped after line 1: the connection to the server is lost; exit status {EXIT_LOST}.") + "$")
        assert first.finish(timeout_s=15) == EXIT_LOST
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_the_exit_statuses_are_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    for status in (EXIT_COMMAND, EXIT_REFUSED, EXIT_WAIT):
        assert f"`{status}`" in readme
    assert f"| `{EXIT_LOST}` | it could not connect, or lost the connection for good" in readme
    helped = Process("play", "--help")
    assert helped.finish(timeout_s=15) == 0
    text = " ".join(" ".join(helped.lines).split())
    assert f"{EXIT_REFUSED} when the server refuses a request" in text and "--keep-going" in text
    assert f"{EXIT_LOST} when it cannot connect, or loses the connection for good" in text
