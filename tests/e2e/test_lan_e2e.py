"""Across a real (virtual) LAN: a ``parlour serve`` in one network namespace, ``parlour servers`` and ``parlour play`` in another;
and ``parlour host`` on loopback, withdrawing its advertisement when stopped.

The test creates two network namespaces joined by a veth pair, with
addresses in 10.213.7.0/24 that exist only inside them, so the mDNS multicast
and the game's TCP stay on that private link. It needs root (or
CAP_NET_ADMIN) and ``ip netns``; elsewhere it is skipped, saying why. The
namespaces are removed whatever happens (removing a namespace removes its end
of the veth pair, and with it the pair).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
from contextlib import aclosing
from typing import Iterator

import pytest

from protocol.lan import INTERFACES_ENV

from client.discovery import FoundServer, ServerGone, watch

from .harness import Process

pytestmark = pytest.mark.slow

SERVER_ADDRESS = "10.213.7.1"
CLIENT_ADDRESS = "10.213.7.2"
PASSWORD = "sesame"


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


@pytest.fixture
def lan() -> Iterator[tuple[list[str], list[str]]]:
    """Two namespaces on one virtual Ethernet link; yield the commands that run a program in each (server's, client's)."""
    if shutil.which("ip") is None:
        pytest.skip("needs the ip command (iproute2) to create network namespaces")
    if os.geteuid() != 0:
        pytest.skip("needs root to create network namespaces and a veth pair (ip netns add)")
    tag = str(os.getpid())
    server_ns, client_ns = f"parlour-lan-s{tag}", f"parlour-lan-c{tag}"
    server_if, client_if = f"pls{tag}"[:15], f"plc{tag}"[:15]
    created: list[str] = []
    try:
        for namespace in (server_ns, client_ns):
            try:
                _ip("netns", "add", namespace)
            except RuntimeError as exc:
                pytest.skip(f"network namespaces are not permitted here: {exc}")
            created.append(namespace)
        _ip("link", "add", server_if, "netns", server_ns, "type", "veth", "peer", "name", client_if, "netns", client_ns)
        for namespace, interface, address in ((server_ns, server_if, SERVER_ADDRESS), (client_ns, client_if, CLIENT_ADDRESS)):
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", interface)
            _ip("-n", namespace, "link", "set", interface, "up", "multicast", "on")
            _ip("-n", namespace, "link", "set", "lo", "up")
            _ip("-n", namespace, "route", "add", "224.0.0.0/4", "dev", interface)
        yield ["ip", "netns", "exec", server_ns], ["ip", "netns", "exec", client_ns]
    finally:
        for namespace in created:
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=10)


def test_a_server_on_the_lan_is_found_by_name_and_joined_through_what_was_found(lan: tuple[list[str], list[str]]) -> None:
    in_server, in_client = lan
    name = f"den-{os.getpid()}"
    # Every interface of the namespaces (the suite confines mDNS to loopback elsewhere): only the veth pair is there.
    environ = {key: value for key, value in os.environ.items() if key != INTERFACES_ENV} | {"PARLOUR_PASSWORD": PASSWORD}
    server = Process("serve", "--no-db", "--port", "0", "--name", name, prefix=in_server, environ=environ)
    finder = player = None
    try:
        port = int(server.expect(r"listening on port (\d+)")[1])
        server.expect(r"Players connect with")
        server.expect(r"^\s+parlour play ")
        offered = [line.split()[2] for line in server.lines if line.strip().startswith("parlour play ")]
        assert offered == [f"{SERVER_ADDRESS}:{port}"], server.lines  # the interface's address, not 127.0.1.1 or loopback

        finder = Process("servers", "--timeout", "2", prefix=in_client, environ=environ)
        player = Process("play", "--name", "ann", "--timeout", "2", stdin_text="quit\n", prefix=in_client, environ=environ)
        assert finder.finish(timeout_s=30) == 0, finder.lines
        listed = [line for line in finder.lines if line.startswith(name)]
        assert listed == [f"{name}  {SERVER_ADDRESS}:{port}  Parlour 0.1.0, protocol 2  password required, plain TCP"], finder.lines

        player.expect(rf"^Found one server: {re.escape(listed[0])}$")  # the only one: used without asking for its number
        player.expect(r"^Connecting to it\.$")
        player.expect(rf"^Connected to {re.escape(name)} \(Parlour 0\.1\.0\) as ann\.")
        assert player.finish(timeout_s=30) == 0, player.lines

        server.expect(rf"advertised on the LAN as '{re.escape(name)}'")
        server.popen.send_signal(signal.SIGTERM)
        assert server.finish(timeout_s=30) == 0, server.lines
        assert any(f"withdrew the LAN advertisement '{name}'" in line for line in server.lines), server.lines
        for process in (server, finder, player):
            assert not any("Traceback" in line or "WARNING" in line for line in process.lines), process.lines
    finally:
        for process in (server, finder, player):
            if process is not None:
                process.kill()


async def test_parlour_host_withdraws_its_advertisement_on_sigterm() -> None:
    """``parlour host`` on 127.0.0.1 is found on loopback, and a SIGTERM makes it say goodbye before it exits 0."""
    host = Process("host", "--name", "ann", "--host", "127.0.0.1", "--port", "0", stdin_text="")
    try:
        port = int(host.expect(r"parlour play 127\.0\.0\.1:(\d+) ")[1])
        host.expect(r"^Connected to .* as ann\.")
        async with aclosing(watch(interfaces=["127.0.0.1"])) as changes:
            async with asyncio.timeout(15):
                async for change in changes:
                    if isinstance(change, FoundServer) and change.port == port:
                        assert change.name == socket.gethostname() and change.addresses == ("127.0.0.1",)
                        key = change.key
                        break
                host.popen.send_signal(signal.SIGTERM)
                async for change in changes:
                    if change == ServerGone(key):
                        break
        assert await asyncio.to_thread(host.finish, 30) == 0, host.lines
        assert host.lines[-1] == "Stopping (SIGTERM): telling the players, withdrawing the LAN advertisement.", host.lines
        assert not any("Traceback" in line for line in host.lines), host.lines
    finally:
        host.kill()
