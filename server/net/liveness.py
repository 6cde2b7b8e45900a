"""Liveness: the deadlines a connection must meet (hello, a frame begun, silence), heartbeats to quiet ones, and dropping one with a reason.

Part of :class:`server.net.connection.Connections` (a mixin): one task checks
every connection each tick (``limits.tick_s``).
"""

from __future__ import annotations

import asyncio
import logging
import time

from protocol import Code
from protocol.codec import encode_message
from protocol.messages import Error, Heartbeat

from .peer import Peer

__all__ = ["Liveness", "drop"]

log = logging.getLogger(__name__)


class Liveness:
    """The deadline methods of :class:`server.net.connection.Connections`."""

    def start_deadlines(self) -> None:
        """Start the task that enforces deadlines and sends heartbeats."""
        self._watchdog = asyncio.create_task(self._watch_deadlines(), name="deadlines")

    async def _watch_deadlines(self) -> None:
        """Close silent, stalled and nameless connections; send heartbeats to quiet ones."""
        limits = self.limits
        heartbeat = encode_message(Heartbeat())
        while True:
            await asyncio.sleep(limits.tick_s)
            now = time.monotonic()
            for peer in list(self.peers):
                overdue = self._overdue(peer, now)
                if overdue is not None:
                    drop(peer, Code.TIMEOUT, overdue)
                elif peer.session is not None and now - peer.last_sent >= limits.heartbeat_s:
                    peer.send_frame(heartbeat)

    def _overdue(self, peer: Peer, now: float) -> str | None:
        """Which deadline ``peer`` missed at ``now``, in words, or ``None``."""
        limits = self.limits
        if peer.closed:
            return None
        if peer.session is None and now - peer.connected_at > limits.handshake_timeout_s:  # type: ignore[operator]
            return f"no hello within {limits.handshake_timeout_s:g} s of connecting"
        if not peer.reading:
            return None  # the server is busy with this peer's requests: not the peer's delay
        if peer.partial_since is not None and now - peer.partial_since > limits.stall_timeout_s:
            return f"a frame was begun but not finished within {limits.stall_timeout_s:g} s"
        if now - peer.last_received > limits.idle_timeout_s:
            return f"nothing received for {limits.idle_timeout_s:g} s (send ping at least every {limits.heartbeat_s:g} s)"
        return None



def drop(peer: Peer, code: Code, message: str) -> None:
    """Tell ``peer`` why, then close its connection."""
    log.info("closing %s (%s): %s", peer.address, code, message)
    peer.send(Error(code=code, message=message))
    peer.close()
