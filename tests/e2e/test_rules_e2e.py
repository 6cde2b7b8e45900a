"""The rules reach players outside a checkout: a real ``parlour play`` in line
mode prints them, and a wheel built from the project carries the text."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from client.line_script import EXIT_COMMAND

from .harness import ROOT, Process, start_server

PACKAGES = ("games", "protocol", "server", "client")


def test_rules_in_the_line_mode_client() -> None:
    server, port = start_server()
    player = None
    try:
        player = Process("play", f"127.0.0.1:{port}", "--name", "ann", stdin_text="rules tactego\nrules chess\n")
        player.expect(r"^## Tactego$")
        player.expect(r"^### Pieces files$")
        player.expect(r"^no rules for a game called 'chess'; games: othello, nimble, mingmang, morris, tactego, hexapawn$")
        assert player.finish() == EXIT_COMMAND
        assert not any("Traceback" in line for line in player.lines)
        assert not any(line.startswith("## ") and line != "## Tactego" for line in player.lines)
    finally:
        if player is not None:
            player.kill()
        server.kill()


def test_a_built_wheel_carries_the_rules_and_serves_them(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(wheels)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("parlour-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("client/rules_text.md") == (ROOT / "docs" / "RULES.md").read_bytes()
    # Import the client from the wheel itself (a zip on sys.path), far from the checkout.
    script = "import client, client.rules as r; print(client.__file__); print(r.game_rules('tactego').splitlines()[0])"
    env = dict(os.environ, PYTHONPATH=str(wheel))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    where, heading = done.stdout.splitlines()
    assert where.startswith(str(wheel)) and heading == "## Tactego"
