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
import logging
import sqlite3
import time
from typing import Any, Awaitable, Callable, Iterable, Sequence

from . import glicko2
from ..tables.clock import TimeControl
from .casual import CasualCounts, CasualRecord, read_casual
from .records import (
    PROVISIONAL_DEVIATION,
    RATING_COLUMNS,
    SECONDS_PER_DAY,
    Finger,
    GameChange,
    LeaderboardRow,
    PastGame,
    Rating,
    SeatChange,
    decode_ratings,
    decode_recent,
)
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

SETTLE_ATTEMPTS = 5
"""How many times a rated ending is planned and committed while other nodes keep rating its players meanwhile."""

RECENT_GAMES = 10
"""How many of a player's last rated games ``finger`` shows."""


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
        rows = self.store.read(lambda db: db.execute(f"SELECT {RATING_COLUMNS} FROM ratings WHERE name_key = ? AND game = ? AND family = ?", key).fetchall())
        rated = decode_ratings(rows)
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
            rows = db.execute(f"SELECT {RATING_COLUMNS} FROM ratings WHERE name_key = ? ORDER BY game, family", (name_key,)).fetchall()
            recent = db.execute(_RECENT_SQL, (name_key, RECENT_GAMES)).fetchall()
            return rows, recent, read_casual(db, name_key)

        rows, recent, casual = self.store.read(query)
        decoded = decode_ratings(rows)
        shown = decoded[0][0] if decoded else name
        games = [(game, family, rating.aged(now)) for _name, game, family, rating in decoded]
        return Finger(shown, sorted(games, key=_by_game_and_family), decode_recent(recent), casual)

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
        order = f"SELECT {RATING_COLUMNS} FROM ratings WHERE {where} ORDER BY rating DESC, name_key DESC"  # an index's order
        if family is None:
            rows = self.store.read(lambda db: _best_of_each(db.execute(order, params), limit, offset))
        else:
            rows = self.store.read(lambda db: db.execute(f"{order} LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall())
        return [LeaderboardRow(offset + i + 1, name, fam, rating.aged(now)) for i, (name, _game, fam, rating) in enumerate(decode_ratings(rows))]


# --- SQL ------------------------------------------------------------------------------

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
