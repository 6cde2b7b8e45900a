"""The Othello computer player as it was on main before issue 22, read from git history, for benchmarks.

``strength.py``'s new-against-previous match and ``othello_search_speed.py
--compare`` play today's player against the one of :data:`PREVIOUS_COMMIT`.
Rather than keep a second copy of that code in the tree, this module reads
its four Othello modules (``games/bots/othello*.py``) from the repository's
history with ``git show``, points their imports of the shared bot contract
(``.base``, ``.greedy``) at today's ``games.bots``, writes them into a
temporary package and imports it. Attributes ``make_chooser`` and
``Searcher`` load it on first use::

    import othello_previous
    player = othello_previous.make_chooser(5)

Needs ``git`` and a checkout whose history holds the commit (a full clone
does; a shallow one may not): :class:`PreviousPlayerUnavailable` says which
is missing.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["MODULES", "PREVIOUS_COMMIT", "PreviousPlayerUnavailable", "load", "load_at", "source"]

PREVIOUS_COMMIT = "b6b377b5893affa2c6f9c745568a0307b4c3912c"
"""main before issue 22 changed the Othello player."""
MODULES = ("othello", "othello_board", "othello_eval", "othello_search")
"""The modules of ``games/bots`` that make up the Othello player at that commit."""
SHARED = {"from .base import": "from games.bots.base import", "from .greedy import": "from games.bots.greedy import"}
"""Relative imports of today's shared bot contract, made absolute (the rest stay inside the old package)."""
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "othello_previous_player"

_loaded: ModuleType | None = None
_loaded_at: dict[str, ModuleType] = {}


class PreviousPlayerUnavailable(RuntimeError):
    """The previous player's source cannot be read from git (no ``git``, not a checkout, or the commit is not in its history)."""


def source(module: str, commit: str = PREVIOUS_COMMIT) -> str:
    """The text of ``games/bots/MODULE.py`` at ``commit``, its shared imports made absolute.

    Raises:
        PreviousPlayerUnavailable: git cannot show that file.
    """
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:games/bots/{module}.py"], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise PreviousPlayerUnavailable("the previous Othello player is read from git history, and git is not installed") from None
    if done.returncode != 0:
        raise PreviousPlayerUnavailable(
            f"cannot read games/bots/{module}.py at {commit[:12]} from the history of {ROOT} "
            f"(a full clone is needed; git said: {done.stderr.strip()})"
        )
    text = done.stdout
    for relative, absolute in SHARED.items():
        text = text.replace(relative, absolute)
    return text


def load() -> ModuleType:
    """Import (once per process) the previous player as a package of its own; return its ``othello`` module.

    Raises:
        PreviousPlayerUnavailable: as :func:`source`.
    """
    global _loaded
    if _loaded is None:
        where = Path(tempfile.mkdtemp(prefix="parlour-previous-"))
        atexit.register(shutil.rmtree, where, ignore_errors=True)
        package = where / PACKAGE
        package.mkdir()
        (package / "__init__.py").write_text(f'"""games/bots/othello*.py at {PREVIOUS_COMMIT[:12]} (benchmarks/othello_previous.py)."""\n')
        for module in MODULES:
            (package / f"{module}.py").write_text(source(module))
        sys.path.insert(0, str(where))
        _loaded = importlib.import_module(f"{PACKAGE}.othello")
    return _loaded


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C ROOT ARGS``; raise :class:`PreviousPlayerUnavailable` when git is missing or fails."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise PreviousPlayerUnavailable("the Othello player of a commit is read from git, and git is not installed") from None
    if done.returncode != 0:
        raise PreviousPlayerUnavailable(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done


def load_at(revision: str) -> ModuleType:
    """Import (once per process and revision) the Othello player of any commit; return its ``othello`` module.

    Unlike :func:`load` (four fixed modules), this takes every
    ``games/bots/othello*.py`` of that commit and its ``games/bots/data``
    files (pattern tables, opening book), so that a change can be matched
    head to head against main as it was (``strength.py --against-commit``).

    Raises:
        PreviousPlayerUnavailable: git cannot resolve ``revision`` or show its files.
    """
    commit = _git("rev-parse", "--verify", f"{revision}^{{commit}}").stdout.decode().strip()
    if commit not in _loaded_at:
        name = f"othello_at_{commit[:12]}"
        where = Path(tempfile.mkdtemp(prefix="parlour-commit-"))
        atexit.register(shutil.rmtree, where, ignore_errors=True)
        package = where / name
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text(f'"""games/bots/othello*.py at {commit[:12]} (benchmarks/othello_previous.py)."""\n')
        listed = _git("ls-tree", "--name-only", commit, "games/bots/", "games/bots/data/").stdout.decode().split()
        for path in listed:
            file = Path(path)
            if file.parent.name == "data" or (file.suffix == ".py" and file.name.startswith("othello")):
                text = _git("show", f"{commit}:{path}").stdout
                if file.suffix == ".py":
                    for relative, absolute in SHARED.items():
                        text = text.replace(relative.encode(), absolute.encode())
                (package / file.relative_to("games/bots")).write_bytes(text)
        sys.path.insert(0, str(where))
        _loaded_at[commit] = importlib.import_module(f"{name}.othello")
    return _loaded_at[commit]


def __getattr__(name: str) -> Any:
    """``make_chooser`` (the previous levels 1-5) and ``Searcher`` (its search), loaded on first use."""
    if name == "make_chooser":
        return load().make_chooser
    if name == "Searcher":
        load()
        return importlib.import_module(f"{PACKAGE}.othello_search").Searcher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
