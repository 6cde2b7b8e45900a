"""Ratings as text for the terminal: ``finger`` and ``top`` replies, a seat's rating, a game's rating change.

Every name and word that comes from the server is sanitised with
:func:`client.sanitize.printable` (names come from other users). A
provisional rating reads with a question mark, as on lichess: ``1662?``.
"""

from __future__ import annotations

from protocol import messages as m

from .sanitize import printable

__all__ = ["FAMILIES", "describe_change", "describe_finger", "describe_ranking", "rating_text"]

FAMILIES = ("bullet", "blitz", "rapid", "classical", "untimed")
"""The time-control families the server rates in (``top GAME FAMILY``)."""


def rating_text(rating: int, provisional: bool) -> str:
    """``1662`` or, while provisional, ``1662?``."""
    return f"{rating}{'?' if provisional else ''}"


LINE_MODE_REPLAY = "replay ID or export ID FILE"
"""How line mode says to see a past game (the commands it takes)."""


def describe_finger(player: m.Player, how_to_replay: str = LINE_MODE_REPLAY) -> str:
    """Several lines: the player, each rating with its record, the last rated games with their ids, then the casual games.

    ``how_to_replay`` is the client's own words for seeing one of those games
    (line mode's commands by default; the app names its archive key).
    """
    name = printable(player.name)
    lines = [f"{name}{' (online)' if player.online else ''}"]
    if not player.ratings:
        lines.append("  rated: no rated games yet")
    else:
        lines.append("  rated:")
    for r in player.ratings:
        lines.append(
            f"    {printable(r.game)} {printable(r.family)}: {rating_text(r.rating, r.provisional)} (deviation {r.deviation}), "
            f"{r.games} games: {r.wins} won, {r.draws} drawn, {r.losses} lost"
        )
    if player.recent:
        lines.append(f"  last rated games ({how_to_replay}):")
    for g in player.recent:
        change = g.after - g.before
        lines.append(
            f"    #{g.table} {printable(g.game)} {printable(g.family)} vs {printable(g.opponent)}: {printable(g.result)}, "
            f"{g.before} -> {g.after} ({change:+d}), {printable(g.finished[:16].replace('T', ' '))}"
        )
    lines.append("  casual (unrated):" if player.casual else "  casual (unrated): no casual games yet")
    for c in player.casual:
        lines.append(f"    {printable(c.game)}: {c.games} games: {c.wins} won, {c.draws} drawn, {c.losses} lost")
    return "\n".join(lines)


def describe_ranking(ranking: m.Ranking) -> str:
    """The leaderboard page, one line per player, and how to see the next page."""
    family = printable(ranking.family) if ranking.family is not None else "best of any time control"
    lines = [f"Top {printable(ranking.game)} ({family}):"]
    if not ranking.rows:
        lines.append("  nobody yet (provisional ratings are left out: play more rated games)")
    for row in ranking.rows:
        where = "" if ranking.family is not None else f" {printable(row.family)}"
        lines.append(f"  {row.rank:>4}. {printable(row.name)} {rating_text(row.rating, row.provisional)}{where} ({row.games} games)")
    if ranking.next is not None:
        lines.append(f"  more: top {printable(ranking.game)} {ranking.family or 'all'} {ranking.next + 1}")
    return "\n".join(lines)


def describe_change(names: tuple[str, str], changes: list[m.RatingChange]) -> str:
    """``Ratings: ann 1500 -> 1662 (+162), bob 1500 -> 1338 (-162)``."""
    parts = [f"{printable(name)} {c.before} -> {c.after} ({c.after - c.before:+d})" for name, c in zip(names, changes)]
    return "Ratings: " + ", ".join(parts)
