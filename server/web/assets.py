"""The web face's files: read once from the package's ``static`` folder, served by name only.

Only the names in :data:`ASSETS` exist; a path is never joined to a folder,
so nothing outside these files can be reached, whatever the request says.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

__all__ = ["ASSETS", "PAGES", "Asset", "load"]

ASSETS = {
    "parlour.css": "text/css",
    "common.js": "text/javascript",
    "boards.js": "text/javascript",
    "lobby.js": "text/javascript",
    "table.js": "text/javascript",
    "archive.js": "text/javascript",
    "favicon.svg": "image/svg+xml",
}
"""The files under ``/static/``, by name, with their content types."""

PAGES = ("lobby.html", "table.html", "archive.html", "replay.html")
"""The HTML pages; routes serve them (``/``, ``/table/ID``, ``/tv``, ``/archive``, ``/archive/ID``)."""


@dataclass(frozen=True, slots=True)
class Asset:
    """One file's bytes and content type."""

    body: bytes
    content_type: str


def load() -> dict[str, Asset]:
    """Every asset and page, by file name (read from the installed package).

    Raises:
        FileNotFoundError: the package lacks one of them (a broken install).
    """
    folder = resources.files(__package__) / "static"
    files = {name: Asset((folder / name).read_bytes(), kind) for name, kind in ASSETS.items()}
    files.update({name: Asset((folder / name).read_bytes(), "text/html") for name in PAGES})
    return files
