"""TLS for the client: certificate fingerprints and pinning.

A fingerprint is the SHA-256 of the server certificate's DER bytes, written
as 64 hex digits in pairs separated by colons (``"AB:CD:..."``), the form
``openssl x509 -fingerprint -sha256`` prints and ``parlour serve`` shows at start.

A client either verifies the server's certificate against certificate
authorities (the system's, or one given as a file), or pins it by fingerprint:
:func:`client_context` builds the TLS context for both; with a pinned context
the fingerprint check in :meth:`client.Client.connect` is the only check, so
pass the fingerprint there. The fingerprint helpers and :class:`TLSFileError`
are :mod:`protocol.tls`'s, shared with the server; they are re-exported here.
"""

from __future__ import annotations

import asyncio
import hmac
import ssl

from protocol.tls import MINIMUM_VERSION, TLSFileError, fingerprint, normalise_fingerprint

__all__ = [
    "FingerprintMismatch",
    "TLSFileError",
    "check_fingerprint",
    "client_context",
    "fingerprint",
    "normalise_fingerprint",
]

class FingerprintMismatch(ConnectionError):
    """The server's certificate is not the one pinned; the message shows both fingerprints."""


def client_context(ca_file: str | None = None, pinned: bool = False) -> ssl.SSLContext:
    """A TLS context for connecting to a Parlour server (TLS 1.2 or newer).

    Args:
        ca_file: a PEM file of the certificate authorities to trust instead of
            the system's; ``None`` trusts the system's.
        pinned: the certificate will be checked by fingerprint instead (pass the
            fingerprint to :meth:`client.Client.connect`): the context then checks
            neither a CA signature nor the host name, so it must never be used
            without a fingerprint.

    Returns:
        A context for ``asyncio.open_connection(..., ssl=context)``; unless
        ``pinned``, it verifies the certificate chain and that the certificate
        names the host connected to.

    Raises:
        ValueError: both ``ca_file`` and ``pinned`` were given.
        TLSFileError: ``ca_file`` cannot be read or holds no certificate.
    """
    if pinned and ca_file is not None:
        raise ValueError("a pinned certificate is checked by its fingerprint alone: give a CA file or pin, not both")
    if pinned:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_file is not None:
        try:
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)
        except OSError as exc:  # ssl.SSLError included
            reason = exc.strerror or getattr(exc, "reason", None) or str(exc)
            raise TLSFileError(f"cannot use {ca_file} as the certificate authority file: {reason}") from None
    else:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.minimum_version = MINIMUM_VERSION
    return context


def check_fingerprint(writer: asyncio.StreamWriter, expected: str) -> None:
    """Check that the TLS peer of ``writer`` presented the certificate pinned as ``expected``.

    Raises:
        FingerprintMismatch: no TLS, no certificate, or a different certificate.
    """
    ssl_object = writer.get_extra_info("ssl_object")
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if der is None:
        raise FingerprintMismatch("the server presented no TLS certificate to check the fingerprint against")
    actual = fingerprint(der)
    if not hmac.compare_digest(actual, normalise_fingerprint(expected)):
        raise FingerprintMismatch(
            f"the server's certificate fingerprint is {actual}, not the pinned {normalise_fingerprint(expected)}:"
            " someone may be intercepting the connection, or the server has a new certificate"
        )
