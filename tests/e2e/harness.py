"""Real processes for end-to-end tests: a ``parlour serve`` and ``parlour play`` clients.

Each process is started with the same Python as the tests (``-m client.cli``),
talks over real TCP on 127.0.0.1, and is read line by line from its stdout.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pytest

import games
from client.line_script import EXIT_REFUSED

ROOT = Path(__file__).resolve().parents[2]
RECORDS = Path(__file__).resolve().parent / "records"
DATA_HOME = tempfile.mkdtemp(prefix="parlour-e2e-")
"""The clients' user data directory (remembered tokens), apart from the real one."""


CHECKOUT_PARLOUR = (sys.executable, "-m", "client.cli")
"""The command that runs the checkout's ``parlour`` with the tests' Python."""


class Process:
    """A child process whose stdout lines are collected by a reader thread.

    ``program`` is the command that runs ``parlour`` (the checkout's by default),
    ``cwd`` its working directory and ``environ`` the environment it starts from
    (this process's by default); ``prefix`` is a command that execs it (in a
    private mount namespace, say); output is always unbuffered and the user data
    directory is :data:`DATA_HOME`.
    """

    def __init__(
        self,
        *args: str,
        stdin_text: str | None = None,
        program: Sequence[str] = CHECKOUT_PARLOUR,
        prefix: Sequence[str] = (),
        cwd: Path = ROOT,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = dict(os.environ if environ is None else environ, PYTHONUNBUFFERED="1", XDG_DATA_HOME=DATA_HOME)
        self.popen = subprocess.Popen(
            [*prefix, *program, *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        if stdin_text is not None:
            self.send(stdin_text)

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def send(self, text: str) -> None:
        """Write ``text`` to the process's stdin."""
        assert self.popen.stdin is not None
        self.popen.stdin.write(text)
        self.popen.stdin.flush()

    def expect(self, pattern: str, timeout_s: float = 30.0) -> re.Match[str]:
        """Wait for an output line matching ``pattern``; return the match.

        Raises:
            AssertionError: on timeout or end of output, with the output so far.
        """
        regex = re.compile(pattern)
        for line in self.lines:
            if match := regex.search(line):
                return match
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"timed out waiting for {pattern!r}; output:\n" + "\n".join(self.lines)) from None
            if line is None:
                raise AssertionError(f"process ended before {pattern!r}; output:\n" + "\n".join(self.lines))
            self.lines.append(line)
            if match := regex.search(line):
                return match

    def finish(self, timeout_s: float = 60.0) -> int:
        """Close stdin, wait for exit, and return the exit status."""
        assert self.popen.stdin is not None
        try:
            self.popen.stdin.close()
        except BrokenPipeError:
            pass
        status = self.popen.wait(timeout_s)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=0.5)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return status

    def kill(self) -> None:
        """Stop the process if it still runs."""
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)


def start_server(*extra: str, port: int = 0, **process: Any) -> tuple[Process, int]:
    """Start ``parlour serve`` on 127.0.0.1 (an ephemeral port by default); return it and the port.

    Without ``--db`` in ``extra`` the server keeps nothing on disk. It does not
    advertise itself with mDNS (``--no-advertise``: tests/e2e/test_lan_e2e.py does). ``process``
    holds :class:`Process`'s keyword options (``program``, ``prefix``, ``cwd``, ``environ``).
    """
    storage = () if "--db" in extra else ("--no-db",)
    server = Process("serve", "--host", "127.0.0.1", "--port", str(port), "--no-advertise", *storage, *extra, **process)
    port = int(server.expect(r"listening on port (\d+)")[1])
    return server, port


def othello_after_d3(address: str, *, options: str = "", bob_args: Sequence[str] = ()) -> tuple[Process, Process]:
    """ann creates Othello table 1 (``new othello OPTIONS``) and plays d3 once bob has joined; return (ann, bob).

    ``bob_args`` are more ``parlour play`` options for bob. Both processes are killed if the opening does not happen.
    """
    ann = Process("play", address, "--name", "ann", stdin_text=f"new othello {options}".rstrip() + "\nwait start\nd3\n")
    bob = Process("play", address, "--name", "bob", *bob_args)
    try:
        ann.expect(r"Created table 1")
        bob.send("join 1\n")
        bob.expect(r"Black played d3\.")
    except AssertionError as exc:
        ann.kill()
        bob.kill()
        raise AssertionError(f"{exc}\nann's output:\n" + "\n".join(ann.lines)) from None
    except BaseException:
        ann.kill()
        bob.kill()
        raise
    return ann, bob


def assert_finished_with(clients: Sequence[Process], result: str) -> None:
    """Each scripted client printed a line matching ``result``, exited 0 and printed no error line."""
    for client in clients:
        assert client.expect(result)[0]
        assert client.finish(timeout_s=15) == 0
        assert not any(line.startswith("error") for line in client.lines), client.lines


def read_record(name: str) -> list[str]:
    """The moves of a recorded game in ``records/`` (``#`` lines are comments)."""
    text = (RECORDS / name).read_text()
    return [word for line in text.splitlines() if not line.startswith("#") for word in line.split()]


def read_record_headers(name: str) -> dict[str, str]:
    """The ``# key: value`` comment lines of a record (``options`` holds JSON)."""
    headers = {}
    for line in (RECORDS / name).read_text().splitlines():
        key, sep, value = line.removeprefix("# ").partition(": ")
        if line.startswith("# ") and sep and key.isidentifier():
            headers[key] = value
    return headers


def player_scripts(
    game: str, options: dict[str, object], moves: list[str], seed: str | None = None, *, after: list[str] | None = None, to_end: bool = True
) -> tuple[list[str], list[str]]:
    """Each seat's command lines for a recorded game: wait for the turn, then move.

    ``after`` are moves already played before these. Forced passes are
    skipped: the server plays them.
    """
    state = games.get(game).new_state(options, seed)
    for move in after or []:
        state = state.play(move)
    scripts: tuple[list[str], list[str]] = ([], [])
    for move in moves:
        seat = state.to_move
        assert seat is not None, "the record continues after the game ended"
        if move != "pass":
            scripts[seat].extend(["wait turn", move])
        state = state.play(move)
    assert state.outcome is not None or not to_end, "the record does not reach the end of the game"
    return scripts


def make_immutable(made: list[Path], path: Path) -> None:
    """Make ``path`` immutable with ``chattr +i`` (which binds root too) and note it in ``made``; skip the test if impossible."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: cannot make a file unwritable for root")
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot make {path} immutable here (chattr: {done.stderr.strip()})")
    made.append(path)


def _private_mount_prefix(mounts: str, why: str) -> list[str]:
    """A command prefix that runs ``mounts`` (shell) in a private mount namespace, then execs the rest."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip(f"needs root and unshare to {why} in a private mount namespace")
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a private mount namespace here ({probe.stderr.strip()})")
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"', "sh"]


def private_tmpfs_prefix(mount_point: Path, size: str, then: str = "") -> list[str]:
    """A command prefix running the rest in a private mount namespace with a ``size`` tmpfs on ``mount_point``
    (``then``: shell commands run after mounting, ending in ``;``)."""
    mount = f"mount -t tmpfs -o size={size} parlour-test {shlex.quote(str(mount_point))} && {then} true"
    return _private_mount_prefix(mount, "mount a tiny tmpfs")


def private_read_only_prefix(folder: Path) -> list[str]:
    """A command prefix running the rest in a private mount namespace where ``folder`` is a read-only bind mount."""
    quoted = shlex.quote(str(folder))
    return _private_mount_prefix(f"mount --bind {quoted} {quoted} && mount -o remount,bind,ro {quoted}", "bind-mount read-only")


def refused_until_fixed(server: Process, address: str, ann: Process, bob: Process, *, code: str, text: str, logged: str, fix: Callable[[], None]) -> None:
    """In :func:`othello_after_d3`'s game, while the server cannot save: bob's c3 and a newcomer's ``hello`` are refused;
    after ``fix()`` both succeed, and ann and bob quit.

    Args:
        code: the error code the newcomer's refusal names (``storage_full``, ...).
        text: what bob reads (a regular expression).
        logged: what the server logs for the refused move (a regular expression after ``cannot save PlayMove from``).
        fix: makes saving possible again.
    """
    bob.send("c3\n")
    bob.expect(text)
    server.expect(rf"ERROR .*cannot save PlayMove from {logged}")
    cat = Process("play", address, "--name", "cat")
    assert cat.expect(rf"The server refused us \({code}\): the server cannot save moves right now")
    assert cat.finish() != 0
    fix()
    cat = Process("play", address, "--name", "cat", stdin_text="quit\n")
    cat.expect(r"Connected to .* as cat\.")  # the name was not kept by the hello that could not be saved
    assert cat.finish() == 0
    bob.send("c3\n")  # had the refused move been applied, this would be refused (not your turn)
    ann.expect(r"White played c3\.")
    bob.expect(r"White played c3\.")
    ann.send("quit\n")
    bob.send("quit\n")
    assert ann.finish() == 0 and bob.finish() == EXIT_REFUSED  # the refusal counts in bob's exit status (--keep-going)


def assert_no_traceback_nor_error(server: Process, *clients: Process) -> None:
    """Nobody printed a traceback, and no client an error line."""
    assert not any("Traceback" in line for process in (server, *clients) for line in process.lines), "\n".join(server.lines)
    assert not any("error (" in line for client in clients for line in client.lines), "\n".join(line for c in clients for line in c.lines)
