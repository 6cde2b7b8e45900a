"""The real full-screen ``parlour play`` in a real terminal (tmux), against a real ``parlour serve``.

ann runs the app inside a detached tmux session (100x30) and plays White at
Hexapawn by keystrokes only: ``j`` joins the table highlighted in the lobby,
the arrow keys and Enter move the board's cursor and pick squares, ``m``
opens the move field for typed notation. bob is the line-mode client with
piped input. The test reads the screen with ``tmux capture-pane``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from .harness import DATA_HOME, ROOT, Process, start_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: the full-screen client needs a real terminal to test"),
]


class Tmux:
    """A private tmux server (its own socket) running one program in a detached session."""

    def __init__(self, command: list[str], width: int = 100, height: int = 30) -> None:
        self.socket = f"parlour-e2e-{os.getpid()}-{time.monotonic_ns()}"
        environment = f"env XDG_DATA_HOME={shlex.quote(DATA_HOME)} LANG=C.UTF-8 TERM=xterm-256color COLORTERM=truecolor"
        self.tmux("new-session", "-d", "-s", "e2e", "-x", str(width), "-y", str(height), "-c", str(ROOT),
                  f"{environment} {shlex.join(command)}")  # fmt: skip

    def tmux(self, *args: str) -> str:
        result = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def keys(self, *keys: str) -> None:
        """Press ``keys`` (tmux key names: ``Enter``, ``Up``, ``C-q``; or literal text)."""
        for key in keys:
            self.tmux("send-keys", "-t", "e2e", key)
            time.sleep(0.05)

    def focus_until(self, text: str, most: int = 6) -> None:
        """Press Tab until ``text`` shows (a key of the focused widget in the footer)."""
        for _ in range(most):
            time.sleep(0.3)
            if text in self.screen():
                return
            self.keys("Tab")
        self.wait_for(text, timeout_s=2.0)

    def screen(self) -> str:
        """The text on the terminal now."""
        return self.tmux("capture-pane", "-p", "-t", "e2e")

    def wait_for(self, text: str, timeout_s: float = 30.0) -> str:
        """Wait until ``text`` is on the screen; return the screen."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{self.screen()}")

    def wait_for_match(self, pattern: str, timeout_s: float = 30.0) -> str:
        """Wait until a line on the screen matches the regular expression ``pattern``; return the screen."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"nothing matched {pattern!r}; the screen:\n{self.screen()}")

    def wait_until_gone(self, text: str, timeout_s: float = 30.0) -> None:
        """Wait until ``text`` is no longer on the screen."""
        deadline = time.monotonic() + timeout_s
        while text in self.screen():
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} stayed; the screen:\n{self.screen()}")
            time.sleep(0.1)

    def running(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "e2e"], capture_output=True).returncode == 0

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def server_address() -> Iterator[str]:
    server, port = start_server()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.kill()


def test_a_hexapawn_game_played_by_keystrokes_in_the_full_screen_client(server_address: str) -> None:
    bob = Process("play", server_address, "--name", "bob",
                  stdin_text="new hexapawn seat=1\nwait start\nwait turn\nb3-b2\nwait end\n")  # fmt: skip
    ann = Tmux([sys.executable, "-m", "client.cli", "play", server_address, "--name", "ann"])
    try:
        bob.expect(r"Created table 1")
        ann.wait_for("(free) vs bob")
        ann.focus_until("j Join")  # Tab to the list of tables: its keys show in the footer
        ann.keys("j")  # join the highlighted table
        ann.wait_for("you are White")
        ann.wait_for("your move")
        # White starts at the top of the notation, so ann's board is turned: a1 is bottom right.
        ann.keys("Enter")  # the cursor comes up on the first pawn that can move: a1
        ann.keys("Enter", "Up", "Enter")  # pick a1, then a2 above it
        screen = ann.wait_for("1 a1-a2")
        ann.wait_for("2 b3-b2")
        ann.keys("m")  # the move field: the table's letter keys leave the footer while it has the cursor
        ann.wait_until_gone("x Resign")
        ann.keys("c1-c2")
        ann.wait_for("c1-c2")
        ann.keys("Enter")
        screen = ann.wait_for("You won")
        assert "White (ann) wins" in screen and "3 c1-c2" in screen
        bob.expect(r"White wins|ann wins|won")
        ann.keys("C-q")
        ann.wait_for("Quit")
        ann.keys("y")
        deadline = time.monotonic() + 10
        while ann.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not ann.running(), ann.screen()
        assert bob.finish(timeout_s=15) == 0
    finally:
        ann.close()
        bob.kill()


def test_parlour_host_opens_the_full_screen_app_and_its_computer_players_work_under_it(tmp_path: Path) -> None:
    """``parlour host`` on a terminal: the server and the app in one process; the worker pool still starts."""
    host = ["env", f"XDG_DATA_HOME={tmp_path}",  # its own database and tokens, apart from the other tests' names
            sys.executable, "-m", "client.cli", "host", "--name", "ann", "--guest", "--host", "127.0.0.1", "--port", "0", "--no-advertise"]  # fmt: skip
    ann = Tmux(["sh", "-c", f"{shlex.join(host)}; echo parlour host exited $?; sleep 30"])
    try:
        ann.wait_for("Players connect with")  # the others' instructions, as a notice in the app
        for _ in range(10):  # F2 until the form shows (the first press may come while the lobby is still being built)
            ann.keys("F2")
            time.sleep(0.5)
            if "Escape cancels" in ann.screen():
                break
        ann.wait_for("New table — Escape cancels", timeout_s=2.0)
        ann.keys("Enter")  # the game list opens
        ann.wait_for("hexapawn")
        ann.keys(*["Down"] * 5, "Enter")  # hexapawn, the last one
        ann.wait_for("Hexapawn")
        ann.keys("Tab", "Tab", "Tab", "Enter")  # size, clock, opponent: its list opens
        # The form's hints say "computer" all along: wait for the list itself, then for the choice.
        ann.wait_for_match(r"Opponent a person +▲")
        ann.keys("Down", "Enter")
        ann.wait_for("Opponent the computer")
        ann.keys("BTab", "Enter")  # Enter in the clock field creates the table
        ann.wait_for_match(r"ann \(you\)")  # the seat lines: "White  clock", then the player
        ann.wait_for("your move")
        ann.keys("Enter", "Enter", "Up", "Enter")  # the first pawn that can move, one step forward
        ann.wait_for("1 a1-a2")
        deadline = time.monotonic() + 30
        while not re.search(r"1 a1-a2 +2 [a-c][1-3]", ann.screen()):  # the computer's reply, thought in a worker process
            assert time.monotonic() < deadline, ann.screen()
            time.sleep(0.1)
        ann.keys("C-q")
        ann.wait_for("Quitting stops this")
        ann.keys("y")
        ann.wait_for("parlour host exited 0", timeout_s=15)
    finally:
        ann.close()
