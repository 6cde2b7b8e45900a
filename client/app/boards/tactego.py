"""The Tactego board: Red deals from the top, Blue from the bottom.

A seated Red player sees the board turned so Red's pieces start at the
bottom. Pieces are a side's letter and a strength (``r7``, ``bF``); a piece
the viewer may not see is drawn ``r?``/``b?``, and with hidden pieces on, a
``*`` marks pieces that have fought (both players know them). Boards of up to
26 columns are wider than a terminal: the table screen scrolls them. A move
is two clicks: your piece, then the square it moves to or the piece it attacks.
"""

from __future__ import annotations

from .grid import GridBoard

__all__ = ["TactegoBoard"]

_SIDES = ("Red", "Blue")
_LETTERS = ("r", "b")


class TactegoBoard(GridBoard):
    """Tactego from ``view`` (keys ``rows``, ``cols``, ``board`` of ``None``/``[owner, rank]``, ``revealed``, ...)."""

    game = "tactego"
    sides = ("red", "blue")
    cell_width = 5
    compact_cell_width = 4

    def rows(self) -> int:
        """The board's rows."""
        return self.view["rows"]

    def cols(self) -> int:
        """The board's columns."""
        return self.view["cols"]

    def flipped(self) -> bool:
        """Red (seat 0) deals from the top: reverse the rows for Red."""
        return self.seat == 0

    def symbol(self, row: int, col: int) -> tuple[str, int | None]:
        """``r7``, ``bF``, ``b?`` (unknown), with ``*`` when it has fought and pieces are hidden."""
        cell = self.view["board"][row][col]
        if cell is None:
            return "", None
        owner, rank = cell
        known = self.view.get("hidden") and f"{chr(ord('a') + col)}{row + 1}" in set(self.view.get("revealed") or ())
        return f"{_LETTERS[owner]}{rank}{'*' if known else ''}", owner

    def captured_squares(self) -> set[str]:
        """The square of the last combat."""
        combat = self.view.get("last_combat")
        return {combat["square"]} if combat else set()

    def status_lines(self) -> list[str]:
        """Pieces and flags left per side, the last combat, and the legend."""
        lines = []
        for side in (0, 1):
            lost = ", ".join(self.view["lost"][side]) or "none"
            pieces, flags = self.view["counts"][side], self.view["flags"][side]
            lines.append(f"{_SIDES[side]}: {_count(pieces, 'piece')}, {_count(flags, 'flag')}; lost {lost}")
        combat = self.view.get("last_combat")
        if combat:
            attacker = combat["attacker_seat"]
            fight = f"{_SIDES[attacker]} {combat['attacker']} attacked {_SIDES[1 - attacker]} {combat['defender']}"
            won = _SIDES[combat["winner"]]
            lines.append(f"{combat['square']}: {fight}, {won} won" if self.compact else f"Combat on {combat['square']}: {fight}; {won} won")
        if self.view.get("hidden"):
            lines.append("? unknown, * has fought" if self.compact else "? = unknown piece, * = has fought (known to both)")
        return lines


def _count(number: int, thing: str) -> str:
    """``1 flag``, ``2 flags``."""
    return f"{number} {thing}{'' if number == 1 else 's'}"
