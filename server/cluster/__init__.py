"""Several nodes as one server: a shared lobby, names and players through Redis (``parlour serve --bus redis://… --node NAME``).

- :mod:`server.bus.redis`: the bus between the nodes (events, per-view channels, gaps).
- :mod:`server.cluster.node`: joining, heartbeats, rejoining after Redis restarts.
- :mod:`server.cluster.lobby`: the other nodes' tables in this node's lobby.
- :mod:`server.cluster.players`: the other nodes' players for ``who`` and tells.
- :mod:`server.cluster.live`: every other live node's hash (players, seeks) in one round trip.
- :mod:`server.cluster.names`: names in use, unique across the nodes.
- :mod:`server.cluster.ids`: table, challenge and seek ids unique across the nodes.

- :mod:`server.cluster.relay`: playing and watching another node's table.
- :mod:`server.cluster.relay_batch`: the relay's wire format, one batch a node a loop turn.
- :mod:`server.cluster.background`: Redis writes made in the background, finished before the client closes.
- :mod:`server.cluster.social_relay`: the relay's routes learned from frames, seek pairings, browsers' feeds.
- :mod:`server.cluster.social`: challenges across nodes (held by the challenged player's node), wired in.
- :mod:`server.cluster.seeks`: every node's seeks listed and paired across nodes.

A table lives on the node that created it; the others relay their players'
requests about it to that node, and its frames back.
"""

from __future__ import annotations

from .node import Cluster

__all__ = ["Cluster"]
