"""TLS pieces both ends share: the oldest version accepted, certificate fingerprints, the file error.

A fingerprint is the SHA-256 of a certificate's DER bytes, written as 64 hex
digits in pairs separated by colons (``"AB:CD:..."``), the form
``openssl x509 -fingerprint -sha256`` prints: ``parlour serve`` prints its
certificate's, and ``parlour play --tls-fingerprint`` pins it.

Sans-IO like the rest of :mod:`protocol`: computations over bytes and text,
and constants. Building a TLS context stays with each end
(:func:`server.net.tls.server_context`, :func:`client.tls.client_context`): it
reads files or the system's certificate store, and the two ends want
different contexts (a certificate to present; authorities to trust, or a pin).
"""

from __future__ import annotations

import hashlib
import ssl

__all__ = ["MINIMUM_VERSION", "TLSFileError", "fingerprint", "normalise_fingerprint"]

MINIMUM_VERSION = ssl.TLSVersion.TLSv1_2
"""The oldest TLS version either end accepts."""


class TLSFileError(ValueError):
    """A certificate, key or CA file cannot be used; the message names the file and why."""


def fingerprint(der: bytes) -> str:
    """The SHA-256 fingerprint of a DER certificate, as ``"AB:CD:..."`` (95 characters)."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def normalise_fingerprint(text: str) -> str:
    """Accept a fingerprint with or without colons, a ``SHA256:`` prefix, any case; return it as ``"AB:CD:..."``.

    Raises:
        ValueError: it is not 64 hex digits.
    """
    digits = text.strip().upper().removeprefix("SHA256:").removeprefix("SHA256 FINGERPRINT=").replace(":", "")
    if len(digits) != 64 or any(c not in "0123456789ABCDEF" for c in digits):
        raise ValueError(f"a SHA-256 fingerprint is 64 hex digits (colons optional), not {text!r}")
    return ":".join(digits[i : i + 2] for i in range(0, 64, 2))
