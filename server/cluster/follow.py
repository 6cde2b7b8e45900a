"""Players who follow a table to the node that took it over (failover, a graceful stop, a lost lease).

A front (:class:`server.cluster.relay.RelayFront`) notes which of its players
sit at or watch each other node's table (:meth:`Following.note`). When the
lobby mirror hears of that table on another node (it took the table over:
:attr:`server.cluster.lobby.LobbyMirror.moved`), each of them follows it
there, with no reconnection:

- a seated player's link to the new node is opened with ``resume`` set
  (:meth:`server.cluster.relay.RelayFront.reopen`): the new node restored the
  table with the seat held under the player's resume token, gives it to the
  link and sends ``resumed``, as any resume does (:mod:`server.cluster.identity`);
- a spectator's front sends a :data:`WATCH` message (an ``M`` record of the
  relay's batch, so it follows the link's ``open`` in order): the new node
  has it watch the table again and sends ``resumed``.

A node that takes a table over itself has its own players who watched it
through the relay watch it here (:meth:`Following.taken_over`).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from protocol.messages import JoinTable, LeaveTable, WatchTable

from ..core.session import Session
from ..tables.table import Table

__all__ = ["FOLLOWED", "Following", "Front", "WATCH", "WelcomeBack"]

WATCH = "watch"
"""The kind of the message ``["watch", from, link, table]`` (front to the table's new node): watch it again."""
FOLLOWED = frozenset((JoinTable, WatchTable, LeaveTable))
"""The relayed request types that change which tables a player is at."""
WelcomeBack = Callable[[Session, Table, "int | None"], None]
"""Sends a session the whole of a table it is back at, from its seat or as a spectator (``resumed``)."""



class Front(Protocol):
    """What :class:`Following` needs of the relay's front (:class:`server.cluster.relay.RelayFront`)."""

    def link(self, session: Session, node: str) -> int:
        """The link of ``session`` to ``node``, opened now if there is none."""

    def reopen(self, session: Session, node: str) -> None:
        """Open ``session``'s link to ``node`` again with ``resume`` set."""

    def post(self, node: str, message: list[Any]) -> None:
        """Send ``node`` a message (a MessagePack list) in order with the relay's records."""


class Following:
    """Which of a front's players are at which other node's table, and their following it when it moves.

    Args:
        front: the relay front whose players these are.
        node: this node's name.
    """

    def __init__(self, front: Front, node: str) -> None:
        self._front = front
        self._node = node
        self._at: dict[int, dict[Session, tuple[str, bool]]] = {}  # table -> players here at it: (its node, watching)

    def note(self, session: Session, table_id: int, node: str, kind: type) -> None:
        """``session`` sent a request of type ``kind`` (one of :data:`FOLLOWED`) about ``table_id``, relayed to ``node``."""
        if kind is LeaveTable:
            self._not_at(session, table_id)
        else:
            self._at.setdefault(table_id, {})[session] = (node, kind is WatchTable)

    def forget(self, session: Session) -> None:
        """``session``'s connection is gone: it follows nothing any more."""
        for table_id in [table_id for table_id, players in self._at.items() if session in players]:
            self._not_at(session, table_id)

    def _not_at(self, session: Session, table_id: int) -> None:
        players = self._at.get(table_id)
        if players is not None:
            players.pop(session, None)
            if not players:
                del self._at[table_id]

    def table_moved(self, table_id: int, node: str) -> None:
        """Node ``node`` holds table ``table_id`` now: this node's players at it follow it there (``resumed`` each)."""
        for session, (held_by, watching) in list(self._at.get(table_id, {}).items()):
            if held_by == node or node == self._node:
                continue
            if session.peer is None:
                self._not_at(session, table_id)
                continue
            if watching:
                link = self._front.link(session, node)
                self._front.post(node, [WATCH, self._node, link, table_id])
            else:
                self._front.reopen(session, node)
            self._at[table_id][session] = (node, watching)

    def taken_over(self, table: Table, welcome_back: WelcomeBack) -> None:
        """This node took ``table`` over: its players here who watched it through the relay watch it here now.
        (Those seated hold their seats by their tokens as the table was restored.)"""
        for session, (_, watching) in self._at.pop(table.id, {}).items():
            if watching and session.peer is not None and table.id not in session.seats:
                table.watch(session)
                session.watching.add(table.id)
                welcome_back(session, table, None)

    def follow(self, session: Session, table_id: int, watching: bool, owner: str | None) -> None:
        """``session`` (connected here) was at table ``table_id``, which node ``owner`` (``None``: not known yet) claimed
        from this one: it follows the table there now, or once the lobby hears of it."""
        self._at.setdefault(table_id, {})[session] = (self._node, watching)
        if owner is not None:
            self.table_moved(table_id, owner)
