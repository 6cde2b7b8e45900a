"""The ``finger`` and ``leaderboard`` requests: what the server tells anyone about players' ratings.

Both answers are bounded: ``finger`` holds at most one rating per game and
family, the last :data:`server.ratings.ratings.RECENT_GAMES` rated games and one
casual count per game;
``leaderboard`` one page of at most
:data:`protocol.messages.MAX_LEADERBOARD_PAGE` rows. Ratings are public, as
on FICS and lichess; nothing here reveals anything about a game in progress.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Mapping, TypeVar

import games
from protocol import Code, Message
from protocol.messages import CasualInfo, Finger, GetLeaderboard, PastGame, Player, Ranking, RankingRow, RatingInfo

from ..core.names import NameError_, check_name, name_key
from ..ratings.ratings import Ratings
from ..core.session import Push, Session
from ..storage.rows import iso_utc
from ..core.errors import RequestError

__all__ = ["RatingQueries"]

T = TypeVar("T")

_RESULTS = {1.0: "win", 0.5: "draw", 0.0: "loss"}


class RatingQueries:
    """Answers ``finger`` and ``leaderboard``.

    Args:
        ratings: the players' ratings.
        names: name key -> the session holding that name now (to say who is online; in a cluster, on any node).
    """

    def __init__(self, ratings: Ratings, names: Mapping[str, Session]) -> None:
        self.ratings = ratings
        self.names = names

    async def _off_the_loop(self, query: Callable[..., T], *args: Any) -> T:
        """Run a read of the database in a thread, so a long leaderboard does not hold up play; in memory, at once."""
        if self.ratings.store is None:
            return query(*args)  # the in-memory ratings are the event loop's: read them here
        return await asyncio.to_thread(query, *args)

    async def finger(self, session: Session, request: Finger, then: list[Push]) -> Message:
        """A name's ratings per game and family, its last rated games and its casual games per game (a ``player`` reply).

        Raises:
            RequestError: ``bad_name`` for a text that cannot be a name.
        """
        try:
            name = check_name(request.name)
        except NameError_ as exc:
            raise RequestError(Code.BAD_NAME, f"no player can have that name: {exc}", "name") from None
        key = name_key(name)
        found = await self._off_the_loop(self.ratings.finger, key, name)
        holder = self.names.get(key)
        return Player(
            id=request.id,
            name=found.name,
            online=holder is not None and holder.connected,
            ratings=[
                RatingInfo(
                    game=game, family=family, rating=round(r.rating), deviation=round(r.deviation), provisional=r.provisional,
                    games=r.games, wins=r.wins, draws=r.draws, losses=r.losses,
                )  # fmt: skip
                for game, family, r in found.ratings
            ],
            recent=[
                PastGame(
                    table=g.table_id, game=g.game, family=g.family, opponent=g.opponent, result=_RESULTS.get(g.score, "draw"),
                    before=round(g.before), after=round(g.after), finished=iso_utc(g.finished),
                )  # fmt: skip
                for g in found.recent
            ],
            casual=[CasualInfo(game=c.game, games=c.games, wins=c.wins, draws=c.draws, losses=c.losses) for c in found.casual],
        )

    async def leaderboard(self, session: Session, request: GetLeaderboard, then: list[Push]) -> Message:
        """One page of a game's leaderboard, best first (a ``ranking`` reply).

        Raises:
            RequestError: ``unknown_game``.
        """
        try:
            game = games.get(request.game).name
        except games.UnknownGame as exc:
            raise RequestError(Code.UNKNOWN_GAME, str(exc), "game") from None
        found = await self._off_the_loop(self.ratings.leaderboard, game, request.family, request.limit + 1, request.offset, request.provisional)
        rows = [
            RankingRow(
                rank=row.rank, name=row.name, family=row.family, rating=round(row.rating.rating),
                deviation=round(row.rating.deviation), provisional=row.rating.provisional, games=row.rating.games,
            )  # fmt: skip
            for row in found[: request.limit]
        ]
        more = len(found) > request.limit
        return Ranking(id=request.id, game=game, family=request.family, rows=rows, next=request.offset + request.limit if more else None)
