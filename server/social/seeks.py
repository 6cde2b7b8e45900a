"""Seeks (FICS ``seek``, lichess quick pairing): open offers to play anyone, paired automatically.

A new seek is first matched against the open ones, oldest first: the same
game, options, time control and rated flag (:meth:`server.social.pairing.Terms.matches`),
each player's rating inside the other's range, and neither player muting
the other. A match seats both at a new table through the table authority;
otherwise the seek is posted. Seeks vanish when their player disconnects or
sits at a table. The lobby's watchers hear ``seek_added`` and
``seek_removed``, collected for the lobby's tick so that a seek posted and
paired within one tick costs them nothing.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import secrets
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol

from protocol import Code, encode_message
from protocol.messages import ListSeeks, Message, Ok, Seek, SeekAdded, SeekInfo, SeekPosted, SeekRemoved, Seeks, Unseek, summarize_options

from ..play.authority import Authority
from ..core.ids import issuable
from ..bus.bus import LOBBY, Bus
from ..tables.ticks import TickBatch
from ..net.limits import Limits
from ..players.mutes import Mutes
from .pairing import Terms, check_rated, seat_pair
from ..players.presence import RatingOf, no_ratings
from ..core.session import Push, Session
from .spam import SpamLimits
from ..core.errors import Relayed, RequestError
from ..core.names import name_key
from ..tables.table import Table

__all__ = ["SeekBoard", "OpenSeek", "Elsewhere", "UNRATED"]

log = logging.getLogger(__name__)


UNRATED = 1500
"""The rating a player without one is taken to have when a seek's range is checked (Glicko-2's starting rating)."""


@dataclass(eq=False, slots=True)
class OpenSeek:
    """A posted seek.

    Attributes:
        id: the seek's id (unique while the server runs).
        player: who posted it.
        terms: the game asked for.
        rating: the player's rating in the game when posted (``None``: unrated or no ratings).
        rating_min: the lowest opponent rating accepted (``None``: no bound).
        rating_max: the highest opponent rating accepted (``None``: no bound).
        pairing: a pairing with it is being committed (so no other seek takes it meanwhile).
    """

    id: int
    player: Session
    terms: Terms
    rating: int | None
    rating_min: int | None
    rating_max: int | None
    pairing: bool = False

    def accepts(self, rating: int | None) -> bool:
        """Whether an opponent rated ``rating`` (``None``: unrated, taken as :data:`UNRATED`) is inside the range."""
        value = UNRATED if rating is None else rating
        return (self.rating_min is None or value >= self.rating_min) and (self.rating_max is None or value <= self.rating_max)

    def info(self) -> SeekInfo:
        """The seek as the protocol shows it."""
        terms = self.terms
        return SeekInfo(
            id=self.id, name=self.player.name, game=terms.game, options=summarize_options(terms.options), time_control=terms.time_control,
            rated=terms.rated, rating=self.rating, rating_min=self.rating_min, rating_max=self.rating_max,
        )  # fmt: skip


class Elsewhere(Protocol):
    """The seeks of a cluster's other nodes, each held by its player's node (:mod:`server.cluster.seeks`)."""

    async def candidates(self) -> list[OpenSeek]:
        """The other nodes' open seeks (their players as :class:`server.core.session.Session` of their name), by id."""

    async def pair(self, session: Session, request: Seek, seek: OpenSeek) -> bool:
        """Ask the node holding ``seek`` to pair ``session``'s ``request`` with it: ``True`` if that node
        answered the request (paired, or refused it), ``False`` if the seek was gone or taken there."""

    def changed(self, seek: OpenSeek, posted: bool) -> None:
        """This node posted (``posted``) or removed ``seek``."""


class SeekBoard:
    """Every open seek, and the pairing of new ones.

    Args:
        authority: creates and seats the paired tables.
        tables: table id -> live table (a player at a game not over cannot seek).
        mutes: who mutes whom (muted pairs are not paired).
        spam: the per-minute limits.
        limits: returns the server's current limits.
        bus: carries ``seek_added``/``seek_removed`` to the lobby's watchers.
        tick_s: how long seek changes are collected before they are sent, in seconds.
        rating_of: looks up ratings (:func:`server.players.presence.no_ratings` without them).
        rated_allowed: whether the server rates games now (else a rated seek is refused).
    """

    def __init__(
        self,
        authority: Authority,
        tables: Mapping[int, Table],
        mutes: Mutes,
        spam: SpamLimits,
        limits: Callable[[], Limits],
        bus: Bus,
        tick_s: float,
        rating_of: RatingOf = no_ratings,
        rated_allowed: Callable[[], bool] = lambda: False,
    ) -> None:
        self._authority = authority
        self._tables = tables
        self._mutes = mutes
        self._spam = spam
        self._limits = limits
        self._bus = bus
        self.rating_of = rating_of
        self.rated_allowed = rated_allowed
        self.open: dict[int, OpenSeek] = {}
        """Seek id -> open seek, oldest first."""
        self._of: dict[Session, dict[int, None]] = {}  # player -> ids of their open seeks
        self.next_id: Callable[[], int] = itertools.count(1).__next__
        """Returns the next seek id (a cluster's node takes them from ids unique across its nodes)."""
        self.elsewhere: Elsewhere | None = None
        """The other nodes' seeks, on a node of a cluster: matched after this node's own, listed with them."""
        self._changed: TickBatch[int, bool] = TickBatch(tick_s, self.flush)  # seek id -> whether it was posted within this tick

    async def seek(self, session: Session, request: Seek, then: list[Push]) -> SeekPosted:
        """Pair a new seek with the oldest compatible one, or post it.

        Raises:
            RequestError: ``unknown_game``, ``bad_option``, ``bad_request`` (a bad range, playing already),
                ``rated_off``, ``rated_needs_claim``, ``too_many_seeks``, ``rate_limited``,
                or what creating the table refuses (the seek is then not posted).
            Relayed: another node held the matching seek and answered the request (:attr:`elsewhere`).
        """
        terms = Terms.check(request.game, request.options, request.time_control, request.rated)
        self._check_request(session, request, terms)
        self._spam.charge("seeks", session)
        seek = self._new(session, request, terms)
        other = self._match(seek)
        if other is None and self.elsewhere is not None:
            await self._pair_elsewhere(session, request, seek)
            self._check_request(session, request, terms)  # it may have sat down meanwhile
            other = self._match(seek)
        if other is None:
            if session.connected:  # not gone while the other nodes were asked
                self._post(seek)
            return SeekPosted(id=request.id, seek=seek.info())
        return await self._pair(other, seek, then, request.id)

    def _new(self, session: Session, request: Seek, terms: Terms) -> OpenSeek:
        rated = self.rating_of(session, terms.game, terms.time_control)
        rating = rated.rating if rated is not None else None
        return OpenSeek(issuable(self.next_id(), "seek"), session, terms, rating, request.rating_min, request.rating_max)

    async def _pair(self, other: OpenSeek, seek: OpenSeek, then: list[Push], request_id: int) -> SeekPosted:
        """Seat ``other``'s player and ``seek``'s at a new table; ``other`` leaves the board."""
        other.pairing = True
        try:
            first_seat = secrets.randbelow(2)
            await seat_pair(self._authority, other.player, first_seat, seek.player, seek.terms, then, seeks=(other.id, seek.id))
        finally:
            other.pairing = False
        self._remove(other)
        for player in (other.player, seek.player):
            self.player_left(player)  # seated now: their other seeks vanish
        log.info("seeks %d (%s) and %d (%s) paired for %s", other.id, other.player.name, seek.id, seek.player.name, seek.terms.game)
        return SeekPosted(id=request_id, seek=seek.info(), paired=True)

    async def _pair_elsewhere(self, session: Session, request: Seek, seek: OpenSeek) -> None:
        """Offer ``seek`` to the compatible seeks of the other nodes, oldest first.

        Raises:
            Relayed: a node holding one answered the request (the pair is seated there, or it refused).
        """
        assert self.elsewhere is not None
        for other in await self.elsewhere.candidates():
            if self.compatible(seek, other) and await self.elsewhere.pair(session, request, other):
                self.player_left(session)  # seated there: its seeks here vanish
                raise Relayed()

    async def pair_with(self, session: Session, request: Seek, seek_id: int, then: list[Push]) -> SeekPosted | None:
        """Pair ``request`` of ``session`` (a player of another node, through the relay) with this node's seek ``seek_id``.

        Returns ``None`` (nothing done) if that seek is gone, being paired, or no longer compatible.

        Raises:
            RequestError: what :meth:`seek` refuses of the request, or what creating the table refuses.
        """
        terms = Terms.check(request.game, request.options, request.time_control, request.rated)
        self._check_request(session, request, terms)
        seek = self._new(session, request, terms)
        other = self.open.get(seek_id)
        if other is None or not self.compatible(seek, other):
            return None
        return await self._pair(other, seek, then, request.id)

    def _check_request(self, session: Session, request: Seek, terms: Terms) -> None:
        if request.rating_min is not None and request.rating_max is not None and request.rating_min > request.rating_max:
            raise RequestError(Code.BAD_REQUEST, f"the rating range {request.rating_min}-{request.rating_max} is empty", "rating_min")
        if terms.rated:
            check_rated(self.rated_allowed(), session)
        playing = [table_id for table_id in session.seats if (table := self._tables.get(table_id)) is not None and table.outcome is None]
        if playing:
            raise RequestError(Code.BAD_REQUEST, f"you sit at table {playing[0]}; seek once you have left it")
        most = self._limits().max_seeks_per_player
        if len(self._of.get(session, ())) >= most:
            raise RequestError(Code.TOO_MANY_SEEKS, f"you already have {most} open seeks, the most this server allows; unseek one first")

    def _match(self, seek: OpenSeek) -> OpenSeek | None:
        """The oldest open seek ``seek`` pairs with, or ``None``."""
        for other in self.open.values():
            if self.compatible(seek, other):
                return other
        return None

    def compatible(self, seek: OpenSeek, other: OpenSeek) -> bool:
        """Whether ``seek`` pairs with the open seek ``other``: same terms, ranges, no mute either way."""
        player = seek.player
        return (
            name_key(other.player.name) != name_key(player.name)
            and not other.pairing
            and other.player.connected
            and other.terms.matches(seek.terms)
            and other.accepts(seek.rating)
            and seek.accepts(other.rating)
            and not self._mutes.mutes(player, other.player)
            and not self._mutes.mutes(other.player, player)
        )

    async def unseek(self, session: Session, request: Unseek, then: list[Push]) -> Ok:
        """Take back one of ``session``'s seeks (``seek`` nil: all of them).

        Raises:
            RequestError: ``no_such_seek``.
        """
        if request.seek is None:
            self.player_left(session)
            return Ok(id=request.id)
        seek = self.open.get(request.seek)
        if seek is None or seek.player is not session or seek.pairing:
            raise RequestError(Code.NO_SUCH_SEEK, f"you have no open seek {request.seek}", "seek")
        self._remove(seek)
        return Ok(id=request.id)

    async def list_seeks(self, session: Session, request: ListSeeks, then: list[Push]) -> Seeks:
        """One page of the open seeks with ids above ``after``, by id; ``next`` the cursor of the next page."""
        after = request.after or 0
        pool = {seek_id: seek for seek_id, seek in self.open.items() if seek_id > after}
        if self.elsewhere is not None:
            pool.update((seek.id, seek) for seek in await self.elsewhere.candidates() if seek.id > after)
        ids = heapq.nsmallest(request.limit + 1, pool)
        page = ids[: request.limit]
        return Seeks(id=request.id, seeks=[pool[i].info() for i in page], next=page[-1] if len(ids) > request.limit else None)

    def player_left(self, session: Session) -> None:
        """``session`` disconnected or sat down: its seeks vanish (but one being paired)."""
        for seek_id in list(self._of.get(session, ())):
            seek = self.open[seek_id]
            if not seek.pairing:
                self._remove(seek)

    # --- the board and the lobby's watchers ----------------------------------------------

    def _post(self, seek: OpenSeek) -> None:
        self.open[seek.id] = seek
        self._of.setdefault(seek.player, {})[seek.id] = None
        self._note(seek.id, posted=True)
        if self.elsewhere is not None:
            self.elsewhere.changed(seek, posted=True)

    def _remove(self, seek: OpenSeek) -> None:
        del self.open[seek.id]
        ids = self._of[seek.player]
        del ids[seek.id]
        if not ids:
            del self._of[seek.player]
        self._note(seek.id, posted=False)
        if self.elsewhere is not None:
            self.elsewhere.changed(seek, posted=False)

    def _note(self, seek_id: int, posted: bool) -> None:
        """Note a change for the lobby's watchers, sent at the next tick."""
        if not self._bus.has_subscribers(LOBBY):
            return
        self._changed.note(seek_id, posted or self._changed.get(seek_id, False))

    def flush(self) -> None:
        """Send the changes collected so far: ``seek_added`` for new seeks still open, ``seek_removed`` for
        seeks gone that were posted before this tick."""
        for seek_id, posted_now in self._changed.take().items():
            seek = self.open.get(seek_id)
            message: Message | None = None
            if seek is not None and posted_now:
                message = SeekAdded(seek=seek.info())
            elif seek is None and not posted_now:
                message = SeekRemoved(seek=seek_id)
            if message is not None:
                self._bus.publish(LOBBY, encode_message(message), message)

    def close(self) -> None:
        """Drop pending changes and the tick timer (the server is closing)."""
        self._changed.close()
