"""A real headless Chromium for the web face's tests, and real players beside it.

The browser is Debian's ``chromium`` driven through ``chromedriver`` by
Selenium, both found at fixed paths: Selenium Manager never downloads a
browser or a driver (``SE_OFFLINE``). Without them the tests skip, saying
so, or fail when ``CI`` is set (``.ci/run`` installs them).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

import pytest

CHROMIUM = Path(os.environ.get("PARLOUR_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("PARLOUR_CHROMEDRIVER", "/usr/bin/chromedriver"))
MISSING = (
    f"the web face's browser tests need Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER}): "
    "apt-get install -y chromium chromium-driver (.ci/run does)"
)

T = TypeVar("T")


def require_browser() -> None:
    """Skip the test (fail it when ``CI`` is set) if Chromium or its driver is missing."""
    if CHROMIUM.is_file() and CHROMEDRIVER.is_file():
        return
    if os.environ.get("CI"):
        pytest.fail(MISSING)
    pytest.skip(MISSING)


def start_browser() -> Any:
    """A headless Chromium that logs its network events (WebSocket frames included)."""
    require_browser()
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not download anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,960", "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))


def websocket_frames(driver: Any) -> list[Any]:
    """Every WebSocket message the page received since the last call, each decoded from JSON."""
    frames = []
    for entry in driver.get_log("performance"):
        event = json.loads(entry["message"])["message"]
        if event["method"] == "Network.webSocketFrameReceived":
            frames.append(json.loads(event["params"]["response"]["payloadData"]))
    return frames


def wait_for(check: Callable[[], T], timeout_s: float = 5.0, what: str = "the page") -> T:
    """Poll ``check`` until it returns something true; return that, or fail after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # the element is not there yet, or went stale while the page redrew
            last = exc
        else:
            if last:
                return last
        time.sleep(0.02)
    raise AssertionError(f"{what} did not come within {timeout_s} s (last: {last!r})")


class Loop:
    """An asyncio loop in a thread, for the real clients beside the synchronous browser."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, awaitable: Awaitable[T], timeout_s: float = 20.0) -> T:
        """Run ``awaitable`` on the loop; return its result."""
        async def wrapped() -> T:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(timeout_s)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
