"""Players' ratings: Glicko-2 per game and time-control family, stored with the games that changed them.

A rating belongs to a name key (:func:`server.core.names.name_key`), a game and a
time-control family (:func:`family_of`: ``bullet``, ``blitz``, ``rapid``,
``classical`` or ``untimed``). Only rated tables between two claimed names
change ratings (:mod:`server.play.authority` checks who may sit); each such game
is a rating period of its own (:func:`server.ratings.glicko2.rate_game`).

:class:`Ratings` reads ratings through a cache filled from the store, plans
the change a game's end makes (:meth:`Ratings.settle`), hands its statements
to the same transaction as the game's end, and changes the cache only once
that commit succeeded. A rating row that cannot be read back is skipped with
a log line: the player counts as unrated in that game and family.

>>> family_of("5+3"), family_of(None), family_of("1+0"), family_of("15+10"), family_of("30+0")
('blitz', 'untimed', 'bullet', 'rapid', 'classical')
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Sequence

from . import glicko2
from ..tables.clock import TimeControl
from .casual import CasualCounts, CasualRecord, read_casual
from ..storage.store import Statement, Store

__all__ = [
    "BLITZ_BELOW_S",
    "BULLET_BELOW_S",
    "FAMILIES",
    "PROVISIONAL_DEVIATION",
    "RAPID_BELOW_S",
    "RECENT_GAMES",
    "SETTLE_ATTEMPTS",
    "Finger",
    "GameChange",
    "LeaderboardRow",
    "PastGame",
    "Rating",
    "Ratings",
    "SeatChange",
    "family_of",
]

log = logging.getLogger(__name__)

FAMILIES = ("bullet", "blitz", "rapid", "classical", "untimed")
"""The time-control families, fastest first; ``untimed`` is a table without a clock (like correspondence)."""

BULLET_BELOW_S = 3 * 60.0
"""Estimated game duration (see :func:`family_of`) below which a time control is bullet, in seconds."""
BLITZ_BELOW_S = 8 * 60.0
"""... below which (and at least bullet's) it is blitz."""
RAPID_BELOW_S = 25 * 60.0
"""... below which it is rapid; from here on it is classical."""

MOVES_PER_GAME = 40
"""Moves per seat the estimated duration counts the increment for (lichess's 40)."""

PROVISIONAL_DEVIATION = 110.0
"""A rating whose deviation is above this is provisional: shown with a mark, left out of leaderboards."""

SETTLE_ATTEMPTS = 5
"""How many times a rated ending is planned and committed while other nodes keep rating its players meanwhile."""

RECENT_GAMES = 10
"""How many of a player's last rated games ``finger`` shows."""

SECONDS_PER_DAY = 86400.0


def family_of(time_control: TimeControl | str | None) -> str:
    """The time-control family of a table: ``untimed`` without a clock, else by estimated duration.

    The estimated duration of ``M+I`` is ``60*M + 40*I`` seconds (a game of
    40 moves per seat), as lichess estimates: below 3 minutes bullet, below 8
    blitz, below 25 rapid, else classical.

    Args:
        time_control: a :class:`TimeControl`, its text (``"5+3"``) or ``None``/``"none"`` (untimed).

    Raises:
        server.tables.clock.TimeControlError: the text is not a time control.
    """
    control = TimeControl.parse(time_control) if isinstance(time_control, str) or time_control is None else time_control
    if control is None:
        return "untimed"
    duration = control.initial_s + MOVES_PER_GAME * control.increment_s
    if duration < BULLET_BELOW_S:
        return "bullet"
    if duration < BLITZ_BELOW_S:
        return "blitz"
    return "rapid" if duration < RAPID_BELOW_S else "classical"


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


class Ratings:
    """Every player's ratings: read through a cache, changed only after a commit.

    Args:
        store: where ratings are kept (``None``: in memory only, for a server without a database).
        clock: the Unix time now (``time.time``; tests pass their own).
    """

    def __init__(self, store: Store | None = None, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock
        self._cache: dict[tuple[str, str, str], Rating] = {}  # (name key, game, family) -> rating as of its last game
        self._names: dict[str, str] = {}  # name key -> name, for players rated without a database
        self._lock = asyncio.Lock()  # one rated ending at a time: plan, commit, apply
        self._damaged: set[tuple[str, str, str]] = set()  # stored rows that could not be read back (overwritten unguarded)
        self.casual = CasualCounts()  # casual games, counted here only without a database
        self.on_change: Callable[[str], None] | None = None
        """Called with each name key whose rating a committed game changed here (a cluster tells its other nodes)."""

    def get(self, name_key: str, game: str, family: str) -> Rating:
        """The player's rating in ``game`` and ``family`` as of now (the default for a player not rated there).

        Args:
            name_key: the player's name key (:func:`server.core.names.name_key`).
            game: the game's short name.
            family: a time-control family (:data:`FAMILIES`).
        """
        key = (name_key, game, family)
        rating = self._cache.get(key)
        if rating is None:
            rating = self._load(key)
            if rating.updated is None:
                return rating
            self._cache[key] = rating
        return rating.aged(self.clock())

    def _load(self, key: tuple[str, str, str]) -> Rating:
        if self.store is None:
            return Rating()
        rows = self.store.read(lambda db: db.execute(f"SELECT {_RATING_COLUMNS} FROM ratings WHERE name_key = ? AND game = ? AND family = ?", key).fetchall())
        rated = _decode_ratings(rows)
        if rows and not rated:
            self._damaged.add(key)
        return rated[0][3] if rated else Rating()

    def plan(self, table_id: int, game: str, family: str, seats: Sequence[tuple[str, str]], winner: int | None) -> GameChange:
        """The rating change of a rated game that just ended; nothing changes until :meth:`apply`.

        Args:
            table_id, game, family: the table and what was played there.
            seats: ``(name, name key)`` of seat 0 and seat 1.
            winner: the winning seat, or ``None`` for a draw.
        """
        now = self.clock()
        before = [self.get(key, game, family) for _name, key in seats]
        scores = (0.5, 0.5) if winner is None else (1.0 - winner, float(winner))
        changes = []
        for seat, (name, key) in enumerate(seats):
            mine, theirs, score = before[seat], before[1 - seat], scores[seat]
            new = glicko2.rate_game(mine.glicko(), theirs.glicko(), score)
            after = Rating(
                new.rating, new.deviation, new.volatility, mine.games + 1,
                mine.wins + (score == 1.0), mine.draws + (score == 0.5), mine.losses + (score == 0.0), now,
            )  # fmt: skip
            guard = None if (key, game, family) in self._damaged else mine.games
            changes.append(SeatChange(name, key, score, mine, after, guard))
        return GameChange(table_id, game, family, tuple(changes), now)

    def apply(self, change: GameChange) -> None:
        """Make a committed change the cached ratings."""
        for seat in change.seats:
            self._cache[(seat.key, change.game, change.family)] = seat.after
            self._damaged.discard((seat.key, change.game, change.family))
            self._names[seat.key] = seat.name
            if self.on_change is not None:
                self.on_change(seat.key)

    def forget(self, name_key: str | None = None) -> None:
        """Drop the cached ratings of ``name_key`` (``None``: everyone's): another node changed them; the next read loads them."""
        if name_key is None:
            self._cache.clear()
            return
        for key in [key for key in self._cache if key[0] == name_key]:
            del self._cache[key]

    async def settle(self, plan: Callable[[], GameChange] | None, commit: Callable[[list[Statement]], Awaitable[None]]) -> GameChange:
        """Plan a game's rating change, ``commit`` its :meth:`GameChange.statements`, then apply it; return it.

        ``plan`` returns the change (see :meth:`plan`); ``None`` stands for a
        game that is not rated: ``commit`` gets no statement, an empty change
        is returned and nothing waits. Rated endings are settled one at a time
        on a node (plan, commit, apply), so two games of one player ending
        together both count. Across the nodes of a cluster each stored rating
        is guarded (:attr:`SeatChange.guard`): when another node rated one of
        the players since this node read the rating, the commit fails, and the
        change is planned again from the stored ratings and committed again
        (at most :data:`SETTLE_ATTEMPTS` times).

        Raises:
            Exception: whatever ``commit`` raised on its last attempt, or for
                another cause than a rating that moved on; the cache is left as it was.
        """
        if plan is None:
            await commit([])
            return GameChange()
        async with self._lock:
            for attempt in range(1, SETTLE_ATTEMPTS + 1):
                change = plan()
                try:
                    await commit(change.statements())
                except Exception:
                    if attempt == SETTLE_ATTEMPTS or not self._moved_on(change):
                        raise
                    log.info("table %d: a player was rated on another node meanwhile; rating the game again from the stored ratings", change.table_id)
                    for seat in change.seats:
                        self.forget(seat.key)
                    continue
                self.apply(change)
                return change
        raise AssertionError("unreachable")  # pragma: no cover

    def _moved_on(self, change: GameChange) -> bool:
        """Whether a seat's stored rating no longer holds the ``games`` the change was guarded with (another node rated it)."""
        if self.store is None:
            return False
        sql = "SELECT games FROM ratings WHERE name_key = ? AND game = ? AND family = ?"
        try:
            stored = [self.store.read(lambda db, key=seat.key: db.execute(sql, (key, change.game, change.family)).fetchall()) for seat in change.seats]
        except Exception:  # the database cannot be read either: the commit's own error says why
            return False
        return any(seat.guard is not None and (rows[0][0] if rows else 0) != seat.guard for seat, rows in zip(change.seats, stored))

    # --- finger and leaderboard ----------------------------------------------------

    def finger(self, name_key: str, name: str) -> Finger:
        """Every rating of a name, its last :data:`RECENT_GAMES` rated games and its casual games.

        Args:
            name_key: the name key looked up.
            name: the name as asked (shown when the server has never rated it).
        """
        now = self.clock()
        if self.store is None:
            rated = [(key[1], key[2], rating.aged(now)) for key, rating in self._cache.items() if key[0] == name_key]
            return Finger(self._names.get(name_key, name), sorted(rated, key=_by_game_and_family), [], self.casual.of(name_key))

        def query(db: sqlite3.Connection) -> tuple[list[Any], list[Any], list[CasualRecord]]:
            rows = db.execute(f"SELECT {_RATING_COLUMNS} FROM ratings WHERE name_key = ? ORDER BY game, family", (name_key,)).fetchall()
            recent = db.execute(_RECENT_SQL, (name_key, RECENT_GAMES)).fetchall()
            return rows, recent, read_casual(db, name_key)

        rows, recent, casual = self.store.read(query)
        decoded = _decode_ratings(rows)
        shown = decoded[0][0] if decoded else name
        games = [(game, family, rating.aged(now)) for _name, game, family, rating in decoded]
        return Finger(shown, sorted(games, key=_by_game_and_family), _decode_recent(recent), casual)

    def leaderboard(self, game: str, family: str | None, limit: int, offset: int = 0, provisional: bool = False) -> list[LeaderboardRow]:
        """The best ratings in ``game``: one family's, or (``family`` ``None``) each player's best of any family.

        Args:
            game: the game's short name.
            family: a family of :data:`FAMILIES`, or ``None``.
            limit: at most this many rows; offset: skip this many of the best first.
            provisional: include provisional ratings too (left out by default, as on lichess).

        Returns:
            The rows, best first, ranked from ``offset + 1``; deviations are as of now.
        """
        now = self.clock()
        if self.store is None:
            candidates = [(key, rating.aged(now)) for key, rating in self._cache.items() if key[1] == game and (family is None or key[2] == family)]
            best: dict[str, tuple[tuple[str, str, str], Rating]] = {}
            for key, rating in candidates:
                if (provisional or not rating.provisional) and (key[0] not in best or rating.rating > best[key[0]][1].rating):
                    best[key[0]] = (key, rating)
            ranked = sorted(best.values(), key=lambda item: -item[1].rating)[offset : offset + limit]
            return [LeaderboardRow(offset + i + 1, self._names.get(key[0], key[0]), key[2], rating) for i, (key, rating) in enumerate(ranked)]
        where, params = _leaderboard_filter(game, family, now, provisional)
        order = f"SELECT {_RATING_COLUMNS} FROM ratings WHERE {where} ORDER BY rating DESC, name_key DESC"  # an index's order
        if family is None:
            rows = self.store.read(lambda db: _best_of_each(db.execute(order, params), limit, offset))
        else:
            rows = self.store.read(lambda db: db.execute(f"{order} LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall())
        return [LeaderboardRow(offset + i + 1, name, fam, rating.aged(now)) for i, (name, _game, fam, rating) in enumerate(_decode_ratings(rows))]


# --- SQL ------------------------------------------------------------------------------

_RATING_COLUMNS = "name_key, name, game, family, rating, deviation, volatility, games, wins, draws, losses, updated"

_RECENT_SQL = (
    "SELECT c.table_id, c.game, c.family, o.name, c.score, c.before, c.after, c.at "
    "FROM rating_changes AS c JOIN rating_changes AS o ON o.table_id = c.table_id AND o.seat = 1 - c.seat "
    "WHERE c.name_key = ? ORDER BY c.at DESC, c.table_id DESC LIMIT ?"
)


def _by_game_and_family(entry: tuple[str, str, Rating]) -> tuple[str, int]:
    """Sort key of a ``finger`` rating: by game, then family fastest first."""
    return entry[0], FAMILIES.index(entry[1]) if entry[1] in FAMILIES else len(FAMILIES)


def _best_of_each(rows: Iterable[Sequence[Any]], limit: int, offset: int) -> list[Sequence[Any]]:
    """From ``rows`` best first, each player's first (best) row: those ranked ``offset + 1`` to ``offset + limit``.

    Reads only as far down the ratings as the page needs.
    """
    seen: set[str] = set()
    page: list[Sequence[Any]] = []
    for row in rows:
        if row[0] in seen:
            continue
        seen.add(row[0])
        if len(seen) > offset:
            page.append(row)
            if len(page) >= limit:
                break
    return page


def _leaderboard_filter(game: str, family: str | None, now: float, provisional: bool) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause (columns unqualified) of a leaderboard and its parameters.

    A row is provisional when its deviation aged to ``now`` is above
    :data:`PROVISIONAL_DEVIATION`; compared squared on the Glicko scale, so no
    square root is needed in SQL: ``RD² + periods·(σ·SCALE)² > 110²``.
    """
    clauses = ["game = ?"]
    params: list[Any] = [game]
    if family is not None:
        clauses.append("family = ?")
        params.append(family)
    if not provisional:
        seconds_per_period = SECONDS_PER_DAY * glicko2.IDLE_DAYS_PER_PERIOD
        clauses.append("deviation * deviation + max(? - updated, 0) / ? * (volatility * ?) * (volatility * ?) <= ?")
        params += [now, seconds_per_period, glicko2.SCALE, glicko2.SCALE, PROVISIONAL_DEVIATION**2]
    return " AND ".join(clauses), tuple(params)


_SAVE = (
    f"INSERT INTO ratings ({_RATING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
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


def _decode_ratings(rows: list[Sequence[Any]]) -> list[tuple[str, str, str, Rating]]:
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


def _decode_recent(rows: list[Sequence[Any]]) -> list[PastGame]:
    """The ``finger`` games of ``rows``; a damaged row is logged and skipped."""
    games = []
    for row in rows:
        try:
            table_id, game, family, opponent, score, before, after, at = row
            games.append(PastGame(int(table_id), str(game), str(family), str(opponent), float(score), float(before), float(after), float(at)))
        except (ValueError, TypeError) as exc:
            log.error("a stored rating change cannot be read back and is skipped (%r): %s", tuple(row)[:2], exc)
    return games
