"""Changing a claimed name's password or secret: ``set_password`` and ``change_secret``.

Either needs the name's current password or secret (``current``), checked
and counted like a guess in ``hello`` (:meth:`server.players.accounts.Accounts.verify`),
so a stolen resume token alone cannot take a name over. The new hash, a
fresh token for the sender's session and the end of every other session of
the name are committed together; the reply (``token_renewed``) carries the
fresh token, and whoever held the old one is shut out.
"""

from __future__ import annotations

from typing import Callable

from protocol import Code
from protocol.messages import MIN_PASSWORD_CHARS, MIN_SECRET_CHARS, ChangeSecret, SetPassword, TokenRenewed

from .accounts import Account, Accounts, set_password_sql, set_secret_sql
from ..core.names import name_key
from ..core.session import Session
from .sessions import Sessions
from ..core.errors import RequestError

__all__ = ["Credentials"]


class Credentials:
    """The handlers of ``set_password`` and ``change_secret``.

    Args:
        accounts: the claimed names.
        sessions: the live sessions (whose tokens are renewed).
    """

    def __init__(self, accounts: Accounts, sessions: Sessions) -> None:
        self._accounts = accounts
        self._sessions = sessions

    async def set_password(self, session: Session, request: SetPassword, then: list[Callable[[], None]]) -> TokenRenewed:
        """Set (``None``: remove) the password of the sender's claimed name, proven by ``request.current``.

        Raises:
            RequestError: ``bad_action`` (the session does not own a claimed name), ``bad_request``
                (a password shorter than :data:`MIN_PASSWORD_CHARS`, or no ``current``), ``name_claimed``
                (``current`` is wrong), ``rate_limited`` (too many wrong proofs), ``internal_error``.
        """
        password = request.password
        if password is not None and len(password) < MIN_PASSWORD_CHARS:
            raise RequestError(Code.BAD_REQUEST, f"a password has at least {MIN_PASSWORD_CHARS} characters, not {len(password)}", "password")
        key, account = await self._prove(session, request.current, "set a password")
        password_hash = None if password is None else await self._accounts.hash(password)
        token = await self._sessions.renew_token(session, set_password_sql(key, password_hash))
        account.password_hash = password_hash
        self._accounts.changed(key)
        return _renewed(request.id, token)

    async def change_secret(self, session: Session, request: ChangeSecret, then: list[Callable[[], None]]) -> TokenRenewed:
        """Replace the secret of the sender's claimed name with ``request.secret``, proven by ``request.current``.

        Raises:
            RequestError: ``bad_action``, ``bad_request`` (a secret shorter than :data:`MIN_SECRET_CHARS`),
                ``name_claimed``, ``rate_limited``, ``internal_error``, as for :meth:`set_password`.
        """
        if len(request.secret) < MIN_SECRET_CHARS:
            raise RequestError(Code.BAD_REQUEST, f"a secret has at least {MIN_SECRET_CHARS} characters, not {len(request.secret)}", "secret")
        key, account = await self._prove(session, request.current, "change its secret")
        secret_hash = await self._accounts.hash(request.secret)
        token = await self._sessions.renew_token(session, set_secret_sql(key, secret_hash))
        account.secret_hash = secret_hash
        self._accounts.changed(key)
        return _renewed(request.id, token)

    async def _prove(self, session: Session, current: str | None, doing: str) -> tuple[str, Account]:
        """The name key and account of ``session``'s claimed name, once ``current`` proved it."""
        key = name_key(session.name)
        account = self._accounts.account(key)
        if not session.claimed or account is None:
            raise RequestError(Code.BAD_ACTION, f"only a claimed name can {doing}, and {session.name!r} is not claimed by you")
        if current is None:
            raise RequestError(Code.BAD_REQUEST, f"to {doing}, give the name's current password or secret in current", "current")
        host = session.peer.host if session.peer is not None else "?"
        if not await self._accounts.verify(host, key, current):
            raise RequestError(Code.NAME_CLAIMED, f"wrong current password or secret for {account.name!r}", "current")
        return key, account


def _renewed(request_id: int, token: str | None) -> TokenRenewed:
    """The reply carrying ``token``; the change is made, but a session that ended meanwhile gets no token."""
    if token is None:
        raise RequestError(Code.INTERNAL_ERROR, "the change is made, but your session ended meanwhile: say hello again with the new password or secret")
    return TokenRenewed(id=request_id, token=token)
