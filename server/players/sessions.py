"""Sessions: the handshake, player names, resume tokens.

:class:`Sessions` answers ``hello``: it checks the version and the password,
opens a new session (its row committed first) or gives an existing one to a
new connection, and forgets sessions that hold nothing. A ``hello`` that
proves a claimed name by its secret or password gets a fresh token: whoever
held the old one (a thief who copied it) is shut out, and so is every other
session of that name (:meth:`Sessions.renew_token`). What a resumed
session finds at its tables (grace timers, ``resumed`` pushes) is the
tables' business, not this module's. On a node of a cluster sharing one
database (:attr:`Sessions.shared`), a token or a proven claimed name whose
session another node holds moves that session here (:meth:`Sessions._take_over`,
:meth:`Sessions.let_go` on the node it leaves).
"""

from __future__ import annotations

import hmac
import secrets
import logging
from typing import Awaitable, Callable, Protocol

import games
from protocol import PROTOCOL_VERSION, Code, ProtocolError
from protocol.messages import Error, Hello, Identify, Identity, Welcome

from .. import __version__
from .accounts import Accounts
from ..net.limits import Limits
from ..core.names import NameError_, check_name, name_key
from ..net.peer import Peer
from ..core.session import Session, new_token
from ..storage.common import StorageUnavailable
from ..storage.schema import is_disk_full
from ..storage.statements import delete_session_sql, save_session_sql
from ..storage.store import Statement, StoreError
from ..core.errors import RequestError

__all__ = ["Sessions", "SIGNED_IN_ELSEWHERE", "new_server_id", "renew_token_sql"]

SIGNED_IN_ELSEWHERE = "you signed in elsewhere: another connection took over this session"
"""The message of ``signed_in_elsewhere``, sent to the connection a resume or a proven claimed name replaced."""


def new_server_id() -> str:
    """A fresh server id (128 random bits as 32 hexadecimal digits), for a server without a database."""
    return secrets.token_hex(16)

log = logging.getLogger(__name__)

Persist = Callable[..., Awaitable[None]]
PersistSoon = Callable[..., None]


class NameReservations(Protocol):
    """Names in use reserved beyond this process (several nodes sharing one set of names)."""

    async def reserve(self, key: str, name: str) -> None:
        """Reserve the name (name key ``key``); raises ``RequestError`` (``name_taken``, ``internal_error``) when it cannot be."""

    def release(self, key: str) -> None:
        """Free the name whose name key is ``key`` (in the background)."""


class SharedSessions(Protocol):
    """Sessions shared with other nodes through one database (a cluster's :class:`server.cluster.identity.SharedIdentity`).

    A token this node does not hold may be another node's: its session is read
    from the database, taken over here, and the node that held it lets go.
    """

    def stored_name(self, token: str) -> str | None:
        """The name of the stored session of ``token``, or ``None`` (raises ``StoreError`` when the database cannot be read)."""

    def holder(self, token: str) -> Session | None:
        """The session of ``token`` holding a seat at one of this node's tables (a relayed player's), or ``None``."""

    async def take_name(self, key: str, name: str, token: str) -> None:
        """Hold the name (name key ``key``) here, whoever held it, and tell the other nodes that the session of ``token`` moved."""

    async def held_elsewhere(self, key: str, name: str) -> str | None:
        """The token of the session of the name (name key ``key``, display ``name``) if another node holds it, else ``None``."""

    def renewed(self, old: str, new: str) -> None:
        """The session of token ``old`` has token ``new`` now (committed): tell the nodes seating it under ``old``."""

    def reattach(self, session: Session, then: list[Callable[[], None]]) -> None:
        """After the ``welcome`` (``then``), bring back ``session``'s seats at other nodes' tables."""

    def forget_sql(self, token: str) -> Statement:
        """The statement that deletes the session row of ``token`` (kept while a seat somewhere still names it)."""


class Sessions:
    """Every live session, by token and by name.

    Args:
        limits: the server's limits (name length, and what ``welcome`` announces).
        server_name: shown to clients in ``welcome``.
        password: if set, ``hello`` must carry it.
        persist: ``await persist(*statements)`` commits statements (no-op without a database).
        persist_soon: ``persist_soon(*statements)`` commits in the background.
        accounts: the claimed names (default: none, and none may be claimed).

    Attributes:
        by_token: token -> session.
        by_name: name key (:func:`server.core.names.name_key`) -> the session holding that name.
    """

    def __init__(
        self, limits: Limits, server_name: str, password: str | None, persist: Persist, persist_soon: PersistSoon, accounts: Accounts | None = None
    ) -> None:
        self.by_token: dict[str, Session] = {}
        self.by_name: dict[str, Session] = {}
        self._claiming: set[str] = set()  # name keys of new sessions whose commit is in flight
        self._limits = limits
        self._server_name = server_name
        self._password = password
        self._persist = persist
        self._persist_soon = persist_soon
        self.accounts = accounts if accounts is not None else Accounts("off", persist)
        self.server_id = new_server_id()
        """The server's stable identity in ``welcome`` and ``identity``: the database's once the server has opened it."""
        self.grace_s: float | None = None
        """The grace period ``welcome`` announces (the server's ``grace_s``)."""
        self.http_port: int | None = None
        """The web face's port ``welcome`` announces (``--http``), or ``None``."""
        self.names: NameReservations | None = None
        """Where names in use are also reserved beyond this process (a cluster's :class:`server.cluster.names.ClusterNames`)."""
        self.shared: SharedSessions | None = None
        """Where sessions of other nodes are found (a cluster sharing one database); ``None``: this process's alone."""
        self.node: str | None = None
        """The node name ``welcome`` announces (a node of a cluster), or ``None``."""

    async def hello(self, peer: Peer, hello: Hello) -> tuple[Session, Welcome]:
        """Open or resume the session ``hello`` asks for on ``peer``; return it and the ``welcome`` to send.

        Raises:
            ProtocolError: ``unsupported_version`` or ``bad_password`` (fatal).
            RequestError: ``handshake_required`` (a second hello), ``bad_token``,
                ``bad_name``, ``name_taken``, ``internal_error``, or what
                :meth:`server.players.accounts.Accounts.admit` raises (``name_claimed``, ...).
            StoreError: the disk is full (``storage_full``).
        """
        if hello.version != PROTOCOL_VERSION:
            raise ProtocolError(
                Code.UNSUPPORTED_VERSION,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {hello.version}",
                request_id=hello.id,
                fatal=True,
            )
        if peer.session is not None:
            raise RequestError(Code.HANDSHAKE_REQUIRED, "hello was already received")
        self._check_password(hello)
        if hello.token is not None:
            if self.shared is not None and hello.token not in self.by_token:
                await self._take_over(hello.token, hello.name, self.shared)
            session, resumed = self._resume(peer, hello.token, hello.name), True
        else:
            session, resumed = await self._admit(peer, hello)
        session.bot = hello.bot
        peer.session = session
        peer.connected_at = None  # the handshake deadline is met; nothing else needs the connection's start
        peer.protocol.accept_hello()
        return session, self._welcome(hello, session, resumed)

    def _welcome(self, hello: Hello, session: Session, resumed: bool) -> Welcome:
        limits = self._limits
        return Welcome(
            id=hello.id,
            protocol=PROTOCOL_VERSION,
            server=self._server_name,
            version=__version__,
            name=session.name,
            token=session.token,
            games=[games.get(n).describe() for n in games.names()],
            resumed=resumed,
            heartbeat_s=limits.heartbeat_s,
            idle_timeout_s=limits.idle_timeout_s,
            requests_per_s=limits.requests_per_s,
            request_burst=limits.request_burst,
            claimed=session.claimed,
            accounts=self.accounts.mode,
            server_id=self.server_id,
            grace_s=self.grace_s,
            http=self.http_port,
            node=self.node,
        )

    def identify(self, request: Identify) -> Identity:
        """Answer ``identify`` (before or after ``hello``): the server's stable id and its name."""
        return Identity(id=request.id, server_id=self.server_id, server=self._server_name)

    def _check_password(self, hello: Hello) -> None:
        """Refuse a ``hello`` without the server's password (compared in constant time)."""
        expected = self._password
        if expected is None:
            return
        if hello.password is None:
            raise ProtocolError(Code.BAD_PASSWORD, "this server needs a password", request_id=hello.id, fatal=True)
        if not hmac.compare_digest(hello.password.encode(), expected.encode()):
            raise ProtocolError(Code.BAD_PASSWORD, "wrong password", request_id=hello.id, fatal=True)

    async def _admit(self, peer: Peer, hello: Hello) -> tuple[Session, bool]:
        """Open a session for ``hello.name`` as the claimed names allow; return it and whether it was resumed.

        A ``hello`` that proves a claimed name whose session lives on takes
        that session over, as a resume by its token would.
        """
        try:
            name = check_name(hello.name, self._limits.max_name_chars)
        except NameError_ as exc:
            raise RequestError(Code.BAD_NAME, str(exc)) from None
        admission = await self.accounts.admit(peer.host, name, name_key(name), hello)
        holder = self.by_name.get(admission.key)
        if admission.proven and holder is None and self.shared is not None:
            token = await self.shared.held_elsewhere(admission.key, admission.name)
            if token is not None:  # proven here, held by another node: taken over, as a local one is
                await self._take_over(token, admission.name, self.shared)
                holder = self.by_name.get(admission.key)
        if admission.proven and holder is not None:
            if await self.renew_token(holder) is None:
                raise RequestError(Code.INTERNAL_ERROR, f"the session of {holder.name!r} ended while it was being taken over; try again")
            holder.claimed = True
            return self._resume(peer, holder.token, name), True
        committed = False
        try:
            session = await self._open(peer, admission.name, admission.statements)
            committed = True
        finally:
            self.accounts.settle(admission, committed)
        session.claimed = admission.claimed
        if admission.proven:
            await self.end_others(session)
        return session, False

    async def renew_token(self, session: Session, *statements: Statement) -> str | None:
        """Give ``session`` a fresh token and end every other session of its name; return the token.

        The new token (in the sessions row and the seats it holds), the rows of
        the other sessions going and ``statements`` are committed together
        first; then the old token is dead and the other sessions' connections
        get ``bad_token`` and are closed. ``None`` when ``session`` itself was
        forgotten while the commit was in flight (``statements`` are committed all the same).

        Raises:
            RequestError: ``internal_error`` when the database refused the write (nothing was written).
            StoreError: the disk is full (``storage_full``).
        """
        old, token = session.token, new_token()
        others = self._others(session)
        try:
            await self._persist(*renew_token_sql(old, token), *(delete_session_sql(other.token) for other in others), *statements)
        except StoreError as exc:
            if is_disk_full(exc) or isinstance(exc, StorageUnavailable):
                raise
            log.error("cannot renew the token of %s: %s", session.name, exc)
            raise RequestError(Code.INTERNAL_ERROR, "the server's database refused the write; try again") from None
        for other in others:
            self._end(other)
        if self.by_token.get(old) is not session:  # forgotten while the commit was in flight
            self._persist_soon(delete_session_sql(token))
            return None
        del self.by_token[old]
        session.token = token
        self.by_token[token] = session
        if self.shared is not None:
            self.shared.renewed(old, token)
        log.info("%s has a fresh token; %d other sessions of the name ended", session.name, len(others))
        return token

    async def end_others(self, session: Session) -> None:
        """End every other session of ``session``'s name (their rows deleted first), as :meth:`renew_token` does."""
        others = self._others(session)
        if not others:
            return
        try:
            await self._persist(*(delete_session_sql(other.token) for other in others))
        except StoreError as exc:  # the proof stands; the other sessions live on until they are forgotten
            log.error("cannot end the other sessions of %s: %s", session.name, exc)
            return
        for other in others:
            self._end(other)

    def _others(self, session: Session) -> list[Session]:
        key = name_key(session.name)
        return [other for other in self.by_token.values() if other is not session and name_key(other.name) == key]

    def _end(self, other: Session) -> None:
        """Kill ``other``'s token (its row is gone) and close its connection; the seats it holds run out their grace."""
        if self.by_token.get(other.token) is other:
            del self.by_token[other.token]
        if self.by_name.get(name_key(other.name)) is other:
            del self.by_name[name_key(other.name)]
            self._release(name_key(other.name))
        peer = other.peer
        if peer is not None and not peer.closed:
            peer.send(Error(code=Code.BAD_TOKEN, message="this session was ended: its name was proven again, or its password or secret changed"))
            peer.close()

    async def _open(self, peer: Peer, name: str, statements: tuple[Statement, ...] = ()) -> Session:
        """Open a session for the checked ``name`` with a fresh token, once its row (and ``statements``) are committed.

        While the commit is in flight the name is reserved (a concurrent
        ``hello`` gets ``name_taken``); if the commit fails, the name is free
        again and nothing of the session stays in memory.

        Raises:
            RequestError: ``name_taken``, or ``internal_error`` when the database refused the write.
        """
        key = name_key(name)
        if key in self.by_name or key in self._claiming:
            raise RequestError(Code.NAME_TAKEN, f"the name {name!r} is already in use")
        session = Session(name=name, token=new_token(), peer=peer)
        self._claiming.add(key)
        try:
            await self._reserve(key, name)
            try:
                await self._persist(save_session_sql(session.token, session.name), *statements)
            except BaseException:
                self._release(key)
                raise
        except StoreError as exc:
            if is_disk_full(exc) or isinstance(exc, StorageUnavailable):
                raise  # storage_full or storage_unavailable: the same hello may succeed later
            log.error("cannot save the session of %s: %s", name, exc)
            raise RequestError(
                Code.INTERNAL_ERROR, f"your session as {name!r} could not be saved (the server's database refused the write); try again"
            ) from None
        finally:
            self._claiming.discard(key)
        self.by_name[key] = session
        self.by_token[session.token] = session
        log.info("%s is %s", peer.address, name)
        return session

    async def _reserve(self, key: str, name: str) -> None:
        if self.names is not None:
            await self.names.reserve(key, name)

    def _release(self, key: str) -> None:
        if self.names is not None:
            self.names.release(key)

    def _resume(self, peer: Peer, token: str, name: str) -> Session:
        """Give the session of ``token`` to ``peer``; the token stays the same, nothing is written.

        Raises:
            RequestError: ``bad_token`` for an unknown token or one of another name.
        """
        session = self.by_token.get(token)
        if session is None or name_key(session.name) != name_key(name):
            raise RequestError(Code.BAD_TOKEN, f"this server has no session {name!r} with that token (it may have expired)")
        old_peer, session.peer = session.peer, peer
        if old_peer is not None:
            old_peer.send(Error(code=Code.SIGNED_IN_ELSEWHERE, message=SIGNED_IN_ELSEWHERE))
            old_peer.close()
        log.info("%s resumed %s", peer.address, session.name)
        return session

    async def _take_over(self, token: str, name: str, shared: SharedSessions) -> None:
        """Make the stored session of ``token`` (another node's, or one this node forgot) this node's, if its name is ``name``.

        Nothing happens for an unknown token or another name: :meth:`_resume` refuses it then.

        Raises:
            RequestError: ``name_taken`` (a session of another token holds the name here), ``internal_error``.
            StoreError: the database cannot be read (``storage_unavailable``).
        """
        stored = shared.stored_name(token)
        key = name_key(name)
        if stored is None or name_key(stored) != key:
            return
        holding = self.by_name.get(key)
        if (holding is not None and holding.token != token) or key in self._claiming:
            raise RequestError(Code.NAME_TAKEN, f"the name {name!r} is already in use here")
        self._claiming.add(key)
        try:
            await shared.take_name(key, stored, token)
        finally:
            self._claiming.discard(key)
        if token in self.by_token:  # taken over by a concurrent hello meanwhile
            return
        session = shared.holder(token) or Session(name=stored, token=token)
        session.claimed = self.accounts.account(key) is not None
        self.by_token[token] = session
        self.by_name[key] = session
        log.info("the session of %s moved to this node", stored)

    def let_go(self, token: str) -> None:
        """The session of ``token`` moved to another node: end its connection here and forget it, keeping its row and name.

        Seats it holds at this node's tables stay held by it (another node's
        player plays them through the relay).
        """
        session = self.by_token.pop(token, None)
        if session is None:
            return
        key = name_key(session.name)
        if self.by_name.get(key) is session:
            del self.by_name[key]
        peer = session.peer
        if peer is not None and not peer.closed:
            peer.send(Error(code=Code.SIGNED_IN_ELSEWHERE, message=SIGNED_IN_ELSEWHERE))
            peer.close()
        log.info("the session of %s moved to another node", session.name)

    def reattach(self, session: Session, then: list[Callable[[], None]]) -> None:
        """After a resume's ``welcome`` (``then``), bring back the seats ``session`` holds at other nodes' tables (a cluster's)."""
        if self.shared is not None:
            self.shared.reattach(session, then)

    def forget_sql(self, token: str) -> Statement:
        """The statement that deletes the session row of ``token`` (in a cluster: unless a seat somewhere still names it)."""
        return delete_session_sql(token) if self.shared is None else self.shared.forget_sql(token)

    def restore(self, stored: dict[str, str]) -> None:
        """Bring back stored sessions (token -> name); their names are claimed by :meth:`claim_name` once they hold a seat."""
        for token, name in stored.items():
            self.by_token[token] = Session(name=name, token=token, claimed=self.accounts.is_claimed(name_key(name)))

    def claim_name(self, session: Session) -> None:
        """Reserve a restored session's name (unless another session already holds it)."""
        self.by_name.setdefault(name_key(session.name), session)

    def forget(self, session: Session) -> None:
        """Drop a session that holds nothing: its name is free again, its token dead."""
        if self.by_name.get(name_key(session.name)) is session:
            del self.by_name[name_key(session.name)]
            self._release(name_key(session.name))
        if self.by_token.pop(session.token, None) is not None:
            self._persist_soon(self.forget_sql(session.token))


def renew_token_sql(old: str, new: str) -> tuple[Statement, Statement]:
    """The statements that move a session from token ``old`` to ``new``: its row, and the seats that name it."""
    return (
        ("UPDATE sessions SET token = ? WHERE token = ?", (new, old)),
        (
            "UPDATE tables SET seat0_token = CASE WHEN seat0_token = ? THEN ? ELSE seat0_token END, "
            "seat1_token = CASE WHEN seat1_token = ? THEN ? ELSE seat1_token END WHERE seat0_token = ? OR seat1_token = ?",
            (old, new, old, new, old, old),
        ),
    )
