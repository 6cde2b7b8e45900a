"""Salted scrypt hashes of claimed names' secrets and passwords.

A hash is stored as text with everything needed to check it later, so the
cost parameters can rise without invalidating the hashes already stored::

    scrypt$16384$8$1$<salt, base64>$<hash, base64>

Hashing costs about 50 ms of CPU and 16 MiB of memory: call these functions
off the event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = ["SCRYPT_N", "SCRYPT_R", "SCRYPT_P", "hash_secret", "verify_secret"]

SCRYPT_N = 2**14
"""scrypt's CPU/memory cost (a power of two)."""
SCRYPT_R = 8
"""scrypt's block size."""
SCRYPT_P = 1
"""scrypt's parallelism."""
SALT_BYTES = 16
HASH_BYTES = 32
_MAX_N = 2**20
"""The largest cost a stored hash may ask for (a damaged row must not make a check take minutes)."""


def hash_secret(secret: str) -> str:
    """The salted scrypt hash of ``secret`` (a fresh 16-byte random salt), as stored text."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(secret, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return "$".join(("scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(digest)))


def verify_secret(secret: str, stored: str) -> bool:
    """Whether ``secret`` hashes to ``stored`` (compared in constant time); ``False`` for a malformed ``stored``."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt" or not 1 < int(n) <= _MAX_N or not 0 < int(r) <= 32 or not 0 < int(p) <= 16:
            return False
        expected = base64.b64decode(digest, validate=True)
        actual = _scrypt(secret, base64.b64decode(salt, validate=True), int(n), int(r), int(p), len(expected))
    except ValueError:
        return False
    return hmac.compare_digest(actual, expected)


def _scrypt(secret: str, salt: bytes, n: int, r: int, p: int, length: int = HASH_BYTES) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, maxmem=256 * n * r * p + (1 << 20), dklen=length)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
