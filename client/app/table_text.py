"""The words and numbers of a table view: clock readings, the move list, the result banner.

Pure functions of the model's data, so the line mode or tests can use them too.
"""

from __future__ import annotations

from typing import Any, Sequence

from protocol import messages as m

from ..ratings_text import rating_text
from ..sanitize import printable

__all__ = ["LOW_TIME_MS", "PROVISIONAL_DEVIATION", "clock_text", "move_list_lines", "result_text", "seat_rating"]

LOW_TIME_MS = 10_000
"""Below this much time left a clock turns to the low-time colour (and rings, with ``bell``)."""


PROVISIONAL_DEVIATION = 110
"""A rating whose deviation is above this is provisional (PROTOCOL.md, Ratings)."""


def seat_rating(
    ratings: Sequence[m.SeatRating | None] | None, changes: Sequence[m.RatingChange | None] | None, seat: int
) -> str | None:
    """A seat's rating as text (``"1662?"``): the new one once a rated game is over (``changes``, from ``game_over``),
    else the one the table gave (``ratings``, from the table's info); ``None`` when it has none.

    >>> seat_rating([m.SeatRating(rating=1500, provisional=True), None], None, 0)
    '1500?'
    >>> seat_rating([m.SeatRating(rating=1500, provisional=True), None], [m.RatingChange(before=1500, after=1662, deviation=290), None], 0)
    '1662?'
    """
    if changes is not None and seat < len(changes) and changes[seat] is not None:
        change = changes[seat]
        return rating_text(change.after, change.deviation > PROVISIONAL_DEVIATION)
    if ratings is not None and seat < len(ratings) and ratings[seat] is not None:
        return rating_text(ratings[seat].rating, ratings[seat].provisional)
    return None


def clock_text(ms: int) -> str:
    """A clock reading: ``m:ss``, ``h:mm:ss`` from an hour, ``s.t`` tenths under ten seconds.

    >>> clock_text(272_000), clock_text(3_723_000), clock_text(9_450)
    ('4:32', '1:02:03', '0:09.4')
    """
    ms = max(0, int(ms))
    if ms < LOW_TIME_MS:
        return f"0:{ms // 1000:02d}.{ms % 1000 // 100}"
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def move_list_lines(moves: list[str], forced: list[bool]) -> list[str]:
    """The move list, two plies a line with their ply numbers; forced passes in brackets.

    >>> move_list_lines(["d3", "c5", "pass"], [False, False, True])
    ['  1 d3          2 c5', '  3 (pass)']
    """
    texts = [f"({move})" if was_forced else move for move, was_forced in zip(moves, forced)]
    lines = []
    for start in range(0, len(texts), 2):
        left = f"{start + 1:>3} {texts[start]:<10}"
        right = f"{start + 2:>3} {texts[start + 1]}" if start + 1 < len(texts) else ""
        lines.append((left + right).rstrip())
    return lines


def result_text(outcome: dict[str, Any], seat: int | None, seat_names: tuple[str, str], players: list[str | None]) -> str:
    """The banner for a finished game, as ``seat`` (``None``: a spectator) reads it.

    >>> result_text({"winner": 0, "reason": "more discs", "score": [40, 24]}, 1, ("Black", "White"), ["ann", "bob"])
    'You lost: Black (ann) wins, more discs, 40-24'
    """
    winner, reason = outcome.get("winner"), printable(str(outcome.get("reason") or ""))
    score = outcome.get("score")
    tail = f", {reason}" + (f", {score[0]}-{score[1]}" if score else "")
    if outcome.get("aborted") is True:
        return f"Game aborted{tail}: no result, not rated"
    if winner not in (0, 1):
        return f"Draw{tail}"
    who = seat_names[winner] + (f" ({printable(players[winner])})" if players[winner] else "")
    headline = f"{who} wins" if seat is None else ("You won: " if winner == seat else "You lost: ") + f"{who} wins"
    return headline + tail
