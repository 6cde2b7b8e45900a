"""One server per database: an exclusive lock on ``<db>.lock``, held for the server's life.

Two servers on one database file would both restore the same tables, give out
the same table ids and each hold a live copy of the same sessions. The lock is
an ``flock`` on a file beside the database: the kernel releases it when the
process ends, however it ends, so a killed server never leaves a stale lock.
The file itself stays (it holds the process id of the last holder) and is
harmless. ``parlour games`` reads the database without the lock.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Unix: no lock (one server per database is then up to the operator)
    fcntl = None  # type: ignore[assignment]

from .schema import check_not_directory
from .store import StoreError

__all__ = ["DatabaseInUse", "DatabaseLock", "lock_path"]


class DatabaseInUse(StoreError):
    """Another process holds the database's lock: another server runs on it."""


def lock_path(db_path: str | os.PathLike[str]) -> Path:
    """The lock file of a database: ``parlour.sqlite3`` has ``parlour.sqlite3.lock``."""
    return Path(f"{os.fspath(db_path)}.lock")


class DatabaseLock:
    """A held lock on a database (see :meth:`acquire`); :meth:`release` it, or let the process end."""

    def __init__(self, path: Path, fd: int) -> None:
        """Use :meth:`acquire`."""
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, db_path: str | os.PathLike[str]) -> "DatabaseLock":
        """Take the lock of ``db_path`` without waiting; create the lock file (and its directory) if needed.

        Raises:
            DatabaseInUse: another process holds it (the message names that process if known).
            StoreError: ``db_path`` is a directory, or the lock file cannot be created or locked (its directory is not writable, say).
        """
        check_not_directory(Path(db_path))
        path = lock_path(db_path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot create the lock file {path} (its directory must be writable): {exc.strerror}") from None
        if fcntl is None:
            return cls(path, fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"process {holder}" if holder else "another process"
            raise DatabaseInUse(
                f"{os.fspath(db_path)} is in use by another Parlour server ({who} holds {path}); "
                "stop that server first, or give this one another --db"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {path}: {exc.strerror}") from None
        _write_pid(fd)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        """Whether this lock is still held."""
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up. Idempotent."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor releases the flock


def _read_pid(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""


def _write_pid(fd: int) -> None:
    """Record who holds the lock, for the message a second server prints; best effort (a full disk may refuse)."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError:
        pass
