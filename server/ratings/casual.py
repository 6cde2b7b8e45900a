"""Casual games: each player's finished games that changed no rating, counted per game for ``finger``.

A game counts as casual when it ends with a result (the rules, resignation,
agreement, a forfeit, time) and changes no rating: an unrated table, a game
against the computer, a rated table's game that ended too soon to be rated.
An aborted game counts nowhere. Each human seat's count goes up in the same
transaction as the game's end (:func:`server.ratings.rated.settle_ending`); computer
seats count nothing. With a database the counts live in ``casual_games``,
keyed by name key like the ratings; without one, in memory for the server's
life.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import games

from ..core.names import name_key
from ..storage.store import Statement
from ..tables.table import Table

__all__ = ["CasualCounts", "CasualRecord", "CasualResult", "casual_results", "casual_sql", "read_casual"]


@dataclass(frozen=True, slots=True)
class CasualRecord:
    """A player's casual games in one game: how many, and how they ended for them."""

    game: str
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True, slots=True)
class CasualResult:
    """One seat's result in a casual game that just ended: ``score`` 1 won, 0.5 drew, 0 lost."""

    key: str
    game: str
    score: float


def casual_results(table: Table, outcome: games.Outcome) -> list[CasualResult]:
    """Each human seat's result in ``table``'s game, which ended with ``outcome`` and changed no rating."""
    results = []
    for seat, name in enumerate(table.seat_names):
        if name is None or table.computer[seat] is not None:
            continue
        score = 0.5 if outcome.winner is None else 1.0 if outcome.winner == seat else 0.0
        results.append(CasualResult(name_key(name), table.game.name, score))
    return results


_UPSERT = (
    "INSERT INTO casual_games (name_key, game, games, wins, draws, losses) VALUES (?, ?, 1, ?, ?, ?) "
    "ON CONFLICT (name_key, game) DO UPDATE SET games = casual_games.games + 1, wins = casual_games.wins + excluded.wins, "
    "draws = casual_games.draws + excluded.draws, losses = casual_games.losses + excluded.losses"
)  # the stored counts named with their table: a bare name is ambiguous in PostgreSQL (the stored row or excluded)


def casual_sql(results: list[CasualResult]) -> list[Statement]:
    """The statements that add ``results`` to the stored counts."""
    return [(_UPSERT, (r.key, r.game, *_tally(r.score))) for r in results]


def _tally(score: float) -> tuple[int, int, int]:
    """``(wins, draws, losses)`` of one game with ``score``."""
    return (int(score == 1.0), int(score == 0.5), int(score == 0.0))


def read_casual(db: sqlite3.Connection, key: str) -> list[CasualRecord]:
    """The stored casual counts of name key ``key``, by game."""
    rows = db.execute("SELECT game, games, wins, draws, losses FROM casual_games WHERE name_key = ? ORDER BY game", (key,)).fetchall()
    return [CasualRecord(*row) for row in rows]


class CasualCounts:
    """The casual counts of a server without a database (in memory, for the server's life)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], tuple[int, int, int, int]] = {}  # (name key, game) -> games, wins, draws, losses

    def add(self, results: list[CasualResult]) -> None:
        """Count ``results`` (call once the game's end stands)."""
        for result in results:
            games_, wins, draws, losses = self._counts.get((result.key, result.game), (0, 0, 0, 0))
            won, drew, lost = _tally(result.score)
            self._counts[(result.key, result.game)] = (games_ + 1, wins + won, draws + drew, losses + lost)

    def of(self, key: str) -> list[CasualRecord]:
        """Name key ``key``'s counts, by game."""
        return [CasualRecord(game, *counts) for (owner, game), counts in sorted(self._counts.items()) if owner == key]
