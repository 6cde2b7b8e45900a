"""Claimed names: who may say ``hello`` with a name.

A player claims a free name by saying ``hello`` with ``claim`` and a secret
its client generated; from then on a ``hello`` with that name must carry the
secret (or a password the player set with ``set_password``), though resuming
a session by its token still works. Secrets and passwords are kept only as
salted scrypt hashes (:mod:`server.players.passwords`), checked off the event loop,
a few at a time, and guessing is rate-limited per address and per name
(:mod:`server.players.account_limits`), each guess counted before it is hashed. A new
name that looks like a claimed one (the same UTS #39 skeleton,
:mod:`server.players.confusables`) is refused. Changing a password or secret is
:mod:`server.players.credentials`' business.

The server's mode (``--accounts``): ``optional`` lets names be claimed,
``required`` refuses a ``hello`` that neither proves nor claims its name,
``off`` lets no new name be claimed (names claimed earlier stay protected).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable

from protocol import Code
from protocol.messages import MIN_SECRET_CHARS, Hello

from .confusables import look_alike_keys, mixed_scripts, prepare
from .account_limits import AccountLimits, LimitReached, Reservation, SharedLimits, SharedProof
from ..core.names import name_key
from .passwords import hash_secret, verify_secret
from ..storage.store import Statement
from ..core.errors import RequestError

__all__ = ["ACCOUNT_MODES", "Account", "Admission", "Accounts", "save_account_sql", "set_password_sql", "set_secret_sql"]

log = logging.getLogger(__name__)

ACCOUNT_MODES = ("off", "optional", "required")
"""The values of ``--accounts`` (``ServerConfig.accounts``)."""
MAX_CONCURRENT_HASHES = max(1, (os.cpu_count() or 2) // 2)
"""The most scrypt hashes computed at once (each takes ~50 ms of a core and 16 MiB): half the cores, at least one."""
HASHING_NICENESS = 10
"""How much lower than the server's the hashing threads' scheduling priority is (Linux ``nice``)."""

Persist = Callable[..., Awaitable[None]]
AccountRow = tuple[str, str, str, "str | None"]
"""A stored account: (name key, name, secret hash, password hash or ``None``)."""


@dataclass(slots=True)
class Account:
    """A claimed name as the server keeps it.

    Attributes:
        name: the name as it was claimed (its display form).
        secret_hash: the scrypt hash of the client's secret (:func:`server.players.passwords.hash_secret`).
        password_hash: the scrypt hash of the player's password, if one was set.
    """

    name: str
    secret_hash: str
    password_hash: str | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    """What :meth:`Accounts.admit` decided about a ``hello`` without a token.

    Attributes:
        name: the session's name: as claimed for a proven name, else as asked for; ``key`` its name key.
        claimed: the session will own the name (proved it, or claims it now).
        proven: the hello proved an existing claim (it may take over the name's session).
        statements: what to commit with the session's row (the new account's row).
        account: the new account, to keep in memory once ``statements`` are committed.
    """

    name: str
    key: str
    claimed: bool = False
    proven: bool = False
    statements: tuple[Statement, ...] = ()
    account: Account | None = None


def save_account_sql(key: str, account: Account, created: float | None = None) -> Statement:
    """The statement that stores a newly claimed name (it fails if the name is claimed already)."""
    return (
        "INSERT INTO accounts (name_key, name, secret_hash, password_hash, created) VALUES (?, ?, ?, ?, ?)",
        (key, account.name, account.secret_hash, account.password_hash, time.time() if created is None else created),
    )


def set_password_sql(key: str, password_hash: str | None) -> Statement:
    """The statement that sets (``None``: removes) a claimed name's password hash."""
    return "UPDATE accounts SET password_hash = ? WHERE name_key = ?", (password_hash, key)


def set_secret_sql(key: str, secret_hash: str) -> Statement:
    """The statement that replaces a claimed name's secret hash."""
    return "UPDATE accounts SET secret_hash = ? WHERE name_key = ?", (secret_hash, key)


class Accounts:
    """Every claimed name, by name key, and the checks of ``hello`` against them.

    Args:
        mode: ``"off"``, ``"optional"`` or ``"required"`` (see the module's doc).
        persist: ``await persist(*statements)`` commits statements (no-op without a database).
        limits: the limits of wrong proofs (default: 5 a minute per address, 20 in 10 minutes per name)
            and of claims (20 an hour per address).

    Raises:
        ValueError: an unknown mode.
    """

    def __init__(self, mode: str, persist: Persist, limits: AccountLimits | None = None) -> None:
        if mode not in ACCOUNT_MODES:
            raise ValueError(f"accounts must be one of {', '.join(ACCOUNT_MODES)}, not {mode!r}")
        self.mode = mode
        self.limits = limits or AccountLimits()
        self._persist = persist
        self._accounts: dict[str, Account] = {}
        self._looks: dict[str, str] = {}  # look-alike key (server.players.confusables) -> name key of the claimed (or being claimed) name
        self._pending: set[str] = set()  # name keys whose claim is being hashed or committed
        self.source: Callable[[str], AccountRow | None] | None = None
        """Reads one stored account by name key where other nodes may change accounts (a cluster): then every
        look-up of a name reads it fresh. ``None``: this process's memory is the truth."""
        self.on_change: Callable[[str], None] | None = None
        """Called with the name key of an account claimed or changed here, once committed (a cluster tells its other nodes)."""
        self.shared: SharedLimits | None = None
        """Where a node of a cluster counts proofs and claims for the whole cluster, besides :attr:`limits`; ``None`` alone."""

    async def prepare(self) -> None:
        """Build the look-alike tables off the event loop, before the first ``hello`` needs them."""
        await asyncio.to_thread(prepare)

    def load(self, rows: Iterable[AccountRow]) -> None:
        """Bring back the stored accounts: (name key, name, secret hash, password hash) rows."""
        for key, name, secret_hash, password_hash in rows:
            self._remember(key, Account(name, secret_hash, password_hash))

    def refresh(self, key: str) -> Account | None:
        """Read the account of name key ``key`` again from :attr:`source` (no-op without one); return it.

        Raises:
            server.storage.store.StoreError: the database cannot be read.
        """
        if self.source is None:
            return self._accounts.get(key)
        row = self.source(key)
        if row is None:
            return self._accounts.get(key)  # claims are never deleted: one this node knows stands
        self.load([row])
        return self._accounts[key]

    def changed(self, key: str) -> None:
        """An account's row was committed here (claimed, or its password or secret changed): tell :attr:`on_change`."""
        if self.on_change is not None:
            self.on_change(key)

    def is_claimed(self, key: str) -> bool:
        """Whether the name with this name key is claimed."""
        return key in self._accounts

    def proves(self, name: str, secret: str) -> bool:
        """Whether ``secret`` is the secret or password of the claimed ``name`` (runs scrypt: call it off the event loop)."""
        account = self._accounts.get(name_key(name))
        return account is not None and _matches(secret, account.secret_hash, account.password_hash)

    async def admit(self, host: str, name: str, key: str, hello: Hello) -> Admission:
        """Decide whether ``hello`` (no token) from address ``host`` may have the checked name ``name``.

        Proving a claimed name hashes the secret off the event loop; so does
        claiming a free one, whose key stays reserved until :meth:`settle`.

        Raises:
            RequestError: ``name_claimed`` (the name is claimed and not proven),
                ``rate_limited`` (too many wrong guesses, or claims from the address), ``name_taken`` (the name
                looks like a claimed one, or is being claimed), ``bad_name`` (a
                name mixing scripts, guest or claim), ``bad_request`` (a claim without
                a long enough secret), ``claim_required``.
        """
        account = self.refresh(key)
        if account is not None:
            await self._prove(host, name, key, account, hello.secret)
            return Admission(account.name, key, claimed=True, proven=True)  # the name as it was claimed
        self._check_look_alike(name, key)
        scripts = mixed_scripts(name)
        if scripts:  # guests too: a mixed-script name is how a look-alike gets past Unicode's skeletons (ɑӏісе)
            raise RequestError(Code.BAD_NAME, f"a name cannot mix scripts ({' and '.join(scripts)}): {name!r}")
        if hello.claim and self.mode != "off":
            return await self._claim(host, name, key, hello.secret)
        if self.mode == "required":
            raise RequestError(
                Code.CLAIM_REQUIRED,
                f"this server needs claimed names: say hello with claim and a secret to claim {name!r} (the parlour client does so unless --guest)",
            )
        return Admission(name, key)

    def settle(self, admission: Admission, committed: bool) -> None:
        """Finish a claim: keep the account if its row was ``committed``, and free the reservation either way."""
        if admission.account is None:
            return
        self._pending.discard(admission.key)
        if committed:
            self._remember(admission.key, admission.account)
            log.info("the name %s is claimed", admission.name)
            self.changed(admission.key)
        else:
            self._forget_look(admission.name, admission.key)

    def account(self, key: str) -> Account | None:
        """The claimed name with this name key, or ``None`` (read fresh where other nodes may claim names: :attr:`source`)."""
        return self.refresh(key)

    async def verify(self, host: str, key: str, secret: str) -> bool:
        """Whether ``secret`` is the secret or password of the claimed name ``key``, counted as a proof from ``host``.

        The proof is counted against the limits before it is hashed, and given
        back if it is right.

        Raises:
            RequestError: ``rate_limited`` (too many wrong proofs from the address's group, or of the name by it).
        """
        try:
            reservation = self.limits.reserve_proof(host, key)
            if self.shared is not None:
                reservation.shared = await self._shared_proof(reservation, host, key)
        except LimitReached as exc:
            raise RequestError(Code.RATE_LIMITED, str(exc)) from None
        account = self.refresh(key)
        if account is not None and await self._check(secret, account):
            reservation.release()
            return True
        by_address, by_name = self.limits.counts(host, key)
        shown = account.name if account is not None else key
        log.warning("%s gave a wrong secret or password for the claimed name %r (%d from there, %d for the name, recently)", host, shown, by_address, by_name)
        return False

    async def hash(self, secret: str) -> str:
        """The scrypt hash of ``secret``, computed off the event loop."""
        return await self._hash(secret)

    # --- proving and claiming -----------------------------------------------------------------

    async def _prove(self, host: str, name: str, key: str, account: Account, secret: str | None) -> None:
        if secret is None:
            raise RequestError(
                Code.NAME_CLAIMED,
                f"the name {account.name!r} is claimed on this server: give its secret (parlour secret import FILE) or password, or choose another name",
            )
        if await self.verify(host, key, secret):
            return
        raise RequestError(
            Code.NAME_CLAIMED,
            f"wrong secret or password for the claimed name {account.name!r}: import its secret (parlour secret import FILE), or choose another name",
        )

    async def _claim(self, host: str, name: str, key: str, secret: str | None) -> Admission:
        if secret is None or len(secret) < MIN_SECRET_CHARS:
            raise RequestError(Code.BAD_REQUEST, f"claiming a name needs a secret of at least {MIN_SECRET_CHARS} characters", "secret")
        refusal = await self.shared.claim_refusal(self.limits, host) if self.shared is not None else None
        if refusal is not None:
            raise RequestError(Code.RATE_LIMITED, refusal)
        if key in self._pending:
            raise RequestError(Code.NAME_TAKEN, f"the name {name!r} is being claimed by someone else")
        refusal = self.limits.claim_refusal(host)
        if refusal is not None:
            raise RequestError(Code.RATE_LIMITED, refusal)
        self._pending.add(key)
        for look in look_alike_keys(name):
            self._looks.setdefault(look, key)
        try:
            account = Account(name, await self._hash(secret))
        except BaseException:
            self._pending.discard(key)
            self._forget_look(name, key)
            raise
        return Admission(name, key, claimed=True, statements=(save_account_sql(key, account),), account=account)

    async def _shared_proof(self, reservation: Reservation, host: str, key: str) -> SharedProof | None:
        """Count the proof reserved here in the cluster's windows too; if they refuse it, give the reservation back and raise.

        Raises:
            LimitReached: the cluster's budget of the address, or of the name against it, is used.
        """
        assert self.shared is not None
        try:
            return await self.shared.reserve_proof(self.limits, host, key)
        except LimitReached:
            reservation.release()
            raise

    def _check_look_alike(self, name: str, key: str) -> None:
        """Refuse a name whose skeleton is that of another claimed name (or one being claimed)."""
        for look in look_alike_keys(name):
            other = self._looks.get(look)
            if other is None or other == key:
                continue
            shown = self._accounts[other].name if other in self._accounts else other
            raise RequestError(Code.NAME_TAKEN, f"the name {name!r} looks like the claimed name {shown!r}: choose another name")

    async def _check(self, secret: str, account: Account) -> bool:
        return await asyncio.get_running_loop().run_in_executor(_hashing_threads(), _matches, secret, account.secret_hash, account.password_hash)

    async def _hash(self, secret: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(_hashing_threads(), hash_secret, secret)

    def _remember(self, key: str, account: Account) -> None:
        self._accounts[key] = account
        for look in look_alike_keys(account.name):
            self._looks.setdefault(look, key)

    def _forget_look(self, name: str, key: str) -> None:
        """Drop the look-alike entries of a claim that did not happen."""
        for look in look_alike_keys(name):
            if self._looks.get(look) == key:
                del self._looks[look]


@functools.cache
def _hashing_threads() -> concurrent.futures.ThreadPoolExecutor:
    """The process's threads for scrypt: :data:`MAX_CONCURRENT_HASHES` of them, at a lower priority than the event loop."""
    return concurrent.futures.ThreadPoolExecutor(MAX_CONCURRENT_HASHES, thread_name_prefix="scrypt", initializer=_lower_priority)


def _lower_priority() -> None:
    """Make the calling thread yield the CPU to the event loop (on Linux ``setpriority`` of a thread id is per thread)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASHING_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not allowed: the threads run at the server's priority
        pass


def _matches(secret: str, secret_hash: str, password_hash: str | None) -> bool:
    """Whether ``secret`` is the name's secret or its password (run off the event loop)."""
    return verify_secret(secret, secret_hash) or (password_hash is not None and verify_secret(secret, password_hash))

