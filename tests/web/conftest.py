"""Fixtures of the web face's tests: a headless Chromium and a loop thread for real players."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from .browser import Loop, start_browser


@pytest.fixture
def browser() -> Iterator[Any]:
    """A fresh headless Chromium, quit after the test."""
    driver = start_browser()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def loop() -> Iterator[Loop]:
    """A loop thread for the players."""
    running = Loop()
    try:
        yield running
    finally:
        running.close()
