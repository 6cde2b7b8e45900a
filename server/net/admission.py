"""Who may connect: the descriptor budget, the limits on connections (per server, per address, attempts per second), refusals.

Part of :class:`server.net.connection.Connections` (a mixin): the accept loop
(:mod:`server.net.listen`) waits here for room, and each new connection is
taken on or refused here before any of its bytes are read.
"""

from __future__ import annotations

import logging
import time

from protocol import Code
from protocol.messages import Error

from .descriptors import connection_budget, descriptor_limit, open_descriptors
from .peer import Peer

__all__ = ["Admission", "BUSY_REFUSAL_LINGER_S", "REFUSAL_LINGER_S"]

log = logging.getLogger(__name__)

REFUSAL_LINGER_S = 1.0
"""How long a refused connection may take to read ``too_many_connections`` and close."""

BUSY_REFUSAL_LINGER_S = 0.2
"""The same while many refusals are in progress (half the descriptors kept for them in use)."""


class Admission:
    """The admission methods of :class:`server.net.connection.Connections`: descriptors, slots, refusals."""

    def fit_to_descriptors(self) -> None:
        """Lower ``max_connections`` (with a warning) to what the descriptor limit leaves room for."""
        wanted = self.limits.max_connections
        limit = descriptor_limit()
        if limit is None:
            return
        in_use = open_descriptors()
        budget, self._refusal_room = connection_budget(limit, in_use)
        if wanted > budget:
            log.warning(
                "max_connections is %d, but the descriptor limit of %d (%d in use) leaves room for %d: using %d "
                "(raise the limit with ulimit -n for more)", wanted, limit, in_use, budget, budget,
            )  # fmt: skip
            self.max_connections = budget

    @property
    def descriptor_room(self) -> int:
        """Accepted sockets that may be held at once: ``max_connections`` plus the room kept for refusals."""
        return self.max_connections + self._refusal_room

    async def wait_for_room(self) -> None:
        """Return once one more socket may be accepted (see :meth:`hold_descriptor`) without overrunning the descriptor budget."""
        while self._held >= self.descriptor_room:
            self._room.clear()
            await self._room.wait()

    def hold_descriptor(self) -> None:
        """Count a socket just accepted; :meth:`free_descriptor` it once closed (a connection's last task does)."""
        self._held += 1

    def free_descriptor(self) -> None:
        """Count a held socket as closed, and let the accept loop take another."""
        self._held = max(0, self._held - 1)
        self._room.set()

    async def _refuse(self, peer: Peer, refusal: str) -> None:
        log.warning("refusing %s: %s", peer.address, refusal)
        # Many refusals at once each hold a descriptor: let them go sooner, so that accept() keeps working.
        linger_s = REFUSAL_LINGER_S if self._refusing < self._refusal_room // 2 else BUSY_REFUSAL_LINGER_S
        self._refusing += 1
        try:
            peer.send(Error(code=Code.TOO_MANY_CONNECTIONS, message=refusal))
            peer.close(linger_s=linger_s)
            await peer.discard_input(linger_s)
            await peer.wait_closed()
        finally:
            self._refusing -= 1
            self.free_descriptor()

    def take_slot(self, host: str) -> str | None:
        """Count one more connection from ``host`` that is not a game connection (a browser's WebSocket, :mod:`server.web`).

        It is refused, and not counted, for the reasons a game connection is
        (attempts too fast, the server or the address at its most connections):
        returns that reason; ``None``: counted, give it back with :meth:`free_slot`.
        """
        refusal = self._refusal(host)
        if refusal is None:
            self._per_address[host] += 1
            self.others += 1
        return refusal

    def free_slot(self, host: str) -> None:
        """Stop counting a connection :meth:`take_slot` counted."""
        self.others -= 1
        self._per_address[host] -= 1
        if not self._per_address[host]:
            del self._per_address[host]

    def _refusal(self, host: str) -> str | None:
        """Why a new connection from ``host`` must be refused, or ``None`` to accept it."""
        limits = self.limits
        if not self._attempts.admit(host, time.monotonic()):
            return (
                f"too many connection attempts from your address (more than {limits.connections_per_address_per_s:g}"
                f" a second after the first {limits.connection_burst}); wait a few seconds before reconnecting"
            )
        if len(self.peers) + self.others >= self.max_connections:
            return f"the server has its maximum of {self.max_connections} connections; try again later"
        if self._per_address[host] >= limits.max_connections_per_address:
            return f"your address already has the maximum of {limits.max_connections_per_address} connections"
        return None
