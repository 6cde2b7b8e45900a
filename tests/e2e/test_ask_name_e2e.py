"""``parlour play`` without ``--name``: asked for on a terminal (a real pty), a usage error with piped stdin."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time

from .harness import CHECKOUT_PARLOUR, DATA_HOME, ROOT, Process, start_server


class OnTerminal:
    """A ``parlour`` process whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(self, *args: str) -> None:
        self.master, slave = os.openpty()
        env = dict(os.environ, TERM="dumb", PYTHONUNBUFFERED="1", XDG_DATA_HOME=DATA_HOME)
        self.popen = subprocess.Popen(
            [*CHECKOUT_PARLOUR, *args], cwd=ROOT, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        self.seen = ""

    def expect(self, pattern: str, timeout_s: float = 30.0) -> None:
        """Read the terminal until ``pattern`` shows (terminal control sequences and carriage returns dropped)."""
        deadline = time.monotonic() + timeout_s
        while not re.search(pattern, self.seen):
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {pattern!r}; the terminal showed:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # the process ended and closed the terminal
                    data = b""
                assert data, f"the terminal closed before {pattern!r}; it showed:\n{self.seen}"
                text = data.decode(errors="replace").replace("\r", "")
                self.seen += re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text)

    def type(self, text: str) -> None:
        """Type ``text`` on the terminal."""
        os.write(self.master, text.encode())

    def close(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(10)
        os.close(self.master)


def test_play_without_a_name_asks_for_it_on_a_terminal() -> None:
    server, port = start_server()
    player = OnTerminal("play", f"127.0.0.1:{port}", "--line", "--guest")
    try:
        player.expect(r"Your name \(the name you play under\): ")
        player.type("\n")
        player.expect(r"Type a name, or Ctrl-D to give up\.")
        player.type("ann\n")
        player.expect(r"Connected to .* as ann\. Type help\.")
        player.type("quit\n")
        assert player.popen.wait(15) == 0
    finally:
        player.close()
        server.kill()


def test_play_without_a_name_and_piped_stdin_is_a_usage_error() -> None:
    player = Process("play", "127.0.0.1:1", stdin_text="list\n")
    try:
        assert player.finish(timeout_s=15) == 2
    finally:
        player.kill()
    assert player.lines[-1] == (
        "parlour play: error: --name NAME is required when stdin is not a terminal (on a terminal, parlour play asks for it)"
    ), player.lines
