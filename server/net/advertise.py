"""Advertise a running server on the LAN with mDNS / DNS-SD, so ``parlour servers`` finds it.

The server registers a ``_parlour._tcp.local.`` service (:mod:`protocol.lan`)
through python-zeroconf on the interfaces it listens on: for a wildcard address
(``0.0.0.0``, ``::``) every interface with an address of that IP version that
other machines can reach (:func:`server.net.addresses.reachable_from`), else just
the addresses it is bound to. The TXT record says the server's name, Parlour and
protocol versions, and whether it wants a password or TLS (PROTOCOL.md §18).

Advertising is a courtesy, never a reason to stop: a failure (no multicast, no
interface with an address, the mDNS port refused) is one log line and the
server goes on. Registration probes the LAN for about a second, so it runs in
the background; :meth:`Advertiser.close` sends the goodbye that makes the entry
vanish from every browser at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from protocol.lan import SERVICE_TYPE, ServiceRecord, encode_txt, instance_label, mdns_interfaces, one_line_zeroconf_logs

from .addresses import interface_addresses, listen_families, reachable_from

__all__ = ["Advertiser", "CLOSE_TIMEOUT_S"]

log = logging.getLogger("parlour.advertise")

CLOSE_TIMEOUT_S = 3.0
"""The longest :meth:`Advertiser.close` waits for the goodbye to go out, in seconds."""


class Advertiser:
    """The mDNS advertisement of one server, from :meth:`start` to :meth:`close`.

    Args:
        record: what the TXT record says (name, versions, password, TLS).
        port: the TCP port the server listens on.
        listening: the addresses the server's sockets are bound to (``Server.sockets`` hosts);
            ``0.0.0.0`` or ``::`` mean every interface of that IP version.
    """

    def __init__(self, record: ServiceRecord, port: int, listening: list[str]) -> None:
        self.record = record
        self.port = port
        self.listening = listening
        self.registered_as: str | None = None
        """The instance name registered (``None`` until registration succeeded); zeroconf may add `` (2)`` on a clash."""
        self._zeroconf: Any = None
        self._info: Any = None
        self._registering: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin advertising in the background; never raises (a failure is one warning in the log)."""
        try:
            self._start()
        except Exception as exc:  # any failure of the network layer is only a missing advertisement
            self._fail(exc)

    def _start(self) -> None:
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

        one_line_zeroconf_logs()

        interfaces, families, addresses = self._where()
        if not addresses:
            log.warning("not advertised on the LAN: no network interface has an address other machines can reach")
            return
        version = IPVersion.All if families == (4, 6) else IPVersion.V4Only if families == (4,) else IPVersion.V6Only
        self._zeroconf = AsyncZeroconf(interfaces=interfaces, ip_version=version)
        label = instance_label(self.record.name)
        self._info = AsyncServiceInfo(
            SERVICE_TYPE,
            f"{label}.{SERVICE_TYPE}",
            port=self.port,
            properties=encode_txt(self.record),
            parsed_addresses=addresses,
        )
        self._registering = asyncio.create_task(self._register())

    def _where(self) -> tuple[Any, tuple[int, ...], list[str]]:
        """The interfaces (by address) to advertise on, their IP versions, and the addresses for the A/AAAA records."""
        wildcards = [listen_families(host) or () for host in self.listening if host in ("0.0.0.0", "::")]
        confined = mdns_interfaces()
        if wildcards and confined is not None:  # the operator (or the test suite) named the interfaces
            return confined, tuple(sorted({6 if ":" in host else 4 for host in confined})), confined
        if wildcards:  # every interface that has an address other machines can reach (not loopback: mDNS fails there for IPv6)
            families = tuple(sorted({family for found in wildcards for family in found}))
            reachable = reachable_from(interface_addresses(), families)
            return reachable, families, reachable
        specific = list(dict.fromkeys(self.listening))
        families = tuple(sorted({6 if ":" in host else 4 for host in specific}))
        return specific, families, specific

    async def _register(self) -> None:
        try:
            await self._zeroconf.async_register_service(self._info, allow_name_change=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail(exc)
            return
        self.registered_as = self._info.name
        log.info("advertised on the LAN as %r (%s)", self._info.name.removesuffix("." + SERVICE_TYPE), SERVICE_TYPE)

    def _fail(self, exc: BaseException) -> None:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        wildcard = any(host in ("0.0.0.0", "::") for host in self.listening)
        where = "every interface" if wildcard else ", ".join(self.listening)
        log.warning("not advertised on the LAN (mDNS on %s): %s; players can still connect by address", where, reason)

    async def close(self) -> None:
        """Stop advertising: withdraw the entry (a goodbye every browser hears) and close the mDNS sockets.

        Waits at most :data:`CLOSE_TIMEOUT_S`; never raises.
        """
        if self._registering is not None and not self._registering.done():
            self._registering.cancel()
            await asyncio.gather(self._registering, return_exceptions=True)
        if self._zeroconf is None:
            return
        zeroconf, self._zeroconf = self._zeroconf, None
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                if self.registered_as is not None:
                    await (await zeroconf.async_unregister_service(self._info))
                    log.info("withdrew the LAN advertisement %r", self.registered_as.removesuffix("." + SERVICE_TYPE))
                await zeroconf.async_close()
        except Exception as exc:  # the server is stopping anyway: say so and go on
            log.warning("could not withdraw the LAN advertisement cleanly: %s", exc or type(exc).__name__)
        self.registered_as = None
