"""``parlour serve``: run a server until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket

from .app import Server, ServerConfig

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
    config = ServerConfig(host=args.host, port=args.port, server_name=args.name)
    try:
        asyncio.run(_serve(config))
    except OSError as exc:
        log.error("cannot listen on %s:%s: %s", args.host, args.port, exc)
        return 1
    return 0


async def _serve(config: ServerConfig) -> None:
    server = Server(config)
    await server.start()
    port = server.port
    hosts = lan_addresses() if config.host in ("0.0.0.0", "::", "") else [config.host]
    print(f"Parlour server {config.server_name!r} listening on port {port}. Players connect with:", flush=True)
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
