"""The packages' import rule: the server never imports the client, and the client library never imports the server.

``games`` and ``protocol`` are the bottom layer: they import neither end.
``server`` imports them and never ``client``. The client library (every module
of ``client`` but the ``parlour`` command, ``client/cli.py``) imports them and
never ``server``. The ``parlour`` command knows both ends (``serve``, ``games``
and ``host`` run the server), so it may import ``server``, but only inside the
functions of those subcommands, so importing it loads no server module.

Checked twice: over the sources with :mod:`ast` (every import statement,
function-level ones included), and in a real interpreter (what importing a
module really loads, dynamic imports included).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("games", "protocol", "server", "client")
COMMAND = "client.cli"
"""The ``parlour`` command: the one module that may import both ends (the server lazily)."""


@dataclass(frozen=True)
class Import:
    """One import statement: the module it loads, and where."""

    importer: str
    module: str
    line: int
    at_import_time: bool
    """Outside every function: it runs when the importer is imported."""

    def __str__(self) -> str:
        where = "at import time" if self.at_import_time else "inside a function"
        return f"{self.importer} (line {self.line}, {where}) imports {self.module}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    """Every module of the four packages, by dotted name."""
    return {_module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` names (relative ones resolved against ``importer``)."""
    if node.level == 0:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path, known: set[str]) -> list[Import]:
    """The project modules ``name`` imports; ``from package import module`` counts as importing the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, path.name == "__init__.py")
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            targets = []
        found.extend(Import(name, t, node.lineno, not in_function) for t in targets if t.split(".")[0] in PACKAGES)  # type: ignore[attr-defined]
        nested = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, nested)

    visit(tree, False)
    return found


def _graph() -> dict[str, list[Import]]:
    sources = _sources()
    known = set(sources)
    return {name: _imports(name, path, known) for name, path in sources.items()}


def _package(module: str) -> str:
    return module.split(".")[0]


def test_the_source_walk_sees_every_package_and_the_known_edges() -> None:
    graph = _graph()
    assert {_package(name) for name in graph} == set(PACKAGES)
    edges = {(edge.importer, edge.module) for edges in graph.values() for edge in edges}
    assert ("server.app", "server.net.limits") in edges  # a relative import, resolved
    assert ("client.connection", "protocol.messages") in edges  # from protocol import messages
    assert (COMMAND, "server.app") in edges  # parlour host, inside a function


def test_games_and_protocol_import_neither_end() -> None:
    graph = _graph()
    wrong = [str(e) for name, edges in graph.items() if _package(name) in ("games", "protocol") for e in edges if _package(e.module) in ("server", "client")]
    assert wrong == []


def test_no_server_module_imports_the_client() -> None:
    graph = _graph()
    wrong = [str(e) for name, edges in graph.items() if _package(name) == "server" for e in edges if _package(e.module) == "client"]
    assert wrong == []


def test_the_client_library_imports_no_server_module() -> None:
    graph = _graph()
    library = [name for name in graph if _package(name) == "client" and name != COMMAND]
    wrong = [str(e) for name in library for e in graph[name] if _package(e.module) == "server"]
    assert wrong == []


def test_the_parlour_command_imports_the_server_only_inside_its_subcommands() -> None:
    wrong = [str(e) for e in _graph()[COMMAND] if _package(e.module) == "server" and e.at_import_time]
    assert wrong == []


def test_client_connection_reaches_no_server_module_transitively() -> None:
    graph = _graph()
    seen, todo = set(), ["client.connection"]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]  # importing a.b runs a/__init__ first
        todo += [edge.module for edge in graph.get(module, [])] + parents
    assert sorted(m for m in seen if _package(m) == "server") == []
    assert "protocol.pacing" in seen and "protocol.tls" in seen  # what it shares with the server


def _loaded_after_importing(modules: list[str]) -> set[str]:
    """The project modules a fresh interpreter has loaded after importing ``modules``."""
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print('\\n'.join(m for m in sys.modules if m.split('.')[0] in {PACKAGES!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_a_real_interpreter_agrees() -> None:
    sources = _sources()
    server_side = [name for name in sources if _package(name) == "server"]
    library = [name for name in sources if _package(name) == "client" and name != COMMAND]
    loaded_by_server = _loaded_after_importing(server_side)
    assert "server.app" in loaded_by_server
    assert sorted(m for m in loaded_by_server if _package(m) == "client") == []
    loaded_by_client = _loaded_after_importing([*library, COMMAND])
    assert "client.connection" in loaded_by_client
    assert sorted(m for m in loaded_by_client if _package(m) == "server") == []
