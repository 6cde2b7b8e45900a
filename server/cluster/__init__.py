"""Several nodes as one server: a shared lobby, names and players through Redis (``parlour serve --bus redis://… --node NAME``).

- :mod:`server.bus.redis`: the bus between the nodes (events, per-view channels, gaps).
- :mod:`server.cluster.node`: joining, heartbeats, rejoining after Redis restarts.
- :mod:`server.cluster.lobby`: the other nodes' tables in this node's lobby.
- :mod:`server.cluster.players`: the other nodes' players for ``who`` and tells.
- :mod:`server.cluster.names`: names in use, unique across the nodes.
- :mod:`server.cluster.ids`: table ids unique across the nodes.

A table lives on the node that created it; a node does not yet relay
another node's table to its own connections (``join_table`` and
``watch_table`` of another node's table answer ``no_such_table``).
"""

from __future__ import annotations

from .node import Cluster

__all__ = ["Cluster"]
