"""Session tokens kept on disk, so a restarted client resumes its seats.

The file (``tokens.json`` in the user data directory) maps
``"host:port name"`` to the last token that server gave that name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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
        """Remember ``token`` (``None``: forget it). Failures to write are ignored."""
        data = self._load()
        key = f"{host}:{port} {name}"
        if token is None:
            data.pop(key, None)
        else:
            data[key] = token
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.chmod(temporary, 0o600)
            temporary.replace(self.path)
        except OSError:
            pass
