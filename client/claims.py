"""Claimed names from the client's side: the secret a ``hello`` carries, and keeping a new one.

The first time this machine says ``hello`` to a server with a name, it
generates a secret, keeps it (:class:`client.tokens.SecretStore`) and asks the
server to claim the name with it; afterwards every ``hello`` with that name
carries the kept secret. ``parlour secret export`` and ``import``
(:mod:`client.secret_cli`) move secrets to another machine.
"""

from __future__ import annotations

import asyncio
import getpass
import secrets
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from protocol import messages as m

from .connection import Client, ServerError
from .tokens import SecretStore, SecretStoreError

__all__ = ["NameClaims", "SECRET_BYTES", "NAME_PASSWORD_ENV", "ask_on_terminal"]

SECRET_BYTES = 32
"""Entropy of a generated secret, in bytes (``secrets.token_urlsafe``: 43 characters)."""
NAME_PASSWORD_ENV = "PARLOUR_NAME_PASSWORD"
"""The environment variable with the password of a claimed name (where there is no terminal to ask on)."""


def ask_on_terminal(prompt: str) -> str | None:
    """Read a password without echo if standard input is a terminal; ``None`` otherwise or when left empty."""
    if not sys.stdin.isatty():
        return None
    try:
        return getpass.getpass(prompt) or None
    except (EOFError, KeyboardInterrupt):
        return None


@dataclass
class NameClaims:
    """How a client proves or claims its names.

    Attributes:
        store: where the secrets are kept.
        guest: claim nothing and send no secret (``--guest``).
        say: where the one line announcing a new claim goes.
        password: the name's password (set with ``set_password``), to prove it where this machine has no secret.
        ask: asks the player for that password when the name turns out to be claimed (blocking; ``None``: never asks).
        new_password: set a password once connected (``--set-password``; see :meth:`set_password`).
        new_secret: replace the secret once connected (``--new-secret``; see :meth:`change_secret`).
    """

    store: SecretStore = field(default_factory=SecretStore)
    guest: bool = False
    say: Callable[[str], None] = print
    password: str | None = field(default=None, repr=False)
    ask: Callable[[str], str | None] | None = None
    new_password: bool = False
    new_secret: bool = False

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
        if secret is None and self.password is not None:
            return await Client.connect(host, port, name=name, secret=self.password, **options)
        fresh = secret is None
        if secret is None:
            secret = secrets.token_urlsafe(SECRET_BYTES)
            self.store.put(host, port, name, secret)
        try:
            client = await Client.connect(host, port, name=name, secret=secret, claim=True, **options)
        except ServerError as exc:
            if not fresh:
                raise
            self.store.put(host, port, name, None)  # refused: nothing was claimed with it (a lost connection may have: kept then)
            if exc.code != "name_claimed":
                raise
            return await self._claimed_elsewhere(exc, host, port, name, options)
        assert client.welcome is not None
        if fresh and client.welcome.claimed:
            self.say(
                f"Claimed the name {name} on this server; your secret is in {self.store.path}; "
                f"`parlour secret export {name}` moves it to another machine."
            )
        elif fresh:  # the server claims no names (--accounts off)
            self.store.put(host, port, name, None)
        return client

    async def _claimed_elsewhere(self, refusal: ServerError, host: str, port: int, name: str, options: dict[str, Any]) -> Client:
        """After ``name_claimed`` for a new claim: connect with the password the player gives, or raise the refusal with a hint."""
        if self.ask is not None:
            asked = await asyncio.to_thread(self.ask, f"The name {name} is claimed on this server. Its password (Enter to give up): ")
            if asked:
                self.password = asked  # for reconnections too
                return await Client.connect(host, port, name=name, secret=asked, **options)
        raise self._with_hint(refusal, host, port, name) from None

    async def change_secret(self, client: Client, host: str, port: int) -> str:
        """Give the claimed name of ``client`` at ``host:port`` a new secret, kept here once the server took it; return what to tell the player.

        Raises:
            ServerError: as :meth:`Client.change_secret` (``name_claimed``: the kept secret is not the name's).
            client.tokens.SecretStoreError: the new secret cannot be written down (the server has it: export fails).
        """
        current = self.store.get(host, port, client.name) or self.password
        if current is None:
            return f"No secret changed: this machine has neither the secret nor the password of {client.name} on this server."
        secret = secrets.token_urlsafe(SECRET_BYTES)
        await client.change_secret(current, secret)
        self.store.put(host, port, client.name, secret)
        return f"New secret for {client.name} kept in {self.store.path}; the old one and every other session of the name no longer work."

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

    async def set_password(self, client: Client, password: str | None, host: str, port: int) -> str:
        """Set ``password`` for the claimed name of ``client`` at ``host:port`` (``None``: ask for it twice); return what to tell the player.

        The name's secret kept here (or the password it was proven with) proves the change to the server.
        """
        if client.welcome is None or not client.welcome.claimed:
            return f"No password set: {client.name} is not a name this machine has claimed on this server."
        current = self.store.get(host, port, client.name) or self.password
        if current is None:
            return f"No password set: this machine has neither the secret nor the password of {client.name}."
        if password is None and self.ask is not None:
            password = await asyncio.to_thread(self.ask, f"A password for {client.name} on this server (at least 8 characters): ")
            again = await asyncio.to_thread(self.ask, "The same password again: ") if password else None
            if password != again:
                return "No password set: the two did not match."
        if not password:
            return f"No password set: give it on a terminal, or in {NAME_PASSWORD_ENV}."
        try:
            await client.set_password(password, current)
        except ServerError as exc:
            return f"No password set ({exc.code}): {exc.message}"
        self.password = password
        return f"Password set: it proves {client.name} on this server where this machine's secret is not."
