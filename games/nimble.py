"""Nimble: move one pawn to any square on its left; who cannot move loses.

Source: ``RULES.md``, section "Nimble"; seed ``000_1562508aff83c89d.txt``,
part 2 (2.1 the rules, 2.2 the display and the worked game).

>>> state = Nimble().new_state({"board": [0, 0, 1, 2, 0, 2]})
>>> state.legal_moves()[:4]
['3-1', '3-2', '4-1', '4-2']
>>> state = state.play("4 2")
>>> state.last_move, state.board
('4-2', (0, 1, 1, 1, 0, 2))

Board and notation: a row of ``n`` squares numbered ``1..n`` from the left;
the board is the tuple of pawn counts, square 1 first. A move takes one pawn
from square ``i`` to a square ``j < i`` and is written ``i-j`` (``4-2``).
Input is forgiving: spaces around the numbers, and ``-``, ``,``, ``:``, ``>``
or plain spaces between them (``"4 2"``, ``" 4-2 "``, ``"4,2"``).

Setup: with option ``board`` the counts are taken as given (``n`` then
defaults to its length; if ``n`` is given too they must agree; ``p`` is
ignored). Otherwise each square gets ``random.Random(seed).randint(0, p)``
pawns, square 1 first, and the whole row is drawn again while no pawn can
move. ``n = 1`` or ``p = 0`` can never give a movable pawn and is refused.

Points settled here where RULES.md and the seed are silent or open:

- Without a seed (``None``) the random setup draws from
  ``random.SystemRandom``; the server normally always passes a seed.
- A move's reason checks go source first, then destination: the source
  square exists, holds a pawn, then the destination exists and is below it.
  A pawn on square 1 can never move ("1 is not below 1").
- Legal moves are listed by source square ascending, then destination
  ascending.
- Board counts have no upper bound (``p`` does not limit ``board``).
"""

from __future__ import annotations

import functools
import random
import re
from typing import Any, Mapping

from .base import Game, GameError, IllegalMove, InvalidOption, Option, Outcome, State

__all__ = ["Nimble", "NimbleState"]

_MOVE = re.compile(r"\s*(\d{1,6})(?:\s*[-,:>]\s*|\s+)(\d{1,6})\s*")
_NOTATION_HELP = "a move is two square numbers, from-to, e.g. 4-2"
_STUCK = "no movable pawn: all pawns are on square 1"


def _draw_board(n: int, p: int, seed: str | int | None) -> tuple[int, ...]:
    """Draw ``n`` counts in ``0..p`` until some pawn off square 1 can move.

    Args:
        n: squares, at least 2.
        p: most pawns per square, at least 1.
        seed: ``random.Random`` seed; ``None`` draws from ``SystemRandom``.
    """
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    while True:
        board = tuple(rng.randint(0, p) for _ in range(n))
        if any(board[1:]):
            return board


@functools.lru_cache(maxsize=128)
def _moves_from(i: int) -> tuple[str, ...]:
    """Return the notations of every move from square ``i``: ``("i-1", ..., "i-(i-1)")``."""
    return tuple(f"{i}-{j}" for j in range(1, i))


class Nimble(Game):
    """The game Nimble (RULES.md "Nimble"; seed 000, part 2).

    Options: ``n`` (squares, 1..100, default 6), ``p`` (most pawns per square
    in a random setup, 0..100, default 3) and ``board`` (explicit counts per
    square, square 1 first, each >= 0, at most 100 squares).
    """

    name = "nimble"
    title = "Nimble"
    seats = ("Player 1", "Player 2")
    uses_seed = True
    public_views = True
    options = (
        Option("n", "int", 6, "number of squares (default: the board's length)", minimum=1, maximum=100, label="Squares"),
        Option("p", "int", 3, "most pawns per square in a random setup", minimum=0, maximum=100, label="Most pawns"),
        Option("board", "list[int]", None, "pawns per square, square 1 first (instead of a random setup)",
               minimum=0, maximum=10_000, max_length=100),
    )

    def setup_uses_chance(self, options: Mapping[str, Any]) -> bool:
        """Only a random setup (no ``board``) is drawn from the seed."""
        return options.get("board") is None

    def resolve_options(self, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Validate ``options`` and fill in defaults; ``n`` defaults to the board's length.

        Raises:
            InvalidOption: as :meth:`Game.resolve_options`, and when ``n`` and
                ``board`` disagree or a random setup cannot give a movable pawn.
        """
        given = dict(options or {})
        board = given.get("board")
        if given.get("n") is None and isinstance(board, (list, tuple)) and 1 <= len(board) <= 100:
            given["n"] = len(board)
        return super().resolve_options(given)

    def _check_options(self, options: dict[str, Any]) -> None:
        n, p, board = options["n"], options["p"], options["board"]
        if board is not None:
            if not board:
                raise InvalidOption("board", "option 'board' must list at least one square")
            if len(board) != n:
                raise InvalidOption("board", f"option 'board' has {len(board)} squares but option 'n' is {n}; "
                                             "they must agree")
            return
        if n == 1:
            raise InvalidOption("n", "a random setup needs n of at least 2: on one square no pawn can ever move")
        if p == 0:
            raise InvalidOption("p", "a random setup needs p of at least 1: with no pawns nothing can move")

    def state_from_view(self, view: Mapping[str, Any]) -> "NimbleState":
        """Rebuild the position a view shows (every view shows all of it).

        The rebuilt state has the view's board, seat to move, ply and last
        move, and options ``{"board": ...}`` (``n`` its length), so it plays
        exactly the original's legal moves.

        Raises:
            GameError: if ``view`` is not a Nimble view (wrong game, board
                missing or not a list of 1..100 counts from 0 to 10,000).
        """
        self._require_own_view(view)
        try:
            board, to_move, ply = view["board"], view["to_move"], view["ply"]
            if to_move is None:
                to_move = 1 - view["outcome"]["winner"]
        except (KeyError, TypeError):
            raise GameError("a nimble view needs board, to_move, ply and, once over, outcome.winner") from None
        if to_move not in (0, 1) or type(ply) is not int or ply < 0:
            raise GameError(f"a nimble view has to_move 0 or 1 and a ply >= 0, not {to_move!r} and {ply!r}")
        options = self.resolve_options({"board": board})
        return NimbleState(self, options, options["board"], to_move, ply, view.get("last_move"))

    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "NimbleState":
        board = options["board"]
        counts = tuple(board) if board is not None else _draw_board(options["n"], options["p"], seed)
        return NimbleState(self, options, counts)


class NimbleState(State):
    """An immutable Nimble position.

    Attributes:
        board: pawn counts per square, square 1 first (a tuple of ``n`` ints).
        (and the common ones of :class:`games.base.State`)
    """

    __slots__ = ("game", "options", "ply", "to_move", "outcome", "last_move", "board", "_movable", "_moves")

    def __init__(
        self,
        game: Game,
        options: Mapping[str, Any],
        board: tuple[int, ...],
        to_move: int = 0,
        ply: int = 0,
        last_move: str | None = None,
    ) -> None:
        """Build the position with ``board`` and ``to_move`` to play.

        If no pawn can move, the game is over and the other seat has won.
        """
        movable = sum(board) - board[0]
        over = movable == 0
        _set = object.__setattr__
        _set(self, "game", game)
        _set(self, "options", options)
        _set(self, "board", board)
        _set(self, "ply", ply)
        _set(self, "to_move", None if over else to_move)
        _set(self, "outcome", Outcome(1 - to_move, _STUCK) if over else None)
        _set(self, "last_move", last_move)
        _set(self, "_movable", movable)
        _set(self, "_moves", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def n(self) -> int:
        """The number of squares."""
        return len(self.board)

    def legal_moves(self) -> list[str]:
        """Return every move ``i-j`` (source ascending, then destination); empty once over."""
        if self.outcome is not None:
            return []
        if self._moves is None:
            moves: list[str] = []
            for i, count in enumerate(self.board[1:], 2):
                if count:
                    moves.extend(_moves_from(i))
            object.__setattr__(self, "_moves", tuple(moves))
        return list(self._moves)

    def _play(self, move: str) -> "NimbleState":
        match = _MOVE.fullmatch(move)
        if match is None:
            raise IllegalMove(move, _NOTATION_HELP)
        i, j = int(match[1]), int(match[2])
        reason = self._why_not(i, j)
        if reason is not None:
            raise IllegalMove(move, reason)
        board = list(self.board)
        board[i - 1] -= 1
        board[j - 1] += 1
        return NimbleState(self.game, self.options, tuple(board), 1 - self.to_move, self.ply + 1, f"{i}-{j}")

    def _why_not(self, i: int, j: int) -> str | None:
        """Return why moving a pawn from square ``i`` to ``j`` is illegal, or ``None``."""
        n = len(self.board)
        if not 1 <= i <= n:
            return f"square {i} does not exist (squares 1..{n})"
        if self.board[i - 1] == 0:
            return f"square {i} is empty"
        if not 1 <= j <= n:
            return f"square {j} does not exist (squares 1..{n})"
        if j >= i:
            return f"a pawn must move left: {j} is not below {i}"
        return None

    def _view(self, seat: int | None) -> dict[str, Any]:
        """Everything is public.

        Returns:
            ``{"board": [counts, square 1 first], "pawns": total,
            "movable": pawns off square 1, "last_move": "4-2" or None}``.
        """
        return {
            "board": list(self.board),
            "pawns": self._movable + self.board[0],
            "movable": self._movable,
            "last_move": self.last_move,
        }

    def __repr__(self) -> str:
        return f"<NimbleState board={list(self.board)} to_move={self.to_move} ply={self.ply}>"
