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
    commands = [line for line in script.splitlines() if line and not line.startswith(("#", "set ", "cd "))]
    assert commands[-1] == tests  # what comes before only installs missing system packages (apt-get)
    assert [line for line in commands if "pytest" in line or "pip install" in line] == [tests]


def test_ci_installs_the_browser_the_web_tests_need_only_where_missing() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "command -v chromium >/dev/null || missing+=(chromium)" in script
    assert "command -v chromedriver >/dev/null || missing+=(chromium-driver)" in script
    assert len(re.findall(r"apt-get install -y", script)) == 1  # one install line, for every missing package


def test_ci_installs_the_missing_database_servers_in_the_same_apt_step() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)" in script
    assert "command -v redis-server >/dev/null || missing+=(redis-server)" in script
    assert 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"' in script
    assert len(re.findall(r"apt-get install -y", script)) == 1
