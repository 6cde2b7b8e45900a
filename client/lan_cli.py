"""``parlour servers`` and the server list of ``parlour play`` without an address (line mode).

Both look for servers with :func:`client.discovery.browse`. ``parlour servers``
prints one line per server and exits (status 0 when it found some, 1 when
none, 2 when it could not look); ``parlour play`` with no address prints the
same lines numbered and reads the number of the one to connect to, or, when
exactly one server answered, says which and connects to it without asking.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Callable

from protocol.cli_options import number_in

from .discovery import DEFAULT_BROWSE_S, DiscoveryError, FoundServer, browse
from .sanitize import printable

__all__ = ["NONE_FOUND", "add_servers_parser", "choose_server", "describe_server", "find_servers", "run_servers"]

MOST_BROWSE_S = 60.0
"""The longest ``--timeout``, in seconds."""
BROWSE_SECONDS = number_in(0, MOST_BROWSE_S, low_open=True, unit="seconds")
"""The argparse type of ``--timeout``: more than 0 to 60 seconds."""
NONE_FOUND = "No Parlour servers found on the LAN; give an address: parlour play HOST[:PORT]"


def add_servers_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``servers`` subcommand to the ``parlour`` command."""
    parser = subparsers.add_parser(
        "servers",
        help="list the Parlour servers on the LAN",
        description="Look for Parlour servers advertised on the LAN (mDNS, UDP port 5353) and list them: "
        "name, address:port, version, whether they want a password or TLS.",
        epilog="Exit status: 0 when servers were found, 1 when none, 2 when the LAN could not be searched.",
    )
    add_timeout_argument(parser)
    parser.set_defaults(run=run_servers, command_parser=parser)


def add_timeout_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--timeout SECONDS``: how long to look for servers (``parlour servers``, ``parlour play`` without an address)."""
    parser.add_argument(
        "--timeout",
        type=BROWSE_SECONDS,
        default=DEFAULT_BROWSE_S,
        metavar="SECONDS",
        help=f"how long to look for servers on the LAN, more than 0 to {MOST_BROWSE_S:g} (default: {DEFAULT_BROWSE_S:g})",
    )


def describe_server(server: FoundServer) -> str:
    """One line about ``server``: its name (made printable), address:port, version, password and TLS.

    >>> describe_server(FoundServer("k", "den", ("10.0.0.5", "fd00::5"), 7420, "0.1.0", 2, True, False))
    'den  10.0.0.5:7420 (also fd00::5)  Parlour 0.1.0, protocol 2  password required, plain TCP'
    """
    also = f" (also {', '.join(server.addresses[1:])})" if len(server.addresses) > 1 else ""
    version = f"Parlour {printable(server.version) or '?'}" + (f", protocol {server.protocol}" if server.protocol is not None else "")
    security = ("password required" if server.password else "no password") + (", TLS" if server.tls else ", plain TCP")
    return f"{printable(server.name)}  {server.address}{also}  {version}  {security}"


def find_servers(timeout_s: float, say: Callable[[str], None]) -> list[FoundServer] | None:
    """Look for servers for ``timeout_s`` seconds (saying so first); ``None`` (after saying why) if the LAN cannot be searched."""
    say(f"Looking for Parlour servers on the LAN ({timeout_s:g} s)...")
    try:
        return asyncio.run(browse(timeout_s))
    except DiscoveryError as exc:
        say(str(exc))
        return None


def run_servers(args: argparse.Namespace) -> int:
    """Run ``parlour servers``: list what is found in ``--timeout`` seconds; return the exit status."""
    say = lambda text: print(text, flush=True)  # noqa: E731
    try:
        servers = find_servers(args.timeout, say)
    except KeyboardInterrupt:
        return 1
    if servers is None:
        return 2
    if not servers:
        say(NONE_FOUND)
        return 1
    for server in servers:
        say(describe_server(server))
    return 0


def choose_server(servers: list[FoundServer], read_line: Callable[[], str], say: Callable[[str], None]) -> FoundServer | None:
    """Show ``servers`` numbered and read which one to connect to; ``None`` on an empty line or end of input.

    A line that is not one of the numbers is asked again, saying what was wrong.
    With exactly one server there is nothing to choose: it is named and
    returned without reading a line.
    """
    if len(servers) == 1:
        say(f"Found one server: {describe_server(servers[0])}")
        say("Connecting to it.")
        return servers[0]
    for number, server in enumerate(servers, start=1):
        say(f"{number:>3}. {describe_server(server)}")
    while True:
        say(f"Connect to which server? 1 to {len(servers)}, or an empty line to stop:")
        line = read_line()
        if not line.strip():
            return None
        text = line.strip()
        if text.isdigit() and 1 <= int(text) <= len(servers):
            return servers[int(text) - 1]
        say(f"{printable(text)!r} is not a server number: give a number from 1 to {len(servers)}")
