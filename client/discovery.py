"""Find Parlour servers on the LAN (mDNS / DNS-SD, python-zeroconf), as ``parlour servers`` and the server screen do.

Two calls:

* :func:`browse` listens for a few seconds and returns what it found:
  ``servers = await browse(timeout_s=3)``.
* :func:`watch` follows the LAN live, for a screen that updates as servers
  come and go; close it when done (``contextlib.aclosing``)::

      async with aclosing(watch()) as changes:
          async for change in changes:
              if isinstance(change, FoundServer): ...   # new, or changed: replace the one with its key
              else: ...                                 # ServerGone: drop the one with change.key

Everything found comes from some machine on the LAN and is trusted for
nothing: names may hold any characters (print them with
:func:`client.sanitize.printable`), and a server that says ``tls`` is still
connected to with its pinned fingerprint. At most :data:`MOST_SERVERS` are
followed at once.
"""

from __future__ import annotations

import asyncio
import ipaddress
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, AsyncIterator, Sequence

from protocol.lan import SERVICE_TYPE, decode_txt, mdns_interfaces, one_line_zeroconf_logs

__all__ = ["DEFAULT_BROWSE_S", "DiscoveryError", "FoundServer", "MOST_SERVERS", "ServerGone", "browse", "watch"]

DEFAULT_BROWSE_S = 3.0
"""How long :func:`browse` listens by default, in seconds: servers answer within about one."""
MOST_SERVERS = 100
"""The most servers followed at once; more are ignored (a LAN flooding announcements costs bounded memory)."""
RESOLVE_TIMEOUT_MS = 3000
"""How long to wait for a server's address, port and TXT record once its name was seen, in milliseconds."""
MOST_ADDRESSES = 8
"""The most addresses kept per server."""


class DiscoveryError(Exception):
    """Looking for servers on the LAN could not start (no interface, no multicast, the mDNS port refused)."""


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A Parlour server advertised on the LAN.

    Attributes:
        key: its DNS-SD instance name, unique on the LAN (what :class:`ServerGone` names).
        name: the server name it advertises (any characters: sanitize before printing).
        addresses: IP addresses to connect to, IPv4 first (IPv6 link-local ones are left out).
        port: its TCP port.
        version: its Parlour version, ``""`` when not said.
        protocol: its protocol version, ``None`` when not said.
        password: whether it wants a password.
        tls: whether it speaks TLS (connect with ``--tls-fingerprint``: the fingerprint is not advertised).
        server_id: the id it advertises (``""``: none); a hint only: the client asks the server itself (``identify``).
    """

    key: str
    name: str
    addresses: tuple[str, ...]
    port: int
    version: str
    protocol: int | None
    password: bool
    tls: bool
    server_id: str = ""

    @property
    def address(self) -> str:
        """``HOST:PORT`` of its first address (an IPv6 address in brackets), as ``parlour play`` takes it."""
        host = self.addresses[0]
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class ServerGone:
    """The server with this ``key`` withdrew its advertisement (it stopped)."""

    key: str


async def browse(timeout_s: float = DEFAULT_BROWSE_S, *, interfaces: Sequence[str] | None = None) -> list[FoundServer]:
    """The servers advertised on the LAN, listening ``timeout_s`` seconds; sorted by name, then address.

    Args:
        interfaces: the local addresses to listen on (``["127.0.0.1"]``, say); every interface when ``None``.

    Raises:
        DiscoveryError: mDNS could not start here.
    """
    found: dict[str, FoundServer] = {}
    async with aclosing(watch(interfaces=interfaces)) as changes:
        try:
            async with asyncio.timeout(timeout_s):
                async for change in changes:
                    if isinstance(change, FoundServer):
                        found[change.key] = change
                    else:
                        found.pop(change.key, None)
        except TimeoutError:
            pass
    return sorted(found.values(), key=lambda server: (server.name.casefold(), server.address))


async def watch(*, interfaces: Sequence[str] | None = None) -> AsyncIterator[FoundServer | ServerGone]:
    """Follow the servers on the LAN: a :class:`FoundServer` when one appears or changes, :class:`ServerGone` when it goes.

    Runs until closed (``aclosing``, or breaking out of ``async for`` then closing).

    Args:
        interfaces: the local addresses to listen on; every interface when ``None``.

    Raises:
        DiscoveryError: mDNS could not start here (raised at the first iteration).
    """
    from zeroconf.asyncio import AsyncServiceBrowser

    one_line_zeroconf_logs()
    zeroconf = _open_zeroconf(interfaces)
    follower = _Follower(zeroconf.zeroconf)
    browser = AsyncServiceBrowser(zeroconf.zeroconf, SERVICE_TYPE, handlers=[follower.on_change])
    try:
        while True:
            yield await follower.changes.get()
    finally:
        await follower.stop()
        await browser.async_cancel()
        await zeroconf.async_close()


def _open_zeroconf(interfaces: Sequence[str] | None) -> Any:
    """An ``AsyncZeroconf`` on ``interfaces``, or on every interface over IPv4 and IPv6 (IPv4 alone where IPv6 fails).

    Raises:
        DiscoveryError: it cannot start at all.
    """
    from zeroconf import InterfaceChoice, IPVersion
    from zeroconf.asyncio import AsyncZeroconf

    interfaces = interfaces if interfaces is not None else mdns_interfaces()
    attempts = [(list(interfaces), None)] if interfaces is not None else [(InterfaceChoice.All, IPVersion.All), (InterfaceChoice.All, IPVersion.V4Only)]
    for choice, version in attempts:
        try:
            return AsyncZeroconf(interfaces=choice, ip_version=version)
        except Exception as exc:  # whatever the network layer raises: one clear message after the last attempt
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    raise DiscoveryError(f"cannot look for servers on the LAN (mDNS): {reason}")


class _Follower:
    """Turns the browser's name events into :class:`FoundServer` (once resolved) and :class:`ServerGone` changes."""

    def __init__(self, zeroconf: Any) -> None:
        self.zeroconf = zeroconf
        self.changes: asyncio.Queue[FoundServer | ServerGone] = asyncio.Queue(maxsize=4 * MOST_SERVERS)
        self.resolving: dict[str, asyncio.Task[None]] = {}
        self.known: set[str] = set()

    def on_change(self, zeroconf: Any, service_type: str, name: str, state_change: Any) -> None:
        """python-zeroconf's handler (called on the event loop): resolve a new or updated name, report a removed one."""
        from zeroconf import ServiceStateChange

        if state_change is ServiceStateChange.Removed:
            if name in self.resolving:
                self.resolving.pop(name).cancel()
            if name in self.known:
                self.known.discard(name)
                self._put(ServerGone(name))
        elif name not in self.resolving and (name in self.known or len(self.known) + len(self.resolving) < MOST_SERVERS):
            self.resolving[name] = asyncio.create_task(self._resolve(name))

    async def _resolve(self, key: str) -> None:
        try:
            server = await _resolve(self.zeroconf, key)
        except Exception:  # a malformed answer is as good as none
            server = None
        finally:
            if self.resolving.get(key) is asyncio.current_task():  # not a newer resolution of the same name
                del self.resolving[key]
        if server is not None:
            self.known.add(key)
            self._put(server)

    def _put(self, change: FoundServer | ServerGone) -> None:
        try:
            self.changes.put_nowait(change)
        except asyncio.QueueFull:  # the reader is far behind: an announcement storm; drop it
            pass

    async def stop(self) -> None:
        """Cancel the resolutions still under way."""
        tasks = list(self.resolving.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _resolve(zeroconf: Any, key: str) -> FoundServer | None:
    """Ask for the address, port and TXT record of the service ``key``; ``None`` if it does not answer usefully."""
    from zeroconf.asyncio import AsyncServiceInfo

    info = AsyncServiceInfo(SERVICE_TYPE, key)
    if not await info.async_request(zeroconf, RESOLVE_TIMEOUT_MS) or not info.port:
        return None
    addresses = _usable_addresses(info.parsed_addresses())
    if not addresses:
        return None
    record = decode_txt(info.properties or {}, fallback_name=key.removesuffix("." + SERVICE_TYPE))
    return FoundServer(
        key=key,
        name=record.name,
        addresses=addresses,
        port=info.port,
        version=record.version,
        protocol=record.protocol,
        password=record.password,
        tls=record.tls,
        server_id=record.server_id,
    )


def _usable_addresses(texts: Sequence[str]) -> tuple[str, ...]:
    """The addresses worth connecting to, IPv4 first, at most :data:`MOST_ADDRESSES`; IPv6 link-local and junk left out."""
    usable = []
    for text in texts:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if address.is_unspecified or address.is_multicast or (address.version == 6 and address.is_link_local):
            continue
        usable.append(address)
    usable.sort(key=lambda address: address.version)
    return tuple(str(address) for address in dict.fromkeys(usable))[:MOST_ADDRESSES]
