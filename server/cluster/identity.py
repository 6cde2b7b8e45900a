"""Names and sessions cluster-wide: every node reads identity from the one database the cluster shares.

The nodes of a cluster share one PostgreSQL database; it is the truth for
claimed names and their secrets, ratings, mutes and sessions. What a node
keeps of them in memory is a cache: a ``hello`` reads the name's account
afresh, a token this node does not hold is looked up in ``sessions``, and
ratings and mutes that another node changed are dropped from every other
node's cache when it says so on the bus (topic :data:`IDENTITY`). Redis
pub/sub may lose messages, so a node that lost some (a gap, or a
reconnection) drops all its cached ratings and mutes and reads its accounts
again.

A session moves between nodes by its token: the node it reconnects to reads
its row, takes its name over in Redis and says ``moved`` on the bus; the node
that held it lets it go (its old connection gets ``signed_in_elsewhere``) but
keeps the seats it holds, and the new node brings back the seats at other
nodes' tables through the relay (:meth:`server.cluster.relay.RelayFront.reattach`).

Messages on :data:`IDENTITY`, MessagePack lists: ``["account", name_key]``
(claimed, or its secret or password changed), ``["rating", name_key]``,
``["mutes", owner_key]``, ``["moved", token]``, ``["renewed", "OLD NEW"]`` (a
session's token was renewed: the seats other nodes hold for it follow).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import msgpack

from ..bus.redis import RedisBus
from ..core.names import name_key
from ..core.session import Session
from ..players.accounts import AccountRow, Accounts
from ..players.mutes import Mutes, stored_mutes_of
from ..players.sessions import Sessions
from ..ratings.ratings import Ratings
from ..storage.statements import delete_session_sql
from ..storage.store import Statement, Store
from ..tables.lobby import Lobby
from .names import ClusterNames
from .relay import RelayFront

__all__ = ["IDENTITY", "SharedIdentity", "adopt_seats", "seat_holder"]

log = logging.getLogger(__name__)

IDENTITY = "identity"
"""The bus topic on which nodes tell each other what changed in the shared identity."""

_UNFINISHED_SEAT = "SELECT id FROM tables WHERE status <> 'over' AND (seat0_token = ? OR seat1_token = ?) ORDER BY id"
_UNFINISHED_SEAT_HOLDERS = (
    "SELECT tables.id, table_leases.node FROM tables LEFT JOIN table_leases ON table_leases.table_id = tables.id"
    " WHERE tables.status <> 'over' AND (tables.seat0_token = ? OR tables.seat1_token = ?) ORDER BY tables.id"
)
"""The unfinished tables seating a token, each with the node its lease names (``None``: no lease row yet)."""
_FINISHED_SEATS = "SELECT id FROM tables WHERE status = 'over' AND (seat0_token = ? OR seat1_token = ?) AND id IN ({ids}) ORDER BY id"
"""Which of some finished tables (``{ids}``: as many ``?``) seat a token."""


def seat_holder(lobby: Lobby, token: str) -> Session | None:
    """The session of ``token`` seated at one of ``lobby``'s tables, or ``None`` (a linear search: a resume's, not a move's)."""
    for table in lobby.tables.values():
        for held in table.seats:
            if held is not None and held.token == token:
                return held
    return None


def adopt_seats(lobby: Lobby, sessions: Sessions, session: Session) -> list[int]:
    """Give ``session`` every seat at ``lobby``'s tables held under its token by another session; return those tables' ids.

    A table taken over from another node is restored with a session of its own for each seat's token; a
    relayed player whose link to this node was open already (it sits or watches at another table here) holds
    that seat through its link's session from now on; where ``sessions`` (the node's) name the restored
    session by token or name, they name ``session`` instead.
    """
    adopted = []
    for table in lobby.tables.values():
        for seat, held in enumerate(table.seats):
            if held is None or held is session or held.token != session.token:
                continue
            table.bus.unsubscribe(table.topic, held)
            held.seats.pop(table.id, None)
            table.assign_seat(seat, session)
            session.seats[table.id] = seat
            if sessions.by_token.get(session.token) is held:
                sessions.by_token[session.token] = session
            if sessions.by_name.get(name_key(held.name)) is held:
                sessions.by_name[name_key(held.name)] = session
            adopted.append(table.id)
    return adopted


class SharedIdentity:
    """Makes a node's sessions, accounts, ratings and mutes read through to the shared ``store``.

    Args:
        bus: the node's bus.
        store: the database every node of the cluster shares.
        sessions: the node's sessions (their :attr:`~server.players.sessions.Sessions.shared` becomes this).
        mutes: the node's mutes.
        lobby: the node's lobby (its own tables).
        names: the node's name reservations in Redis.
        front: the relay front (seats at other nodes' tables come back through it).
    """

    def __init__(
        self, bus: RedisBus, store: Store, sessions: Sessions, mutes: Mutes, ratings: Ratings, lobby: Lobby, names: ClusterNames, front: RelayFront
    ) -> None:  # fmt: skip
        self._bus = bus
        self._store = store
        self._sessions = sessions
        self._accounts: Accounts = sessions.accounts
        self._mutes = mutes
        self._ratings = ratings
        self._lobby = lobby
        self._names = names
        self._front = front

    def install(self) -> None:
        """Hook into the node's groups and listen on :data:`IDENTITY`."""
        self._sessions.shared = self
        self._accounts.source = self._account_row
        self._accounts.on_change = lambda key: self._say("account", key)
        self._ratings.on_change = lambda key: self._say("rating", key)
        self._mutes.source = lambda owner: self._store.read(stored_mutes_of(owner))
        self._mutes.on_change = lambda owner: self._say("mutes", owner)
        self._bus.subscribe(IDENTITY, self)
        self._bus.on_gap.append(self._gap)
        self._bus.on_connected.append(self._reconnected)

    # --- what other nodes say ---------------------------------------------------------

    def _say(self, kind: str, value: str) -> None:
        self._bus.publish_remote(IDENTITY, msgpack.packb([kind, value]))

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        """A message on :data:`IDENTITY` from another node: drop or reread what it changed, or let a session go."""
        try:
            kind, value = msgpack.unpackb(frame)
            self._apply(str(kind), str(value))
        except (ValueError, TypeError, msgpack.UnpackException) as exc:
            log.warning("ignored a malformed identity message: %s", exc)

    def _apply(self, kind: str, value: str) -> None:
        if kind == "rating":
            self._ratings.forget(value)
        elif kind == "mutes":
            self._mutes.forget_owner(value)
        elif kind == "account":
            self._reread(lambda: self._accounts.refresh(value))
        elif kind == "moved":
            self._sessions.let_go(value)
        elif kind == "renewed":
            old, new = value.split(" ", 1)
            held = seat_holder(self._lobby, old)
            if held is not None:
                held.token = new  # the rows say so already: the node that renewed it committed them

    def _gap(self, topic: str, view: object, origin: str) -> None:
        if topic == IDENTITY:
            log.warning("identity messages from node %s were lost: rereading ratings, mutes and accounts", origin)
            self._forget_all()

    async def _reconnected(self) -> None:
        self._forget_all()

    def _forget_all(self) -> None:
        self._ratings.forget()
        self._mutes.forget_owner()
        self._reread(lambda: self._accounts.load(self._store.accounts()))

    @staticmethod
    def _reread(read: Callable[[], object]) -> None:
        try:
            read()
        except Exception as exc:  # the database away: every hello reads the account it needs afresh anyway
            log.warning("cannot reread accounts: %s", exc)

    def _account_row(self, key: str) -> AccountRow | None:
        row = self._store.read(
            lambda db: db.execute("SELECT name_key, name, secret_hash, password_hash FROM accounts WHERE name_key = ?", (key,)).fetchone()
        )
        return None if row is None else (str(row[0]), str(row[1]), str(row[2]), None if row[3] is None else str(row[3]))

    # --- sessions (server.players.sessions.SharedSessions) -----------------------------

    def stored_name(self, token: str) -> str | None:
        """The name of the stored session of ``token``, or ``None``."""
        row = self._store.read(lambda db: db.execute("SELECT name FROM sessions WHERE token = ?", (token,)).fetchone())
        return None if row is None else str(row[0])

    def holder(self, token: str) -> Session | None:
        """The session of ``token`` seated at one of this node's tables (a relayed player's), or ``None``."""
        return seat_holder(self._lobby, token)

    async def held_elsewhere(self, key: str, name: str) -> str | None:
        """The token of the newest stored session of ``name`` if another node holds the name in Redis, else ``None``."""
        node = await self._names.holder(key)
        if node is None or node == self._bus.node:
            return None
        row = self._store.read(lambda db: db.execute("SELECT token FROM sessions WHERE name = ? ORDER BY created DESC LIMIT 1", (name,)).fetchone())
        return None if row is None else str(row[0])

    def renewed(self, old: str, new: str) -> None:
        """Tell the other nodes that the session of token ``old`` has token ``new`` (the seats they hold for it follow)."""
        self._say("renewed", f"{old} {new}")

    async def take_name(self, key: str, name: str, token: str) -> None:
        """Tell the other nodes that the session of ``token`` moved here, and hold its name here."""
        self._say("moved", token)
        await self._names.take(key)

    def reattach(self, session: Session, then: list[Callable[[], None]]) -> None:
        """After the ``welcome`` (``then``), have each other node at whose tables ``session`` holds a seat tell it so:
        its unfinished tables, and the finished ones another node still lists with the player seated (as one node
        sends ``resumed`` for a finished table its player has not left)."""
        token = session.token
        rows = self._store.read(lambda db: db.execute(_UNFINISHED_SEAT_HOLDERS, (token, token)).fetchall())
        elsewhere = {int(row[0]): None if row[1] is None else str(row[1]) for row in rows if int(row[0]) not in self._lobby.tables}
        elsewhere.update((table_id, None) for table_id in self._finished_seats(session))  # the mirror names their node
        if elsewhere:
            then.append(lambda: self._front.reattach(session, elsewhere))

    def _finished_seats(self, session: Session) -> list[int]:
        """The finished tables of other nodes whose lobby lines seat ``session``'s name and whose rows seat its token."""
        key = name_key(session.name)
        listed = [info.id for info in self._lobby.remote.values() if info.status == "over" and any(name is not None and name_key(name) == key for name in info.seats)]
        if not listed:
            return []
        sql = _FINISHED_SEATS.format(ids=", ".join("?" * len(listed)))
        token = session.token
        rows = self._store.read(lambda db: db.execute(sql, (token, token, *listed)).fetchall())
        return [int(row[0]) for row in rows]

    def forget_sql(self, token: str) -> Statement:
        """Delete the session row of ``token`` unless a seat at an unfinished table (of any node) still names it."""
        sql, params = delete_session_sql(token)
        return f"{sql} AND NOT EXISTS ({_UNFINISHED_SEAT.replace(' ORDER BY id', '')})", (*params, token, token)
