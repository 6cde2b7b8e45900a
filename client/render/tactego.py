"""Text picture of a Tactego view (see ``games.tactego.TactegoState._view``).

Columns are lettered ``a``, ``b``, ... from the left and rows numbered ``1``,
``2``, ... from the top, matching the notation ``b2-c3``. A piece is drawn as
its side's letter (``r`` Red, ``b`` Blue) followed by its rank: ``r7``,
``bF``, or ``b?`` when the viewer may not see it. With hidden pieces on, a
``*`` marks pieces that have fought, whose ranks both players know.
Below the board: pieces and flags remaining and the ranks lost per side, and
the last combat.
"""

from __future__ import annotations

from typing import Any

from . import destination

_SIDES = ("Red", "Blue")
_LETTERS = ("r", "b")
_EMPTY = "."
_KNOWN = "*"
_LOST_CHARS = 36
"""Past this many characters the list of lost ranks is counted per rank (``5x3, 7``)."""


def render(view: dict[str, Any], seat: int | None, *, last_move: str | None = None, compact: bool = False) -> str:
    """Return the board and status lines of ``view`` as seen from ``seat``.

    The piece ``last_move`` moved gets a ``<`` after it (or the move is named
    when it left the board in a combat); ``compact`` leaves out the blank line.

    Args:
        view: a Tactego view (``board``, ``cols``, ``hidden``, ``revealed``,
            ``counts``, ``flags``, ``lost``, ``last_combat``).
        seat: 0 (Red), 1 (Blue) or ``None`` (spectator); the view is already
            filtered for it, so it only changes the caption.
    """
    texts = _cell_texts(view)
    marked = _mark(texts, destination(last_move))
    width = max([3] + [len(text) + 1 for row in texts for text in row])
    lines = [_header(view["cols"], width)]
    lines += [f"{number:>3} " + "".join(text.rjust(width) for text in row) for number, row in enumerate(texts, start=1)]
    if not compact:
        lines.append("")
    lines += [_side_line(view, side, compact) for side in (0, 1)]
    lines += _combat_lines(view)
    if last_move and not marked:
        lines.append(f"Last move: {last_move}")
    lines.append(_legend(view, seat, compact))
    return "\n".join(lines)


def _cell_texts(view: dict[str, Any]) -> list[list[str]]:
    """The text of every cell, row by row."""
    marked = set(view.get("revealed", ())) if view.get("hidden") else set()
    texts = []
    for r, row in enumerate(view["board"]):
        line = []
        for c, cell in enumerate(row):
            if cell is None:
                line.append(_EMPTY)
                continue
            mark = _KNOWN if f"{chr(ord('a') + c)}{r + 1}" in marked else ""
            line.append(f"{_LETTERS[cell[0]]}{cell[1]}{mark}")
        texts.append(line)
    return texts


def _mark(texts: list[list[str]], square: str | None) -> bool:
    """Put ``<`` after the piece on ``square`` (``"c3"``); return whether a piece was there to mark."""
    if square is None:
        return False
    column, row = ord(square[0]) - ord("a"), int(square[1:]) - 1
    if not (0 <= row < len(texts) and 0 <= column < len(texts[row])) or texts[row][column] == _EMPTY:
        return False
    texts[row][column] += "<"
    return True


def _header(cols: int, width: int) -> str:
    return "    " + "".join(chr(ord("a") + c).rjust(width) for c in range(cols))


def _side_line(view: dict[str, Any], side: int, compact: bool = False) -> str:
    """``Red : 15 pieces, 1 flag left; lost: 5`` (compact: ``Red : 15 pieces, 1 flag; 1 lost``)."""
    count, flags = view["counts"][side], view["flags"][side]
    if compact:
        return f"{_SIDES[side]:<4}: {count} pieces, {flags} flag{'' if flags == 1 else 's'}; {len(view['lost'][side])} lost"
    lost = ", ".join(view["lost"][side]) or "none"
    if len(lost) > _LOST_CHARS:  # keep the line within 80 columns: the ranks lost, counted
        ranks = view["lost"][side]
        lost = ", ".join(f"{rank}x{ranks.count(rank)}" if ranks.count(rank) > 1 else rank for rank in dict.fromkeys(ranks))
        if len(lost) > _LOST_CHARS:
            lost = f"{len(ranks)} pieces"
    plural = "" if count == 1 else "s"
    flag_plural = "" if flags == 1 else "s"
    return f"{_SIDES[side]:<4}: {count} piece{plural}, {flags} flag{flag_plural} left; lost: {lost}"


def _combat_lines(view: dict[str, Any]) -> list[str]:
    combat = view.get("last_combat")
    if not combat:
        return []
    attacker = combat["attacker_seat"]
    defender = 1 - attacker
    return [
        f"Combat on {combat['square']}: {_SIDES[attacker]} {combat['attacker']} attacked "
        f"{_SIDES[defender]} {combat['defender']}; {_SIDES[combat['winner']]} won"
    ]


def _legend(view: dict[str, Any], seat: int | None, compact: bool = False) -> str:
    who = "spectating" if seat is None else f"you are {_SIDES[seat]}"
    if compact:
        return f"({who}; F flag, ? unknown{', * known' if view.get('hidden') else ''})"
    if view.get("hidden"):
        return f"({who}; r = Red, b = Blue, F = flag, ? = unknown, {_KNOWN} = known to both)"
    return f"({who}; r = Red, b = Blue, F = flag; all pieces shown)"
