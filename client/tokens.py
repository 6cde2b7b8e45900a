"""Session tokens and claimed names' secrets kept on disk.

``tokens.json`` (in the user data directory) maps ``"host:port name"`` to the
last token that server gave that name, so a restarted client resumes its
seats. A session keeps its token for its whole life, so the entry changes only
when a new session begins (the old one had expired).

``secrets.json`` beside it maps ``"host:port name"`` to the secret this client
claimed that name with (PROTOCOL.md section 15); both files are readable by
their owner only (mode 0600).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

import platformdirs

__all__ = ["TokenStore", "SecretStore", "SecretStoreError"]


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


class SecretStoreError(OSError):
    """The secrets file cannot be written; the message names it and why."""


class SecretStore:
    """Reads and writes the secrets of claimed names; a missing file means none.

    Unlike a lost token, a lost secret loses a name, so a write that fails
    raises instead of passing silently, and the client claims nothing it could not keep.

    Args:
        path: the JSON file (default: ``secrets.json`` in the user data directory).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(platformdirs.user_data_dir("parlour")) / "secrets.json"

    def entries(self) -> dict[str, str]:
        """Every remembered secret: ``"host:port name"`` -> secret."""
        return _read_map(self.path)

    def get(self, host: str, port: int, name: str) -> str | None:
        """The secret of ``name`` on that server, if this client has it."""
        return self.entries().get(secret_key(host, port, name))

    def put(self, host: str, port: int, name: str, secret: str | None) -> None:
        """Remember ``secret`` for ``name`` on that server (``None``: forget it).

        Raises:
            SecretStoreError: the file could not be written.
        """
        self.update({secret_key(host, port, name): secret})

    def update(self, changes: dict[str, str | None]) -> None:
        """Apply ``changes`` (key -> secret, ``None``: forget) in one locked read-modify-write.

        Raises:
            SecretStoreError: the file could not be written.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a") as lock:
                _lock(lock)
                data = _read_map(self.path)
                for key, secret in changes.items():
                    if secret is None:
                        data.pop(key, None)
                    else:
                        data[key] = secret
                temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
                descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                    os.chmod(temporary, 0o600)  # in case the file was left over with wider permissions
                    file.write(json.dumps(data, indent=1))
                temporary.replace(self.path)
        except OSError as exc:
            raise SecretStoreError(f"cannot write {self.path}: {exc.strerror or exc}") from None


def secret_key(host: str, port: int, name: str) -> str:
    """The key of a secret (and of a token) in its file: ``"host:port name"``."""
    return f"{host}:{port} {name}"


def _read_map(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def _lock(handle: IO[str]) -> None:
    """Take an exclusive lock on ``handle`` until it is closed (no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: concurrent clients on one machine may lose a token
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
