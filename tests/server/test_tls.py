"""TLS and the password, over real sockets on 127.0.0.1, against a real in-process server.

The certificates come from ``trustme``: a throwaway CA and a server
certificate for ``127.0.0.1`` and ``localhost`` that it signed.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import time
from pathlib import Path
from typing import Awaitable, Callable

import pytest
import trustme

from client import Client
from client.cli import ConnectSettings, _connect, _reconnector
from client.tokens import TokenStore
from client.tls import FingerprintMismatch, TLSFileError, client_context
from protocol import PROTOCOL_VERSION
from protocol import messages as m
from server.app import Server
from server.net.tls import certificate_fingerprint, server_context

from ..conftest import ConfiguredServer
from .conftest import TIMEOUT_S, Raw, refused

PASSWORD = "correct horse battery staple"


class TLSFiles:
    """A CA and the server certificate it signed, as PEM files."""

    def __init__(self, directory: Path) -> None:
        self.ca = trustme.CA()
        issued = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = directory / "ca.pem"
        self.cert_file = directory / "cert.pem"
        self.key_file = directory / "key.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.cert_file.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
        issued.private_key_pem.write_to_path(str(self.key_file))


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return TLSFiles(tmp_path_factory.mktemp("tls"))


StartServer = Callable[..., Awaitable[Server]]


@pytest.fixture
def start_server(tls: TLSFiles, configured_server: ConfiguredServer) -> StartServer:
    """Factory: ``await start_server(password=...)`` runs a TLS server on 127.0.0.1 (``tls_on=False``: plain TCP)."""

    async def factory(*, tls_on: bool = True, password: str | None = None) -> Server:
        context = server_context(tls.cert_file, tls.key_file) if tls_on else None
        return await configured_server(server_name="tls-test", ssl=context, password=password)

    return factory


async def _nimble_game(first: Client, second: Client) -> m.GameOver:
    """Play a one-move Nimble game between two connected clients; return what ``first`` sees at the end."""
    joined = await first.create_table("nimble", {"board": [0, 1]})
    table = joined.table.id
    await second.join_table(table)
    await first.next_event(m.GameStarted, timeout_s=TIMEOUT_S)
    await first.move(table, "2-1")
    over = await first.next_event(m.GameOver, timeout_s=TIMEOUT_S)
    assert isinstance(over, m.GameOver)
    assert over.outcome["winner"] == 0
    return over


# --- certificates ---------------------------------------------------------------------


async def test_a_client_trusting_the_ca_plays_over_tls_1_2_or_newer(start_server: StartServer, tls: TLSFiles) -> None:
    server = await start_server()
    context = client_context(ca_file=str(tls.ca_file))
    ann = await Client.connect("127.0.0.1", server.port, name="ann", ssl=context, timeout_s=TIMEOUT_S)
    bob = await Client.connect("127.0.0.1", server.port, name="bob", ssl=context, timeout_s=TIMEOUT_S)
    try:
        assert ann._writer.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3")
        await ann.ping()
        await _nimble_game(ann, bob)
    finally:
        await ann.close()
        await bob.close()


async def test_the_pinned_fingerprint_is_enough_without_the_ca(start_server: StartServer, tls: TLSFiles) -> None:
    server = await start_server()
    pin = certificate_fingerprint(tls.cert_file)
    client = await Client.connect(
        "127.0.0.1", server.port, name="ann", ssl=client_context(pinned=True), fingerprint=pin, timeout_s=TIMEOUT_S
    )
    try:
        await client.ping()
        assert client.welcome is not None and client.welcome.server == "tls-test"
    finally:
        await client.close()


def test_the_fingerprint_is_the_one_openssl_shows_for_the_first_certificate(tls: TLSFiles) -> None:
    der = ssl.PEM_cert_to_DER_cert(tls.cert_file.read_text())  # the file holds one certificate
    digest = hashlib.sha256(der).hexdigest().upper()
    assert certificate_fingerprint(tls.cert_file).replace(":", "") == digest
    assert len(certificate_fingerprint(tls.cert_file)) == 64 + 31


async def test_a_wrong_fingerprint_is_refused_before_hello_is_sent(start_server: StartServer, tls: TLSFiles) -> None:
    wrong = "AA:" * 31 + "AA"
    server = await start_server()
    with pytest.raises(FingerprintMismatch, match="not the pinned AA:AA"):
        await Client.connect("127.0.0.1", server.port, name="ann", ssl=client_context(pinned=True), fingerprint=wrong)

    # A bare TLS listener with the same certificate records what a client sends after the handshake.
    received: list[bytes] = []
    done = asyncio.Event()

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            received.append(await reader.read())
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()
            done.set()

    listener = await asyncio.start_server(record, "127.0.0.1", 0, ssl=server_context(tls.cert_file, tls.key_file))
    try:
        port = listener.sockets[0].getsockname()[1]
        with pytest.raises(FingerprintMismatch):
            await Client.connect("127.0.0.1", port, name="ann", ssl=client_context(pinned=True), fingerprint=wrong)
        await asyncio.wait_for(done.wait(), TIMEOUT_S)
    finally:
        listener.close()
        await listener.wait_closed()
    assert received in ([], [b""]), "the client sent something to a server whose certificate it refused"


async def test_a_client_without_the_ca_refuses_the_certificate(start_server: StartServer) -> None:
    server = await start_server()
    with pytest.raises(ssl.SSLCertVerificationError):
        await Client.connect("127.0.0.1", server.port, name="ann", ssl=client_context(), timeout_s=TIMEOUT_S)


async def test_a_certificate_for_another_host_is_refused(start_server: StartServer, tls: TLSFiles, tmp_path: Path) -> None:
    issued = tls.ca.issue_cert("games.example.org")
    issued.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    issued.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    listener = await asyncio.start_server(
        lambda r, w: w.close(), "127.0.0.1", 0, ssl=server_context(tmp_path / "cert.pem", tmp_path / "key.pem")
    )
    try:
        port = listener.sockets[0].getsockname()[1]
        with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
            await Client.connect("127.0.0.1", port, name="ann", ssl=client_context(ca_file=str(tls.ca_file)), timeout_s=TIMEOUT_S)
    finally:
        listener.close()
        await listener.wait_closed()


async def test_a_plain_client_fails_fast_and_the_tls_server_serves_others(start_server: StartServer, tls: TLSFiles) -> None:
    server = await start_server()
    started = time.monotonic()
    with pytest.raises(OSError):  # the connection is closed under it (ConnectionLost) or reset
        await Client.connect("127.0.0.1", server.port, name="ann", timeout_s=3.0)
    assert time.monotonic() - started < 3.0, "the failure should not wait for the timeout"
    client = await Client.connect("127.0.0.1", server.port, name="ann", ssl=client_context(ca_file=str(tls.ca_file)))
    try:
        await client.ping()
    finally:
        await client.close()


async def test_a_tls_client_to_a_plain_server_fails_fast(start_server: StartServer) -> None:
    server = await start_server(tls_on=False)
    started = time.monotonic()
    with pytest.raises(OSError):  # ssl.SSLError: the answer is not TLS
        await Client.connect("127.0.0.1", server.port, name="ann", ssl=client_context(pinned=True), fingerprint="AB" * 32, timeout_s=3.0)
    assert time.monotonic() - started < 3.0
    client = await Client.connect("127.0.0.1", server.port, name="ann")
    await client.close()


# --- files ------------------------------------------------------------------------------


def test_unusable_files_are_named_in_the_error(tls: TLSFiles, tmp_path: Path) -> None:
    with pytest.raises(TLSFileError, match="missing.pem"):
        server_context(tmp_path / "missing.pem", tls.key_file)
    with pytest.raises(TLSFileError, match=r"key.pem holds no PEM certificate"):
        server_context(tls.key_file, tls.key_file)
    with pytest.raises(TLSFileError, match=r"cert.pem holds no PEM private key"):
        server_context(tls.cert_file, tls.cert_file)
    other_key = tmp_path / "other.pem"
    tls.ca.issue_cert("localhost").private_key_pem.write_to_path(str(other_key))
    with pytest.raises(TLSFileError, match=r"other.pem does not belong to the certificate"):
        server_context(tls.cert_file, other_key)
    with pytest.raises(TLSFileError, match="nothing.pem"):
        client_context(ca_file=str(tmp_path / "nothing.pem"))
    (tmp_path / "junk.pem").write_text("junk")
    with pytest.raises(TLSFileError, match="junk.pem holds no PEM certificate"):
        certificate_fingerprint(tmp_path / "junk.pem")


def test_an_encrypted_key_is_refused_without_a_prompt(tls: TLSFiles, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization

    issued = tls.ca.issue_cert("localhost")
    key = serialization.load_pem_private_key(issued.private_key_pem.bytes(), password=None)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pass")
    )
    (tmp_path / "key.pem").write_bytes(encrypted)
    issued.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    with pytest.raises(TLSFileError, match="encrypted"):
        server_context(tmp_path / "cert.pem", tmp_path / "key.pem")


def test_contexts_refuse_tls_older_than_1_2(tls: TLSFiles) -> None:
    assert server_context(tls.cert_file, tls.key_file).minimum_version >= ssl.TLSVersion.TLSv1_2
    for context in (client_context(), client_context(pinned=True), client_context(ca_file=str(tls.ca_file))):
        assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert client_context().verify_mode == ssl.CERT_REQUIRED and client_context().check_hostname
    with pytest.raises(ValueError):
        client_context(ca_file=str(tls.ca_file), pinned=True)


# --- password ---------------------------------------------------------------------------


async def test_the_right_password_is_welcome(start_server: StartServer, tls: TLSFiles) -> None:
    server = await start_server(password=PASSWORD)
    context = client_context(ca_file=str(tls.ca_file))
    client = await Client.connect("127.0.0.1", server.port, name="ann", password=PASSWORD, ssl=context, timeout_s=TIMEOUT_S)
    try:
        await client.ping()
    finally:
        await client.close()


@pytest.mark.parametrize("password", [None, "wrong", PASSWORD + " ", PASSWORD[:-1]])
async def test_a_wrong_or_missing_password_is_refused_and_the_connection_closed(
    start_server: StartServer, tls: TLSFiles, password: str | None
) -> None:
    server = await start_server(password=PASSWORD)
    context = client_context(ca_file=str(tls.ca_file))
    await refused(Client.connect("127.0.0.1", server.port, name="ann", password=password, ssl=context, timeout_s=TIMEOUT_S), "bad_password")

    reader, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=context)
    raw = Raw(reader, writer)
    try:
        fields = {"password": password} if password is not None else {}
        reply = await raw.request("hello", version=PROTOCOL_VERSION, name="ann", **fields)
        assert reply["type"] == "error" and reply["code"] == "bad_password", reply
        await raw.expect_closed()
    finally:
        await raw.close()
    assert not server.names, "a refused hello must not hold a name"
    # The right password still works afterwards, under the same name.
    client = await Client.connect("127.0.0.1", server.port, name="ann", password=PASSWORD, ssl=context, timeout_s=TIMEOUT_S)
    await client.close()


async def test_password_without_tls_works_too(start_server: StartServer) -> None:
    server = await start_server(tls_on=False, password=PASSWORD)
    await refused(Client.connect("127.0.0.1", server.port, name="ann", timeout_s=TIMEOUT_S), "bad_password")
    client = await Client.connect("127.0.0.1", server.port, name="ann", password=PASSWORD, timeout_s=TIMEOUT_S)
    await client.close()


async def test_reconnecting_uses_the_same_tls_and_password(
    start_server: StartServer, tls: TLSFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("client.reconnect.RETRY_DELAYS_S", (0.01,))
    server = await start_server(password=PASSWORD)
    pin = certificate_fingerprint(tls.cert_file)
    settings = ConnectSettings(ssl=client_context(pinned=True), fingerprint=pin, password=PASSWORD)
    tokens = TokenStore(tmp_path / "tokens.json")
    ann = await _connect("127.0.0.1", server.port, "ann", tokens, settings)
    await ann.create_table("nimble", {"board": [0, 1]})
    await ann.close()  # the connection drops; the seat is held

    said: list[str] = []
    again = await _reconnector("127.0.0.1", server.port, "ann", tokens, settings)(ann.token, said.append)
    assert again is not None, said
    try:
        assert again.welcome is not None and again.welcome.resumed
        assert tokens.get("127.0.0.1", server.port, "ann") == again.token
    finally:
        await again.close()

    for wrong, expected in (
        (ConnectSettings(ssl=client_context(pinned=True), fingerprint="00" * 32, password=PASSWORD), "TLS fingerprint mismatch"),
        (ConnectSettings(ssl=client_context(pinned=True), fingerprint=pin, password="nope"), "refused the password (bad_password)"),
    ):
        said.clear()
        assert await _reconnector("127.0.0.1", server.port, "ann", tokens, wrong)(again.token, said.append) is None
        assert len(said) == 1 and expected in said[0], said
