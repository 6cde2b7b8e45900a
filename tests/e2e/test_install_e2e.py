"""A normal install: the wheel built from this checkout, installed into a fresh virtual environment.

Every other test imports the checkout (the editable install), which hides a
package or a data file that the wheel leaves out; here the installed
``parlour`` runs from a directory outside the checkout, with ``PYTHONPATH``
cleared, so only what the wheel holds can be imported.

Slow (marked ``slow``): building the wheel, a new virtual environment and
installing the wheel with its dependencies from the configured package index
take about ten seconds, once for the module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .harness import ROOT, Process, start_server

# One worker runs the whole module under pytest-xdist (--dist loadgroup), so the wheel is built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("install")]

PACKAGES = ("games", "protocol", "server", "client")
"""The top-level packages the wheel must hold, and the only ones."""

INSTALL_TIMEOUT_S = 300
_NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "*.sqlite3", "*.db",
    "*.so",  # the editable install's build of the C accelerator, in place
)
"""What a fresh clone does not have: environments, build output, caches, databases."""


def _clean_environ() -> dict[str, str]:
    """This process's environment without anything that could import the checkout or other site-packages.

    The tests' shared bytecode cache (``PYTHONPYCACHEPREFIX``, tests/conftest.py) stays out too: the
    fresh environment's pip and packages come with their own compiled files, which a prefix would hide.
    """
    leaks = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONSAFEPATH", "PYTHONPYCACHEPREFIX")
    env = {key: value for key, value in os.environ.items() if key not in leaks}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(command: list[str | Path], cwd: Path, timeout_s: float = INSTALL_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in the clean environment; fail the test with its output unless it exits 0."""
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=_clean_environ(), capture_output=True, text=True, timeout=timeout_s
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


class Installed:
    """A wheel built from a clean copy of the checkout and installed into a fresh virtual environment.

    Attributes:
        source: the copy the wheel was built from (what a fresh clone holds).
        wheel: the built ``.whl`` file.
        venv: the virtual environment it is installed in.
        outside: an empty directory outside the checkout, the working directory for commands.
    """

    def __init__(self, base: Path) -> None:
        self.source = base / "source"
        shutil.copytree(ROOT, self.source, ignore=_NOT_SOURCES)
        self.outside = base / "elsewhere"
        self.outside.mkdir()
        self.venv = base / "venv"
        _run([sys.executable, "-m", "venv", self.venv], cwd=self.outside)
        wheels = base / "wheels"
        _run([self.python, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", wheels, self.source], cwd=self.outside)
        (self.wheel,) = wheels.glob("parlour-*.whl")
        _run([self.python, "-m", "pip", "install", self.wheel], cwd=self.outside)

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def parlour(self) -> Path:
        return self.venv / "bin" / "parlour"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel installed into a fresh virtual environment (built once for this module)."""
    return Installed(tmp_path_factory.mktemp("install"))


def test_wheel_holds_every_package_file_and_nothing_else(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = {name for name in wheel.namelist() if ".dist-info/" not in name}
    in_checkout = {
        path.relative_to(installed.source).as_posix()
        for package in PACKAGES
        for path in (installed.source / package).rglob("*")
        if path.is_file()
    }
    assert sorted(in_checkout - in_wheel) == [], "files of the packages missing from the wheel"
    assert {name.split("/")[0] for name in in_wheel} == set(PACKAGES), "only the product's packages: no tests, no benchmarks"


def test_the_installed_othello_engine_and_view_writer_run_in_c_where_a_compiler_is(installed: Installed) -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the engine runs in pure Python")
    done = _run([installed.python, "-c", "from games import othello; print(othello.accelerated(), othello._othello_accel.__file__)"],
                cwd=installed.outside)  # fmt: skip
    accelerated, path = done.stdout.split()
    assert accelerated == "True" and Path(path).is_relative_to(installed.venv)
    done = _run([installed.python, "-c", "from server.tables import _othello_views; print(_othello_views.__file__)"], cwd=installed.outside)
    assert Path(done.stdout.strip()).is_relative_to(installed.venv), "the fan-out's Othello view writer is built beside it"


def test_installed_parlour_imports_from_the_environment_not_the_checkout(installed: Installed) -> None:
    done = _run([installed.python, "-c", "import client.cli, client.render, server.app; print(client.__file__)"], cwd=installed.outside)
    assert Path(done.stdout.strip()).is_relative_to(installed.venv)


@pytest.mark.parametrize("command", [[], ["serve"], ["host"], ["play"], ["games"]], ids=lambda words: " ".join(["parlour", *words]))
def test_installed_commands_print_their_help(installed: Installed, command: list[str]) -> None:
    done = _run([installed.parlour, *command, "--help"], cwd=installed.outside, timeout_s=30)
    assert done.stdout.startswith(" ".join(["usage: parlour", *command])), done.stdout
    assert done.stderr == ""


def test_installed_server_and_clients_play_a_game_to_the_end(installed: Installed) -> None:
    how = {"program": [str(installed.parlour)], "cwd": installed.outside, "environ": _clean_environ()}
    server, port = start_server(**how)
    address = f"127.0.0.1:{port}"
    clients: list[Process] = []
    try:
        ann = Process("play", address, "--name", "ann", stdin_text="new nimble board=0,1,1\n", **how)
        clients.append(ann)
        ann.expect(r"Created table 1")
        ann.send("wait start\nwait turn\n3-2\nwait turn\n2-1\nwait end\nquit\n")
        bob = Process("play", address, "--name", "bob", stdin_text="join 1\nwait turn\n2-1\nwait end\nquit\n", **how)
        clients.append(bob)
        for client in clients:
            client.expect(r"^Result: Player 1 wins — no movable pawn", timeout_s=30)
            assert client.finish(timeout_s=30) == 0
            assert not any(line.startswith(("error", "Traceback")) for line in client.lines), client.lines
        server.popen.terminate()
        assert server.finish(timeout_s=30) == 0, server.lines
        assert not any("Traceback" in line for line in server.lines), server.lines
    finally:
        for client in clients:
            client.kill()
        server.kill()
