"""The DNS-SD TXT record of a Parlour server (protocol/lan.py): what the server says, and what a client makes of anything."""

from __future__ import annotations

import doctest
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

import protocol.lan
from protocol.lan import (
    MOST_LABEL_BYTES,
    MOST_TXT_VALUE_BYTES,
    ServiceRecord,
    decode_txt,
    encode_txt,
    instance_label,
    one_line_zeroconf_logs,
)


def test_doctests() -> None:
    assert doctest.testmod(protocol.lan).failed == 0


def test_a_record_survives_encoding_as_zeroconf_returns_it() -> None:
    record = ServiceRecord(name="Zoë's den 🎲", version="0.1.0", protocol=2, password=False, tls=True, server_id="0f" * 16)
    as_received = {key.encode(): value.encode() for key, value in encode_txt(record).items()}
    assert decode_txt(as_received) == record


def test_long_names_are_cut_on_a_character_boundary() -> None:
    record = ServiceRecord(name="é" * 300, version="1", protocol=None, password=False, tls=False)
    name = encode_txt(record)["name"]
    assert name == "é" * (MOST_TXT_VALUE_BYTES // 2)
    assert len(instance_label("é" * 300).encode()) <= MOST_LABEL_BYTES


def test_missing_or_garbled_values_get_neutral_defaults() -> None:
    record = decode_txt({b"name": b"\xff\xfe", b"protocol": b"-1", b"password": b"YES", b"tls": None}, fallback_name="x")
    assert record == ServiceRecord(name="\ufffd\ufffd", version="", protocol=None, password=False, tls=False)
    assert decode_txt({}, fallback_name="den").name == "den"
    assert decode_txt({b"protocol": "²".encode()}).protocol is None  # a digit to str.isdigit, not a number to int()
    assert decode_txt({b"protocol": b"99999"}).protocol is None
    assert decode_txt({b"id": b"a b"}).server_id == "" and decode_txt({b"id": b"x" * 65}).server_id == ""
    assert decode_txt({b"id": b"\x1b[2J"}).server_id == ""  # never anything a terminal would act on


@given(st.dictionaries(st.binary(max_size=20), st.one_of(st.none(), st.binary(max_size=400)), max_size=8))
def test_decoding_never_raises_and_keeps_values_short(properties: dict[bytes, bytes | None]) -> None:
    record = decode_txt(properties)
    assert len(record.name.encode("utf-8", "surrogatepass")) <= 3 * MOST_TXT_VALUE_BYTES
    assert len(record.version) <= MOST_TXT_VALUE_BYTES


def test_instance_labels_have_no_dots_or_controls() -> None:
    assert instance_label("a.b\x1b[2Jc") == "a b [2Jc"
    assert instance_label(" . ") == "Parlour"


def test_zeroconf_warnings_with_a_traceback_become_one_line(caplog: pytest.LogCaptureFixture) -> None:
    one_line_zeroconf_logs()
    one_line_zeroconf_logs()
    logger = logging.getLogger("zeroconf")
    try:
        raise OSError(101, "Network is unreachable")
    except OSError as exc:
        with caplog.at_level(logging.WARNING, logger="zeroconf"):
            logger.warning("Error with socket %s: %s", 7, exc, exc_info=exc)
    (record,) = caplog.records
    assert record.exc_info is None and "Traceback" not in caplog.text
    assert record.getMessage() == "Error with socket 7: [Errno 101] Network is unreachable (OSError: [Errno 101] Network is unreachable)"
