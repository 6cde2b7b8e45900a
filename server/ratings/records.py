"""What a rating is and what changes it, as values and as the rows that store them.

:class:`Rating` is a player's rating in one game and family; :class:`GameChange`
(one :class:`SeatChange` per seat) is what a rated game's end does to two ratings,
with the SQL that stores it (:meth:`GameChange.statements`); :class:`PastGame`,
:class:`Finger` and :class:`LeaderboardRow` are what ``finger`` and leaderboards
show. :func:`decode_ratings` and :func:`decode_recent` read rows back, skipping
(with a log line) a row that cannot be read. :mod:`server.ratings.ratings` keeps
them (:class:`server.ratings.ratings.Ratings`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import Any, Sequence

from . import glicko2
from .casual import CasualRecord
from ..storage.store import Statement

__all__ = [
    "PROVISIONAL_DEVIATION",
    "RATING_COLUMNS",
    "SECONDS_PER_DAY",
    "Finger",
    "GameChange",
    "LeaderboardRow",
    "PastGame",
    "Rating",
    "SeatChange",
    "decode_ratings",
    "decode_recent",
]

log = logging.getLogger("server.ratings.ratings")  # the logger operators know these lines by (docs/OPERATIONS.md)

PROVISIONAL_DEVIATION = 110.0
"""A rating whose deviation is above this is provisional: shown with a mark, left out of leaderboards."""

SECONDS_PER_DAY = 86400.0
"""Seconds in a day, for the idle periods a deviation grows by."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating in one game and family.

    Attributes:
        rating: the Glicko-2 rating (1500 for a newcomer).
        deviation: the rating deviation as of now (350 for a newcomer; it grows while the player is idle).
        volatility: the Glicko-2 volatility (0.06 for a newcomer).
        games: rated games played.
        wins, draws, losses: how those games ended for the player.
        updated: when the last rated game ended, Unix time, or ``None`` for a newcomer.
    """

    rating: float = glicko2.DEFAULT_RATING
    deviation: float = glicko2.DEFAULT_DEVIATION
    volatility: float = glicko2.DEFAULT_VOLATILITY
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    updated: float | None = None

    @property
    def provisional(self) -> bool:
        """Whether the rating is still uncertain (deviation above :data:`PROVISIONAL_DEVIATION`)."""
        return self.deviation > PROVISIONAL_DEVIATION

    def glicko(self) -> glicko2.Rating:
        """The Glicko-2 part of the rating."""
        return glicko2.Rating(self.rating, self.deviation, self.volatility)

    def aged(self, now: float) -> "Rating":
        """The rating with its deviation grown for the idle time since :attr:`updated` (see :func:`server.ratings.glicko2.age`)."""
        if self.updated is None or now <= self.updated:
            return self
        periods = (now - self.updated) / SECONDS_PER_DAY / glicko2.IDLE_DAYS_PER_PERIOD
        return dataclasses.replace(self, deviation=glicko2.age(self.glicko(), periods).deviation)


@dataclass(frozen=True, slots=True)
class SeatChange:
    """What one rated game did to one seat's rating.

    Attributes:
        name: the player's name as seated; ``key`` its name key.
        score: 1 won, 0.5 drew, 0 lost.
        before, after: the rating before (aged to the game's end) and after the game.
        guard: the ``games`` count the stored row must still hold when the change is
            committed (0: no row yet), or ``None`` to overwrite whatever is stored
            (a row that could not be read back). Another node may have rated the
            player meanwhile: then the commit fails and the change is planned again.
    """

    name: str
    key: str
    score: float
    before: Rating
    after: Rating
    guard: int | None = None


@dataclass(frozen=True, slots=True)
class GameChange:
    """The rating change of one rated game: per seat, in seat order (empty for an unrated game).

    Attributes:
        table_id, game, family: where it was played.
        seats: the two seats' changes, or ``()`` when the game is not rated.
        at: when the game ended, Unix time.
    """

    table_id: int = 0
    game: str = ""
    family: str = ""
    seats: tuple[SeatChange, ...] = ()
    at: float = 0.0

    def statements(self) -> list[Statement]:
        """The SQL that stores the change: each seat's new rating, then its ``rating_changes`` row.

        The ratings are written in name key order (two games of the same two
        players ending together on two nodes lock their rows in the same order),
        each failing the transaction if its row no longer holds ``guard`` games
        (see :data:`_GUARDED_SAVE`).
        """
        out = [_save_rating_sql(self.game, self.family, change) for change in sorted(self.seats, key=lambda change: change.key)]
        out += [_change_sql(self, seat, change) for seat, change in enumerate(self.seats)]
        return out


@dataclass(frozen=True, slots=True)
class PastGame:
    """One of a player's rated games as ``finger`` lists it.

    Attributes:
        table_id: the table (``get_record`` and ``parlour games --export`` take it).
        game, family: what was played.
        opponent: the other seat's name.
        score: 1 won, 0.5 drew, 0 lost.
        before, after: the player's rating before and after.
        finished: when the game ended, Unix time.
    """

    table_id: int
    game: str
    family: str
    opponent: str
    score: float
    before: float
    after: float
    finished: float


@dataclass(frozen=True, slots=True)
class Finger:
    """What the server knows of a name's rated play.

    Attributes:
        name: the name as last seen in a rated game (as asked, if never).
        ratings: ``(game, family, rating)`` for every game and family played rated, by game then family.
        recent: the last :data:`RECENT_GAMES` rated games, newest first.
        casual: the casual games (:mod:`server.ratings.casual`) per game, by game.
    """

    name: str
    ratings: list[tuple[str, str, Rating]]
    recent: list[PastGame]
    casual: list[CasualRecord] = dataclasses.field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One line of a leaderboard: rank from 1, the player's name and rating (with the family it is in)."""

    rank: int
    name: str
    family: str
    rating: Rating


# --- SQL ------------------------------------------------------------------------------

RATING_COLUMNS = "name_key, name, game, family, rating, deviation, volatility, games, wins, draws, losses, updated"
"""The columns of a ``ratings`` row, in the order :func:`decode_ratings` reads them."""


_SAVE = (
    f"INSERT INTO ratings ({RATING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (name_key, game, family) DO UPDATE SET name = excluded.name, rating = {rating}, "
    "deviation = excluded.deviation, volatility = excluded.volatility, games = excluded.games, wins = excluded.wins, "
    "draws = excluded.draws, losses = excluded.losses, updated = excluded.updated"
)
_UNGUARDED_SAVE = _SAVE.format(rating="excluded.rating")
_GUARDED_SAVE = _SAVE.format(rating="CASE WHEN ratings.games = ? THEN excluded.rating END")
"""A rating's upsert that fails (``NOT NULL`` of ``rating``) when the stored row no longer holds the ``games`` planned from.

On PostgreSQL the conflicting row is locked and its newest committed version
is the one compared, so of two nodes that rated a player from the same row,
the second one's transaction fails instead of overwriting the first one's.
"""


def _save_rating_sql(game: str, family: str, change: SeatChange) -> Statement:
    rating = change.after
    values = (change.key, change.name, game, family, rating.rating, rating.deviation, rating.volatility,
              rating.games, rating.wins, rating.draws, rating.losses, rating.updated)  # fmt: skip
    if change.guard is None:
        return _UNGUARDED_SAVE, values
    return _GUARDED_SAVE, (*values, change.guard)


def _change_sql(change: GameChange, seat: int, seat_change: SeatChange) -> Statement:
    before, after = seat_change.before, seat_change.after
    return (
        "INSERT INTO rating_changes (table_id, seat, name_key, name, game, family, score, before, after, "
        "deviation_before, deviation_after, volatility_before, volatility_after, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (change.table_id, seat, seat_change.key, seat_change.name, change.game, change.family, seat_change.score,
         before.rating, after.rating, before.deviation, after.deviation, before.volatility, after.volatility, change.at),
    )  # fmt: skip


def decode_ratings(rows: list[Sequence[Any]]) -> list[tuple[str, str, str, Rating]]:
    """``(name, game, family, rating)`` of each row that reads back; a damaged row is logged and skipped."""
    decoded = []
    for row in rows:
        try:
            key, name, game, family, rating, deviation, volatility, games, wins, draws, losses, updated = row
            numbers = (rating, deviation, volatility, updated)
            counts = (games, wins, draws, losses)
            if not all(type(n) in (int, float) and math.isfinite(n) for n in numbers) or not all(type(c) is int and c >= 0 for c in counts):
                raise ValueError(f"a value is not a finite number or a count: {numbers} {counts}")
            if deviation <= 0 or volatility <= 0 or not all(isinstance(text, str) for text in (name, game, family)):
                raise ValueError(f"deviation {deviation!r}, volatility {volatility!r}, name {name!r}, game {game!r}, family {family!r}")
            decoded.append((name, game, family, Rating(float(rating), float(deviation), float(volatility), games, wins, draws, losses, float(updated))))
        except (ValueError, TypeError) as exc:
            log.error("a stored rating cannot be read back and is skipped (%r): %s", tuple(row)[:4], exc)
    return decoded


def decode_recent(rows: list[Sequence[Any]]) -> list[PastGame]:
    """The ``finger`` games of ``rows``; a damaged row is logged and skipped."""
    games = []
    for row in rows:
        try:
            table_id, game, family, opponent, score, before, after, at = row
            games.append(PastGame(int(table_id), str(game), str(family), str(opponent), float(score), float(before), float(after), float(at)))
        except (ValueError, TypeError) as exc:
            log.error("a stored rating change cannot be read back and is skipped (%r): %s", tuple(row)[:2], exc)
    return games
