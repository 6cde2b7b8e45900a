"""A server with TLS and a password, through real processes.

``parlour serve --tls-cert --tls-key --password-file`` prints its certificate's
fingerprint; ``parlour play`` clients pin it with ``--tls-fingerprint`` and give
the password by environment variable or file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, NamedTuple

import pytest
import trustme

from server.net.tls import certificate_fingerprint

from .harness import Process, assert_finished_with, player_scripts, start_server

PASSWORD = "sesame-7420"


class Files(NamedTuple):
    cert: Path
    key: Path
    password: Path


class SecureServer(NamedTuple):
    process: Process
    port: int
    fingerprint: str
    password_file: Path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    """A certificate for 127.0.0.1 from a throwaway CA, its key, and a password file (with a trailing newline)."""
    directory = tmp_path_factory.mktemp("secure")
    issued = trustme.CA().issue_cert("127.0.0.1", "localhost")
    made = Files(directory / "cert.pem", directory / "key.pem", directory / "password.txt")
    issued.cert_chain_pems[0].write_to_path(str(made.cert))
    issued.private_key_pem.write_to_path(str(made.key))
    made.password.write_text(PASSWORD + "\n")
    return made


@pytest.fixture(scope="module")
def secure_server(files: Files) -> Iterator[SecureServer]:
    """A ``parlour serve`` process with TLS and a password."""
    server, port = start_server("--tls-cert", str(files.cert), "--tls-key", str(files.key), "--password-file", str(files.password))
    try:
        pin = server.expect(r"TLS certificate SHA-256 fingerprint: ([0-9A-F:]+)$")[1]
        assert pin == certificate_fingerprint(files.cert)
        server.expect(rf"parlour play 127\.0\.0\.1:{port} --name YOURNAME --tls-fingerprint {re.escape(pin)}$")
        yield SecureServer(server, port, pin, files.password)
    finally:
        server.kill()


def test_pinned_clients_with_the_password_play_a_game(secure_server: SecureServer, monkeypatch: pytest.MonkeyPatch) -> None:
    _, port, pin, password_file = secure_server
    address = f"127.0.0.1:{port}"
    first, second = player_scripts("nimble", {"board": [0, 1]}, ["2-1"])
    monkeypatch.setenv("PARLOUR_PASSWORD", PASSWORD)  # ann's password comes from the environment
    ann = Process("play", address, "--name", "ann", "--tls-fingerprint", pin, stdin_text="new nimble board=0,1\n")
    monkeypatch.delenv("PARLOUR_PASSWORD")
    bob = None
    try:
        table = ann.expect(r"Created table (\d+)")[1]
        ann.send("\n".join(["wait start", *first, "wait end", "quit", ""]))
        # bob's comes from a file, and the fingerprint may be written without colons, in lower case.
        bob_pin = pin.replace(":", "").lower()
        bob = Process("play", address, "--name", "bob", "--tls-fingerprint", bob_pin, "--password-file", str(password_file))
        bob.send("\n".join([f"join {table}", *second, "wait end", "quit", ""]))
        assert_finished_with((ann, bob), r"^Result: ")
    finally:
        ann.kill()
        if bob is not None:
            bob.kill()


def test_a_wrong_fingerprint_exits_with_the_mismatch(secure_server: SecureServer) -> None:
    _, port, pin, password_file = secure_server
    wrong = ("00" if not pin.startswith("00") else "11") + pin[2:]
    client = Process("play", f"127.0.0.1:{port}", "--name", "eve", "--tls-fingerprint", wrong, "--password-file", str(password_file))
    try:
        line = client.expect(r"^Cannot connect to 127\.0\.0\.1:\d+: TLS fingerprint mismatch: .*", timeout_s=15)[0]
        assert pin in line and wrong in line
        assert client.finish(timeout_s=15) == 1
    finally:
        client.kill()


def test_no_password_and_no_tls_are_refused_with_one_line_each(secure_server: SecureServer, monkeypatch: pytest.MonkeyPatch) -> None:
    _, port, pin, _ = secure_server
    monkeypatch.delenv("PARLOUR_PASSWORD", raising=False)
    no_password = Process("play", f"127.0.0.1:{port}", "--name", "eve", "--tls-fingerprint", pin)
    no_tls = Process("play", f"127.0.0.1:{port}", "--name", "eve", "--password", PASSWORD)
    try:
        no_password.expect(r"^The server needs a password \(bad_password\): give it with --password-file", timeout_s=15)
        assert no_password.finish(timeout_s=15) == 2
        no_tls.expect(r"^Cannot connect to .*before answering hello: if the server uses TLS, connect with --tls-fingerprint", timeout_s=15)
        assert no_tls.finish(timeout_s=15) == 1
    finally:
        no_password.kill()
        no_tls.kill()


def test_host_connects_its_own_terminal_with_tls_and_the_password(files: Files) -> None:
    host = Process(
        "host", "--name", "ann", "--host", "127.0.0.1", "--port", "0",
        "--tls-cert", str(files.cert), "--tls-key", str(files.key), "--password-file", str(files.password),
        stdin_text="new nimble board=0,1\n",
    )  # fmt: skip
    bob = None
    try:
        match = host.expect(r"parlour play 127\.0\.0\.1:(\d+) --name THEIRNAME --tls-fingerprint ([0-9A-F:]+)$")
        port, pin = match[1], match[2]
        assert pin == certificate_fingerprint(files.cert)
        host.expect(r"^Connected to .* as ann\.")
        host.expect(r"Created table (\d+)")
        bob = Process("play", f"127.0.0.1:{port}", "--name", "bob", "--tls-fingerprint", pin, "--password", PASSWORD, stdin_text="list\nquit\n")
        bob.expect(r"nimble")
        assert bob.finish(timeout_s=15) == 0
        assert host.finish(timeout_s=15) == 0
    finally:
        host.kill()
        if bob is not None:
            bob.kill()
