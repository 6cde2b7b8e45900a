"""Who mutes whom: a muted player's tells and table chat are dropped and their challenges refused.

A player with a claimed name keeps their mutes in the database (table
``mutes``), so they hold on every later visit; a guest's mutes last as long
as the session. Both are kept by name key (:func:`server.core.names.name_key`),
so a mute holds whatever case or width the muted player writes their name in.

A player may also mute every guest at once (``mute_guests``): then only
claimed names may tell or challenge them, so a flood of fresh guest names
gets nowhere. It is kept as a mute of the name key ``""`` (:data:`GUESTS`),
which no name has.
"""

from __future__ import annotations

import sqlite3
from typing import Awaitable, Callable, Iterable

from protocol import Code
from protocol.messages import ListMutes, Mute, MuteGuests, MutedNames, Ok

from ..core.names import NameError_, check_name, name_key
from ..core.session import Session
from ..storage.store import Statement
from ..core.errors import RequestError

__all__ = ["Mutes", "MAX_MUTES", "GUESTS", "stored_mutes", "stored_mutes_of"]

MAX_MUTES = 500
"""The most names one player may mute (``bad_request`` beyond)."""

GUESTS = ""
"""The muted name key that stands for every guest (the empty name is nobody's)."""

Persist = Callable[..., Awaitable[None]]


class Mutes:
    """Every player's muted names.

    Args:
        persist: ``await persist(*statements)`` commits (no-op without a database).
        max_name_chars: the longest name (a longer one cannot be anybody's).
    """

    def __init__(self, persist: Persist, max_name_chars: int) -> None:
        self._persist = persist
        self._max_name_chars = max_name_chars
        self._claimed: dict[str, set[str]] = {}  # owner name key -> muted name keys, as stored
        self._guests: dict[Session, set[str]] = {}  # guest session -> muted name keys, for the session's life
        self.source: Callable[[str], Iterable[str]] | None = None
        """Reads one claimed owner's stored mutes where other nodes may change them (a cluster): then the
        kept mutes are a cache that a miss fills from it. ``None``: what was restored is all there is."""
        self.on_change: Callable[[str], None] | None = None
        """Called with the owner's name key once a claimed owner's mute change is committed here (a cluster tells its other nodes)."""

    def restore(self, stored: Iterable[tuple[str, str]]) -> None:
        """Bring back the stored mutes: (owner name key, muted name key) pairs."""
        for owner, muted in stored:
            self._claimed.setdefault(owner, set()).add(muted)

    def mutes(self, owner: Session, sender: Session) -> bool:
        """Whether ``owner`` mutes ``sender``: by name, or as a guest while ``owner`` mutes guests."""
        muted = self._of(owner)
        return name_key(sender.name) in muted or (GUESTS in muted and not _claimed(sender))

    def refusal(self, owner: Session, sender: Session) -> str:
        """How ``owner``'s mute of ``sender`` reads in a refusal, after the owner's name."""
        if name_key(sender.name) in self._of(owner):
            return "does not take challenges from you"
        return "takes challenges only from claimed names, and yours is not claimed"

    def mutes_key(self, owner: Session, key: str) -> bool:
        """Whether ``owner`` mutes the name whose name key is ``key`` (:func:`server.core.names.name_key`)."""
        return key in self._of(owner)

    def _of(self, owner: Session) -> set[str]:
        if _claimed(owner):
            key = name_key(owner.name)
            muted = self._claimed.get(key)
            if muted is None:
                return set() if self.source is None else self._load(key)
            return muted
        return self._guests.get(owner, set())

    def _load(self, owner_key: str) -> set[str]:
        """Read a claimed owner's mutes from :attr:`source` into the cache."""
        assert self.source is not None
        muted = self._claimed[owner_key] = set(self.source(owner_key))
        return muted

    def forget_owner(self, owner_key: str | None = None) -> None:
        """Drop the cached mutes of the claimed ``owner_key`` (``None``: everyone's): another node changed them."""
        if owner_key is None:
            self._claimed.clear()
        else:
            self._claimed.pop(owner_key, None)

    async def mute(self, session: Session, request: Mute, then: list[Callable[[], None]]) -> Ok:
        """Mute or unmute ``request.name`` for ``session``: committed first for a claimed name.

        Raises:
            RequestError: ``bad_name`` (not a possible name), ``bad_request`` (oneself, or more than :data:`MAX_MUTES`).
        """
        try:
            key = name_key(check_name(request.name, self._max_name_chars))
        except NameError_ as exc:
            raise RequestError(Code.BAD_NAME, str(exc), "name") from None
        if key == name_key(session.name):
            raise RequestError(Code.BAD_REQUEST, "you cannot mute yourself", "name")
        muted = self._of(session)
        if request.mute and key not in muted and len(muted - {GUESTS}) >= MAX_MUTES:
            raise RequestError(Code.BAD_REQUEST, f"you already mute {MAX_MUTES} names, the most this server keeps; unmute one first", "name")
        await self._set(session, key, request.mute)
        return Ok(id=request.id)

    async def mute_guests(self, session: Session, request: MuteGuests, then: list[Callable[[], None]]) -> Ok:
        """Mute or unmute every guest for ``session``: committed first for a claimed name."""
        await self._set(session, GUESTS, request.mute)
        return Ok(id=request.id)

    async def _set(self, session: Session, key: str, mute: bool) -> None:
        """Add or drop the muted name key ``key`` for ``session`` (stored first for a claimed name)."""
        if _claimed(session):
            owner = name_key(session.name)
            await self._persist(_mute_sql(owner, key) if mute else _unmute_sql(owner, key))
            muted = self._claimed.get(owner)
            if muted is None:
                muted = self._claimed[owner] = set() if self.source is None else self._load(owner)
        else:
            muted = self._guests.setdefault(session, set())
        if mute:
            muted.add(key)
        else:
            muted.discard(key)
        if _claimed(session) and self.on_change is not None:
            self.on_change(name_key(session.name))

    async def list_mutes(self, session: Session, request: ListMutes, then: list[Callable[[], None]]) -> MutedNames:
        """The names ``session`` mutes, sorted, as name keys (at most :data:`MAX_MUTES`)."""
        return MutedNames(id=request.id, names=sorted(self._of(session)))

    def forget(self, session: Session) -> None:
        """Drop a guest's mutes: the session is over."""
        self._guests.pop(session, None)


def _claimed(session: Session) -> bool:
    """Whether the session's name is claimed (``Session.claimed``, on servers with accounts)."""
    return bool(getattr(session, "claimed", False))


def stored_mutes(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every stored mute, (owner name key, muted name key), read in ``db`` (for :meth:`server.storage.store.Store.read`)."""
    return list(db.execute("SELECT owner_key, muted_key FROM mutes"))


def stored_mutes_of(owner_key: str) -> Callable[[sqlite3.Connection], list[str]]:
    """The query (for :meth:`server.storage.store.Store.read`) of the name keys the claimed ``owner_key`` mutes."""
    return lambda db: [str(row[0]) for row in db.execute("SELECT muted_key FROM mutes WHERE owner_key = ?", (owner_key,))]


def _mute_sql(owner_key: str, muted_key: str) -> Statement:
    return "INSERT OR IGNORE INTO mutes (owner_key, muted_key) VALUES (?, ?)", (owner_key, muted_key)


def _unmute_sql(owner_key: str, muted_key: str) -> Statement:
    return "DELETE FROM mutes WHERE owner_key = ? AND muted_key = ?", (owner_key, muted_key)
