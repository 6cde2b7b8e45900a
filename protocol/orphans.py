"""Worker processes that end with the process that started them.

Both ends run move choosers in worker processes (the server for computer
seats, ``parlour bot`` for its own moves). A parent that exits in order shuts
its workers down; one killed outright (SIGKILL, a crash) cannot, so each
worker watches for it and exits once it is gone, leaving no orphan to burn a
core. Shared here because the server and the client may both import
``protocol`` but not each other.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["ORPHAN_CHECK_S", "exit_when_orphaned"]

ORPHAN_CHECK_S = 0.5
"""How often a worker checks that its parent still runs, in seconds."""


def exit_when_orphaned(parent_pid: int, check_s: float = ORPHAN_CHECK_S) -> threading.Thread:
    """Start a daemon thread that ends this process (``os._exit(0)``) once ``parent_pid`` is no longer its parent.

    Call it in a worker's initializer with the parent's ``os.getpid()`` taken
    before the worker started. Returns the watching thread.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(check_s)
        os._exit(0)

    watcher = threading.Thread(target=watch, name="orphan-watch", daemon=True)
    watcher.start()
    return watcher
