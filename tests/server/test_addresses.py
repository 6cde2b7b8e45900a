"""The addresses ``parlour serve``/``host`` tell players: the interfaces' own, never a hostname lookup's 127.0.1.1."""

from __future__ import annotations

import doctest
import ipaddress
import json
import shutil
import subprocess

import pytest

import server.net.addresses
from server.net.addresses import reachable_addresses, reachable_from
from server.cli import connect_instructions

A = ipaddress.ip_address


def test_doctests() -> None:
    assert doctest.testmod(server.net.addresses).failed == 0


def test_loopback_and_ipv6_link_local_are_left_out_and_ipv4_link_local_comes_last() -> None:
    found = [A("127.0.0.1"), A("127.0.1.1"), A("169.254.3.4"), A("192.168.1.20"), A("10.0.0.5"), A("::1"),
             A("fe80::1"), A("fd00::2"), A("2001:db8::7"), A("10.0.0.5")]
    assert reachable_from(found, (4,)) == ["10.0.0.5", "192.168.1.20", "169.254.3.4"]
    assert reachable_from(found, (6,)) == ["2001:db8::7", "fd00::2"]
    assert reachable_from(found, (4, 6)) == ["10.0.0.5", "192.168.1.20", "169.254.3.4", "2001:db8::7", "fd00::2"]
    assert reachable_from([A("127.0.0.1"), A("fe80::1")], (4, 6)) == []


def test_one_listening_address_is_the_only_one_given() -> None:
    assert reachable_addresses("127.0.0.1") == ["127.0.0.1"]
    assert reachable_addresses("::1") == ["::1"]
    assert reachable_addresses("localhost") == ["localhost"]


@pytest.mark.skipif(shutil.which("ip") is None, reason="needs the ip command (iproute2) to list the interfaces independently")
def test_every_interface_gives_the_interfaces_addresses_as_ip_lists_them() -> None:
    listing = json.loads(subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True, check=True).stdout)
    ipv4 = {entry["local"] for link in listing for entry in link.get("addr_info", []) if entry["family"] == "inet"}
    outside = sorted(address for address in ipv4 if not address.startswith("127."))
    given = reachable_addresses("0.0.0.0")
    if outside:
        assert sorted(given) == outside
    else:
        assert given == ["127.0.0.1"]
    assert "127.0.1.1" not in given


def test_instructions_bracket_ipv6_and_say_when_only_this_machine_can_connect() -> None:
    lines = connect_instructions(["10.0.0.5", "fd00::2"], 7420, "YOURNAME", None, False)
    assert lines == [
        "Players connect with one of:",
        "    parlour play 10.0.0.5:7420 --name YOURNAME",
        "    parlour play [fd00::2]:7420 --name YOURNAME",
    ]
    on_loopback = connect_instructions(["127.0.0.1"], 7420, "YOURNAME", None, False, "127.0.0.1")
    assert on_loopback[-1] == "Only this machine can connect: the server listens on loopback only."
    no_network = connect_instructions(["127.0.0.1"], 7420, "YOURNAME", None, False, "0.0.0.0")
    assert no_network[-1] == "Only this machine can connect: no network interface has another address."
