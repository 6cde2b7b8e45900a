"""Claimed names from the client's side: the secret a ``hello`` carries, and keeping a new one.

The first time this machine says ``hello`` to a server with a name, it
generates a secret, keeps it (:class:`client.tokens.SecretStore`) and asks the
server to claim the name with it; afterwards every ``hello`` with that name
carries the kept secret. ``parlour secret export`` and ``import``
(:mod:`client.secret_cli`) move secrets to another machine.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

from protocol import messages as m

from .connection import Client, ServerError
from .tokens import SecretStore, SecretStoreError

__all__ = ["NameClaims", "SECRET_BYTES"]

SECRET_BYTES = 32
"""Entropy of a generated secret, in bytes (``secrets.token_urlsafe``: 43 characters)."""


@dataclass
class NameClaims:
    """How a client proves or claims its names.

    Attributes:
        store: where the secrets are kept.
        guest: claim nothing and send no secret (``--guest``).
        say: where the one line announcing a new claim goes.
    """

    store: SecretStore = field(default_factory=SecretStore)
    guest: bool = False
    say: Callable[[str], None] = print

    async def connect(self, host: str, port: int, name: str, **options: Any) -> Client:
        """:meth:`Client.connect` as ``name`` with its kept secret, or claiming it with a new one.

        A new secret is written down before the ``hello`` that claims with it,
        so no name is ever claimed with a secret this machine lost; it is
        forgotten again if the server refuses the hello or does not claim the name.

        Raises:
            ServerError, OSError: as :meth:`Client.connect`; ``name_claimed`` when another
                machine claimed the name (import its secret, or choose another name).
            client.tokens.SecretStoreError: a new secret cannot be written down.
        """
        if self.guest:
            return await Client.connect(host, port, name=name, **options)
        secret = self.store.get(host, port, name)
        fresh = secret is None
        if secret is None:
            secret = secrets.token_urlsafe(SECRET_BYTES)
            self.store.put(host, port, name, secret)
        try:
            client = await Client.connect(host, port, name=name, secret=secret, claim=True, **options)
        except ServerError as exc:
            if fresh:  # refused: nothing was claimed with it (a lost connection may have claimed it: keep it then)
                self.store.put(host, port, name, None)
                if exc.code == "name_claimed":
                    raise self._with_hint(exc, host, port, name) from None
            raise
        assert client.welcome is not None
        if fresh and client.welcome.claimed:
            self.say(
                f"Claimed the name {name} on this server; your secret is in {self.store.path}; "
                f"`parlour secret export {name}` moves it to another machine."
            )
        elif fresh:  # the server claims no names (--accounts off)
            self.store.put(host, port, name, None)
        return client

    def adopt(self, host: str, port: int, name: str, proves: Callable[[str], bool]) -> bool:
        """Keep for ``host:port`` a secret this machine holds for ``name`` at another address, if ``proves`` accepts it.

        For a server in this process (``parlour host``), whose address changes
        with its port: ``proves`` checks a secret against the server's own
        record, so no secret is sent anywhere. Runs scrypt: call it off the event loop.

        Returns:
            whether a secret for ``host:port`` is kept now.
        """
        if self.guest or self.store.get(host, port, name) is not None:
            return not self.guest
        for secret in self._elsewhere(host, port, name).values():
            if proves(secret):
                try:
                    self.store.put(host, port, name, secret)
                except SecretStoreError:
                    return False
                return True
        return False

    def _elsewhere(self, host: str, port: int, name: str) -> dict[str, str]:
        """The secrets this machine holds for ``name`` at other addresses: address -> secret."""
        here = f"{host}:{port}"
        found = {}
        for key, secret in self.store.entries().items():
            address, _, entry_name = key.partition(" ")
            if entry_name == name and address != here:
                found[address] = secret
        return found

    def _with_hint(self, error: ServerError, host: str, port: int, name: str) -> ServerError:
        """``error`` (``name_claimed``), saying how to bring over a secret this machine holds for the name elsewhere."""
        elsewhere = sorted(self._elsewhere(host, port, name))
        if not elsewhere:
            return error
        hint = (
            f" This machine has the secret of {name} for {', '.join(elsewhere)}; if that is the same server, "
            f"`parlour secret export {name} --server {elsewhere[0]} | parlour secret import --server {host}:{port} -` uses it here."
        )
        return ServerError(m.Error(code=error.code, message=error.message + hint, field=error.field))
