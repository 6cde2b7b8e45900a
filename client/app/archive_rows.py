"""The archive list's rows: one finished game in columns, fitted to the screen's width.

>>> cells = archive_cells({"id": 7, "game": "morris", "options": {"flying": True}, "players": ["ann", "bob"],
...                        "result": {"winner": 1, "reason": "no legal move"}, "plies": 41, "finished": "2026-11-28T23:10:00Z"})
>>> cells["options"], cells["players"], cells["result"], cells["finished"]
('Flying: yes', 'Player 1 ann vs Player 2 bob', 'Player 2 wins — no legal move', '2026-11-28 23:10')
>>> fit_widths({"players": 40, "result": 30, "id": 3}, 50, flexible=("players", "result"))
{'players': 24, 'result': 23, 'id': 3}
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..line_text import game_seats, name_text, outcome_text
from ..option_text import options_text, schema
from ..sanitize import printable

__all__ = ["ARCHIVE_COLUMNS", "FLEXIBLE", "archive_cells", "fit_widths", "ellipsize", "MIN_FLEXIBLE"]

ARCHIVE_COLUMNS = (("id", "#"), ("game", "Game"), ("players", "Players"), ("result", "Result"), ("options", "Options"),
                   ("plies", "Plies"), ("finished", "Finished"))
"""The archive list's columns: key and header."""
FLEXIBLE = ("players", "result", "options")
"""The columns that narrow (their texts cut with "…") when a row would not fit."""
MIN_FLEXIBLE = 6
"""The narrowest a flexible column gets, in cells."""


def archive_cells(entry: Mapping[str, Any], described_games: Iterable[Any] | None = None) -> dict[str, str]:
    """One ``list_archive`` entry as text by column key (sanitised); options by label, in words, defaults left out."""
    game = str(entry.get("game", "?"))
    seats = game_seats(game)
    players = list(entry.get("players") or [])[:2]
    players += [None] * (2 - len(players))
    result = entry.get("result")
    options = entry.get("options")
    plies = entry.get("plies")
    return {
        "id": str(entry.get("id", "?")),
        "game": printable(game),
        "players": " vs ".join(f"{seats[i]} {name_text(players[i], '?')}" for i in (0, 1)),
        "result": outcome_text(result, seats) if isinstance(result, dict) else "no result",
        "options": options_text(schema(game, described_games), options) if isinstance(options, dict) else "",
        "plies": str(plies) if isinstance(plies, int) else "?",
        "finished": _when(entry.get("finished")),
    }


def _when(text: Any) -> str:
    """``2026-11-28 23:10`` from an ISO time (sanitised as it came when it does not read as one)."""
    if not isinstance(text, str):
        return "?"
    return printable(text[:16].replace("T", " "))


def fit_widths(natural: Mapping[str, int], total: int, *, flexible: Sequence[str] = FLEXIBLE) -> dict[str, int]:
    """Column widths (cells) that sum to at most ``total``: the ``flexible`` ones are capped at one level, the others kept.

    ``natural`` is each column's widest text (header included). Where everything
    fits, it is returned as it is; otherwise the widest flexible columns are cut
    down to a common cap, the largest that fits, never below :data:`MIN_FLEXIBLE`.
    """
    widths = dict(natural)
    if sum(widths.values()) <= total:
        return widths
    fixed = sum(width for key, width in widths.items() if key not in flexible)
    room = max(total - fixed, 0)
    wanted = sorted(widths[key] for key in flexible if key in widths)
    cap, left, count = MIN_FLEXIBLE, room, len(wanted)
    for index, width in enumerate(wanted):  # water-filling: the narrow ones keep their width, the rest share what is left
        share = left // (count - index)
        if width <= share:
            left -= width
            continue
        cap = max(share, MIN_FLEXIBLE)
        break
    else:
        return widths
    for key in flexible:
        if key in widths and widths[key] > cap:
            widths[key] = cap
    extra = room - sum(widths[key] for key in flexible if key in widths)
    for key in sorted((key for key in flexible if key in widths and natural[key] > widths[key]), key=lambda k: -natural[k]):
        if extra <= 0:
            break
        widths[key] += 1
        extra -= 1
    return widths


def ellipsize(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with a final "…" when it is longer."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"
