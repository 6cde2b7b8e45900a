"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[list[Path]]:
    """Paths appended to the list are made immutable (``chattr +i``, binding root too) and restored after."""
    made: list[Path] = []
    yield made
    for path in reversed(made):
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
