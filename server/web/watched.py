"""What the web face reads of the game server: a narrow view of :class:`server.app.Server`.

The web face sits above every other group, so it must not import the server
entry point that starts it; it names what it uses here instead, and
``server.app.Server`` satisfies it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

from ..bus.bus import Bus
from ..net.limits import Limits
from ..social.chat import TableChat
from ..storage.store import Store
from ..tables.lobby import Lobby
from ..tables.table import Table

__all__ = ["WatchedServer"]


class _Config(Protocol):
    limits: Limits


class _Authority(Protocol):
    rematch_listeners: list[Callable[[Table, Table], None]]


class _Slots(Protocol):
    def take_slot(self, host: str) -> str | None:
        """Count a connection from ``host``; the refusal's text when it is over a limit, else ``None``."""

    def free_slot(self, host: str) -> None:
        """Give back a connection counted by :meth:`take_slot`."""


class _Front(Protocol):
    def spectate(self, node: str, table_id: int, sink: Any) -> int:
        """Have ``node`` feed ``sink`` its table as a spectator sees it; return the feed's link."""

    def unspectate(self, link: int) -> None:
        """Stop the feed of ``link``."""


class _Mirror(Protocol):
    owner: Mapping[int, str]


class _Cluster(Protocol):
    front: _Front | None
    mirror: _Mirror


class WatchedServer(Protocol):
    """The parts of the game server the web face reads: tables, lobby, bus, archive, chat, limits, and on a node
    of a cluster (``cluster`` not ``None``) which node holds another table and the relay that feeds it here."""

    config: _Config
    tables: Mapping[int, Table]
    lobby: Lobby
    bus: Bus
    store: Store | None
    table_chat: TableChat
    connections: _Slots
    authority: _Authority
    cluster: _Cluster | None
