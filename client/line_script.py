"""The exit status of ``parlour play`` with piped input: what a script can trust.

With stdin not a terminal, the first command that fails stops the script and
becomes its exit status; with ``--keep-going`` the script runs to its end and
exits with the status of its first failure. A connection lost for good (no
reconnection) stops the script whatever the flag: nothing after could run.
On a terminal nothing stops and the status stays 0.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["EXIT_OK", "EXIT_LOST", "EXIT_COMMAND", "EXIT_REFUSED", "EXIT_WAIT", "EXIT_STATUS_HELP", "ScriptRun"]

EXIT_OK = 0
"""Every command worked."""
EXIT_LOST = 1
"""The client could not connect, or lost the connection for good (it could not reconnect) before the script's end."""
EXIT_COMMAND = 3
"""The client could not run a command: unknown, typed wrongly, or impossible where you are (no table, an illegal move)."""
EXIT_REFUSED = 4
"""The server refused a request (an ``error (CODE): ...`` line), or it could not be sent (not connected)."""
EXIT_WAIT = 5
"""A ``wait`` failed: what it waited for cannot happen any more (no table, not seated, the game over, the connection lost)."""

EXIT_STATUS_HELP = (
    "Exit status with piped input (scripts): 0 when every command worked; "
    f"{EXIT_LOST} when it cannot connect, or loses the connection for good before the script's end; "
    "2 when the server refuses the connection or the command line is wrong; "
    f"{EXIT_COMMAND} when a command is unknown, typed wrongly or impossible where you are (an illegal move, say); "
    f"{EXIT_REFUSED} when the server refuses a request; "
    f"{EXIT_WAIT} when a wait fails because what it waits for cannot happen any more. "
    "The first failing command stops the script; with --keep-going the script runs to its end "
    "and exits with the status of its first failure."
)
"""The exit statuses as ``parlour play --help`` lists them."""


class ScriptRun:
    """Follows a piped script's commands: stops it at the first failure (unless ``keep_going``) and gives its exit status.

    Args:
        keep_going: run every command even after one failed (the status is still the first failure's).
        say: prints one line (where a stopped script says why).
    """

    def __init__(self, keep_going: bool, say: Callable[[str], None]) -> None:
        self.keep_going = keep_going
        self.say = say
        self.status = EXIT_OK
        self.line_number = 0

    def after(self, line: str, status: int) -> bool:
        """Note that command ``line`` ended with ``status`` (0: it worked); return whether the script goes on."""
        self.line_number += 1
        if status == EXIT_OK:
            return True
        if self.status == EXIT_OK:
            self.status = status
        if self.keep_going:
            return True
        self.say(f"Script stopped at line {self.line_number} ({line.strip()}) with exit status {status}; --keep-going runs a script to its end.")
        return False

    def lost(self) -> None:
        """Note that the connection is gone for good (no reconnection) before the script's end: it stops here.

        The exit status becomes :data:`EXIT_LOST`, unless a command failed before
        (with ``keep_going``: the first failure's status stays).
        """
        if self.status == EXIT_OK:
            self.status = EXIT_LOST
        self.say(f"Script stopped after line {self.line_number}: the connection to the server is lost; exit status {self.status}.")
