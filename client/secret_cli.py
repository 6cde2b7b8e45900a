"""``parlour secret export`` and ``parlour secret import``: move claimed names' secrets between machines.

An export is a small JSON document::

    {"parlour_secrets": 1, "secrets": [{"server": "192.168.1.5:7420", "name": "ann", "secret": "..."}]}

Whoever holds it can play as those names: keep it private.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from .tokens import SecretStore, SecretStoreError, secret_key

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
    """The export document of ``name``'s secrets (on ``server`` only, if given); its list may be empty."""
    wanted = None if server is None else f"{server[0]}:{server[1]}"
    found = []
    for key, secret in sorted(store.entries().items()):
        address, _, entry_name = key.partition(" ")
        if entry_name == name and wanted in (None, address):
            found.append({"server": address, "name": entry_name, "secret": secret})
    return {"parlour_secrets": FORMAT_VERSION, "secrets": found}


def import_secrets(store: SecretStore, document: Any, server: tuple[str, int] | None = None) -> list[str]:
    """Keep the secrets of an export ``document`` (for ``server`` instead of the exported address, if given).

    Returns:
        the ``"host:port name"`` keys written.

    Raises:
        ExportError: ``document`` is not an export.
        client.tokens.SecretStoreError: the secrets file cannot be written.
    """
    if not isinstance(document, dict) or document.get("parlour_secrets") != FORMAT_VERSION or not isinstance(document.get("secrets"), list):
        raise ExportError("not a Parlour secrets export (made by parlour secret export)")
    changes: dict[str, str | None] = {}
    for entry in document["secrets"]:
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("server", "name", "secret")):
            raise ExportError("an entry needs the texts server, name and secret")
        host, _, port = entry["server"].rpartition(":")
        if not host or not port.isdigit():
            raise ExportError(f"the server {entry['server']!r} is not HOST:PORT")
        if server is not None:
            host, port = server[0], str(server[1])
        changes[secret_key(host, int(port), entry["name"])] = entry["secret"]
    store.update(changes)
    return list(changes)


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
    for key in written:
        address, _, name = key.partition(" ")
        print(f"Imported the secret of {name} for {address}.")
    return 0
