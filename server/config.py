"""The settings of a server (:class:`ServerConfig`) and the bounds they are checked against."""

from __future__ import annotations

import ssl as ssl_module
from dataclasses import dataclass

from .net.limits import Limits
from .play.authority import DEFAULT_ABORT_AFTER_S
from .play.computer import DEFAULT_HINT_SECONDS
from .players.accounts import ACCOUNT_MODES
from .storage.common import is_postgres_url
from .tables.lobby import DEFAULT_TICK_S

__all__ = ["CLUSTER_NEEDS_POSTGRES", "DEFAULT_LEASE_S", "LEAST_LEASE_S", "MOST_LEASE_S", "MOST_ABORT_AFTER_S", "MOST_BOT_WORKERS", "MOST_LOBBY_TICK_S", "MOST_THINKING_S", "ServerConfig"]

MOST_LOBBY_TICK_S = 10.0
"""The longest the lobby may collect changes before sending them, in seconds."""
MOST_THINKING_S = 60.0
"""The longest a computer player may be set to think per move or hint, in seconds."""
MOST_ABORT_AFTER_S = 86_400.0
"""The longest ``abort_after_s``: a day."""
DEFAULT_LEASE_S = 10.0
"""How long a node of a cluster holds its tables without renewing them, in seconds (``--lease-s``)."""
LEAST_LEASE_S = 1.0
"""The shortest lease: a node renews three times a lease, so shorter ones cost PostgreSQL more than they save."""
MOST_LEASE_S = 600.0
"""The longest lease: ten minutes a dead node's tables would wait."""
CLUSTER_NEEDS_POSTGRES = (
    "--bus needs --db postgresql://USER@HOST:PORT/DB: the nodes of a cluster share one PostgreSQL database "
    "(names, ratings and tables outlive any node)"
)
"""Why a node of a cluster without a PostgreSQL database is refused."""
MOST_BOT_WORKERS = 256
"""The most worker processes the computer players may be given."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Settings of a server; units are in the names.

    Attributes:
        host: address to listen on (``"0.0.0.0"``: every IPv4 interface).
        port: TCP port (0: pick a free one).
        server_name: shown to clients in ``welcome``.
        db_path: the SQLite database; ``None`` keeps nothing (tests, benchmarks).
        grace_s: how long a disconnected player's seat is held before forfeit.
        limits: what one client may cost (:class:`server.net.limits.Limits`).
        password: if set, ``hello`` must carry it (``bad_password`` otherwise).
        ssl: a server TLS context (see :mod:`server.net.tls`); ``None`` speaks plain TCP.
        lobby_tick_s: how long lobby changes are collected before they go to the lobby's watchers.
        bot_seconds: how long the strongest computer level thinks per move, in seconds
            (``None``: :func:`games.bots.default_seconds`); lower levels think proportionally less.
        hint_seconds: how long the computer thinks for a ``hint``, in seconds.
        bot_workers: worker processes for the computer players (``None``: one per core but one, at least one).
        accounts: whether names may be claimed: ``"off"``, ``"optional"`` or ``"required"`` (see :mod:`server.players.accounts`).
        rated: whether players may create rated tables (``--no-rated``: ``rated_off``).
        abort_after_s: how long the side to move at a timed table may take over its own first move
            before the game is aborted, in seconds (``None``: never).
        http: ``(host, port)`` of the read-only web face (:mod:`server.web`; port 0: any free one),
            or ``None``: no web face (the default).
        bus: a Redis URL (``redis://HOST:PORT``) to share lobby, names and players with the other
            nodes on it (:mod:`server.cluster`); ``None``: one process, the local bus.
        node: this node's name in the cluster (unique among its nodes; ``None``: ``server_name``).
        lease_s: how long a node's hold on its tables (their leases in PostgreSQL) lasts unless renewed,
            in seconds; when a node dies the others claim its tables after at most this long (a cluster only).
    """

    host: str = "0.0.0.0"
    port: int = 7420
    server_name: str = "parlour"
    db_path: str | None = None
    grace_s: float = 60.0
    limits: Limits = Limits()
    password: str | None = None
    ssl: ssl_module.SSLContext | None = None
    lobby_tick_s: float = DEFAULT_TICK_S
    bot_seconds: float | None = None
    hint_seconds: float = DEFAULT_HINT_SECONDS
    bot_workers: int | None = None
    accounts: str = "optional"
    rated: bool = True
    abort_after_s: float | None = DEFAULT_ABORT_AFTER_S
    http: tuple[str, int] | None = None
    bus: str | None = None
    node: str | None = None
    lease_s: float = DEFAULT_LEASE_S

    def __post_init__(self) -> None:
        if not 0 < self.lobby_tick_s <= MOST_LOBBY_TICK_S:
            raise ValueError(f"lobby_tick_s must be more than 0 and at most {MOST_LOBBY_TICK_S:g} seconds, not {self.lobby_tick_s}")
        for name in ("bot_seconds", "hint_seconds"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= MOST_THINKING_S:
                raise ValueError(f"{name} must be more than 0 and at most {MOST_THINKING_S:g} seconds, not {value}")
        if self.abort_after_s is not None and not 0 < self.abort_after_s <= MOST_ABORT_AFTER_S:
            raise ValueError(f"abort_after_s must be more than 0 and at most {MOST_ABORT_AFTER_S:g} seconds, or None, not {self.abort_after_s}")
        if self.bot_workers is not None and not 1 <= self.bot_workers <= MOST_BOT_WORKERS:
            raise ValueError(f"bot_workers must be 1 to {MOST_BOT_WORKERS}, not {self.bot_workers}")
        if not MOST_LEASE_S >= self.lease_s >= LEAST_LEASE_S:
            raise ValueError(f"lease_s must be {LEAST_LEASE_S:g} to {MOST_LEASE_S:g} seconds, not {self.lease_s}")
        if self.bus is not None and (self.db_path is None or not is_postgres_url(self.db_path)):
            raise ValueError(CLUSTER_NEEDS_POSTGRES)
        if self.accounts not in ACCOUNT_MODES:
            raise ValueError(f"accounts must be one of {', '.join(ACCOUNT_MODES)}, not {self.accounts!r}")
