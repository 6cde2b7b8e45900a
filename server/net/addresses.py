"""The addresses other machines can reach this server at, from the network interfaces themselves.

Looking up the machine's own hostname is no use for this: on Debian and
Ubuntu it resolves to ``127.0.1.1``. The interfaces' addresses come from
``ifaddr`` (which python-zeroconf uses too). Loopback addresses are given only
for a server listening on loopback; IPv6 link-local addresses (``fe80::/10``)
are skipped, since they need the interface's name to be of any use; IPv4
link-local ones (``169.254.0.0/16``) come last.
"""

from __future__ import annotations

import ipaddress
from typing import Iterable

__all__ = ["interface_addresses", "listen_families", "reachable_addresses", "reachable_from", "url_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def interface_addresses() -> list[IPAddress]:
    """Every address of every network interface of this machine (loopback included); no traffic is sent."""
    import ifaddr

    found: list[IPAddress] = []
    for adapter in ifaddr.get_adapters():
        for entry in adapter.ips:
            text = entry.ip if isinstance(entry.ip, str) else entry.ip[0]  # IPv6 entries are (address, flowinfo, scope)
            try:
                found.append(ipaddress.ip_address(text.partition("%")[0]))
            except ValueError:
                continue
    return list(dict.fromkeys(found))


def listen_families(host: str) -> tuple[int, ...] | None:
    """The IP versions a wildcard listening ``host`` covers: ``(4,)`` for ``0.0.0.0``, ``(6,)`` for ``::``, ``(4, 6)`` for ``""``.

    ``None`` when ``host`` is not a wildcard (one address, or a name).
    """
    return {"0.0.0.0": (4,), "::": (6,), "": (4, 6)}.get(host)


def reachable_from(addresses: Iterable[IPAddress], families: tuple[int, ...]) -> list[str]:
    """Of ``addresses``, those of the IP versions ``families`` that another machine could connect to, best first.

    Loopback, unspecified, multicast and IPv6 link-local addresses are left
    out; IPv4 addresses come before IPv6 ones, and link-local IPv4 ones last.
    """
    usable = [
        address
        for address in dict.fromkeys(addresses)
        if address.version in families
        and not (address.is_loopback or address.is_unspecified or address.is_multicast)
        and not (address.version == 6 and address.is_link_local)
    ]
    usable.sort(key=lambda address: (address.version, address.is_link_local, address))
    return [str(address) for address in usable]


def reachable_addresses(host: str) -> list[str]:
    """The addresses to tell players for a server listening on ``host`` (its ``--host``), best first.

    A wildcard (``0.0.0.0``, ``::`` or ``""``) gives the interfaces' addresses
    of that IP version, without loopback (see :func:`reachable_from`); when no
    interface has one, the loopback address, since then only this machine can
    connect. Any other ``host`` is given back as it is: that is the one address
    the server listens on.
    """
    families = listen_families(host)
    if families is None:
        return [host]
    return reachable_from(interface_addresses(), families) or ["127.0.0.1" if 4 in families else "::1"]


def url_host(address: str) -> str:
    """``address`` as it goes before ``:PORT``: IPv6 addresses in brackets.

    >>> url_host("10.0.0.5"), url_host("fd00::2")
    ('10.0.0.5', '[fd00::2]')
    """
    return f"[{address}]" if ":" in address else address
