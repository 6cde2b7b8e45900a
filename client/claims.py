"""Claimed names from the client's side: the secret a ``hello`` carries, and keeping a new one.

The first time this machine says ``hello`` to a server with a name, it
generates a secret, keeps it (:class:`client.tokens.SecretStore`, by the
server's stable id, asked with ``identify`` before ``hello``) and asks the
server to claim the name with it; afterwards every ``hello`` with that name
carries the kept secret, through whatever address reaches that server. ``parlour secret export`` and ``import``
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
from .tokens import SecretStore, SecretStoreError, secret_key, server_secret_key

__all__ = ["NameClaims", "Place", "SECRET_BYTES", "NAME_PASSWORD_ENV", "ask_on_terminal", "sentences"]

SECRET_BYTES = 32
"""Entropy of a generated secret, in bytes (``secrets.token_urlsafe``: 43 characters)."""
NAME_PASSWORD_ENV = "PARLOUR_NAME_PASSWORD"
"""The environment variable with the password of a claimed name (where there is no terminal to ask on)."""
OPEN_OPTIONS = ("ssl", "fingerprint", "timeout_s")
"""The options of :meth:`Client.connect` that concern opening the connection (the others go into ``hello``)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where a secret is kept: the server's stable id when it told it (``identify``), else the address used."""

    host: str
    port: int
    server_id: str | None


def sentences(first: str, second: str) -> str:
    """``first`` and ``second`` as two sentences: ``first`` ends with a full stop (added if missing) before ``second``.

    >>> sentences("the name 'ann' is claimed on this server: choose another name", "This machine has its secret.")
    "the name 'ann' is claimed on this server: choose another name. This machine has its secret."
    """
    first = first.rstrip()
    return f"{first}{'' if first.endswith(('.', '!', '?')) else '.'} {second}"


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

        The connection first asks the server its stable id (``identify``), and
        the secret is the one kept for that id, whatever address reached the
        server (PROTOCOL.md section 15). A secret kept for this address from
        before server ids is used, and moved to the id once it proved the
        name. A server that does not answer ``identify`` is known by its
        address, as before.

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
        opening = {key: options[key] for key in OPEN_OPTIONS if key in options}
        hello = {key: value for key, value in options.items() if key not in OPEN_OPTIONS}
        client = await Client.open(host, port, **opening)
        try:
            identity = await client.identify(opening.get("timeout_s", 10.0))
        except BaseException:
            await client.close()
            raise
        place = Place(host, port, identity.server_id if identity is not None else None)
        try:
            return await self._hello(client, place, name, hello, options)
        except BaseException:
            await client.close()
            raise

    async def _hello(self, client: Client, place: "Place", name: str, hello: dict[str, Any], options: dict[str, Any]) -> Client:
        """Say hello on ``client`` as ``name`` with the secret kept for ``place`` (or claiming it); see :meth:`connect`."""
        secret, moved_from = self._kept(place, name)
        if secret is None and self.password is not None:
            await client.handshake(name=name, secret=self.password, **hello)
            self._remember(place)
            return client
        fresh = secret is None
        if secret is None:
            secret = secrets.token_urlsafe(SECRET_BYTES)
            self._keep(place, name, secret)
        try:
            welcome = await client.handshake(name=name, secret=secret, claim=True, **hello)
        except ServerError as exc:
            if not fresh:
                raise
            self._keep(place, name, None)  # refused: nothing was claimed with it (a lost connection may have: kept then)
            if exc.code != "name_claimed":
                raise
            return await self._claimed_elsewhere(exc, place, name, options)
        if fresh and welcome.claimed:
            self.say(
                f"Claimed the name {name} on this server; your secret is in {self.store.path}; "
                f"`parlour secret export {name}` moves it to another machine."
            )
        elif fresh:  # the server claims no names (--accounts off)
            self._keep(place, name, None)
        elif moved_from is not None and welcome.claimed and place.server_id is not None:
            self.store.update({moved_from: None, server_secret_key(place.server_id, name): secret})  # proved here: kept by the id now
        self._remember(place)
        return client

    def _kept(self, place: "Place", name: str) -> tuple[str | None, str | None]:
        """The secret kept for ``name`` at ``place``, and the key of the entry from before server ids it came from (else ``None``)."""
        if place.server_id is not None:
            secret = self.store.get_for(place.server_id, name)
            if secret is not None:
                return secret, None
        secret = self.store.get(place.host, place.port, name)
        return secret, (secret_key(place.host, place.port, name) if secret is not None and place.server_id is not None else None)

    def _keep(self, place: "Place", name: str, secret: str | None) -> None:
        """Keep (``None``: forget) ``secret`` for ``name`` at ``place``: by its server id, else by its address."""
        if place.server_id is not None:
            self.store.put_for(place.server_id, name, secret)
        else:
            self.store.put(place.host, place.port, name, secret)

    def _remember(self, place: "Place") -> None:
        if place.server_id is not None:
            self.store.server_ids.put(place.host, place.port, place.server_id)

    async def _claimed_elsewhere(self, refusal: ServerError, place: "Place", name: str, options: dict[str, Any]) -> Client:
        """After ``name_claimed`` for a new claim: connect with the password the player gives, or raise the refusal with a hint."""
        if self.ask is not None:
            asked = await asyncio.to_thread(self.ask, f"The name {name} is claimed on this server. Its password (Enter to give up): ")
            if asked:
                self.password = asked  # for reconnections too
                return await Client.connect(place.host, place.port, name=name, secret=asked, **options)
        raise self._with_hint(refusal, place.host, place.port, name) from None

    @staticmethod
    def _place_of(client: Client, host: str, port: int) -> "Place":
        """Where the secret of ``client``'s name is kept: by the server id its ``welcome`` gave, else by ``host:port``."""
        return Place(host, port, client.welcome.server_id if client.welcome is not None else None)

    async def change_secret(self, client: Client, host: str, port: int) -> str:
        """Give the claimed name of ``client`` at ``host:port`` a new secret, kept here once the server took it; return what to tell the player.

        Raises:
            ServerError: as :meth:`Client.change_secret` (``name_claimed``: the kept secret is not the name's).
            client.tokens.SecretStoreError: the new secret cannot be written down (the server has it: export fails).
        """
        place = self._place_of(client, host, port)
        current = self._kept(place, client.name)[0] or self.password
        if current is None:
            return f"No secret changed: this machine has neither the secret nor the password of {client.name} on this server."
        secret = secrets.token_urlsafe(SECRET_BYTES)
        await client.change_secret(current, secret)
        self._keep(place, client.name, secret)
        return f"New secret for {client.name} kept in {self.store.path}; the old one and every other session of the name no longer work."

    def adopt(self, server_id: str, name: str, proves: Callable[[str], bool]) -> bool:
        """Keep for the server ``server_id`` a secret this machine holds for ``name`` elsewhere, if ``proves`` accepts it.

        For a server in this process (``parlour host``): ``proves`` checks a
        secret against the server's own record, so no secret is sent anywhere.
        Runs scrypt: call it off the event loop.

        Returns:
            whether a secret for ``server_id`` is kept now.
        """
        if self.guest or self.store.get_for(server_id, name) is not None:
            return not self.guest
        here = server_secret_key(server_id, name)
        for key, secret in self.store.entries().items():
            if key != here and key.partition(" ")[2] == name and proves(secret):
                try:
                    self.store.update({here: secret})
                except SecretStoreError:
                    return False
                return True
        return False

    def _elsewhere(self, host: str, port: int, name: str) -> dict[str, str]:
        """The secrets this machine holds for ``name`` at other addresses (entries from before server ids): address -> secret."""
        here = f"{host}:{port}"
        found = {}
        for key, secret in self.store.entries().items():
            address, _, entry_name = key.partition(" ")
            if entry_name == name and address != here and not address.startswith("@"):
                found[address] = secret
        return found

    def _with_hint(self, error: ServerError, host: str, port: int, name: str) -> ServerError:
        """``error`` (``name_claimed``), saying how to bring over a secret this machine holds for the name elsewhere."""
        elsewhere = sorted(self._elsewhere(host, port, name))
        if not elsewhere:
            return error
        hint = (
            f"This machine has the secret of {name} for {', '.join(elsewhere)}; if that is the same server, "
            f"`parlour secret export {name} --server {elsewhere[0]} | parlour secret import --server {host}:{port} -` uses it here."
        )
        return ServerError(m.Error(code=error.code, message=sentences(error.message, hint), field=error.field))

    async def set_password(self, client: Client, password: str | None, host: str, port: int) -> str:
        """Set ``password`` for the claimed name of ``client`` at ``host:port`` (``None``: ask for it twice); return what to tell the player.

        The name's secret kept here (or the password it was proven with) proves the change to the server.
        """
        if client.welcome is None or not client.welcome.claimed:
            return f"No password set: {client.name} is not a name this machine has claimed on this server."
        current = self._kept(self._place_of(client, host, port), client.name)[0] or self.password
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
