"""Finding an opponent, wired together: who, challenges, seeks, tells and mutes (PROTOCOL.md §17).

:class:`Social` builds the parts, hands the server their request handlers,
and passes on what happens to sessions: a disconnect (seeks vanish), a
session that ends (challenges and a guest's mutes end), a player sitting
down (seeks vanish).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Mapping

import games

from protocol.messages import (
    AcceptChallenge,
    Answer,
    Challenge,
    CreateTable,
    DeclineChallenge,
    JoinTable,
    ListMutes,
    ListSeeks,
    Message,
    Mute,
    MuteGuests,
    Offer,
    Seek,
    Tell,
    Unseek,
    Who,
    WithdrawChallenge,
)

from ..play.authority import Authority
from ..bus.bus import Bus
from .challenges import Challenges
from ..net.limits import Limits
from ..players.mutes import Mutes, stored_mutes
from ..core.names import name_key
from ..players.presence import BestRatings, Presence, Rated, RatingOf
from ..ratings.ratings import Ratings, family_of
from .seeks import SeekBoard
from ..core.session import Session
from .spam import SpamLimits
from ..storage.store import Store
from ..tables.table import Table
from .tells import Tells

__all__ = ["Social"]

Handler = Callable[[Session, Any, list[Callable[[], None]]], Awaitable[Message]]

BEST_RATINGS_FRESH_S = 2.0
"""How long ``who`` reuses one read of the best ratings, in seconds."""
MOST_RATED = 1_000_000
"""The most rated players per game ``who`` reads (far beyond a club's)."""

SEATING_REQUESTS = (CreateTable, JoinTable, Offer, Answer)
"""Requests that may seat their sender (a rematch too): their seeks vanish when they do."""


class Social:
    """Who, challenges, seeks, tells and mutes for one server.

    Args:
        authority: the table authority (paired tables go through it).
        by_name: name key -> the session holding the name.
        tables: table id -> live table.
        bus: carries seek changes to the lobby's watchers.
        limits: returns the server's current limits.
        persist: ``await persist(*statements)`` commits (no-op without a database).
        tick_s: the lobby's tick, in seconds.
        ratings: the server's one :class:`server.ratings.ratings.Ratings` (who and seeks show and pair by it).
        rated_allowed: whether the server rates games now (``parlour serve --no-rated`` turns it off).
        players: where ``who`` and tells find players, if not ``by_name`` (a cluster's
            :class:`server.cluster.players.ClusterPlayers`: the other nodes' players too).
    """

    def __init__(
        self,
        authority: Authority,
        by_name: Mapping[str, Session],
        tables: Mapping[int, Table],
        bus: Bus,
        limits: Callable[[], Limits],
        persist: Callable[..., Awaitable[None]],
        tick_s: float,
        ratings: Ratings,
        rated_allowed: Callable[[], bool],
        *,
        players: Mapping[str, Session] | None = None,
    ) -> None:
        spam = SpamLimits(limits)
        rating_of = ratings_lookup(ratings)
        self.mutes = Mutes(persist, limits().max_name_chars)
        everyone = by_name if players is None else players
        self.presence = Presence(everyone, tables, best_ratings_of(ratings))
        self.tells = Tells(everyone, self.mutes, spam, limits)
        self.seeks = SeekBoard(authority, tables, self.mutes, spam, limits, bus, tick_s, rating_of, rated_allowed)
        self.challenges = Challenges(authority, by_name, self.mutes, spam, limits, rated_allowed, seated=self.seeks.player_left)

    def install(self, dispatch: dict[type, Handler]) -> None:
        """Add the social requests to the server's ``dispatch``, and make seating requests take their sender's seeks away."""
        for kind in SEATING_REQUESTS:
            dispatch[kind] = self._unseeking(dispatch[kind])
        dispatch.update({
            Who: self.presence.who,
            Challenge: self.challenges.challenge,
            AcceptChallenge: self.challenges.accept,
            DeclineChallenge: self.challenges.decline,
            WithdrawChallenge: self.challenges.withdraw,
            Seek: self.seeks.seek,
            Unseek: self.seeks.unseek,
            ListSeeks: self.seeks.list_seeks,
            Tell: self.tells.tell,
            Mute: self.mutes.mute,
            ListMutes: self.mutes.list_mutes,
            MuteGuests: self.mutes.mute_guests,
        })  # fmt: skip

    def _unseeking(self, handler: Handler) -> Handler:
        async def run(session: Session, request: Any, then: list[Callable[[], None]]) -> Message:
            seated = len(session.seats)
            reply = await handler(session, request, then)
            if len(session.seats) > seated:
                self.seeks.player_left(session)
            return reply

        return run

    def restore(self, store: Store) -> None:
        """Load the claimed names' stored mutes."""
        self.mutes.restore(store.read(stored_mutes))

    def resumed(self, session: Session, then: list[Callable[[], None]]) -> None:
        """``session`` is back on a new connection: after the ``welcome``, the challenges made to it, again."""
        self.challenges.resend(session, then)

    def disconnected(self, session: Session) -> None:
        """``session``'s connection is gone: its seeks vanish."""
        self.seeks.player_left(session)

    def forget(self, session: Session) -> None:
        """``session`` ended (left, past any grace period): its challenges and guest mutes end."""
        self.seeks.player_left(session)
        self.challenges.forget(session)
        self.mutes.forget(session)

    def close(self) -> None:
        """Stop the seek board's tick and the challenges' timers (the server is closing)."""
        self.seeks.close()
        self.challenges.close()


def ratings_lookup(ratings: Ratings) -> RatingOf:
    """The :data:`server.players.presence.RatingOf` of ``ratings``: a claimed name's rating in a game and its time control's family."""

    def rating_of(session: Session, game: str, time_control: str | None) -> Rated | None:
        if not getattr(session, "claimed", False):
            return None
        rating = ratings.get(name_key(session.name), game, family_of(time_control))
        return None if rating.updated is None else Rated(round(rating.rating), round(rating.deviation), game)

    return rating_of


def best_ratings_of(ratings: Ratings, fresh_s: float = BEST_RATINGS_FRESH_S, now: Callable[[], float] = time.monotonic) -> BestRatings:
    """The :data:`server.players.presence.BestRatings` of ``ratings``: one leaderboard read per game, reused for ``fresh_s`` seconds.

    Reading every rated player's best costs time in proportion to the rated
    players, so it runs in a thread (with a database), and a busy ``who``
    reuses the last read for a moment rather than read again for each page.
    """
    read_at: dict[str | None, tuple[float, dict[str, Rated]]] = {}

    def read(game: str | None) -> dict[str, Rated]:
        best: dict[str, Rated] = {}
        for name in [game] if game is not None else games.names():
            for row in ratings.leaderboard(name, None, MOST_RATED, provisional=True):
                key = name_key(row.name)
                if key not in best or row.rating.rating > best[key].rating:
                    best[key] = Rated(round(row.rating.rating), round(row.rating.deviation), name)
        return best

    async def best_ratings(game: str | None) -> dict[str, Rated]:
        last = read_at.get(game)
        if last is not None and now() - last[0] < fresh_s:
            return last[1]
        best = await asyncio.to_thread(read, game) if ratings.store is not None else read(game)  # in memory: at once, on the loop
        read_at[game] = (now(), best)
        return best

    return best_ratings
