"""Reading a server's address as a player types it: ``HOST[:PORT]``, ``[v6]:PORT`` too.

The command line (``parlour play``, ``parlour bot``) and the app's server
screen read addresses the same way, with this one function.
"""

from __future__ import annotations

import argparse

from protocol.cli_options import number_in

from .connection import DEFAULT_PORT

__all__ = ["parse_address"]


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
    try:
        return int(number_in(1, 65535, whole=True)(text))
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"the port: {exc}") from None
