"""Session tokens and claimed names' secrets kept on disk.

``tokens.json`` (in the user data directory) maps ``"host:port name"`` to the
last token that server gave that name, so a restarted client resumes its
seats. A session keeps its token for its whole life, so the entry changes only
when a new session begins (the old one had expired).

``secrets.json`` beside it maps ``"@SERVERID name"`` to the secret this
client claimed that name with on the server of that stable id (PROTOCOL.md
section 15), whatever address reached it. Entries from before server ids,
``"host:port name"``, still work: the client moves one to its server's id the
first time it proves the name there. ``server_ids.json`` (:class:`ServerIds`)
remembers which id each typed address led to, a hint for ``parlour secret
export --server``. All three files are readable by their owner only (mode 0600).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

import platformdirs

__all__ = ["TokenStore", "SecretStore", "SecretStoreError", "ServerIds", "secret_key", "server_secret_key"]


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
        self.server_ids = ServerIds(self.path.with_name("server_ids.json"))
        """Which server id each address led to (beside the secrets file)."""

    def entries(self) -> dict[str, str]:
        """Every remembered secret: ``"@SERVERID name"`` (or, from before server ids, ``"host:port name"``) -> secret."""
        return _read_map(self.path)

    def get(self, host: str, port: int, name: str) -> str | None:
        """The secret of ``name`` kept for that address (an entry from before server ids), if this client has it."""
        return self.entries().get(secret_key(host, port, name))

    def get_for(self, server_id: str, name: str) -> str | None:
        """The secret of ``name`` on the server whose stable id is ``server_id``, if this client has it."""
        return self.entries().get(server_secret_key(server_id, name))

    def put_for(self, server_id: str, name: str, secret: str | None) -> None:
        """Remember ``secret`` for ``name`` on the server ``server_id`` (``None``: forget it).

        Raises:
            SecretStoreError: the file could not be written.
        """
        self.update({server_secret_key(server_id, name): secret})

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
                _write_private(self.path, data)
        except OSError as exc:
            raise SecretStoreError(f"cannot write {self.path}: {exc.strerror or exc}") from None


class ServerIds:
    """Which stable server id each address (as typed: ``host:port``) led to; a missing or broken file means none.

    Only a hint, for finding a secret by the address a player names (``parlour secret export
    --server``): connecting always asks the server its id. Failures to write are ignored.

    Args:
        path: the JSON file (``server_ids.json`` beside the secrets).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, host: str, port: int) -> str | None:
        """The id of the server last reached at ``host:port``, if known."""
        return _read_map(self.path).get(f"{host}:{port}")

    def addresses(self, server_id: str) -> list[str]:
        """The addresses (``host:port``) that led to ``server_id``, sorted."""
        return sorted(address for address, known in _read_map(self.path).items() if known == server_id)

    def put(self, host: str, port: int, server_id: str) -> None:
        """Remember that ``host:port`` led to ``server_id``."""
        key = f"{host}:{port}"
        if _read_map(self.path).get(key) == server_id:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a") as lock:
                _lock(lock)
                data = _read_map(self.path)
                data[key] = server_id
                _write_private(self.path, data)
        except OSError:
            pass


def secret_key(host: str, port: int, name: str) -> str:
    """The key of a token, and of a secret from before server ids, in its file: ``"host:port name"``."""
    return f"{host}:{port} {name}"


def server_secret_key(server_id: str, name: str) -> str:
    """The key of a secret in its file: ``"@SERVERID name"``."""
    return f"@{server_id} {name}"


def _write_private(path: Path, data: dict[str, str]) -> None:
    """Replace ``path`` with ``data`` as JSON, readable by the owner only (call with the lock held)."""
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.chmod(temporary, 0o600)  # in case the file was left over with wider permissions
        file.write(json.dumps(data, indent=1))
    temporary.replace(path)


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
