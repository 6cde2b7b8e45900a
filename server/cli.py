"""``parlour serve``: run a server until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket

from .app import Server, ServerConfig
from .store import SchemaError, default_db_path

log = logging.getLogger("parlour.serve")

DEFAULT_PORT = 7420


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``serve`` subcommand to the ``parlour`` command."""
    parser = subparsers.add_parser(
        "serve",
        help="host a Parlour server",
        description="Host a Parlour server. By default it listens on every interface so LAN players can connect.",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: 0.0.0.0, every IPv4 interface)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default: {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--name", default=socket.gethostname(), help="server name shown to players (default: this host's name)")
    storage = parser.add_mutually_exclusive_group()
    storage.add_argument("--db", metavar="PATH", help=f"SQLite database for tables, sessions and the archive (default: {default_db_path()})")
    storage.add_argument("--no-db", action="store_true", help="keep nothing on disk (games are lost when the server stops)")
    parser.add_argument("--grace", type=float, default=60.0, metavar="SECONDS", help="how long a disconnected player's seat is held (default: 60)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="logging level")
    parser.set_defaults(run=run)


def lan_addresses() -> list[str]:
    """Best-effort list of this machine's IPv4 addresses (no traffic is sent)."""
    found: set[str] = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.add(str(info[4][0]))
    except OSError:
        pass
    found.add("127.0.0.1")
    return sorted(found, key=lambda a: (a.startswith("127."), a))


def run(args: argparse.Namespace) -> int:
    """Run the server described by ``args``; return the exit status."""
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.grace < 0:
        log.error("--grace must be zero or more seconds, not %s", args.grace)
        return 2
    db_path = None if args.no_db else (args.db or str(default_db_path()))
    config = ServerConfig(host=args.host, port=args.port, server_name=args.name, db_path=db_path, grace_s=args.grace)
    try:
        asyncio.run(_serve(config))
    except SchemaError as exc:
        log.error("cannot use the database %s: %s", db_path, exc)
        return 1
    except OSError as exc:
        log.error("cannot listen on %s:%s: %s", args.host, args.port, exc)
        return 1
    return 0


async def _serve(config: ServerConfig) -> None:
    server = Server(config)
    await server.start()
    port = server.port
    hosts = lan_addresses() if config.host in ("0.0.0.0", "::", "") else [config.host]
    where = f"games kept in {config.db_path}" if config.db_path else "nothing kept on disk"
    print(f"Parlour server {config.server_name!r} listening on port {port} ({where}). Players connect with:", flush=True)
    for host in hosts:
        print(f"    parlour play {host}:{port} --name YOURNAME", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping: telling %d connected clients", len(server.peers))
    await server.close()
    log.info("stopped")
