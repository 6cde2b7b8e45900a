"""The README's set-up commands and CI's script agree: CI runs exactly the test command a person is told to run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    """The one-line commands of the README's "On a fresh machine" section, in order."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## On a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+)\n```", section)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    setup, tests = _readme_commands()
    assert "pip install -q -e ." in setup and "parlour host" in setup
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    script = re.sub(r"(?ms)^if .*?^fi$", "", script)  # the step that installs missing Debian packages (below)
    commands = [line for line in script.splitlines() if line and not line.startswith(("#", "set ", "cd "))]
    assert commands == [tests]


def test_ci_installs_the_servers_the_cluster_tests_start_where_they_are_missing() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    installs = re.findall(r"(?ms)^if (.*?)^fi$", script)
    assert len(installs) == 1 and "command -v redis-server" in installs[0]
    assert "apt-get install -y postgresql redis-server" in installs[0]
