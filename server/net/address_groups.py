"""Which addresses count as one source for abuse limits: an IPv4 address, or an IPv6 /64.

One IPv6 host is normally given a whole /64 (SLAAC, privacy addresses), so
counting single IPv6 addresses would give a flooder 2**64 fresh budgets. An
IPv4-mapped IPv6 address (``::ffff:192.0.2.1``) counts as its IPv4 address.
"""

from __future__ import annotations

import functools
import ipaddress

__all__ = ["IPV6_GROUP_PREFIX", "address_group"]

IPV6_GROUP_PREFIX = 64
"""The IPv6 prefix length whose addresses count as one source."""


@functools.lru_cache(maxsize=4096)
def address_group(host: str) -> str:
    """The source that ``host`` (a peer's IP address, as text) counts as.

    >>> address_group("192.0.2.7"), address_group("2001:db8:1:2:aaaa::1"), address_group("::ffff:192.0.2.7")
    ('192.0.2.7', '2001:db8:1:2::/64', '192.0.2.7')

    Text that is not an IP address (a Unix socket's peer, ``"?"``) is its own group.
    """
    try:
        address = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_GROUP_PREFIX), strict=False))
    return str(address)
