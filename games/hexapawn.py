"""Hexapawn ("miniChess"): pawns only, first to the far row wins.

Source: ``RULES.md``, section "Hexapawn"; seed ``004_46c479ffbe022f3e.txt``
(the rules, the list-of-lists board and the ``move_maker`` example).

>>> state = Hexapawn().new_state()
>>> state.legal_moves()
['a1-a2', 'b1-b2', 'c1-c2']
>>> state.play("B1 b2").to_board()
[[1, 0, 1], [0, 1, 0], [2, 2, 2]]

Board and notation: ``size`` x ``size`` squares (3..8, default 3). A square
is a lowercase column letter from the left and a row number from the TOP:
``a1`` is the top-left corner. White (seat 0, moves first) starts on row 1
and moves towards higher row numbers; Black (seat 1) starts on the bottom
row and moves towards row 1. A move is ``from-to``: ``b1-b2`` straight ahead,
``a1-b2`` a diagonal capture. Input is forgiving about case and spaces and
takes ``-``, ``x``, ``:``, a space or nothing between the squares
(``"A1xB2"``, ``"a1 b2"``, ``"a1b2"``).

Board form (the seed's): a list of ``size`` rows, the top row (row 1) first,
each a list of ``size`` ints: ``0`` empty, ``1`` a white pawn, ``2`` a black
pawn. :meth:`HexapawnState.from_board` builds a position from it and
:meth:`HexapawnState.to_board` returns it; :meth:`HexapawnState.successors`
is the seed's ``move_maker`` (every position one move later).

Points settled here where RULES.md and the seed are silent or open:

- ``x`` on input is only a separator: ``a1xa2`` is accepted as the straight
  move ``a1-a2`` when that is legal.
- The end is judged after every move in RULES.md order for the player who
  just moved: a pawn of theirs on the far row, then the opponent without
  pawns, then the opponent without a legal move. :meth:`from_board` judges a
  given position the same way for the player who did not move; a position
  where the player to move already stands on their far row is refused.
- Legal moves are listed in board order of the moving pawn (row by row from
  the top, left to right), for each pawn straight first, then the captures
  left to right.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping, Sequence

from .base import Game, GameError, IllegalMove, Option, Outcome, State

__all__ = ["Hexapawn", "HexapawnState", "WHITE", "BLACK"]

WHITE = 0
"""Seat of White, who moves first from row 1 (pawn value 1 in the board form)."""
BLACK = 1
"""Seat of Black, who starts on the bottom row (pawn value 2 in the board form)."""

_COLUMNS = "abcdefgh"
_MOVE = re.compile(r"\s*([a-z])\s*(\d{1,3})\s*[-x:]?\s*([a-z])\s*(\d{1,3})\s*")
_NOTATION_HELP = "a move is two squares, from-to, e.g. b1-b2 (a capture a1-b2, or a1xb2)"
_SEAT_NAMES = ("White", "Black")
_MIN_SIZE, _MAX_SIZE = 3, 8

_Move = tuple[str, int, int]
"""A generated move: (canonical notation, from index, to index); index = row * size + col."""


def _name(index: int, size: int) -> str:
    """Return the square name of a board index (``0`` -> ``"a1"``)."""
    return f"{_COLUMNS[index % size]}{index // size + 1}"


def _far_row(seat: int, size: int) -> int:
    """Return the 0-based row a ``seat``'s pawn must reach to win."""
    return size - 1 if seat == WHITE else 0


def _step(frm: int, to: int, size: int) -> _Move:
    """Return the move ``(notation, frm, to)`` between two board indices."""
    return (f"{_name(frm, size)}-{_name(to, size)}", frm, to)


@functools.lru_cache(maxsize=None)
def _steps(size: int) -> tuple[tuple[tuple[tuple[_Move, ...], tuple[_Move, ...]], ...], ...]:
    """Precomputed pawn steps: ``_steps(size)[seat][index] = (straight, captures)``.

    Each is a tuple of ``(notation, from, to)``: at most one straight step and
    up to two diagonal ones, left to right; none from the far row.
    """
    tables = []
    for seat in (WHITE, BLACK):
        forward = 1 if seat == WHITE else -1
        table = []
        for index in range(size * size):
            row, col = divmod(index, size)
            ahead = row + forward
            if not 0 <= ahead < size:
                table.append(((), ()))
                continue
            straight = _step(index, ahead * size + col, size)
            captures = tuple(_step(index, ahead * size + c, size) for c in (col - 1, col + 1) if 0 <= c < size)
            table.append(((straight,), captures))
        tables.append(tuple(table))
    return tuple(tables)


def _generate(board: tuple[int, ...], size: int, seat: int) -> tuple[_Move, ...]:
    """Return every legal move of ``seat`` on ``board`` (flat, row-major, seed values)."""
    own, enemy = seat + 1, 2 - seat
    steps = _steps(size)[seat]
    moves: list[_Move] = []
    for index, value in enumerate(board):
        if value != own:
            continue
        straight, captures = steps[index]
        for move in straight:
            if board[move[2]] == 0:
                moves.append(move)
        for move in captures:
            if board[move[2]] == enemy:
                moves.append(move)
    return tuple(moves)


def _judge(board: tuple[int, ...], size: int, to_move: int, moves: tuple[_Move, ...]) -> Outcome | None:
    """Return the outcome once ``to_move``'s opponent has just moved, in RULES.md order, or ``None``."""
    mover = 1 - to_move
    far = _far_row(mover, size) * size
    name, other = _SEAT_NAMES[mover], _SEAT_NAMES[to_move]
    if mover + 1 in board[far:far + size]:
        return Outcome(mover, f"a {name} pawn reached the far row")
    if to_move + 1 not in board:
        return Outcome(mover, f"{other} has no pawns left")
    if not moves:
        return Outcome(mover, f"{other} cannot move")
    return None


def _flatten(board: Sequence[Sequence[int]]) -> tuple[int, tuple[int, ...]]:
    """Check a seed-form board and return ``(size, flat row-major tuple)``.

    Raises:
        ValueError: if it is not a square list of 3..8 rows of 0/1/2.
    """
    if not isinstance(board, (list, tuple)) or not _MIN_SIZE <= len(board) <= _MAX_SIZE:
        raise ValueError(f"a board is a list of {_MIN_SIZE} to {_MAX_SIZE} rows")
    size = len(board)
    flat: list[int] = []
    for number, row in enumerate(board, 1):
        if not isinstance(row, (list, tuple)) or len(row) != size:
            raise ValueError(f"row {number} must be a list of {size} squares")
        for value in row:
            if type(value) is not int or value not in (0, 1, 2):
                raise ValueError(f"row {number} holds {value!r}; squares are 0 (empty), 1 (white), 2 (black)")
            flat.append(value)
    return size, tuple(flat)


class Hexapawn(Game):
    """The game Hexapawn, the seed's "miniChess" (RULES.md "Hexapawn"; seed 004).

    Option: ``size`` (board side, 3..8, default 3).
    """

    name = "hexapawn"
    title = "Hexapawn"
    seats = ("White", "Black")
    public_views = True
    options = (Option("size", "int", 3, "board side, in squares", minimum=_MIN_SIZE, maximum=_MAX_SIZE),)

    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "HexapawnState":
        size = options["size"]
        board = (1,) * size + (0,) * (size * (size - 2)) + (2,) * size
        return HexapawnState(self, options, size, board, WHITE)

    def state_from_view(self, view: Mapping[str, Any]) -> "HexapawnState":
        """Rebuild the position a view shows (every view shows all of it).

        The rebuilt state has the view's board, seat to move (for a finished
        game: the loser, who would have moved next), ply and last move, so it
        plays exactly the original's legal moves.

        Raises:
            GameError: if ``view`` is not a Hexapawn view (wrong game, a
                malformed board, a bad seat or ply).
        """
        self._require_own_view(view)
        try:
            rows, to_move, ply = view["board"], view["to_move"], view["ply"]
            if to_move is None:
                to_move = 1 - view["outcome"]["winner"]
            size, flat = _flatten(rows)
        except (KeyError, TypeError):
            raise GameError("a hexapawn view needs board, to_move, ply and, once over, outcome.winner") from None
        except ValueError as error:
            raise GameError(f"bad hexapawn view: {error}") from None
        if to_move not in (WHITE, BLACK) or type(ply) is not int or ply < 0:
            raise GameError(f"a hexapawn view has to_move 0 or 1 and a ply >= 0, not {to_move!r} and {ply!r}")
        return HexapawnState(self, self.resolve_options({"size": size}), size, flat, to_move, ply,
                             view.get("last_move"))


class HexapawnState(State):
    """An immutable Hexapawn position.

    Attributes:
        size: the board side, in squares.
        (and the common ones of :class:`games.base.State`)

    Build one with ``Hexapawn().new_state(...)`` or :meth:`from_board`.
    """

    __slots__ = ("game", "options", "ply", "to_move", "outcome", "last_move", "size", "_board", "_moves", "_rows")

    def __init__(
        self,
        game: Game,
        options: Mapping[str, Any],
        size: int,
        board: tuple[int, ...],
        to_move: int,
        ply: int = 0,
        last_move: str | None = None,
    ) -> None:
        """Build the position ``board`` (flat, row-major, seed values) with ``to_move`` to play.

        The end is judged at once (see :func:`_judge`).
        """
        moves = _generate(board, size, to_move)
        outcome = _judge(board, size, to_move, moves)
        _set = object.__setattr__
        _set(self, "game", game)
        _set(self, "options", options)
        _set(self, "size", size)
        _set(self, "_board", board)
        _set(self, "ply", ply)
        _set(self, "to_move", None if outcome else to_move)
        _set(self, "outcome", outcome)
        _set(self, "last_move", last_move)
        _set(self, "_moves", () if outcome else moves)
        _set(self, "_rows", None)

    @classmethod
    def from_board(cls, board: Sequence[Sequence[int]], to_move: int = WHITE, ply: int = 0) -> "HexapawnState":
        """Build a position from the seed's board form.

        Args:
            board: ``size`` rows (3..8), the top row (row 1) first, each a list
                of ``size`` ints: 0 empty, 1 white pawn, 2 black pawn. E.g. the
                seed's ``[[0, 1, 1], [1, 0, 0], [2, 2, 2]]``.
            to_move: the seat to move, ``WHITE`` (0) or ``BLACK`` (1); the seed's
                colour ``c`` (1 or 2) is seat ``c - 1``.
            ply: plies already played (only shown; 0 by default).

        Returns:
            The state, already over if the player who just moved has won.

        Raises:
            ValueError: for a malformed board, a bad seat, or a position where
                the player to move already has a pawn on their far row.

        >>> state = HexapawnState.from_board([[0, 1, 1], [1, 0, 0], [2, 2, 2]], BLACK)
        >>> state.legal_moves()
        ['b3-b2', 'b3-a2', 'c3-c2']
        """
        size, flat = _flatten(board)
        if type(to_move) is not int or to_move not in (WHITE, BLACK):
            raise ValueError(f"to_move must be 0 (White) or 1 (Black), not {to_move!r}")
        if type(ply) is not int or ply < 0:
            raise ValueError(f"ply must be an integer of at least 0, not {ply!r}")
        far = _far_row(to_move, size) * size
        if to_move + 1 in flat[far:far + size]:
            raise ValueError(f"{_SEAT_NAMES[to_move]} already has a pawn on the far row; the game would be over")
        return cls(Hexapawn(), {"size": size}, size, flat, to_move, ply)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def to_board(self) -> list[list[int]]:
        """Return the seed's board form: rows from the top, 0 empty / 1 white / 2 black.

        The rows are cut from the flat board once per position and kept as
        tuples; every call returns new lists.
        """
        rows = self._rows
        if rows is None:
            size, board = self.size, self._board
            rows = tuple([board[start:start + size] for start in range(0, size * size, size)])
            object.__setattr__(self, "_rows", rows)
        return [list(row) for row in rows]

    def key(self) -> tuple[tuple[int, ...], int | None]:
        """Return ``(flat board, seat to move)``: equal keys, equal positions and futures.

        The flat board is row-major from the top-left, seed values (0 empty,
        1 white, 2 black); searches key their transposition tables by it.
        """
        return self._board, self.to_move

    def pawn_counts(self) -> tuple[int, int]:
        """Return ``(white pawns, black pawns)`` on the board."""
        return self._board.count(1), self._board.count(2)

    def legal_moves(self) -> list[str]:
        """Return every legal move in canonical notation (see the module docstring for the order)."""
        return [move[0] for move in self._moves]

    def successors(self) -> list["HexapawnState"]:
        """Return the state after each legal move, in :meth:`legal_moves` order (the seed's ``move_maker``).

        Empty once the game is over.
        """
        return [self._apply(move) for move in self._moves]

    def _play(self, move: str) -> "HexapawnState":
        for generated in self._moves:
            if generated[0] == move:
                return self._apply(generated)
        frm, to = self._parse(move)
        for generated in self._moves:
            if generated[1] == frm and generated[2] == to:
                return self._apply(generated)
        raise IllegalMove(move, self._why_not(frm, to))

    def _apply(self, move: _Move) -> "HexapawnState":
        notation, frm, to = move
        board = list(self._board)
        board[to] = board[frm]
        board[frm] = 0
        return HexapawnState(self.game, self.options, self.size, tuple(board), 1 - self.to_move,
                             self.ply + 1, notation)

    def _parse(self, move: str) -> tuple[int, int]:
        """Return the board indices ``(from, to)`` written in ``move``.

        Raises:
            IllegalMove: if the text is not two squares, or a square is off the board.
        """
        match = _MOVE.fullmatch(move.lower())
        if match is None:
            raise IllegalMove(move, _NOTATION_HELP)
        size = self.size
        indices = []
        for letter, digits in ((match[1], match[2]), (match[3], match[4])):
            col, row = ord(letter) - ord("a"), int(digits) - 1
            if not (0 <= col < size and 0 <= row < size):
                raise IllegalMove(move, f"square {letter}{digits} does not exist "
                                        f"(columns a-{_COLUMNS[size - 1]}, rows 1-{size})")
            indices.append(row * size + col)
        return indices[0], indices[1]

    def _why_not(self, frm: int, to: int) -> str:
        """Return the rule that the move ``frm`` -> ``to`` (board indices) breaks."""
        size, board, seat = self.size, self._board, self.to_move
        here, there = _name(frm, size), _name(to, size)
        colour = _SEAT_NAMES[seat]
        if board[frm] == 0:
            return f"square {here} is empty"
        if board[frm] != seat + 1:
            return f"the pawn on {here} is {_SEAT_NAMES[1 - seat]}'s; {colour} is to move"
        (row, col), (to_row, to_col) = divmod(frm, size), divmod(to, size)
        forward = 1 if seat == WHITE else -1
        if to_row != row + forward:
            way = "higher" if seat == WHITE else "lower"
            return (f"a {colour} pawn moves one row forward, to a {way} row number: "
                    f"{there} is not one row ahead of {here}")
        if abs(to_col - col) > 1:
            return f"{there} is not straight or diagonally ahead of {here}"
        if to_col == col:
            return f"{there} is occupied: a pawn moves straight ahead only to an empty square"
        if board[to] == 0:
            return f"{there} is empty: a pawn moves diagonally only to capture"
        return f"{there} holds a {colour} pawn: a pawn captures only an enemy pawn"

    def _view(self, seat: int | None) -> dict[str, Any]:
        """Everything is public.

        Returns:
            ``{"size": 3, "board": [[1, 1, 1], [0, 0, 0], [2, 2, 2]]`` (the seed's
            form, row 1 first), ``"pawns": [white, black], "last_move": "b1-b2" or None}``.
        """
        return {
            "size": self.size,
            "board": self.to_board(),
            "pawns": list(self.pawn_counts()),
            "last_move": self.last_move,
        }

    def __repr__(self) -> str:
        seat = "None" if self.to_move is None else ("WHITE", "BLACK")[self.to_move]
        return f"<HexapawnState {self.to_board()} to_move={seat} ply={self.ply}>"
