"""Who is online: each player's status and rating, for ``who``.

A player is online while their session lives: connected, or away (the
connection dropped and a seat is held for the grace period). The list is
built from the sessions by name when asked for and sent a page at a time
(``who.limit``, at most :data:`protocol.messages.MAX_PLAYERS_PAGE`), so a
server with 10,000 players never sends them all at once.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from operator import itemgetter
from typing import Callable, Mapping

import games
from protocol import Code
from protocol.messages import PlayerInfo, Players, Who

from .session import Session
from .table import RequestError, Table

__all__ = ["Presence", "Rated", "RatingOf", "no_ratings", "status_of"]


@dataclass(frozen=True, slots=True)
class Rated:
    """A player's rating in one game, as ``who`` and seeks show it (rounded to whole points)."""

    rating: int
    deviation: int
    game: str


RatingOf = Callable[[Session, "str | None", "str | None"], "Rated | None"]
"""``rating_of(session, game, time_control)``: the player's rating in ``game`` at ``time_control``'s
family (``game`` ``None``: their best rating), or ``None`` if unrated."""


def no_ratings(session: Session, game: str | None, time_control: str | None = None) -> Rated | None:
    """The :data:`RatingOf` of a server that keeps no ratings: nobody is rated."""
    return None


def status_of(session: Session, tables: Mapping[int, Table]) -> str:
    """``"away"`` (disconnected), ``"playing"`` (holds a seat at a game not over), ``"watching"`` or ``"idle"``."""
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
        rating_of: looks up ratings (:func:`no_ratings` on a server without them).
    """

    def __init__(self, by_name: Mapping[str, Session], tables: Mapping[int, Table], rating_of: RatingOf = no_ratings) -> None:
        self._by_name = by_name
        self._tables = tables
        self.rating_of = rating_of

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
        if request.sort == "rating":
            infos = sorted(
                ((key, self._info(player, game)) for key, player in online),
                key=lambda pair: (pair[1].rating is None, -(pair[1].rating or 0), pair[0]),
            )
            page = [info for _, info in infos[request.offset : end]]
        else:  # only the page's players are looked up
            page = [self._info(player, game) for _, player in heapq.nsmallest(end, online, key=itemgetter(0))[request.offset :]]
        return Players(id=request.id, players=page, total=len(online), next=end if end < len(online) else None)

    def _info(self, player: Session, game: str | None) -> PlayerInfo:
        rated = self.rating_of(player, game, None)
        return PlayerInfo(
            name=player.name,
            status=status_of(player, self._tables),
            claimed=bool(getattr(player, "claimed", False)),
            bot=player.bot,
            rating=rated.rating if rated is not None else None,
            deviation=rated.deviation if rated is not None else None,
            rating_game=rated.game if rated is not None else None,
        )
