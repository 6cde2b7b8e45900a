"""Who is online: each player's status and rating, for ``who``.

A player is online while their session lives: connected, or away (the
connection dropped and a seat is held for the grace period). The list is
built from the sessions by name when asked for and sent a page at a time
(``who.limit``, at most :data:`protocol.messages.MAX_PLAYERS_PAGE`), so a
server with 10,000 players never sends them all at once.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from operator import itemgetter
from typing import Awaitable, Callable, Mapping

import games
from protocol import Code
from protocol.messages import PlayerInfo, Players, Who

from ..core.session import Session
from ..core.errors import RequestError
from ..tables.table import Table

__all__ = ["BestRatings", "Presence", "Rated", "RatingOf", "no_best_ratings", "no_ratings", "status_of"]


@dataclass(frozen=True, slots=True)
class Rated:
    """A player's rating in one game, as ``who`` and seeks show it (rounded to whole points)."""

    rating: int
    deviation: int
    game: str


RatingOf = Callable[[Session, str, "str | None"], "Rated | None"]
"""``rating_of(session, game, time_control)``: the player's rating in ``game`` at ``time_control``'s
family, or ``None`` if unrated (or not claimed)."""

BestRatings = Callable[["str | None"], Awaitable[Mapping[str, Rated]]]
"""``best_ratings(game)``: name key -> that player's best rating in ``game`` (``None``: in any game),
for every rated player, read at once (so a page of ``who`` costs a query per game, not per player)."""


def no_ratings(session: Session, game: str, time_control: str | None = None) -> Rated | None:
    """The :data:`RatingOf` of a server that keeps no ratings: nobody is rated."""
    return None


async def no_best_ratings(game: str | None) -> Mapping[str, Rated]:
    """The :data:`BestRatings` of a server that keeps no ratings."""
    return {}


def status_of(session: Session, tables: Mapping[int, Table]) -> str:
    """``"away"`` (disconnected), ``"playing"`` (holds a seat at a game not over), ``"watching"`` or ``"idle"``.

    A player on another node of a cluster carries the status its own node gave (``remote_status``).
    """
    remote = getattr(session, "remote_status", None)
    if remote is not None:
        return remote
    if not session.connected:
        return "away"
    for table_id in session.seats:
        table = tables.get(table_id)
        if table is not None and table.outcome is None:
            return "playing"
    return "watching" if session.watching else "idle"


class Presence:
    """Answers ``who`` from the live sessions.

    Args:
        by_name: name key -> the session holding the name (the server's live map).
        tables: table id -> live table (the lobby's live map).
        best_ratings: reads the best ratings (:func:`no_best_ratings` on a server without them).
    """

    def __init__(self, by_name: Mapping[str, Session], tables: Mapping[int, Table], best_ratings: BestRatings = no_best_ratings) -> None:
        self._by_name = by_name
        self._tables = tables
        self.best_ratings = best_ratings

    async def who(self, session: Session, request: Who, then: list[Callable[[], None]]) -> Players:
        """One page of the players online, sorted by name or by rating (highest first, unrated last).

        Raises:
            RequestError: ``unknown_game`` for a ``game`` the server does not have.
        """
        game = request.game
        if game is not None:
            try:
                game = games.get(game).name
            except games.UnknownGame as exc:
                raise RequestError(Code.UNKNOWN_GAME, str(exc), "game") from None
        online = [(key, player) for key, player in self._by_name.items() if player.connected or player.seats]
        end = request.offset + request.limit
        best = await self.best_ratings(game)
        if request.sort == "rating":  # highest first, then the unrated; by name within each
            def rank(pair: tuple[str, Session]) -> tuple[float, str]:
                rated = best.get(pair[0]) if getattr(pair[1], "claimed", False) else None
                return (-rated.rating if rated is not None else math.inf, pair[0])

            chosen = heapq.nsmallest(end, online, key=rank)
        else:
            chosen = heapq.nsmallest(end, online, key=itemgetter(0))
        page = [self._info(key, player, best) for key, player in chosen[request.offset :]]  # only the page's players are described
        return Players(id=request.id, players=page, total=len(online), next=end if end < len(online) else None)

    def _info(self, key: str, player: Session, best: Mapping[str, Rated]) -> PlayerInfo:
        claimed = bool(getattr(player, "claimed", False))
        rated = best.get(key) if claimed else None  # only a claimed name is the player its rating belongs to
        return PlayerInfo(
            name=player.name,
            status=status_of(player, self._tables),
            claimed=claimed,
            bot=player.bot,
            rating=rated.rating if rated is not None else None,
            deviation=rated.deviation if rated is not None else None,
            rating_game=rated.game if rated is not None else None,
        )
