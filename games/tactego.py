"""Tactego: simplified Stratego with hidden pieces.

Source: ``RULES.md``, section "Tactego", distilled from the seed
``003_6ad92695a6f9013e.txt`` (a CMSC 201 project).

Board ``rows`` x ``cols`` (2..26 each, default 8 x 8). Seat 0 is Red (moves
first, set up at the top), seat 1 is Blue (set up at the bottom). Both sides
get the same pieces, given by a pieces file (option ``pieces``, its text):
one ``STRENGTH COUNT`` or ``F COUNT`` line per kind of piece.

Setup is reproducible exactly as the seed's reference program does it: the
seed string seeds Python's Mersenne Twister (``random.seed(seed)``), the
file's lines are expanded in order into a list of tokens (``7 3`` gives three
``7`` tokens), and ``random.shuffle`` runs on the red list, then on the blue
list. Red fills row 0 from column 0 across, then row 1, ...; Blue fills the
last row from column 0 across, then the row above, ... A private
``random.Random(seed)`` gives the same numbers as the global ``random.seed``.

A move takes one of the mover's non-flag pieces one square in any of the
eight directions onto a square not holding one of the mover's own pieces.
Notation ``b2-c3``: column letter from the left, row number from the TOP
(``a1`` is the top-left square). Input is forgiving: any case, spaces around
and between the squares, and ``-``, ``x``, ``:``, a space or nothing between
them (``B2 C3``, ``b2xc3``, ``b2c3``).

Combat (destination holds an enemy piece): equal or higher strength wins,
lower loses and is removed; any piece attacking a flag captures it; the
winner stands on the destination. Both pieces become known to both players.

Points where RULES.md and the seed are silent, settled as follows:

* The seed's own input (row and column typed as two numbers) is not listed
  by RULES.md and would be ambiguous (0- or 1-based), so it is not accepted.
* A flag that is attacked is always captured (it never defends), as in
  Stratego; flags never attack since they never move.
* In a pieces file, ``f`` is accepted for ``F``, leading zeros are dropped
  (``07`` is strength ``7``) and numbers are limited to 9 digits (any larger
  count could never fit on a 26 x 26 board anyway).
* Equal strengths: the attacker wins (the seed's rule 5a; in Stratego both
  would be removed).
* Pieces remaining per side, flags remaining per side and the ranks each side
  has lost are public: the piece set is public and every removal happens in a
  combat, which reveals both pieces to both players.
* Which pieces have moved is public too (both players watch every move), so
  the view lists their squares (``has_moved``): none of them is a flag. A
  computer player draws the hidden ranks consistently with all of this
  (:meth:`Tactego.sample_state`).
"""

from __future__ import annotations

import functools
import math
import random
import re
import secrets
from typing import Any, Mapping, NamedTuple

from .base import MAX_PLIES, Game, GameError, IllegalMove, InvalidOption, Option, Outcome, State

__all__ = [
    "DEFAULT_PIECES",
    "FLAG",
    "Piece",
    "PiecesError",
    "Tactego",
    "TactegoState",
    "expand_pieces",
    "parse_pieces",
    "setup_board",
    "unseen_ranks",
]

FLAG = "F"
"""The rank token of a flag."""

DEFAULT_PIECES = "10 1\n9 1\n8 2\n7 3\n6 4\n5 4\nF 1\n"
"""The default pieces file (RULES.md): 16 pieces a side, one flag."""

UNKNOWN = "?"
"""The rank shown for a piece the viewer may not see."""

_MAX_DIGITS = 9
_FLAG_STRENGTH = 0
_NUMBER = re.compile(r"[0-9]+", re.ASCII)
_MOVE = re.compile(r"\s*([a-z])\s*([0-9]{1,3})\s*(?:[-x:]\s*)?([a-z])\s*([0-9]{1,3})\s*", re.ASCII | re.IGNORECASE)
_DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


class PiecesError(InvalidOption):
    """The ``pieces`` option is not a valid pieces file, or does not fit the board.

    The message names the line number (1-based) and what is wrong.
    """

    def __init__(self, message: str) -> None:
        super().__init__("pieces", message)


# --------------------------------------------------------------------------
# Pieces files
# --------------------------------------------------------------------------


def parse_pieces(text: str) -> list[tuple[str, int]]:
    """Parse the text of a pieces file (RULES.md "Tactego"; seed "Pieces File Format").

    Each non-blank line is ``STRENGTH COUNT`` (strength a positive integer) or
    ``F COUNT`` (flags); ``COUNT`` is a positive integer. Lines keep their order.

    Returns:
        ``[(rank, count), ...]`` in file order; ``rank`` is the canonical token
        (``"7"``, ``"F"``).

    Raises:
        PiecesError: naming the line number for a bad line shape, a strength or
            count that is not a positive integer (or longer than 9 digits), and
            for a set with no flag.

    >>> parse_pieces("7 3\\nF 1")
    [('7', 3), ('F', 1)]
    """
    kinds: list[tuple[str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise PiecesError(f"pieces line {number}: expected 'STRENGTH COUNT' or 'F COUNT', got {_clip(line.strip())!r}")
        rank = FLAG if fields[0].upper() == FLAG else str(_positive(fields[0], number, "strength"))
        kinds.append((rank, _positive(fields[1], number, "count")))
    if not any(rank == FLAG for rank, _ in kinds):
        raise PiecesError("the pieces set has no flag (add a line 'F COUNT')")
    return kinds


def _positive(field: str, number: int, what: str) -> int:
    """Return ``field`` as a positive integer, or raise PiecesError for line ``number``."""
    digits = field.lstrip("0")
    if not _NUMBER.fullmatch(field) or not digits:
        raise PiecesError(f"pieces line {number}: {what} {_clip(field)!r} is not a positive integer")
    if len(digits) > _MAX_DIGITS:
        raise PiecesError(f"pieces line {number}: {what} {_clip(field)!r} is too large (at most {_MAX_DIGITS} digits)")
    return int(digits)


def _clip(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for an error message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expand_pieces(kinds: list[tuple[str, int]]) -> list[str]:
    """Expand ``[(rank, count), ...]`` into one token per piece, in file order.

    This is the seed's "load the pieces from the file in the order that they
    are given": ``[("7", 2), ("F", 1)]`` gives ``["7", "7", "F"]``.
    """
    return [rank for rank, count in kinds for _ in range(count)]


def _check_fit(per_side: int, rows: int, cols: int) -> None:
    """Refuse a set whose two sides would overlap (RULES.md): 2 x ceil(n / cols) > rows."""
    needed = 2 * math.ceil(per_side / cols)
    if needed > rows:
        raise PiecesError(
            f"{per_side} pieces a side do not fit a {rows}x{cols} board: the two sides would overlap "
            f"(2 x ceil({per_side} / {cols}) = {needed} rows needed, {rows} available)"
        )


# --------------------------------------------------------------------------
# Board geometry (cached per size)
# --------------------------------------------------------------------------


class _Geometry:
    """Square names and one-step neighbours of a ``rows`` x ``cols`` board.

    Squares are indexed ``row * cols + col`` with row 0 at the top.
    ``steps[i]`` lists ``(j, "from-to")`` for every square ``j`` one step
    away from ``i``, in a fixed direction order. ``row_starts`` holds the
    index of each row's first square, top row first.
    """

    __slots__ = ("rows", "cols", "names", "steps", "row_starts")

    def __init__(self, rows: int, cols: int) -> None:
        self.rows = rows
        self.cols = cols
        self.row_starts = tuple(range(0, rows * cols, cols))
        self.names = tuple(f"{chr(ord('a') + c)}{r + 1}" for r in range(rows) for c in range(cols))
        self.steps = tuple(self._steps_from(r, c) for r in range(rows) for c in range(cols))

    def _steps_from(self, row: int, col: int) -> tuple[tuple[int, str], ...]:
        origin = self.names[row * self.cols + col]
        steps = []
        for dr, dc in _DIRECTIONS:
            r, c = row + dr, col + dc
            if 0 <= r < self.rows and 0 <= c < self.cols:
                target = r * self.cols + c
                steps.append((target, f"{origin}-{self.names[target]}"))
        return tuple(steps)


@functools.lru_cache(maxsize=None)
def _geometry(rows: int, cols: int) -> _Geometry:
    return _Geometry(rows, cols)


# --------------------------------------------------------------------------
# Pieces and setup
# --------------------------------------------------------------------------


class Piece(NamedTuple):
    """One piece on the board.

    Attributes:
        owner: the seat, 0 (Red) or 1 (Blue).
        rank: the token, ``"7"`` or ``"F"``.
        strength: the rank as an integer; 0 for a flag.
        revealed: whether it has fought, so both players know its rank.
        moved: whether it has left its setup square; both players saw it
            move, so both know it is not a flag.
    """

    owner: int
    rank: str
    strength: int
    revealed: bool = False
    moved: bool = False

    @property
    def is_flag(self) -> bool:
        """Whether this piece is a flag (flags never move)."""
        return self.strength == _FLAG_STRENGTH


def _new_piece(owner: int, rank: str) -> Piece:
    return Piece(owner, rank, _FLAG_STRENGTH if rank == FLAG else int(rank))


def setup_board(kinds: list[tuple[str, int]], rows: int, cols: int, seed: str) -> tuple[Piece | None, ...]:
    """Place both sides exactly as the seed's reference program does.

    ``random.seed(seed)``; expand the lines into a red and a blue token list;
    shuffle red, then blue; red fills from (0, 0) across each row then down;
    blue fills from (rows - 1, 0) across each row then up.

    Returns:
        The board as a flat tuple indexed ``row * cols + col`` (row 0 at the top).
    """
    rng = random.Random(seed)
    red, blue = expand_pieces(kinds), expand_pieces(kinds)
    rng.shuffle(red)
    rng.shuffle(blue)
    board: list[Piece | None] = [None] * (rows * cols)
    for i, rank in enumerate(red):
        board[i] = _new_piece(0, rank)
    for i, rank in enumerate(blue):
        board[(rows - 1 - i // cols) * cols + i % cols] = _new_piece(1, rank)
    return tuple(board)


def _seed_text(seed: str | int | None) -> str:
    """The seed as the text given to ``random.seed``; a fresh one when ``None``."""
    if seed is None:
        return secrets.token_hex(8)
    return seed if isinstance(seed, str) else str(seed)


# --------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------


class Tactego(Game):
    """Tactego, simplified Stratego with hidden pieces (RULES.md "Tactego").

    Options: ``rows``, ``cols`` (2..26, default 8), ``pieces`` (the text of a
    pieces file, default :data:`DEFAULT_PIECES`), ``hidden`` (default on) and
    ``max_plies``. The setup is drawn from the seed (a text; an integer is used
    as its decimal string; ``None`` draws one, kept as ``state.seed``).
    """

    name = "tactego"
    title = "Tactego"
    seats = ("Red", "Blue")
    uses_seed = True
    options = (
        Option("rows", "int", 8, "board rows", minimum=2, maximum=26),
        Option("cols", "int", 8, "board columns", minimum=2, maximum=26, label="Columns"),
        Option("pieces", "str", None, "the text of a pieces file: 'STRENGTH COUNT' or 'F COUNT' lines", max_length=10000),
        Option("hidden", "bool", True, "hide enemy strengths until a piece has fought"),
        MAX_PLIES,
    )

    def _check_options(self, options: dict[str, Any]) -> None:
        """Check that the pieces file parses and that the set fits the board.

        Raises:
            PiecesError: for a bad pieces file or a set whose sides would overlap.
        """
        kinds = _kinds(options)
        _check_fit(sum(count for _, count in kinds), options["rows"], options["cols"])

    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "TactegoState":
        """The starting position drawn from ``seed`` (Red loses at once if it cannot move)."""
        kinds = _kinds(options)
        seed_text = _seed_text(seed)
        board = setup_board(kinds, options["rows"], options["cols"], seed_text)
        geometry = _geometry(options["rows"], options["cols"])
        flags = sum(count for rank, count in kinds if rank == FLAG)
        per_side = sum(count for _, count in kinds)
        outcome = None if _has_move(board, geometry, 0) else Outcome(1, "Red has no legal move")
        return TactegoState(
            self, options, seed_text, geometry, board, 0, None if outcome else 0, outcome, None,
            (per_side, per_side), (flags, flags), ((), ()), None,
        )

    def seed_is_secret(self, options: Mapping[str, Any]) -> bool:
        """The seed reproduces the hidden setup, so it is secret while ``hidden`` is on."""
        return options.get("hidden") is not False

    def setup_lines(self, state: State) -> list[str]:
        """Every piece of ``state`` (a setup): a line of column letters, then each row from the top, ``1  rF r3 .  b2`` (``r`` Red, ``b`` Blue, ``F`` flag)."""
        if not state.options["hidden"]:
            return []
        board = state.revealed().view(None)["board"]
        width = len(str(len(board)))
        cells = [[". " if cell is None else ("r" if cell[0] == 0 else "b") + cell[1] for cell in row] for row in board]
        letters = " " * (width + 2) + " ".join(f"{chr(ord('a') + col)} " for col in range(len(board[0]))).rstrip()
        return [letters] + [f"{number:>{width}}  " + " ".join(row).rstrip() for number, row in enumerate(cells, start=1)]

    def sample_state(self, view: Mapping[str, Any], rng: random.Random, seat: int | None = None) -> "TactegoState":
        """Draw a full position consistent with everything ``seat``'s view shows (determinization).

        ``seat``'s own pieces and every revealed piece stand as shown; each of
        the opponent's hidden pieces gets a rank drawn from :func:`unseen_ranks`,
        uniformly over the assignments the view allows: a piece in
        ``has_moved`` is never a flag. Counts, flags, lost ranks, the last
        combat, ply, seat to move and outcome are the view's, so the sampled
        state's ``view(seat)`` equals ``view`` (the state has no ``last_move``
        and its seed is ``"sampled"``).

        Args:
            view: ``State.view(seat)`` of a Tactego game.
            rng: the only source of randomness.
            seat: whose view it is; ``None`` means the seat to move (the view
                must then have ``legal_moves``).

        Raises:
            GameError: if the view is not a seat's Tactego view or no position
                fits it (e.g. more flags unseen than unmoved hidden pieces).
        """
        seat = _viewer(view, seat)
        geometry = _geometry(_size(view, "rows"), _size(view, "cols"))
        cells = [cell for row in view["board"] for cell in row]
        if len(cells) != geometry.rows * geometry.cols:
            raise GameError(f"the view's board is not {geometry.rows}x{geometry.cols}")
        ranks = [None if cell is None else cell[1] for cell in cells]
        hidden = [i for i, cell in enumerate(cells) if cell is not None and cell[1] == UNKNOWN]
        _assign_hidden(ranks, hidden, set(view["has_moved"]), geometry, unseen_ranks(view, seat), rng)
        return self._state_from_cells(view, geometry, cells, ranks, _army_text(view, seat))

    def _state_from_cells(self, view: Mapping[str, Any], geometry: "_Geometry", cells: list[Any],
                          ranks: list[str | None], pieces: str) -> "TactegoState":
        """The state whose board has ``ranks`` where ``cells`` has pieces; the rest from ``view``."""
        revealed, has_moved = set(view["revealed"]), set(view["has_moved"])
        board = tuple(
            None if cell is None else
            _new_piece(cell[0], rank)._replace(revealed=name in revealed, moved=name in has_moved)
            for cell, rank, name in zip(cells, ranks, geometry.names)
        )
        options = self.resolve_options({"rows": geometry.rows, "cols": geometry.cols, "pieces": pieces,
                                        "hidden": view["hidden"], "max_plies": view["max_plies"]})
        shown = view["outcome"]
        outcome = None if shown is None else Outcome(shown["winner"], shown["reason"], None)
        combat = None if view["last_combat"] is None else dict(view["last_combat"])
        lost = (tuple(view["lost"][0]), tuple(view["lost"][1]))
        return TactegoState(
            self, options, "sampled", geometry, board, view["ply"], view["to_move"], outcome, None,
            (view["counts"][0], view["counts"][1]), (view["flags"][0], view["flags"][1]), lost, combat,
        )


def unseen_ranks(view: Mapping[str, Any], seat: int) -> list[str]:
    """The ranks of the opponent's pieces ``seat`` cannot see, strongest first (flags last).

    Both sides get the same pieces, so the opponent's army is ``seat``'s own:
    its pieces on the board plus its lost ranks. Take away the opponent's
    lost ranks and the opponent ranks the view shows; what remains stands
    on the opponent's ``"?"`` squares, in an order ``seat`` does not know.

    Raises:
        GameError: if ``seat`` is not 0 or 1, or the view does not add up
            (as many ranks must remain as the opponent has hidden pieces).
    """
    if seat not in (0, 1):
        raise GameError(f"seat must be 0 or 1, not {seat!r}")
    cells = [cell for row in view["board"] for cell in row if cell is not None]
    army = [rank for owner, rank in cells if owner == seat] + list(view["lost"][seat])
    if UNKNOWN in army:
        raise GameError(f"this is not seat {seat}'s view: some of its own ranks are hidden")
    remaining = {rank: army.count(rank) for rank in set(army)}
    shown = [rank for owner, rank in cells if owner != seat and rank != UNKNOWN] + list(view["lost"][1 - seat])
    for rank in shown:
        if remaining.get(rank, 0) == 0:
            raise GameError(f"the view shows more {rank!r} pieces for seat {1 - seat} than its army has")
        remaining[rank] -= 1
    unseen = sorted((rank for rank, count in remaining.items() for _ in range(count)), key=_rank_order)
    hidden = sum(1 for owner, rank in cells if owner != seat and rank == UNKNOWN)
    if len(unseen) != hidden:
        raise GameError(f"the view does not add up: {len(unseen)} unseen ranks for {hidden} hidden pieces")
    return unseen


def _rank_order(rank: str) -> tuple[int, int]:
    """Sort key: strongest first, flags last."""
    return (1, 0) if rank == FLAG else (0, -int(rank))


def _viewer(view: Mapping[str, Any], seat: int | None) -> int:
    """The seat whose view this is (the seat to move when ``seat`` is ``None``)."""
    if view.get("game") != "tactego":
        raise GameError(f"not a Tactego view (game {view.get('game')!r})")
    if seat is None:
        if not view.get("legal_moves"):
            raise GameError("say whose view this is: it has no legal_moves, so it is not the seat to move's")
        seat = view["to_move"]
    if seat not in (0, 1):
        raise GameError(f"seat must be 0 or 1, not {seat!r}")
    return seat


def _size(view: Mapping[str, Any], key: str) -> int:
    value = view.get(key)
    if type(value) is not int or not 2 <= value <= 26:
        raise GameError(f"the view's {key} must be an integer from 2 to 26, not {value!r}")
    return value


def _assign_hidden(ranks: list[str | None], hidden: list[int], has_moved: set[str], geometry: "_Geometry",
                   unseen: list[str], rng: random.Random) -> None:
    """Put ``unseen`` on the ``hidden`` squares of ``ranks`` at random; flags only where nothing moved."""
    flags = [rank for rank in unseen if rank == FLAG]
    others = [rank for rank in unseen if rank != FLAG]
    still = [i for i in hidden if geometry.names[i] not in has_moved]
    if len(flags) > len(still):
        raise GameError(f"no position fits the view: {len(flags)} hidden flags but {len(still)} unmoved hidden pieces")
    flag_squares = set(rng.sample(still, len(flags)))
    rng.shuffle(others)
    rest = iter(others)
    for i in hidden:
        ranks[i] = FLAG if i in flag_squares else next(rest)


def _army_text(view: Mapping[str, Any], seat: int) -> str:
    """A pieces file for ``seat``'s army (its board pieces plus its lost ranks), strongest first."""
    army = [cell[1] for row in view["board"] for cell in row if cell is not None and cell[0] == seat]
    army += list(view["lost"][seat])
    kinds = sorted(set(army), key=_rank_order)
    return "".join(f"{rank} {army.count(rank)}\n" for rank in kinds)


def _kinds(options: dict[str, Any]) -> list[tuple[str, int]]:
    text = options["pieces"]
    return parse_pieces(DEFAULT_PIECES if text is None else text)


def _has_move(board: tuple[Piece | None, ...], geometry: _Geometry, seat: int) -> bool:
    """Whether ``seat`` has at least one legal move on ``board``."""
    for i, piece in enumerate(board):
        if piece is None or piece.owner != seat or piece.strength == _FLAG_STRENGTH:
            continue
        for j, _ in geometry.steps[i]:
            target = board[j]
            if target is None or target.owner != seat:
                return True
    return False


def _attacker_wins(attacker: Piece, defender: Piece) -> bool:
    """Combat (seed rule 5): a flag is always captured; equal or higher strength wins."""
    return defender.strength == _FLAG_STRENGTH or attacker.strength >= defender.strength


class TactegoState(State):
    """A Tactego position (immutable).

    Attributes:
        seed: the seed text the setup was drawn from (secret while hidden).
        Plus the :class:`~games.base.State` attributes.
    """

    __slots__ = (
        "game", "options", "seed", "ply", "to_move", "outcome", "last_move",
        "_geometry", "_board", "_counts", "_flags", "_lost", "_combat", "_moves", "_revealed", "_has_moved", "_open",
    )

    def __init__(
        self,
        game: Tactego,
        options: dict[str, Any],
        seed: str,
        geometry: _Geometry,
        board: tuple[Piece | None, ...],
        ply: int,
        to_move: int | None,
        outcome: Outcome | None,
        last_move: str | None,
        counts: tuple[int, int],
        flags: tuple[int, int],
        lost: tuple[tuple[str, ...], tuple[str, ...]],
        combat: dict[str, Any] | None,
    ) -> None:
        self.game = game
        self.options = options
        self.seed = seed
        self._geometry = geometry
        self._board = board
        self.ply = ply
        self.to_move = to_move
        self.outcome = outcome
        self.last_move = last_move
        self._counts = counts
        self._flags = flags
        self._lost = lost
        self._combat = combat
        self._moves: list[str] | None = None
        self._revealed: tuple[str, ...] | None = None
        self._has_moved: tuple[str, ...] | None = None
        self._open = False  # every rank shown to every viewer (see revealed())

    def __repr__(self) -> str:
        return f"<TactegoState ply={self.ply} to_move={self.to_move} last_move={self.last_move!r}>"

    @property
    def board(self) -> tuple[Piece | None, ...]:
        """Every square's piece or ``None``, flat, indexed ``row * cols + col`` (row 0 at the top).

        The whole truth, hidden ranks included: for rules code and for a
        state a computer player sampled itself (:func:`sample_state`), never
        for what a seat is shown (use :meth:`view`).
        """
        return self._board

    # -- moves -------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        """Return every legal move as ``"b2-c3"``, by origin square (row-major) then direction."""
        if self.to_move is None:
            return []
        if self._moves is None:
            self._moves = self._generate(self.to_move)
        return list(self._moves)

    def _generate(self, seat: int) -> list[str]:
        board, moves = self._board, []
        for i, piece in enumerate(board):
            if piece is None or piece.owner != seat or piece.strength == _FLAG_STRENGTH:
                continue
            for j, text in self._geometry.steps[i]:
                target = board[j]
                if target is None or target.owner != seat:
                    moves.append(text)
        return moves

    def _play(self, move: str) -> "TactegoState":
        origin, target = self._parse(move)
        self._check_move(move, origin, target)
        return self._apply(origin, target)

    def _parse(self, move: str) -> tuple[int, int]:
        """Return the (origin, target) square indices of ``move``; raise IllegalMove."""
        found = _MOVE.fullmatch(move)
        if found is None:
            raise IllegalMove(move, "a move is two squares, from and to, like b2-c3 (column letter, row number from the top)")
        col1, row1, col2, row2 = found.groups()
        return self._square(move, col1, row1), self._square(move, col2, row2)

    def _square(self, move: str, letter: str, digits: str) -> int:
        geometry = self._geometry
        col, row = ord(letter.lower()) - ord("a"), int(digits) - 1
        if not (0 <= col < geometry.cols and 0 <= row < geometry.rows):
            raise IllegalMove(move, f"{letter.lower()}{int(digits)} is off the {geometry.rows}x{geometry.cols} board")
        return row * geometry.cols + col

    def _check_move(self, move: str, origin: int, target: int) -> None:
        """Raise IllegalMove naming the broken rule (seed rule 4)."""
        names, piece = self._geometry.names, self._board[origin]
        if piece is None:
            raise IllegalMove(move, f"{names[origin]} is empty")
        if piece.owner != self.to_move:
            raise IllegalMove(move, f"{names[origin]} is not your piece")
        if piece.strength == _FLAG_STRENGTH:
            raise IllegalMove(move, f"{names[origin]} is a flag: flags never move")
        if all(j != target for j, _ in self._geometry.steps[origin]):
            raise IllegalMove(move, f"{names[origin]}-{names[target]} is not a one-square step")
        occupant = self._board[target]
        if occupant is not None and occupant.owner == self.to_move:
            raise IllegalMove(move, f"{names[target]} holds your own piece")

    def _apply(self, origin: int, target: int) -> "TactegoState":
        """Return the state after the (legal) move ``origin``-``target``, combat included."""
        mover = self.to_move
        assert mover is not None
        opponent = 1 - mover
        board = list(self._board)
        attacker, defender = board[origin], board[target]
        assert attacker is not None
        attacker = attacker if attacker.moved else attacker._replace(moved=True)
        board[origin] = None
        counts, flags, lost, combat = self._counts, self._flags, self._lost, None
        if defender is None:
            board[target] = attacker
        else:
            won = _attacker_wins(attacker, defender)
            loser = defender if won else attacker
            board[target] = (attacker if won else defender)._replace(revealed=True)
            counts = _minus(counts, loser.owner, 1)
            flags = _minus(flags, loser.owner, 1 if loser.strength == _FLAG_STRENGTH else 0)
            lost = _append(lost, loser.owner, loser.rank)
            combat = {
                "square": self._geometry.names[target],
                "attacker": attacker.rank,
                "defender": defender.rank,
                "attacker_seat": mover,
                "winner": mover if won else opponent,
            }
        text = f"{self._geometry.names[origin]}-{self._geometry.names[target]}"
        new_board = tuple(board)
        outcome = self._outcome(new_board, flags, mover)
        return TactegoState(
            self.game, self.options, self.seed, self._geometry, new_board, self.ply + 1,
            None if outcome else opponent, outcome, text, counts, flags, lost, combat,
        )

    def _outcome(self, board: tuple[Piece | None, ...], flags: tuple[int, int], mover: int) -> Outcome | None:
        """The result after ``mover`` has moved, checked in the RULES.md order."""
        opponent = 1 - mover
        name = self.game.seats[opponent]
        if flags[opponent] == 0:
            return Outcome(mover, f"{name} has no flags left")
        if not _has_move(board, self._geometry, opponent):
            return Outcome(mover, f"{name} has no legal move")
        limit = self.options["max_plies"]
        if limit is not None and self.ply + 1 >= limit:
            return Outcome(None, f"move limit reached ({limit} plies)")
        return None

    # -- views -------------------------------------------------------------

    def revealed(self) -> "TactegoState":
        """This position with every strength shown to everyone: the setup is public once the game is over.

        The server shows it once a game is over, however it ended; replays of
        finished games show it throughout. Moves played from the copy lead to
        ordinary (hiding) positions.
        """
        if self._open or not self.options["hidden"]:
            return self
        copy = TactegoState(
            self.game, self.options, self.seed, self._geometry, self._board, self.ply, self.to_move, self.outcome,
            self.last_move, self._counts, self._flags, self._lost, self._combat,
        )
        copy._open = True
        return copy

    def _view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may see.

        Keys: ``rows``, ``cols``, ``hidden``; ``board`` (rows top to bottom,
        each a list of cells: ``None`` or ``[owner, rank]`` with rank ``"7"``,
        ``"F"`` or ``"?"`` when hidden from the viewer); ``revealed`` (names of
        squares whose pieces have fought, known to both); ``counts`` and
        ``flags`` (pieces and flags remaining, per seat); ``lost`` (ranks each
        seat has lost, in order); ``has_moved`` (names of squares whose pieces
        have left their setup squares: both players saw them move, so neither
        is a flag); ``max_plies`` (the option); ``last_combat`` (``None`` or ``{"square",
        "attacker", "defender", "attacker_seat", "winner"}`` for a combat on the
        last move; both ranks were revealed by the combat).

        A rank is shown when ``hidden`` is off, the piece has fought
        (``revealed``) or ``seat`` owns it; a spectator owns nothing. In a
        :meth:`revealed` copy (a game that is over) every rank is shown to
        everyone. The
        board's cells are built afresh for every call: nothing that depends
        on the seat is kept between calls.
        """
        geometry, board, hidden = self._geometry, self._board, self.options["hidden"]
        if hidden and not self._open:
            cells = [
                None if p is None else [p.owner, p.rank if p.revealed or p.owner == seat else UNKNOWN] for p in board
            ]
        else:
            cells = [None if p is None else [p.owner, p.rank] for p in board]
        cols = geometry.cols
        revealed, has_moved = self._revealed, self._has_moved
        if revealed is None or has_moved is None:  # the same for every seat
            names = geometry.names
            revealed = tuple([names[i] for i, p in enumerate(board) if p is not None and p.revealed])
            has_moved = tuple([names[i] for i, p in enumerate(board) if p is not None and p.moved])
            self._revealed, self._has_moved = revealed, has_moved
        return {
            "rows": geometry.rows,
            "cols": cols,
            "hidden": hidden,
            "board": [cells[start:start + cols] for start in geometry.row_starts],
            "revealed": list(revealed),
            "counts": list(self._counts),
            "flags": list(self._flags),
            "lost": [list(self._lost[0]), list(self._lost[1])],
            "has_moved": list(has_moved),
            "max_plies": self.options["max_plies"],
            "last_combat": dict(self._combat) if self._combat is not None else None,
        }


def _minus(pair: tuple[int, int], seat: int, amount: int) -> tuple[int, int]:
    return (pair[0] - amount, pair[1]) if seat == 0 else (pair[0], pair[1] - amount)


def _append(pair: tuple[tuple[str, ...], tuple[str, ...]], seat: int, rank: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (pair[0] + (rank,), pair[1]) if seat == 0 else (pair[0], pair[1] + (rank,))
