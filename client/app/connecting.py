"""Opening a session for the app: resume this machine's last session there, or start one.

The app's only way onto a server. Tokens are the line client's
(:class:`client.tokens.TokenStore`), so the two front ends resume each other's seats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..claims import NameClaims
from ..connection import Client, ServerError
from ..tls import client_context
from ..tokens import TokenStore

__all__ = ["Target", "open_client"]


@dataclass(frozen=True, slots=True)
class Target:
    """Where and as whom to connect.

    Attributes:
        host, port: the server's address.
        name: the player name to say hello with.
        password: the server's password, if it has one.
        tls: speak TLS; with ``fingerprint`` the certificate is pinned, without
            it verified against the system's certificate authorities.
        fingerprint: the server certificate's SHA-256 fingerprint (normalised).
        ca_file: a PEM file of certificate authorities to verify against instead of the system's.
        secret: the secret (or password) of a claimed name, for a server with accounts.
    """

    host: str
    port: int
    name: str
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    fingerprint: str | None = None
    ca_file: str | None = None
    secret: str | None = field(default=None, repr=False)


async def open_client(target: Target, tokens: TokenStore, *, timeout_s: float = 10.0, claims: NameClaims | None = None) -> Client:
    """Connect to ``target`` and watch the lobby, resuming the remembered session if the server still has it.

    A new session proves the name with the secret this machine keeps for it, or
    claims a free name, through ``claims`` (as the line client does; ``None``:
    as a guest); a secret typed into ``target`` is used as it is.

    Raises:
        TLSFileError: ``ca_file`` cannot be read.
        OSError: unreachable, or TLS failed (``ssl.SSLError``, ``FingerprintMismatch``).
        ServerError: the server refused the hello (``bad_password``, ``name_taken``, ...).
    """
    tls = target.tls or target.fingerprint is not None or target.ca_file is not None
    pinned = target.fingerprint is not None
    context = client_context(ca_file=None if pinned else target.ca_file, pinned=pinned) if tls else None
    options: dict[str, Any] = dict(password=target.password, ssl=context, fingerprint=target.fingerprint, timeout_s=timeout_s, watch_lobby=True)
    if target.secret is not None:
        options["secret"] = target.secret  # only asked for by servers with claimed names (their clients take it)
    token = tokens.get(target.host, target.port, target.name)
    client: Client | None = None
    if token is not None:
        try:
            client = await Client.connect(target.host, target.port, name=target.name, token=token, **options)
        except ServerError as exc:
            if exc.code != "bad_token":
                raise
    if client is None and claims is not None and target.secret is None:
        client = await claims.connect(target.host, target.port, target.name, **options)
    elif client is None:
        client = await Client.connect(target.host, target.port, name=target.name, **options)
    if client.token != token:
        tokens.put(target.host, target.port, target.name, client.token)
    return client
