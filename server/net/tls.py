"""TLS for the server: the context ``parlour serve --tls-cert --tls-key`` listens with, and its fingerprint.

Players who cannot check the certificate against a certificate authority
(a self-signed certificate, the usual case on a LAN) pin it instead, by the
SHA-256 fingerprint :func:`certificate_fingerprint` computes and
``parlour serve`` prints at start.
"""

from __future__ import annotations

import re
import ssl
from pathlib import Path

from protocol.tls import MINIMUM_VERSION, TLSFileError, fingerprint

__all__ = ["TLSFileError", "certificate_fingerprint", "server_context"]

_PEM_CERTIFICATE = re.compile(r"-----BEGIN CERTIFICATE-----\s.*?-----END CERTIFICATE-----", re.DOTALL)


def server_context(cert_path: str | Path, key_path: str | Path) -> ssl.SSLContext:
    """A server TLS context (TLS 1.2 or newer) presenting the certificate in ``cert_path``.

    Args:
        cert_path: a PEM file: the server certificate first, then any
            intermediate certificates.
        key_path: a PEM file holding the certificate's private key, unencrypted
            (it may be the same file as ``cert_path``).

    Returns:
        A context for ``ServerConfig(ssl=...)``; it asks clients for no certificate.

    Raises:
        TLSFileError: a file cannot be read, holds no PEM certificate or key, the
            key is encrypted, or it does not belong to the certificate; the
            message names the file.
    """
    _first_certificate(cert_path)
    key_text = _read(key_path, "TLS key")
    if "PRIVATE KEY-----" not in key_text:
        raise TLSFileError(f"the TLS key file {key_path} holds no PEM private key (-----BEGIN PRIVATE KEY-----)")

    def encrypted() -> bytes:
        raise TLSFileError(f"the TLS key in {key_path} is encrypted with a passphrase; give an unencrypted key")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = MINIMUM_VERSION
    try:
        context.load_cert_chain(cert_path, key_path, password=encrypted)
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc):
            raise TLSFileError(f"the TLS key in {key_path} does not belong to the certificate in {cert_path}") from None
        raise TLSFileError(f"cannot load the TLS certificate {cert_path} with the key {key_path}: {exc.reason or exc}") from None
    except OSError as exc:  # the files changed since they were read
        raise TLSFileError(f"cannot read {exc.filename or cert_path}: {exc.strerror or exc}") from None
    return context


def certificate_fingerprint(cert_path: str | Path) -> str:
    """The SHA-256 fingerprint of the first certificate in a PEM file, as ``"AB:CD:..."`` (see :mod:`protocol.tls`).

    The first certificate is the one the server presents, so this is what
    ``parlour play --tls-fingerprint`` compares against.

    Raises:
        TLSFileError: the file cannot be read or holds no PEM certificate.
    """
    return fingerprint(_first_certificate(cert_path))


def _first_certificate(cert_path: str | Path) -> bytes:
    """The DER bytes of the first PEM certificate in ``cert_path``."""
    match = _PEM_CERTIFICATE.search(_read(cert_path, "TLS certificate"))
    if match is None:
        raise TLSFileError(f"the TLS certificate file {cert_path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    try:
        return ssl.PEM_cert_to_DER_cert(match[0])
    except ValueError as exc:  # bad base64
        raise TLSFileError(f"the TLS certificate file {cert_path} holds a damaged certificate: {exc}") from None


def _read(path: str | Path, what: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise TLSFileError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None
