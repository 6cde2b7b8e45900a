"""File descriptors: enough for ``max_connections``, and no traceback storm when they run out.

Every connection costs one descriptor. With the common soft limit of 1,024,
more connections than that made ``accept()`` fail with ``EMFILE``, and asyncio
logged a traceback for each failed attempt (up to 100 per event-loop tick)
while the connections waited unanswered. So at start the server raises its
soft limit as far as the hard limit allows, keeps ``max_connections`` below
what the limit leaves (room for the database, the listening sockets, the logs
and refusals in progress), and logs one line instead of tracebacks if
``accept()`` still fails: the waiting connections are accepted, and answered,
as soon as descriptors free up.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import time
from typing import Any

try:
    import resource
except ImportError:  # not on Unix: the limits cannot be read or raised
    resource = None  # type: ignore[assignment]

__all__ = ["RESERVED_DESCRIPTORS", "connection_budget", "descriptor_limit", "open_descriptors", "quiet_accept_errors"]

log = logging.getLogger(__name__)

RESERVED_DESCRIPTORS = 16
"""Descriptors kept for the server's own files: the database, its -wal, -shm and lock files, logs, the event loop."""

ACCEPT_WARNING_EVERY_S = 10.0
"""At most one warning this often while ``accept()`` fails for lack of descriptors."""

_OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def descriptor_limit() -> int | None:
    """Raise the soft ``RLIMIT_NOFILE`` as far as the hard limit allows; return the soft limit (``None``: unknown)."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft < hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the descriptor limit from %d to %d: %s", soft, hard, exc)
    return None if soft == resource.RLIM_INFINITY else soft


def open_descriptors() -> int:
    """How many descriptors this process has open now (0 if the system cannot say)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return max(0, len(os.listdir(folder)) - 1)  # less the one listdir itself opened
        except OSError:
            continue
    return 0


def connection_budget(limit: int, in_use: int) -> tuple[int, int]:
    """How many client connections fit in ``limit`` descriptors when ``in_use`` are open already,
    and how many refusals in progress fit beside them.

    :data:`RESERVED_DESCRIPTORS` stay free for the server's own files, and a
    quarter of the rest (at least 8) for connections being refused with
    ``too_many_connections``, each of which holds a descriptor for up to a
    second or two. Never less than 1 connection.

    Returns:
        ``(connections, refusals)``.
    """
    spare = limit - in_use - RESERVED_DESCRIPTORS
    refusals = max(8, spare // 4)
    return max(1, spare - refusals), refusals


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` log one warning line, at most every :data:`ACCEPT_WARNING_EVERY_S`, when ``accept()``
    fails for lack of descriptors or memory, instead of a traceback per attempt.

    asyncio itself stops accepting for a second and tries again (its retries
    on a server closed meanwhile are dropped silently); the waiting
    connections stay in the listen queue. Other errors go to the handler the
    loop had before.
    """
    previous = loop.get_exception_handler()
    last_warning = [float("-inf")]

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = str(context.get("message", ""))
        if isinstance(exc, (ValueError, OSError)) and "_start_serving" in message:
            return  # asyncio's delayed retry of accept() found the server closed meanwhile: nothing to do
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_RESOURCES and "accept" in message:
            now = time.monotonic()
            if now - last_warning[0] >= ACCEPT_WARNING_EVERY_S:
                last_warning[0] = now
                log.warning(
                    "cannot accept new connections for now (%s); they wait until descriptors free up "
                    "(lower --max-connections, or raise the descriptor limit: ulimit -n)",
                    exc.strerror,
                )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    if getattr(previous, "quiets_accept_errors", False):
        return  # already installed on this loop
    handle.quiets_accept_errors = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handle)
