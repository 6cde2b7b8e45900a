"""How a Parlour server is advertised on the LAN: its DNS-SD service type and TXT record (PROTOCOL.md §18).

Both ends use this module: the server (:mod:`server.net.advertise`) encodes its
record, the client (:mod:`client.discovery`) decodes what it finds. A record
comes from any machine on the LAN, so decoding trusts nothing: every value is
read leniently (a missing or garbled one gets a neutral default) and cut to
:data:`MOST_TXT_VALUE_BYTES`; nothing in it is ever a reason to trust a server
more (a TLS server is still pinned by its fingerprint).

>>> record = ServiceRecord(name="game night", version="0.1.0", protocol=2, password=True, tls=False, server_id="5f0c")
>>> encode_txt(record)
{'name': 'game night', 'version': '0.1.0', 'protocol': '2', 'password': 'yes', 'tls': 'no', 'id': '5f0c', 'http': ''}
>>> decode_txt({b"name": b"game night", b"protocol": b"two", b"tls": b"yes"})
ServiceRecord(name='game night', version='', protocol=None, password=False, tls=True, server_id='', http=None)
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Mapping

__all__ = [
    "INTERFACES_ENV",
    "MOST_TXT_VALUE_BYTES",
    "SERVICE_TYPE",
    "SERVER_ID_CHARACTERS",
    "ServiceRecord",
    "decode_txt",
    "encode_txt",
    "instance_label",
    "mdns_interfaces",
    "one_line_zeroconf_logs",
]

SERVICE_TYPE = "_parlour._tcp.local."
"""The DNS-SD service type every Parlour server registers under."""

INTERFACES_ENV = "PARLOUR_MDNS_INTERFACES"
"""Environment variable: comma-separated local addresses that mDNS may use (advertising and browsing); unset: every interface."""


def mdns_interfaces(environ: Mapping[str, str] = os.environ) -> list[str] | None:
    """The local addresses :data:`INTERFACES_ENV` confines mDNS to, or ``None`` (every interface).

    An operator sets it to keep the advertisement on one LAN (``192.168.1.20``);
    the test suite sets it to ``127.0.0.1`` so that no test multicasts on a real network.
    """
    text = environ.get(INTERFACES_ENV, "").strip()
    return [address.strip() for address in text.split(",") if address.strip()] or None

MOST_TXT_VALUE_BYTES = 200
"""The longest value kept from a TXT entry, in bytes (DNS allows 255 per ``key=value`` string)."""

SERVER_ID_CHARACTERS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_")
"""The characters a server id may have (this server's are hexadecimal digits)."""

MOST_LABEL_BYTES = 63
"""The longest DNS label, in bytes: the instance name is cut to fit."""


@dataclass(frozen=True, slots=True)
class ServiceRecord:
    """What a server says about itself in its TXT record.

    Attributes:
        name: the server name (the ``welcome``'s ``server``); may hold any characters, print it with care.
        version: the Parlour version, ``""`` when not given.
        protocol: the protocol version, ``None`` when not given or not a number.
        password: whether the server wants a password.
        tls: whether the server speaks TLS only (its fingerprint is not advertised: pin it as always).
        server_id: the server's stable id (``welcome.server_id``), ``""`` when not given or not
            :data:`SERVER_ID_CHARACTERS`; a hint, never proof (anyone may advertise any id).
        http: the port of the server's read-only web face (``--http``), ``None`` when it has none
            (or the TXT value is not a port number).
    """

    name: str
    version: str
    protocol: int | None
    password: bool
    tls: bool
    server_id: str = ""
    http: int | None = None


def encode_txt(record: ServiceRecord) -> dict[str, str]:
    """The TXT properties of ``record`` (keys ``name``, ``version``, ``protocol``, ``password``, ``tls``, ``id``, ``http``).

    The name and version are cut to :data:`MOST_TXT_VALUE_BYTES` bytes (on a character boundary).
    """
    return {
        "name": _cut(record.name, MOST_TXT_VALUE_BYTES),
        "version": _cut(record.version, MOST_TXT_VALUE_BYTES),
        "protocol": "" if record.protocol is None else str(record.protocol),
        "password": _yes_no(record.password),
        "tls": _yes_no(record.tls),
        "id": record.server_id,
        "http": "" if record.http is None else str(record.http),
    }


def decode_txt(properties: Mapping[bytes, bytes | None], fallback_name: str = "") -> ServiceRecord:
    """The :class:`ServiceRecord` in TXT ``properties`` (as python-zeroconf gives them: bytes to bytes or ``None``).

    Never raises: a value that is not UTF-8 is decoded with replacement
    characters, a missing name becomes ``fallback_name``, a protocol that is not
    a whole number from 0 to 9999 becomes ``None``, ``password``/``tls`` are
    true only for exactly ``yes``, and an ``id`` of other characters than
    :data:`SERVER_ID_CHARACTERS` (or longer than 64) becomes ``""``, and an ``http`` that is
    not a port number (1 to 65535) becomes ``None``.
    """

    def text(key: bytes) -> str:
        value = properties.get(key)
        return "" if value is None else value[:MOST_TXT_VALUE_BYTES].decode("utf-8", errors="replace")

    protocol_text = text(b"protocol")
    protocol = int(protocol_text) if protocol_text.isascii() and protocol_text.isdigit() and len(protocol_text) <= 4 else None
    http_text = text(b"http")
    http = int(http_text) if http_text.isascii() and http_text.isdigit() and len(http_text) <= 5 and 0 < int(http_text) <= 65535 else None
    return ServiceRecord(
        name=text(b"name") or _cut(fallback_name, MOST_TXT_VALUE_BYTES),
        version=text(b"version"),
        protocol=protocol,
        password=text(b"password") == "yes",
        tls=text(b"tls") == "yes",
        server_id=server_id if len(server_id := text(b"id")) <= 64 and set(server_id) <= SERVER_ID_CHARACTERS else "",
        http=http,
    )


def instance_label(server_name: str) -> str:
    """The DNS-SD instance label for ``server_name``: dots and control characters become spaces, cut to 63 bytes.

    >>> instance_label("ann's\\nserver.example")
    "ann's server example"
    >>> instance_label("")
    'Parlour'
    """
    cleaned = "".join(" " if char == "." or not char.isprintable() else char for char in server_name).strip()
    return _cut(cleaned, MOST_LABEL_BYTES).strip() or "Parlour"


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def _cut(text: str, most_bytes: int) -> str:
    """``text`` cut to at most ``most_bytes`` UTF-8 bytes without splitting a character."""
    return text.encode("utf-8")[:most_bytes].decode("utf-8", errors="ignore")


class _OneLine(logging.Filter):
    """Turns a log record's traceback into ``: the exception's message`` on the same line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


_ONE_LINE = _OneLine()


def one_line_zeroconf_logs() -> None:
    """Make python-zeroconf's log records one line each: its warnings about a socket error carry a traceback,
    which would reach a player's terminal. Both ends call this before starting zeroconf; calling it again does nothing.
    """
    logger = logging.getLogger("zeroconf")
    if _ONE_LINE not in logger.filters:
        logger.addFilter(_ONE_LINE)
