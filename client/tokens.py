"""Session tokens kept on disk, so a restarted client resumes its seats.

The file (``tokens.json`` in the user data directory) maps
``"host:port name"`` to the last token that server gave that name. A session
keeps its token for its whole life, so the entry changes only when a new
session begins (the old one had expired).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

import platformdirs

__all__ = ["TokenStore"]


class TokenStore:
    """Reads and writes remembered tokens; a missing or broken file means none.

    Args:
        path: the JSON file (default: ``tokens.json`` in the user data directory).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(platformdirs.user_data_dir("parlour")) / "tokens.json"

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}

    def get(self, host: str, port: int, name: str) -> str | None:
        """The token remembered for ``name`` on that server, if any."""
        return self._load().get(f"{host}:{port} {name}")

    def put(self, host: str, port: int, name: str, token: str | None) -> None:
        """Remember ``token`` (``None``: forget it). Failures to write are ignored.

        Several clients on one machine may write at once: the read-modify-write
        holds an exclusive lock on ``tokens.lock`` so no client's token is lost.
        """
        key = f"{host}:{port} {name}"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a") as lock:
                _lock(lock)
                data = self._load()
                if token is None:
                    data.pop(key, None)
                else:
                    data[key] = token
                temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
                os.chmod(temporary, 0o600)
                temporary.replace(self.path)
        except OSError:
            pass


def _lock(handle: IO[str]) -> None:
    """Take an exclusive lock on ``handle`` until it is closed (no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: concurrent clients on one machine may lose a token
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
