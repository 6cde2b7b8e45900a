"""The packages' import rule: the server never imports the client, and the client library never imports the server.

``games`` and ``protocol`` are the bottom layer: they import neither end.
``server`` imports them and never ``client``. The client library (every module
of ``client`` but the ``parlour`` command, ``client/cli.py``) imports them and
never ``server``. The ``parlour`` command knows both ends (``serve``, ``games``
and ``host`` run the server), so it may import ``server``, but only inside the
functions of those subcommands, so importing it loads no server module.

Inside the server, the modules are grouped by job in ``server/<group>/``,
and the groups are layered (:data:`SERVER_LAYERS`, lowest first): a module
imports from its own group or a lower one, never from one above it; the entry
points at the top of ``server/`` (:data:`SERVER_ENTRY_POINTS`) may import any
group. Neither the server nor the client imports in a circle, between modules
or between groups.

Checked twice: over the sources with :mod:`ast` (every import statement,
function-level ones and ``TYPE_CHECKING`` ones included), and in a real
interpreter (what importing a module really loads, dynamic imports included).
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

SERVER_LAYERS = ("net", "core", "storage", "bus", "tables", "ratings", "play", "players", "social", "cluster", "web")
"""The server's groups, ``server/<group>/``, lowest first.

- ``net``: sockets, connections, peers, TLS, limits, descriptors, event loops, LAN advertising;
- ``core``: what every group shares: :class:`RequestError`, names and their keys, ids, the session;
- ``storage``: the ``Store`` contract, the SQLite and PostgreSQL stores, their schemas, writers and rows;
- ``bus``: the ``Bus`` contract, the local bus and the bus across nodes through Redis;
- ``tables``: a table, its clock, lock and fan-out, the lobby;
- ``ratings``: Glicko-2, ratings, casual counts, what a game's end does to them;
- ``play``: the table authority (every table action's pipeline) and the computer's seats;
- ``players``: sessions and the handshake, claimed names, presence, finger, mutes;
- ``social``: challenges, seeks, pairing, tells, table chat, spam budgets;
- ``cluster``: several nodes on one Redis: table id blocks, the shared lobby, names, players and tells across nodes, the relay;
- ``web``: the read-only web face (pages and the WebSocket feed for browsers that watch).
"""

SERVER_ENTRY_POINTS = ("server.app", "server.cli", "server.archive_cli", "server.config", "server.dispatch", "server.startup")
"""The modules at the top of ``server/``, above every group: they wire the groups together."""


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
    assert ("server.config", "server.net.limits") in edges  # a relative import, resolved
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


CLUSTER_CODE = (
    "import sys\n"
    "from server.app import Server, ServerConfig\n"
    "bus = sys.argv[1] or None\n"
    "Server(ServerConfig(bus=bus, node='a', db_path='postgresql://parlour@127.0.0.1:1/parlour' if bus else None))\n"
    "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in ('redis', 'hiredis') or m.startswith('server.cluster')))\n"
)
"""Makes a server (with the bus in its first argument, or none) and prints the Redis and cluster modules it loaded."""


def _cluster_modules_loaded(bus: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", CLUSTER_CODE, bus], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_a_server_without_a_bus_loads_no_redis_and_no_cluster_module() -> None:
    assert _cluster_modules_loaded("") == set()
    with_bus = _cluster_modules_loaded("redis://127.0.0.1:1")  # nothing connects until start()
    assert {"redis", "server.cluster.wiring", "server.cluster.node"} <= with_bus


def _server_rank(module: str) -> int | None:
    """The layer of a server module: its group's index in :data:`SERVER_LAYERS`; above them all for an entry point.

    ``-1`` for the package itself (``server``, which holds only ``__version__``), so any module may import it;
    ``None`` for a module in no declared group.
    """
    if module == "server":
        return -1
    if module in SERVER_ENTRY_POINTS:
        return len(SERVER_LAYERS)
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in SERVER_LAYERS:
        return SERVER_LAYERS.index(parts[1])
    if len(parts) == 2 and parts[1] in SERVER_LAYERS:  # a group's own __init__
        return SERVER_LAYERS.index(parts[1])
    return None


def _group(module: str) -> str:
    """The server group of ``module`` (``"entry"`` for an entry point, ``"server"`` for the package itself)."""
    if module in SERVER_ENTRY_POINTS:
        return "entry"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "server"


def _upward(graph: dict[str, list[Import]]) -> list[str]:
    """Every import of a server module from a group above its own (or from a module in no declared group)."""
    wrong = []
    for name, edges in graph.items():
        if _package(name) != "server":
            continue
        for edge in edges:
            if _package(edge.module) != "server":
                continue
            mine, theirs = _server_rank(name), _server_rank(edge.module)
            if mine is None or theirs is None or theirs > mine:
                wrong.append(f"{edge} ({_group(name)} -> {_group(edge.module)})")
    return wrong


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: each set of nodes that reach one another (Tarjan's strongly connected components), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def _module_edges(graph: dict[str, list[Import]], package: str) -> dict[str, set[str]]:
    """``package``'s modules, each with the modules of ``package`` it imports (at import time or inside a function)."""
    return {name: {e.module for e in edges if _package(e.module) == package and e.module in graph} for name, edges in graph.items() if _package(name) == package}


def test_every_server_module_is_in_a_declared_group() -> None:
    outside = [name for name in _graph() if _package(name) == "server" and _server_rank(name) is None]
    assert outside == [], f"put these in a group of SERVER_LAYERS (or SERVER_ENTRY_POINTS): {outside}"


def test_no_server_group_imports_one_above_it() -> None:
    assert _upward(_graph()) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {
        "server.core.names": [Import("server.core.names", "server.tables.table", 3, True)],
        "server.tables.table": [Import("server.tables.table", "server.core.names", 4, False)],
        "server.app": [Import("server.app", "server.tables.table", 5, True)],
        "server.stray": [],
    }
    assert _upward(graph) == ["server.core.names (line 3, at import time) imports server.tables.table (core -> tables)"]
    assert _server_rank("server.stray") is None


def test_no_server_module_and_no_client_module_imports_in_a_circle() -> None:
    graph = _graph()
    for package in ("server", "client"):
        assert _circles(_module_edges(graph, package)) == [], package


def test_no_two_server_groups_import_each_other() -> None:
    groups: dict[str, set[str]] = {}
    for name, targets in _module_edges(_graph(), "server").items():
        groups.setdefault(_group(name), set()).update(_group(t) for t in targets if _group(t) != _group(name))
    assert _circles(groups) == []
    assert {"net", "core", "storage", "social", "entry"} <= set(groups)  # the walk sees the groups


def test_the_circle_check_sees_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _circles(edges) == [["a", "b", "c"], ["e"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
