"""TLS for the client: certificate fingerprints and pinning.

A fingerprint is the SHA-256 of the server certificate's DER bytes, written
as 64 hex digits in pairs separated by colons (``"AB:CD:..."``), the form
``openssl x509 -fingerprint -sha256`` prints and ``parlour serve`` shows at start.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac

__all__ = ["FingerprintMismatch", "fingerprint", "normalise_fingerprint", "check_fingerprint"]


class FingerprintMismatch(ConnectionError):
    """The server's certificate is not the one pinned; the message shows both fingerprints."""


def fingerprint(der: bytes) -> str:
    """The SHA-256 fingerprint of a DER certificate, as ``"AB:CD:..."``."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def normalise_fingerprint(text: str) -> str:
    """Accept a fingerprint with or without colons, a ``SHA256:`` prefix, any case.

    Raises:
        ValueError: it is not 64 hex digits.
    """
    digits = text.strip().upper().removeprefix("SHA256:").removeprefix("SHA256 FINGERPRINT=").replace(":", "")
    if len(digits) != 64 or any(c not in "0123456789ABCDEF" for c in digits):
        raise ValueError(f"a SHA-256 fingerprint is 64 hex digits (colons optional), not {text!r}")
    return ":".join(digits[i : i + 2] for i in range(0, 64, 2))


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
