"""Servers this machine connected to lately, newest first, for the server screen.

The file (``servers.json`` in the user data directory, beside ``tokens.json``)
holds a list of ``{"host": str, "port": int, "name": str}``; a missing or broken
file means none. Entries carry no password and no token.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["RecentServer", "RecentServers", "MOST_RECENT"]

MOST_RECENT = 10
"""How many servers the list keeps."""


@dataclass(frozen=True, slots=True)
class RecentServer:
    """One server connected to: its address and the player name used there."""

    host: str
    port: int
    name: str

    @property
    def address(self) -> str:
        """``host:port`` (``[v6]:port`` for an IPv6 address), as the address field takes it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


class RecentServers:
    """Reads and writes the recent-servers file; failures to read or write are ignored.

    Args:
        path: the JSON file (default: ``servers.json`` in the user data directory).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(platformdirs.user_data_dir("parlour")) / "servers.json"

    def load(self) -> list[RecentServer]:
        """The remembered servers, newest first (at most :data:`MOST_RECENT`)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(data, list):
            return []
        found = []
        for item in data[:MOST_RECENT]:
            if isinstance(item, dict) and _valid(item):
                found.append(RecentServer(item["host"], item["port"], item["name"]))
        return found

    def remember(self, server: RecentServer) -> None:
        """Put ``server`` first (dropping an older entry for the same address and name)."""
        kept = [server] + [old for old in self.load() if old != server][: MOST_RECENT - 1]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps([{"host": s.host, "port": s.port, "name": s.name} for s in kept], indent=1), encoding="utf-8")
            temporary.replace(self.path)
        except OSError:
            pass


def _valid(item: dict[str, object]) -> bool:
    host, port, name = item.get("host"), item.get("port"), item.get("name")
    return isinstance(host, str) and bool(host) and type(port) is int and 0 < port < 65536 and isinstance(name, str) and bool(name)
