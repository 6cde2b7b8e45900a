"""``parlour servers`` lines and the numbered pick of ``parlour play`` without an address (client/lan_cli.py)."""

from __future__ import annotations

import doctest

import pytest

import client.lan_cli
from client.cli import parse_args
from client.discovery import FoundServer
from client.lan_cli import choose_server, describe_server

DEN = FoundServer("den._parlour._tcp.local.", "den", ("10.0.0.5",), 7420, "0.1.0", 2, False, False)
ATTIC = FoundServer("attic._parlour._tcp.local.", "attic\x1b[2J", ("fd00::9",), 7500, "", None, True, True)


def test_doctests() -> None:
    assert doctest.testmod(client.lan_cli).failed == 0


def test_a_server_line_says_where_what_and_how_and_escapes_the_name() -> None:
    assert describe_server(DEN) == "den  10.0.0.5:7420  Parlour 0.1.0, protocol 2  no password, plain TCP"
    assert describe_server(ATTIC) == "attic␛[2J  [fd00::9]:7500  Parlour ?  password required, TLS"


def pick(lines: list[str]) -> tuple[FoundServer | None, list[str]]:
    said: list[str] = []
    answers = iter(lines)
    chosen = choose_server([DEN, ATTIC], lambda: next(answers, ""), said.append)
    return chosen, said


def test_the_number_picks_the_server_and_anything_else_is_asked_again() -> None:
    chosen, said = pick(["3\n", "den\n", " 2 \n"])
    assert chosen is ATTIC
    assert said[:2] == [f"  1. {describe_server(DEN)}", f"  2. {describe_server(ATTIC)}"]
    assert "'3' is not a server number: give a number from 1 to 2" in said
    assert "'den' is not a server number: give a number from 1 to 2" in said


def test_one_server_found_is_named_and_used_without_asking() -> None:
    said: list[str] = []

    def no_reading() -> str:
        raise AssertionError("asked which server when only one was found")

    assert choose_server([DEN], no_reading, said.append) is DEN
    assert said == [f"Found one server: {describe_server(DEN)}", "Connecting to it."]


@pytest.mark.parametrize("lines", [["\n"], []], ids=["empty line", "end of input"])
def test_an_empty_line_or_the_end_of_input_picks_none(lines: list[str]) -> None:
    assert pick(lines)[0] is None


def test_play_takes_no_address_and_servers_takes_a_checked_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(["play", "--name", "ann", "--timeout", "1.5"], {})
    assert args.address is None and args.timeout == 1.5
    assert parse_args(["servers"], {}).timeout == 3.0
    for bad in ("0", "61", "soon"):
        with pytest.raises(SystemExit):
            parse_args(["servers", "--timeout", bad], {})
        assert "--timeout" in capsys.readouterr().err
    assert parse_args(["serve", "--no-advertise"], {}).no_advertise
    assert not parse_args(["host", "--name", "ann"], {}).no_advertise
