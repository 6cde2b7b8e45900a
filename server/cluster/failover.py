"""A node that dies takes no table with it: renewing this node's leases, claiming the expired ones, handing over at a stop.

:class:`Failover` runs beside the node (:class:`server.cluster.node.Cluster`):

- every third of a lease it renews this node's leases (one statement) and learns
  which tables it still holds; a live table it no longer holds was claimed by
  another node while this one could not renew (paused, cut off): it is dropped
  here (``lost``), as the fence already refuses every write about it;
- every :data:`CLAIM_EVERY_S` it claims expired leases -- a node that died, or one
  that handed its tables over -- and has them restored here (``take_over``), exactly
  as a restart restores them, clocks not charged for the outage;
- at a graceful stop (:meth:`Failover.hand_over`) it lets its own leases expire at
  once and says so on the bus (:data:`HANDOVER`), so that another node claims them
  at once instead of a lease later.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable

from ..bus.redis import RedisBus
from ..storage.store import StoreError
from .leases import Leases

__all__ = ["CLAIM_EVERY_S", "Failover", "HANDOVER", "SWEEP_EVERY_S"]

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 60.0
"""How often a node deletes the expired leases of finished games, in seconds."""
CLAIM_EVERY_S = 1.0
"""How often a node looks for expired leases to claim, in seconds (at most; a hand-over notice makes it look at once)."""
HANDOVER = "cluster:handover"
"""The bus topic on which a stopping node says that its leases expired: the others claim them now."""


class Failover:
    """Keeps this node's leases and claims the others' expired ones.

    Args:
        leases: this node's leases.
        bus: the node's bus (hand-over notices cross it).
        live: the ids of this node's live tables whose game is not over and that no write is changing now
            (a table whose ending is being committed is left to the next renewal).
        take_over: restores the tables of the ids given, just claimed (awaited).
        lost: drops the live tables of the ids given (another node holds them now).
    """

    def __init__(
        self, leases: Leases, bus: RedisBus, live: Callable[[], set[int]],
        take_over: Callable[[set[int]], Awaitable[None]], lost: Callable[[set[int]], None],
    ) -> None:  # fmt: skip
        self.leases = leases
        self._bus = bus
        self._live = live
        self._take_over = take_over
        self._lost = lost
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._handing_over = False
        self._stopping = False
        self.paused = False
        """While true the upkeep does nothing (tests: a node that cannot renew, as if paused or cut off)."""
        bus.subscribe(HANDOVER, self)

    def start(self) -> None:
        """Start renewing and claiming."""
        self._stopping = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name="parlour-leases")

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        """A hand-over notice from a stopping node: look for expired leases now."""
        self._wake.set()

    async def hand_over(self) -> set[int]:
        """Stop claiming, let this node's leases expire now and tell the other nodes; return the tables handed over.

        A failure is logged: the leases then expire on their own within a lease.
        """
        self._handing_over = True
        await self._stop()
        try:
            released = await self.leases.release()
        except StoreError as exc:
            log.warning("cannot hand the tables over (they move when their leases expire): %s", exc)
            return set()
        if released:
            log.info("handed %d tables over to the other nodes", len(released))
            self._bus.publish_remote(HANDOVER, self.leases.node.encode())
        return released

    async def close(self) -> None:
        """Stop, and close the leases' connection."""
        await self._stop()
        await self.leases.close()

    async def _stop(self) -> None:
        self._stopping = True  # the loop also ends on this, should its cancellation be lost in a library's wait_for
        if self._task is not None:
            self._task.cancel()
            _, running = await asyncio.wait([self._task], timeout=CLAIM_EVERY_S)
            if running:
                log.warning("the lease upkeep did not stop within %g s; left to end at its next round", CLAIM_EVERY_S)
            self._task = None

    async def upkeep(self, renew: bool = True) -> None:
        """Renew this node's leases (``renew``), drop the tables it lost, then claim and restore expired ones.

        Raises:
            StoreError: the database cannot be reached (nothing changed here).
        """
        if renew:
            before = self._live()  # only tables that were live before the renewal: a newer one's lease row may be newer than it
            held = await self.leases.renew()
            lost = (before & self._live()) - held
            if lost:
                log.warning("tables %s are held by another node now: dropped here", ", ".join(map(str, sorted(lost))))
                self._lost(lost)
        if self._handing_over:
            return
        claimed = await self.leases.claim()
        if claimed:
            log.info("claimed tables %s", ", ".join(map(str, sorted(claimed))))
            await self._take_over(claimed)

    async def _run(self) -> None:
        renew_every = self.leases.lease_s / 3
        last_renewal = last_sweep = time.monotonic()
        while not self._stopping:
            try:
                async with asyncio.timeout(min(CLAIM_EVERY_S, renew_every)):  # not wait_for: on 3.11 it can lose a cancellation
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            if self.paused or self._stopping:
                continue
            now = time.monotonic()
            renew = now - last_renewal >= renew_every
            try:
                await self.upkeep(renew)
                if renew:
                    last_renewal = now
                if now - last_sweep >= SWEEP_EVERY_S:
                    last_sweep = now
                    await self.leases.sweep()
            except StoreError as exc:
                log.warning("lease upkeep failed (PostgreSQL away?): %s", exc)
            except Exception:  # a table that fails to come back must not stop the renewals of the others
                log.exception("lease upkeep failed")
