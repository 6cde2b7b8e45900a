"""File descriptors: enough for ``max_connections``, and no traceback storm when they run out.

Every connection costs one descriptor. With the common soft limit of 1,024,
more connections than that made ``accept()`` fail with ``EMFILE``, and asyncio
logged a traceback for each failed attempt (up to 100 per event-loop tick)
while the connections waited unanswered. So at start the server raises its
soft limit as far as the hard limit allows, keeps ``max_connections`` below
what the limit leaves (room for the database, the listening sockets, the logs
and refusals in progress). The accept loop (:mod:`server.net.listen`) stops
accepting while that budget is used up, so the connections beyond it wait in
the listen queue and are accepted, and answered, as soon as descriptors free up.
"""

from __future__ import annotations

import logging
import os

try:
    import resource
except ImportError:  # not on Unix: the limits cannot be read or raised
    resource = None  # type: ignore[assignment]

__all__ = ["RESERVED_DESCRIPTORS", "connection_budget", "descriptor_limit", "open_descriptors"]

log = logging.getLogger(__name__)

RESERVED_DESCRIPTORS = 16
"""Descriptors kept for the server's own files: the database, its -wal, -shm and lock files, logs, the event loop."""



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
