"""Rated tables: who may sit at one, what a table shows of its players' ratings, and which endings are rated.

A table is rated when its creator asked (``create_table.rated``) and the
server allows rated games. Only claimed names sit there, never a computer, and nobody asks for hints.
When its game ends by any result (the rules, resignation, agreement,
forfeit by leaving or by grace expiry, flag fall) after at least
:data:`MIN_RATED_PLIES` plies of the players' own, both ratings change in the
same transaction as the game's end (:func:`settle_ending`). An aborted game
(called off, left or abandoned before both sides moved) is not rated.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Sequence

import games
from protocol import Code
from protocol.messages import CreateTable, RatingChange, SeatRating

from .casual import casual_results, casual_sql
from ..core.names import name_key
from .ratings import GameChange, Ratings, family_of
from ..core.session import Session
from ..storage.store import Statement
from ..core.errors import RequestError
from ..tables.table import Played, Table

__all__ = ["MIN_RATED_PLIES", "check_rated_request", "check_rated_seat", "settle_ending", "show_ratings", "table_family"]

MIN_RATED_PLIES = 2
"""A game with fewer plies played by the players (forced passes aside) is not rated."""


def check_rated_request(request: CreateTable, allowed: bool) -> None:
    """Refuse a ``create_table`` asking for a rated table the server cannot give.

    Raises:
        RequestError: ``rated_off`` when the operator turned rated games off;
            ``bad_request`` (field ``rated``) with a computer seat or hints.
    """
    if not request.rated:
        return
    if not allowed:
        raise RequestError(Code.RATED_OFF, "this server does not allow rated games (its operator turned them off); create the table unrated", "rated")
    if request.computer:
        raise RequestError(Code.BAD_REQUEST, "games against the computer are not rated; create the table without rated", "rated")
    if request.hints:
        raise RequestError(Code.BAD_REQUEST, "a rated game allows no hints (the computer would play for you); leave out hints or rated", "rated")


def check_rated_seat(table: Table | None, session: Session, rated: bool | None = None) -> None:
    """Refuse a guest (an unclaimed name) a seat at a rated table (``rated`` overrides the table's own flag).

    Raises:
        RequestError: ``rated_needs_claim``, naming why.
    """
    if (table.rated if rated is None else rated) and not session.claimed:
        raise RequestError(
            Code.RATED_NEEDS_CLAIM,
            f"only claimed names play rated games, and {session.name!r} is a guest name; claim it first, or play at an unrated table",
        )


def table_family(table: Table) -> str:
    """The time-control family the table's game is rated in."""
    return family_of(table.clock.control if table.clock is not None else None)


def show_ratings(ratings: Ratings, table: Table) -> None:
    """Note each seated player's current rating on a rated table, for its :class:`TableInfo`."""
    if not table.rated:
        return
    family = table_family(table)
    for seat, name in enumerate(table.seat_names):
        if name is None or table.computer[seat] is not None:
            table.seat_ratings[seat] = None
            continue
        rating = ratings.get(name_key(name), table.game.name, family)
        table.seat_ratings[seat] = SeatRating(rating=round(rating.rating), provisional=rating.provisional)


async def settle_ending(
    ratings: Ratings,
    table: Table,
    outcome: games.Outcome,
    commit: Callable[[list[Statement]], Awaitable[None]],
    played: Sequence[Played] = (),
) -> None:
    """Commit a game's end through ``commit`` with its rating change or casual counts; then the ratings are changed.

    Call it with the table lock held, ``commit`` adding the rating statements
    it gets to the game's own end in one transaction::

        await settle_ending(ratings, table, outcome, lambda rating_sql: persist(ended_sql, *rating_sql))
        table.end(outcome)

    ``commit`` gets no rating statement for a game that is not rated (an
    unrated table, an aborted game, one with a computer seat, fewer than
    :data:`MIN_RATED_PLIES` plies); such a game, unless aborted, adds to its
    players' casual counts instead (:mod:`server.ratings.casual`). ``commit``
    may be called again, with the change planned afresh, when another node
    of a cluster rated a player meanwhile (:meth:`Ratings.settle`).

    Args:
        played: plies planned but not applied yet (the move that ended the game).

    Raises:
        Exception: what ``commit`` raised; then nothing changed.
    """
    plan = None if outcome.aborted else _plan(ratings, table, outcome, played)
    casual = casual_results(table, outcome) if plan is None and not outcome.aborted else []
    casual_rows = casual_sql(casual) if ratings.store is not None else []
    change = await ratings.settle(plan, lambda rating_sql: commit(rating_sql + casual_rows))
    if ratings.store is None:
        ratings.casual.add(casual)
    if change.seats:
        table.rating_changes = [
            RatingChange(before=round(seat.before.rating), after=round(seat.after.rating), deviation=round(seat.after.deviation)) for seat in change.seats
        ]


def _plan(ratings: Ratings, table: Table, outcome: games.Outcome, played: Sequence[Played]) -> Callable[[], GameChange] | None:
    """How to plan the rating change of this ending, or ``None`` if it is not rated."""
    if not table.rated or table.has_computer() or None in table.seat_names:
        return None
    plies = table.forced.count(False) + sum(not ply.forced for ply in played)
    if plies < MIN_RATED_PLIES:
        return None
    seats = [(name, name_key(name)) for name in table.seat_names if name is not None]
    return lambda: ratings.plan(table.id, table.game.name, table_family(table), seats, outcome.winner)
