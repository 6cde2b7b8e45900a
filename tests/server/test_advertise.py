"""A server advertised with mDNS on 127.0.0.1 is found by discovery, connected to through what was found, and vanishes when it stops.

zeroconf works on the loopback interface here (multicast is looped back to
sockets joined on 127.0.0.1), so these run in-process and send nothing beyond
loopback. Between machines, tests/e2e/test_lan_e2e.py checks the same across
two network namespaces.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from contextlib import aclosing

import pytest

from client import Client
from client.discovery import FoundServer, ServerGone, watch
from protocol.lan import ServiceRecord
from server.net.advertise import Advertiser
from server.cli import advertise

from ..conftest import ConfiguredServer

LOOPBACK = ["127.0.0.1"]


async def next_change(changes: object, key: str | None = None, timeout_s: float = 10.0) -> FoundServer | ServerGone:
    """The next change about the server ``key`` (any change without one), skipping other servers on loopback."""
    async with asyncio.timeout(timeout_s):
        async for change in changes:  # type: ignore[attr-defined]
            if key is None or change.key == key:
                return change
    raise AssertionError("discovery ended")


async def test_found_with_its_properties_connected_to_and_gone_when_it_stops(configured_server: ConfiguredServer) -> None:
    name = f"lan-test-{os.getpid()}-{secrets.token_hex(3)}"
    server = await configured_server(server_name=name, password="sesame")
    advertiser = advertise(server, fingerprint=None)
    try:
        async with aclosing(watch(interfaces=LOOPBACK)) as changes:
            while not isinstance(found := await next_change(changes), FoundServer) or found.name != name:
                pass
            assert (found.addresses, found.port) == (("127.0.0.1",), server.port)
            assert (found.version, found.protocol, found.password, found.tls) == ("0.1.0", 2, True, False)
            client = await Client.connect(found.addresses[0], found.port, name="ann", password="sesame")
            try:
                assert client.welcome is not None and client.welcome.server == name
                assert found.server_id == client.welcome.server_id == server.server_id != ""  # the TXT record says who it is
            finally:
                await client.close()
            await advertiser.close()
            assert await next_change(changes, found.key) == ServerGone(found.key)
    finally:
        await advertiser.close()


async def test_a_failure_to_advertise_is_one_warning_and_the_server_goes_on(
    configured_server: ConfiguredServer, caplog: pytest.LogCaptureFixture
) -> None:
    server = await configured_server()
    nowhere = "198.51.100.77"  # TEST-NET-2: no interface here has it, so joining the mDNS group there fails
    advertiser = Advertiser(ServiceRecord("nowhere", "0.1.0", 2, False, False), server.port, [nowhere])
    with caplog.at_level(logging.WARNING):
        advertiser.start()
        await asyncio.sleep(0.2)
        await advertiser.close()
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith(f"not advertised on the LAN (mDNS on {nowhere}): "), warnings
    assert advertiser.registered_as is None
    client = await Client.connect("127.0.0.1", server.port, name="ann")
    await client.close()
