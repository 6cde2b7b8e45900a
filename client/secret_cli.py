"""``parlour secret export`` and ``parlour secret import``: move claimed names' secrets between machines.

An export is a small JSON document::

    {"parlour_secrets": 1, "secrets": [{"server": "192.168.1.5:7420", "server_id": "5f0c…", "name": "ann", "secret": "..."}]}

``server_id`` is the server's stable id (PROTOCOL.md section 15): an imported
secret is kept by it and works through any address of that server.
``server`` is an address that reached it (a hint; ``""`` when none is
known). An entry without ``server_id`` (an export of a secret kept from before
server ids) is kept by its address, and moves to the id on first use.
Whoever holds an export can play as those names: keep it private.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from protocol.lan import SERVER_ID_CHARACTERS

from .tokens import SecretStore, SecretStoreError, secret_key, server_secret_key

__all__ = ["add_parser", "export_secrets", "import_secrets", "ExportError"]

FORMAT_VERSION = 1
MAX_IMPORT_BYTES = 1 << 20
"""The largest export file ``import`` reads."""


class ExportError(ValueError):
    """An export file that cannot be read; the message says what is wrong."""


def add_parser(subparsers: argparse._SubParsersAction, parse_address: Callable[[str], tuple[str, int]]) -> None:  # type: ignore[type-arg]
    """Add ``secret export`` and ``secret import`` to the ``parlour`` command."""
    secret = subparsers.add_parser(
        "secret",
        help="export or import the secrets of your claimed names (to play as them on another machine)",
        description="A claimed name is bound to a secret kept on the machine that claimed it. "
        "Export it there and import it on another machine to play as that name there too. Keep exports private.",
    )
    actions = secret.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="print the secrets of NAME as JSON (redirect to a file)")
    export.add_argument("name", metavar="NAME", help="the claimed name")
    export.add_argument("--server", type=parse_address, metavar="HOST[:PORT]", help="only the secret for this server (default: every server)")
    export.set_defaults(run=_run_export, command_parser=export)
    load = actions.add_parser("import", help="keep the secrets of an export file on this machine")
    load.add_argument("file", metavar="FILE", help="the export file (- for standard input)")
    load.add_argument(
        "--server",
        type=parse_address,
        metavar="HOST[:PORT]",
        help="use the secrets for this server address (when this machine reaches the server by another address than the exporting one)",
    )
    load.set_defaults(run=_run_import, command_parser=load)


def export_secrets(store: SecretStore, name: str, server: tuple[str, int] | None = None) -> dict[str, Any]:
    """The export document of ``name``'s secrets (for the server at ``server`` only, if given); its list may be empty.

    ``server`` matches a secret kept by that address, and one kept by the id that address last led to.
    """
    wanted = None if server is None else f"{server[0]}:{server[1]}"
    wanted_id = None if server is None else store.server_ids.get(*server)
    found = []
    for key, secret in sorted(store.entries().items()):
        place, _, entry_name = key.partition(" ")
        if entry_name != name:
            continue
        if place.startswith("@"):
            server_id = place[1:]
            if wanted is None or server_id == wanted_id:
                hints = store.server_ids.addresses(server_id)
                address = wanted if wanted is not None else (hints[0] if hints else "")
                found.append({"server": address, "server_id": server_id, "name": entry_name, "secret": secret})
        elif wanted in (None, place):
            found.append({"server": place, "name": entry_name, "secret": secret})
    return {"parlour_secrets": FORMAT_VERSION, "secrets": found}


def import_secrets(store: SecretStore, document: Any, server: tuple[str, int] | None = None) -> list[str]:
    """Keep the secrets of an export ``document`` (for ``server`` instead of the exported address, if given).

    Returns:
        for each secret kept, where: ``"NAME for HOST:PORT"`` (the address, or the server id when no address is known).

    Raises:
        ExportError: ``document`` is not an export.
        client.tokens.SecretStoreError: the secrets file cannot be written.
    """
    if not isinstance(document, dict) or document.get("parlour_secrets") != FORMAT_VERSION or not isinstance(document.get("secrets"), list):
        raise ExportError("not a Parlour secrets export (made by parlour secret export)")
    changes: dict[str, str | None] = {}
    hints: list[tuple[str, int, str]] = []
    kept = []
    for entry in document["secrets"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("name", "secret")):
            raise ExportError("an entry needs the texts name and secret, and server or server_id")
        server_id = _server_id(entry)
        address = _address(entry, required=server_id is None) if server is None else server
        if server_id is not None:
            changes[server_secret_key(server_id, entry["name"])] = entry["secret"]
            if address is not None:
                hints.append((*address, server_id))
        else:
            assert address is not None
            changes[secret_key(*address, entry["name"])] = entry["secret"]
        where = f"{address[0]}:{address[1]}" if address is not None else f"the server {server_id}"
        kept.append(f"{entry['name']} for {where}")
    store.update(changes)
    for host, port, server_id in hints:
        store.server_ids.put(host, port, server_id)
    return kept


def _server_id(entry: dict[str, Any]) -> str | None:
    """The entry's ``server_id`` (``None`` when it has none).

    Raises:
        ExportError: a ``server_id`` that is not a server id.
    """
    server_id = entry.get("server_id")
    if server_id is None:
        return None
    if not isinstance(server_id, str) or not server_id or len(server_id) > 64 or not set(server_id) <= SERVER_ID_CHARACTERS:
        raise ExportError(f"the server_id {server_id!r} is not a server id")
    return server_id


def _address(entry: dict[str, Any], required: bool) -> tuple[str, int] | None:
    """The entry's ``server`` as ``(host, port)``; ``None`` when it is empty and not ``required``.

    Raises:
        ExportError: it is not ``HOST:PORT`` (or missing where ``required``).
    """
    text = entry.get("server")
    if not required and text in (None, ""):
        return None
    host, _, port = text.rpartition(":") if isinstance(text, str) else ("", "", "")
    if not host or not port.isdigit():
        raise ExportError(f"the server {text!r} is not HOST:PORT")
    return host, int(port)


def _run_export(args: argparse.Namespace) -> int:
    document = export_secrets(SecretStore(), args.name, args.server)
    if not document["secrets"]:
        where = "" if args.server is None else f" for {args.server[0]}:{args.server[1]}"
        print(f"No secret of the name {args.name!r}{where} on this machine (a name is claimed by playing with it).", file=sys.stderr)
        return 1
    print(json.dumps(document, indent=1))
    print("Keep this export private: whoever has it can play as that name.", file=sys.stderr)
    return 0


def _run_import(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            text = sys.stdin.read(MAX_IMPORT_BYTES)
        else:
            with open(args.file, encoding="utf-8") as file:
                text = file.read(MAX_IMPORT_BYTES)
        written = import_secrets(SecretStore(), json.loads(text), args.server)
    except (OSError, ValueError) as exc:  # SecretStoreError, ExportError and bad JSON included
        reason = exc.strerror if isinstance(exc, OSError) and not isinstance(exc, SecretStoreError) and exc.strerror else exc
        print(f"Cannot import {args.file}: {reason}", file=sys.stderr)
        return 1
    for kept in written:
        print(f"Imported the secret of {kept}.")
    return 0
