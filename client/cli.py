"""The ``parlour`` command: ``serve``, ``play``, ``host`` and ``games``."""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from contextlib import nullcontext
from typing import Any

from .connection import DEFAULT_PORT, Client, ServerError
from .terminal import LineInput, PromptInput, TerminalClient
from .tokens import TokenStore


def parse_address(text: str) -> tuple[str, int]:
    """Split ``HOST[:PORT]`` (``[v6]:PORT`` too) into host and port.

    Raises:
        argparse.ArgumentTypeError: if the port is not a number from 1 to 65535.
    """
    host, port = text, DEFAULT_PORT
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest.startswith(":"):
            port = _port(rest[1:])
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        port = _port(port_text)
    return host or "127.0.0.1", port


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"the port must be a number from 1 to 65535, not {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``parlour`` command."""
    from server.archive_cli import add_parser as add_games
    from server.cli import add_parser as add_serve

    parser = argparse.ArgumentParser(prog="parlour", description="Two-player board games over the network, in the terminal.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve(subparsers)
    add_games(subparsers)
    play = subparsers.add_parser(
        "play",
        help="connect to a server and play or watch",
        description="Connect to a Parlour server, see its lobby, and play or watch. Type help once connected.",
    )
    play.add_argument("address", type=parse_address, metavar="HOST[:PORT]", help=f"the server (default port {DEFAULT_PORT})")
    play.add_argument("--name", required=True, help="your player name (unique on the server)")
    play.set_defaults(run=run_play)
    host = subparsers.add_parser(
        "host",
        help="host a server on this machine and play on it from this terminal",
        description="Start a server that LAN players can join, and connect to it from this terminal.",
    )
    host.add_argument("--name", required=True, help="your player name")
    host.add_argument("--host", default="0.0.0.0", help="address to listen on (default: every IPv4 interface)")
    host.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default: {DEFAULT_PORT})")
    host.set_defaults(run=run_host)
    return parser


def run_play(args: argparse.Namespace) -> int:
    """Run the terminal client; return the exit status."""
    try:
        return asyncio.run(_play(args))
    except KeyboardInterrupt:
        return 0


def run_host(args: argparse.Namespace) -> int:
    """Run a server and the terminal client in one process; return the exit status."""
    try:
        return asyncio.run(_host(args))
    except KeyboardInterrupt:
        return 0


async def _host(args: argparse.Namespace) -> int:
    from server.app import Server, ServerConfig
    from server.cli import lan_addresses

    from server.store import default_db_path

    config = ServerConfig(host=args.host, port=args.port, server_name=socket.gethostname(), db_path=str(default_db_path()))
    server = Server(config)
    try:
        await server.start()
    except OSError as exc:
        print(f"Cannot listen on {args.host}:{args.port}: {exc}", flush=True)
        return 1
    others = lan_addresses() if args.host in ("0.0.0.0", "") else [args.host]
    print("Hosting. Other players connect with one of:", flush=True)
    for address in others:
        print(f"    parlour play {address}:{server.port} --name THEIRNAME", flush=True)
    try:
        local = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
        return await _session(local, server.port, args.name)
    finally:
        await server.close()


async def _connect(host: str, port: int, name: str, tokens: TokenStore) -> Client:
    """Connect as ``name``, resuming the session this machine last had there if it is still alive."""
    token = tokens.get(host, port, name)
    if token is None:
        client = await Client.connect(host, port, name=name)
    else:
        client = await _resume_or_renew(host, port, name, token)
    tokens.put(host, port, name, client.token)
    return client


async def _play(args: argparse.Namespace) -> int:
    host, port = args.address
    return await _session(host, port, args.name)


async def _session(host: str, port: int, name: str) -> int:
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    tokens = TokenStore()
    try:
        client = await _connect(host, port, name, tokens)
    except ServerError as exc:
        print(f"The server refused us ({exc.code}): {exc.message}", flush=True)
        return 2
    except (OSError, asyncio.TimeoutError) as exc:
        print(f"Cannot connect to {host}:{port}: {exc}", flush=True)
        return 1
    assert client.welcome is not None
    shell = TerminalClient(client, lambda text: print(text, flush=True), reconnect=_reconnector(host, port, name, tokens))
    if interactive:
        from prompt_toolkit.patch_stdout import patch_stdout

        source: LineInput | PromptInput = PromptInput(toolbar=shell.status_line)
        output_guard = patch_stdout()
    else:
        source = LineInput()
        output_guard = nullcontext()
    with output_guard:
        print(f"Connected to {client.welcome.server} (Parlour {client.welcome.version}) as {client.name}. Type help.", flush=True)
        followers = asyncio.create_task(shell.follow_events())
        await shell.handle("list")
        try:
            while (line := await _next_line(source, shell.finished)) is not None:
                if not await shell.handle(line):
                    break
        finally:
            await shell.client.close()
            followers.cancel()  # it may be waiting to reconnect
            await asyncio.gather(followers, return_exceptions=True)
    return 0


RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Waits between reconnection attempts; the last one repeats."""
RECONNECT_GIVE_UP_S = 300.0
"""Stop trying after this long without a connection."""


def _reconnector(host: str, port: int, name: str, tokens: TokenStore) -> Any:
    """A function that resumes a session by its token, retrying with backoff."""

    async def reconnect(token: str, say: Any) -> Client | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RECONNECT_GIVE_UP_S
        attempt = 0
        while loop.time() < deadline:
            await asyncio.sleep(RECONNECT_DELAYS_S[min(attempt, len(RECONNECT_DELAYS_S) - 1)])
            attempt += 1
            try:
                client = await _resume_or_renew(host, port, name, token)
            except ServerError as exc:
                say(f"The server refused us ({exc.code}): {exc.message}")
                return None
            except (OSError, asyncio.TimeoutError):
                next_s = RECONNECT_DELAYS_S[min(attempt, len(RECONNECT_DELAYS_S) - 1)]
                say(f"Reconnect attempt {attempt} failed; next try in {next_s:.1f} s")
                continue
            tokens.put(host, port, name, client.token)
            return client
        return None

    return reconnect


async def _resume_or_renew(host: str, port: int, name: str, token: str) -> Client:
    """Resume the session; if the server no longer knows it (it held no seat), start a new one as ``name``."""
    try:
        return await Client.connect(host, port, name=name, token=token, timeout_s=5.0)
    except ServerError as exc:
        if exc.code != "bad_token":
            raise
    return await Client.connect(host, port, name=name, timeout_s=5.0)


async def _next_line(source: LineInput | PromptInput, finished: asyncio.Event) -> str | None:
    """The next command, or ``None`` at end of input or once the connection is gone for good."""
    read = asyncio.ensure_future(source.read())
    closed = asyncio.ensure_future(finished.wait())
    done, _ = await asyncio.wait({read, closed}, return_when=asyncio.FIRST_COMPLETED)
    closed.cancel()
    if read in done:
        return read.result()
    read.cancel()
    return None


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``parlour`` console command."""
    args = build_parser().parse_args(argv)
    sys.exit(args.run(args))


if __name__ == "__main__":
    main()
