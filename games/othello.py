"""Othello ("Black & White"): place a disc, flip every flanked line.

Source: ``RULES.md``, section "Othello"; seed ``002_e6146ce5720fcbb1.txt``
(sections 2 and 3: placing and capturing, starting position, skipping the
turn, game over, display).

>>> state = Othello().new_state()
>>> state.legal_moves()
['d3', 'c4', 'f5', 'e6']
>>> state = state.play("D3")
>>> state.last_move, state.disc_counts()
('d3', (4, 1))

Board and notation: ``size`` x ``size`` squares (``size`` even, 6..16,
default 8). A square is written as a lowercase column letter from the left
and a row number from the TOP: ``a1`` is the top-left corner. A forced pass is
written ``pass``. Input is forgiving about case and spaces (``" D 3 "``).

Representation (python-chess style): each colour is one bitboard, a plain
Python ``int`` in which bit ``row * size + col`` is set where that colour has
a disc (row 0 is the top row). Everything fast is in two primitives,
:func:`_placing_moves` and :func:`_flips`, which shift bitboards along the
eight directions; the per-size shift amounts and edge masks live in a cached
:class:`_Geometry`.

Those primitives, the board's rows and the moves' names also exist in C
(``_othello_accel.c``, for boards up to 8x8), built at install time where a
compiler is and used when present: :func:`use_accelerator` switches between
the two, which give the same results. The computer players' search
(:func:`placement_generator`) always runs the pure-Python ones.

States are cheap: ``play()`` computes the flips and nothing else. Whether the
side to move can place, must pass, or the game is over (hence ``to_move``,
``outcome`` and ``legal_moves()``) is worked out on first need and cached.
``children()`` builds every successor straight from the bitboards (a slotted
object filled in without calling ``__init__``) and ``move_count()`` is a bit
count, so a tree walk (``games.perft``) parses and names no moves. The
successors of one ``children()`` call share their move generation: the first
one asked works out every sibling's moves in one pass over their boards laid
side by side in one int (:class:`_Siblings`), which costs about two
single-board passes instead of one per child.

Points settled here where RULES.md and the seed are silent or open:

- The game ends as soon as neither side can place a disc, right after the
  move that caused it; no pass moves are played out first. A ``pass`` is
  legal only when the side to move cannot place but the opponent can, and it
  is then the only legal move (RULES.md: "the engine's only legal move is
  then ``pass``").
- The end reason is checked in the seed's order: ``"elimination"`` (a side
  has no disc left), then ``"board full"``, else ``"mutual blocking"``. A full
  board of one colour therefore ends by elimination. The score is always
  ``(black discs, white discs)``; more discs wins and equal is a draw (after
  an elimination the side with no disc always has fewer).
- Legal moves are listed in board order: row by row from the top, left to
  right within a row.
"""

from __future__ import annotations

import functools
import itertools
import re
import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, TypeVar

from .base import Game, GameError, IllegalMove, InvalidOption, Option, Outcome, State

__all__ = ["Othello", "OthelloState"]

_COLUMNS = "abcdefghijklmnop"
_SQUARE = re.compile(r"([a-z])(\d+)")
_NOTATION_HELP = "notation: a column letter and a row number, e.g. d3"
_EMPTY = "."
_PASS = "pass"
_T = TypeVar("_T")
_UNKNOWN = object()
"""Marks a lazily worked-out attribute that has not been needed yet."""

BLACK = 0
"""Seat of Black, who moves first."""
WHITE = 1
"""Seat of White."""


# ---------------------------------------------------------------------------
# Geometry and bitboard primitives
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, slots=True)
class _Geometry:
    """Everything about one board size that the primitives need.

    Attributes:
        size: squares per side.
        full: bitboard with every square set.
        steps: ``(shift, mask)`` for four directions, each used both ways:
            a left shift (``<<``) by 1, size - 1, size, size + 1 goes east,
            south-west, south, south-east; a right shift (``>>``) goes west,
            north-east, north, north-west. ``mask`` keeps the squares a
            flanked run may cross in that direction (the inner columns for
            directions that move sideways, else the whole board), which also
            stops runs wrapping from one row to the next.
        names: square name by bit index (``names[0] == "a1"``).
        index: bit index by canonical square name.
        bits: the format spec that writes a bitboard as ``size * size``
            binary digits, the last square first (see :func:`_board_rows`).
        row_starts: the offset of each row's first square, top row first.
        rays: by square bitboard, the square's rays (see :func:`_rays`).
        lane: bits per board in a batch of boards side by side in one int
            (a multiple of 8, at least ``size + 1`` bits more than the board:
            a shift by one step never carries a square into the next board;
            ``_LANE_BITS`` for boards of 64 squares or fewer).
        lanes: how many boards side by side the wide masks cover
            (``size * size``: more than a position has moves).
        wide_one: ``1`` repeated for ``lanes`` boards ``lane`` bits apart
            (times a board, that board repeated).
        wide_steps: ``steps`` with each mask repeated the same way
            (see :class:`_Siblings`).
        wide_full: ``full`` repeated the same way.
        byte_squares: for each byte of a bitboard (``to_bytes``, little
            endian), by the byte's value, ``(square, rays)`` of each square
            it sets, in board order: the squares of a bitboard without a
            big-int operation per square.
        byte_names: the same, the squares' names.
        row_texts: on 8x8, every row's text (``"X.O....."``) by black
            byte, then by white byte (``row_texts[black][white]``; the 3**8
            texts, ``None`` where the bytes overlap); ``None`` on other sizes.
    """

    size: int
    full: int
    steps: tuple[tuple[int, int], ...]
    names: tuple[str, ...]
    index: dict[str, int]
    bits: str
    row_starts: tuple[int, ...]
    rays: dict[int, tuple[_Ray, ...]]
    lane: int
    lanes: int
    wide_one: int
    wide_steps: tuple[tuple[int, int], ...]
    wide_full: int
    byte_squares: tuple[tuple[tuple[tuple[int, tuple[_Ray, ...]], ...], ...], ...]
    byte_names: tuple[tuple[tuple[str, ...], ...], ...]
    row_texts: tuple[tuple[str | None, ...], ...] | None


_Ray = tuple[int, tuple[tuple[int, int], ...]]
"""One direction from a square: ``(first, rest)``, see :func:`_rays`."""


@functools.lru_cache(maxsize=None)
def _geometry(size: int) -> _Geometry:
    """Return the (cached) geometry of a ``size`` x ``size`` board, size 1..16."""
    full = (1 << (size * size)) - 1
    first_col = sum(1 << (row * size) for row in range(size))
    last_col = first_col << (size - 1)
    inner = full & ~first_col & ~last_col
    steps = ((1, inner), (size - 1, inner), (size, full), (size + 1, inner))
    names = tuple(f"{_COLUMNS[i % size]}{i // size + 1}" for i in range(size * size))
    index = {name: i for i, name in enumerate(names)}
    rays = {1 << i: _rays(i, size) for i in range(size * size)}
    lane = _LANE_BITS if size * size <= 64 else -(-(size * size + size + 1) // 8) * 8
    lanes = size * size
    repeat = sum(1 << (i * lane) for i in range(lanes))
    wide_steps = tuple((step, mask * repeat) for step, mask in steps)
    offsets = range(0, size * size, 8)
    byte_squares = tuple(_by_byte([(1 << i, rays[1 << i]) for i in range(start, min(start + 8, size * size))]) for start in offsets)
    byte_names = tuple(_by_byte(names[start:start + 8]) for start in offsets)
    return _Geometry(
        size, full, steps, names, index, f"0{size * size}b", tuple(range(0, size * size, size)), rays,
        lane, lanes, repeat, wide_steps, full * repeat, byte_squares, byte_names, _row_texts() if size == 8 else None,
    )  # fmt: skip


def _row_texts() -> tuple[tuple[str | None, ...], ...]:
    """Return every text of an 8x8 row by black byte, then white byte (bit ``i``: column ``i``); ``None`` where they overlap."""
    texts: list[list[str | None]] = [[None] * 256 for _ in range(256)]
    for cells in itertools.product((_EMPTY, "X", "O"), repeat=8):
        black = sum(1 << col for col, cell in enumerate(cells) if cell == "X")
        white = sum(1 << col for col, cell in enumerate(cells) if cell == "O")
        texts[black][white] = "".join(cells)
    return tuple(tuple(by_white) for by_white in texts)


def _by_byte(items: Sequence[_T]) -> tuple[tuple[_T, ...], ...]:
    """Return, for each byte value 0..255, the ``items`` whose bit (item ``i``: bit ``i``) it sets, in order."""
    table: list[tuple[_T, ...]] = [()]
    for bit, item in enumerate(items):
        table += [entry + (item,) for entry in table]  # the values with this bit set follow those without it
    table += [table[value & (len(table) - 1)] for value in range(len(table), 256)]  # bits past the board
    return tuple(table)


def _rays(index: int, size: int) -> tuple[_Ray, ...]:
    """Return the rays from square ``index`` along which a placement there can flip.

    A ray is one of the eight directions, kept only when it has at least two
    squares (a flip needs a disc to flip and one to close the line). It is
    ``(first, rest)``: ``first`` is the bitboard of the adjacent square and
    ``rest`` holds, for each farther square in order, ``(square, run)``,
    where ``run`` is the bitboard of the squares between it and ``index``:
    what is flipped when ``square`` closes the line.
    """
    row, col = divmod(index, size)
    rays = []
    for row_step, col_step in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
        squares, r, c = [], row + row_step, col + col_step
        while 0 <= r < size and 0 <= c < size:
            squares.append(1 << (r * size + c))
            r, c = r + row_step, c + col_step
        if len(squares) >= 2:
            runs = [sum(squares[:i]) for i in range(1, len(squares))]
            rays.append((squares[0], tuple(zip(squares[1:], runs))))
    return tuple(rays)


def _placing_moves(own: int, opp: int, geo: _Geometry) -> int:
    """Return the bitboard of empty squares where ``own`` can place a disc.

    A square qualifies when, in some direction, one or more ``opp`` discs run
    from it to an ``own`` disc. Each direction follows the runs outward from
    the ``own`` discs ("dumb7fill", stopping as soon as every run has ended).
    """
    return _fill_moves(own, opp, geo.steps, geo.full)


def _fill_moves(own: int, opp: int, steps: tuple[tuple[int, int], ...], full: int) -> int:
    """:func:`_placing_moves` with the masks given: one board's, or many boards' side by side."""
    moves = 0
    for step, mask in steps:
        crossable = opp & mask
        run = frontier = (own << step) & crossable
        while frontier:
            frontier = (frontier << step) & crossable
            run |= frontier
        moves |= run << step
        run = frontier = (own >> step) & crossable
        while frontier:
            frontier = (frontier >> step) & crossable
            run |= frontier
        moves |= run >> step
    return moves & full & ~(own | opp)


def placement_generator(size: int) -> Callable[[int, int], int]:
    """Return ``moves(own, opp)`` for a ``size`` board: the bitboard of squares where ``own`` may place.

    For searches that work on plain ints (``games.bots.othello``): bit
    ``row * size + column`` is a square, as in every bitboard of this module.

    Raises:
        ValueError: if ``size`` is not an even number from 6 to 16.
    """
    if size not in range(6, 17, 2):
        raise ValueError(f"an othello board is 6 to 16 squares wide (even), not {size!r}")
    geo = _geometry(size)
    steps, full = geo.steps, geo.full
    return lambda own, opp: _fill_moves(own, opp, steps, full)  # always pure Python (issue 22): never the accelerator


def _flips(index: int, own: int, opp: int, geo: _Geometry) -> int:
    """Return the ``opp`` discs flipped by ``own`` placing on square ``index`` (bit ``row * size + col``).

    Follows each of the square's rays (:func:`_rays`) that starts on an
    ``opp`` disc, over ``opp`` discs, and keeps the run when an ``own`` disc
    closes it. Zero means the square flanks nothing (an illegal placement).
    :meth:`OthelloState.children` has the same loop written out.
    """
    flips = 0
    for first, rest in geo.rays[1 << index]:
        if first & opp:
            for closer, run in rest:
                if not closer & opp:
                    if closer & own:
                        flips |= run
                    break
    return flips


_CELL_CHARS = bytes.maketrans(b"\x90\x91\x92", (_EMPTY + "XO").encode("ascii"))
"""Turns the cell codes of :func:`_board_rows` (``0x90`` empty, ``0x91`` Black, ``0x92`` White) into characters."""


def _board_rows(black: int, white: int, geo: _Geometry) -> tuple[str, ...]:
    """Return the board as ``size`` strings, top row first, of ``X``, ``O`` and ``.``.

    On 8x8 a row is one byte of each bitboard, and every row's text is made
    in advance (:attr:`_Geometry.row_texts`) and looked up: making eight
    strings costs more than finding them. Other sizes use
    :func:`_whole_board_rows`.
    """
    texts = geo.row_texts
    if texts is None:
        return _whole_board_rows(black, white, geo)
    b, w = black.to_bytes(8, "little"), white.to_bytes(8, "little")
    # Written out: a comprehension over zip() costs about twice as many instructions (a server does this every move).
    return (
        texts[b[0]][w[0]], texts[b[1]][w[1]], texts[b[2]][w[2]], texts[b[3]][w[3]],
        texts[b[4]][w[4]], texts[b[5]][w[5]], texts[b[6]][w[6]], texts[b[7]][w[7]],
    )  # type: ignore[return-value]


def _whole_board_rows(black: int, white: int, geo: _Geometry) -> tuple[str, ...]:
    """Return the board as ``size`` strings, top row first, of ``X``, ``O`` and ``.``.

    Works on whole bitboards instead of square by square: each bitboard is
    written as binary digits (``"0"``/``"1"``, one byte per square, the last
    square first), read back as an integer with one byte per square, and
    ``black + 2 * white`` then holds one cell code per byte (no byte can
    carry into the next). Writing that integer out in the other byte order
    puts square 0 first; one translation gives the characters.
    """
    digits = geo.bits
    code = int.from_bytes(format(black, digits).encode(), "little") + 2 * int.from_bytes(
        format(white, digits).encode(), "little"
    )
    size = geo.size
    text = code.to_bytes(size * size, "big").translate(_CELL_CHARS).decode("ascii")
    return tuple([text[start:start + size] for start in geo.row_starts])


def _start_bitboards(size: int) -> tuple[int, int]:
    """Return ``(black, white)`` for the start: the four centre squares.

    For size 8: White on d4 and e5, Black on e4 and d5 (RULES.md; seed 2.2).
    """
    low, high = size // 2 - 1, size // 2
    black = (1 << (low * size + high)) | (1 << (high * size + low))
    white = (1 << (low * size + low)) | (1 << (high * size + high))
    return black, white


def _final_outcome(black: int, white: int, geo: _Geometry) -> Outcome:
    """Return the outcome of a position where neither side can place a disc.

    The reason is ``"elimination"``, ``"board full"`` or ``"mutual
    blocking"``, checked in that order (seed 2.4); more discs wins, equal
    is a draw; ``score`` is ``(black discs, white discs)``.
    """
    blacks, whites = black.bit_count(), white.bit_count()
    if not blacks or not whites:
        reason = "elimination"
    elif blacks + whites == geo.size * geo.size:
        reason = "board full"
    else:
        reason = "mutual blocking"
    winner = BLACK if blacks > whites else WHITE if whites > blacks else None
    return Outcome(winner, reason, (blacks, whites))


# ---------------------------------------------------------------------------
# Game and State
# ---------------------------------------------------------------------------


class Othello(Game):
    """Othello ("Black & White") on an even board from 6x6 to 16x16.

    Options (RULES.md, "Othello"):
        size: squares per side, an even integer from 6 to 16 (default 8).

    Seats: 0 = Black (moves first), 1 = White. No chance in the setup.
    """

    name = "othello"
    title = "Black & White (Othello)"
    seats = ("Black", "White")
    options = (
        Option("size", "int", 8, "squares per side of the board (even)", minimum=6, maximum=16),
    )
    uses_seed = False
    public_views = True

    def _check_options(self, options: dict[str, Any]) -> None:
        """Refuse an odd ``size`` (the start needs the four centre squares).

        Raises:
            InvalidOption: naming ``size`` when it is odd.
        """
        size = options["size"]
        if size % 2:
            raise InvalidOption("size", f"option 'size' must be an even integer from 6 to 16, not {size}")

    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "OthelloState":
        """Return the starting position: four centre discs, Black to move."""
        size = options["size"]
        black, white = _start_bitboards(size)
        return _position(_Setup(self, options, _geometry(size)), black, white, BLACK, 0, None)

    def state_from_view(self, view: Mapping[str, Any]) -> "OthelloState":
        """Rebuild the position a view shows (every seat sees the whole board).

        Uses the view's ``board``, ``to_move``, ``ply`` and ``last_move``; the
        rebuilt state plays the same legal moves and shows the same view.
        When the game is over (``to_move`` is ``None``) no side is due, so
        the side recorded is Black's; nothing can be played either way.

        Raises:
            GameError: if ``view`` is not an Othello view: another game, or a
                board that is not ``size`` rows of ``size`` ``X``/``O``/``.``
                for an even size from 6 to 16, a ``to_move`` other than 0, 1
                or ``None``, a negative ply, or a ``last_move`` that is not
                ``pass`` or a square of the board.
        """
        if view.get("game") != self.name:
            raise GameError(f"not an {self.name} view: game is {view.get('game')!r}")
        board, to_move, ply, last_move = view.get("board"), view.get("to_move"), view.get("ply"), view.get("last_move")
        if not isinstance(board, list) or len(board) not in range(6, 17, 2):
            raise GameError("an othello view's board must be a list of 6 to 16 rows (an even number)")
        if to_move not in (BLACK, WHITE, None) or type(ply) is not int or ply < 0:
            raise GameError(f"an othello view has to_move 0, 1 or None and a ply >= 0, not {to_move!r} and {ply!r}")
        geo = _geometry(len(board))
        _check_view_rows(board, geo.size)
        if last_move is None or last_move == _PASS:
            last = None if last_move is None else 0
        elif last_move in geo.index:
            last = 1 << geo.index[last_move]
        else:
            raise GameError(f"an othello view's last_move must be a square, 'pass' or None, not {last_move!r}")
        state = OthelloState.from_diagram("\n".join(board), BLACK if to_move is None else to_move, ply)
        state._last, state.last_move = last, last_move  # from_diagram builds a position no move led to
        return state


_GAME = Othello()


@dataclass(frozen=True, eq=False, slots=True)
class _Setup:
    """What every position of one game shares: its game, options and geometry."""

    game: Game
    options: Mapping[str, Any]
    geo: _Geometry


class _Siblings:
    """The positions one :meth:`OthelloState.children` call made, as far as their moves need.

    The first child asked for its moves works out every sibling's at once:
    the boards go side by side into one int, ``lane`` bits apart, and one
    directional fill over it costs about two fills of a single board (a
    Python int operation costs nearly the same for 64 bits as for a thousand)
    instead of one fill per child.

    Like :class:`OthelloState` it has no ``__init__``: :meth:`OthelloState.children`
    fills in a bare instance (one per call, so a Python call saved counts).

    Attributes:
        mover: the parent's board of the side that did not place, which is
            every child's side to move (before its flips).
        placed: for each child in order, the board of the side that placed
            (its placement and flips included).
        moves: each child's placements, in order, once worked out.
        geo: the board's geometry.
    """

    __slots__ = ("mover", "placed", "moves", "geo")

    mover: int
    placed: list[int]
    moves: Sequence[int] | None
    geo: _Geometry

    def placing(self, index: int) -> int:
        """Return the placements of the side to move in child number ``index`` (from 0)."""
        moves = self.moves
        if moves is None:
            moves = self.moves = self._work_out()
        return moves[index]

    def _work_out(self) -> Sequence[int]:
        """Return every child's placements, in order, from one fill over their boards side by side."""
        geo, placed = self.geo, self.placed
        count = len(placed)
        lanes = _LANES[count] if geo.size <= 8 else None  # boards of 64 squares or fewer: one call packs them all
        if lanes is not None:
            waiting = int.from_bytes(lanes.pack(*placed), "little")
        else:
            waiting = int.from_bytes(b"".join([board.to_bytes(geo.lane // 8, "little") for board in placed]), "little")
        # A child's side to move holds the parent's discs of that side but the flipped ones.
        moving = self.mover * (geo.wide_one >> (geo.lanes - count) * geo.lane) & ~waiting
        moves = _fill_moves(moving, waiting, geo.wide_steps, geo.wide_full)
        if lanes is not None:
            return lanes.unpack(moves.to_bytes(lanes.size, "little"))
        full, lane = geo.full, geo.lane
        return [(moves >> (index * lane)) & full for index in range(count)]


_LANE_BITS = 80
"""Bits per board side by side when a board has 64 squares or fewer: 8 bytes and 2 zero bytes."""

_LANES = [struct.Struct("<" + "Q2x" * count) for count in range(65)]
"""By number of boards, the layout that packs that many boards of up to 64 squares, ``_LANE_BITS`` apart."""


def _position(setup: _Setup, black: int, white: int, side: int, ply: int, last: int | None) -> "OthelloState":
    """Return the position with ``side`` due to move (internal; see :meth:`OthelloState.from_diagram`).

    ``last`` is the bitboard of the square just placed on, ``0`` after a
    pass, ``None`` for a position no move led to. Does no work: whether
    ``side`` can place, must pass, or whether the game is over is worked out
    on first need (see :attr:`OthelloState.outcome`). The position is a
    :class:`_ShownState`, whose lazily worked-out fields start as not known:
    ``_moves`` (the bitboard of placements), ``_legal`` (their names) and
    ``_rows`` (the board as text) as ``None``, ``_ended`` (the outcome of a
    position where the side to move cannot place) as ``_UNKNOWN``; its
    ``last_move`` is named at once (a lookup).
    """
    state = _ShownState()
    state._setup = setup
    state.ply = ply
    state._last = last
    state.last_move = None if last is None else setup.geo.names[last.bit_length() - 1] if last else _PASS
    state.black = black
    state.white = white
    state._side = side
    state._moves = state._siblings = state._legal = state._rows = None
    state._ended = _UNKNOWN
    return state


def _outcome_if_blocked(black: int, white: int, side: int, geo: _Geometry) -> Outcome | None:
    """Return the final outcome of a position where ``side`` cannot place, or ``None`` if the other side can (a forced pass)."""
    own, opp = (black, white) if side == BLACK else (white, black)
    if _placing_moves(opp, own, geo):
        return None
    return _final_outcome(black, white, geo)


class OthelloState(State):
    """An immutable Othello position.

    Attributes (besides those of :class:`~games.base.State`):
        black: bitboard of Black's discs; bit ``row * size + col``, row 0 at
            the top (so bit 0 is ``a1``).
        white: bitboard of White's discs, same layout.
        size: squares per side.

    Build positions with ``Othello().new_state(...)``, :meth:`play`, or
    :meth:`from_diagram` (any legal-looking arrangement, for tests and the
    seed's examples). The class has no ``__init__``: :func:`_position` (and
    :meth:`children`, written out) fills in a bare instance, which is the
    cheapest way CPython makes an object.

    Two kinds of position share this interface. One :meth:`children` makes
    is an :class:`OthelloState` of nine slots, which keeps only its moves
    once worked out (a tree walk rarely asks a leaf anything, and every slot
    costs memory and time per leaf). One :func:`_position` makes
    (:meth:`play`, the start, :meth:`from_diagram`) is a
    :class:`_ShownState`, which also keeps its outcome, its move names and
    its board text once built: such a position is usually shown.
    """

    __slots__ = ("_setup", "ply", "black", "white", "_side", "_last", "_moves", "_siblings", "_sibling")

    _setup: _Setup
    black: int
    white: int
    _side: int
    _last: int | None
    _moves: int | None
    _siblings: _Siblings | None
    _sibling: int

    # -- shared and lazily worked-out attributes ----------------------------

    @property
    def game(self) -> Game:  # type: ignore[override]
        """The :class:`Othello` game this is a position of."""
        return self._setup.game

    @property
    def options(self) -> Mapping[str, Any]:  # type: ignore[override]
        """The resolved options (``{"size": n}``)."""
        return self._setup.options

    @property
    def last_move(self) -> str | None:  # type: ignore[override]
        """The canonical notation of the move that led here (``"d3"``, ``"pass"``), or ``None``."""
        last = self._last
        if last is None:
            return None
        return self._setup.geo.names[last.bit_length() - 1] if last else _PASS

    @property
    def size(self) -> int:
        """Squares per side of the board."""
        return self._setup.geo.size

    @property
    def outcome(self) -> Outcome | None:  # type: ignore[override]
        """``None`` while the game runs; the :class:`~games.base.Outcome` once neither side can place."""
        moves = self._moves
        if moves is None:
            moves = self._placing()
        if moves:
            return None
        return self._blocked_outcome()

    def _blocked_outcome(self) -> Outcome | None:
        """The outcome of this position, where the side to move cannot place: ``None`` if it must pass."""
        return _outcome_if_blocked(self.black, self.white, self._side, self._setup.geo)

    @property
    def to_move(self) -> int | None:  # type: ignore[override]
        """The seat due to move (placing or passing), or ``None`` once the game is over."""
        moves = self._moves
        if moves is None:
            moves = self._placing()
        if moves:  # the usual case, without a second property call
            return self._side
        return None if self.outcome is not None else self._side

    def turn(self) -> tuple[int | None, Outcome | None, bool]:
        """Return ``(to_move, outcome, only_pass)`` in one call (see :meth:`games.base.State.turn`), without naming the moves."""
        moves = self._moves
        if moves is None:
            geo = self._setup.geo
            if _C is not None and geo.size <= 8 and self._siblings is None:  # _placing(), written out: every played position
                moves = self._moves = _C.moves(self.black, self.white, geo.size) if self._side == BLACK else _C.moves(self.white, self.black, geo.size)
            else:
                moves = self._placing()
        if moves:
            return self._side, None, False
        ended = self._blocked_outcome()
        return (self._side, None, True) if ended is None else (None, ended, False)

    def _placing(self) -> int:
        """Return (and cache) the bitboard of squares the side due to move can place on."""
        moves = self._moves
        if moves is None:
            if self._siblings is not None:
                moves = self._siblings.placing(self._sibling)
            else:
                geo = self._setup.geo
                own, opp = (self.black, self.white) if self._side == BLACK else (self.white, self.black)
                if _C is not None and geo.size <= 8:  # the accelerator, without _placing_moves()'s call
                    moves = _C.moves(own, opp, geo.size)
                else:
                    moves = _placing_moves(own, opp, geo)
            self._moves = moves
        return moves

    def _board(self) -> tuple[str, ...]:
        """Return the board as ``size`` strings, top row first (see :func:`_board_rows`)."""
        return _board_rows(self.black, self.white, self._setup.geo)

    def _legal_names(self) -> tuple[str, ...]:
        """Return the legal moves' notation: squares in board order, ``("pass",)``, or ``()`` when over."""
        moves = self._moves
        if moves is None:
            moves = self._placing()
        if moves:
            return _squares(moves, self._setup.geo)
        return () if self.outcome is not None else (_PASS,)

    # -- building positions from text --------------------------------------

    @classmethod
    def from_diagram(cls, diagram: str, to_move: int = BLACK, ply: int = 0) -> "OthelloState":
        """Build a position from a text diagram (for tests and the seed's examples).

        Args:
            diagram: one line per row, top row first; ``X`` (Black), ``O``
                (White) or ``.`` (empty) per square, case-insensitive, spaces
                ignored. A header line of column letters and leading row
                numbers are skipped, so :meth:`diagram` output and the board
                part of :func:`client.render.othello.render` output read back. Blank lines are
                ignored. The board size is the number of rows.
            to_move: the seat due to move, 0 (Black) or 1 (White). If that
                side cannot place but the other can, the position is a forced
                pass; if neither can, the game is over.
            ply: the ply number to give the position (default 0).

        Returns:
            The position, with ``last_move`` ``None`` and options ``{"size": n}``.

        Raises:
            ValueError: if the rows are not ``n`` squares each for an even
                ``n`` from 6 to 16, a character is not ``X``/``O``/``.``, the
                board has no disc, or ``to_move``/``ply`` is out of range.

        >>> s = OthelloState.from_diagram('''
        ...   A B C D E F
        ... 1 . . . . . .
        ... 2 . . . . . .
        ... 3 . . O X . .
        ... 4 . . X O . .
        ... 5 . . . . . .
        ... 6 . . . . . .
        ... ''')
        >>> s.size, s.legal_moves()
        (6, ['c2', 'b3', 'e4', 'd5'])
        """
        if to_move not in (BLACK, WHITE):
            raise ValueError(f"to_move must be 0 (Black) or 1 (White), not {to_move!r}")
        if type(ply) is not int or ply < 0:
            raise ValueError(f"ply must be a non-negative integer, not {ply!r}")
        rows = _diagram_rows(diagram)
        size = len(rows)
        if size % 2 or not 6 <= size <= 16:
            raise ValueError(f"a diagram needs an even number of rows from 6 to 16, not {size}")
        black = white = 0
        for row, text in enumerate(rows, start=1):
            if len(text) != size:
                raise ValueError(f"row {row} has {len(text)} squares; a {size}x{size} board needs {size}")
            for col, char in enumerate(text):
                bit = 1 << ((row - 1) * size + col)
                if char == "X":
                    black |= bit
                elif char == "O":
                    white |= bit
        if not black | white:
            raise ValueError("a diagram needs at least one disc")
        return _position(_Setup(_GAME, {"size": size}, _geometry(size)), black, white, to_move, ply, None)

    def diagram(self) -> str:
        """Return the board as text that :meth:`from_diagram` reads back.

        One line per row, top first, ``X``/``O``/``.`` per square, no spaces.
        """
        return "\n".join(self.rows())

    # -- queries ----------------------------------------------------------

    def rows(self) -> list[str]:
        """Return the board as ``size`` strings, top row first, of ``X``, ``O`` and ``.``.

        A position :meth:`play` made builds it once and keeps it (every
        seat's view shows the same board); each call returns a new list.
        """
        return list(self._board())

    def disc_at(self, square: str) -> int | None:
        """Return the seat whose disc is on ``square`` (e.g. ``"d4"``), or ``None`` if empty.

        Raises:
            IllegalMove: if ``square`` is not a square of this board.
        """
        index = self._square_index(square)
        bit = 1 << index
        return BLACK if self.black & bit else WHITE if self.white & bit else None

    def disc_counts(self) -> tuple[int, int]:
        """Return ``(black discs, white discs)`` on the board."""
        return self.black.bit_count(), self.white.bit_count()

    @property
    def must_pass(self) -> bool:
        """Whether the side to move cannot place a disc and must play ``pass``."""
        return self.outcome is None and not self._placing()

    def legal_moves(self) -> list[str]:
        """Return the legal moves: squares in board order, ``["pass"]``, or ``[]`` when over."""
        return list(self._legal_names())

    def move_count(self) -> int:
        """Return ``len(legal_moves())`` without building the list (a bit count)."""
        placing = self._moves
        if placing is None:  # _placing(), written out: a perft counts the last ply here, once per position
            if self._siblings is not None:
                placing = self._moves = self._siblings.placing(self._sibling)
            elif self._side == BLACK:
                placing = self._moves = _placing_moves(self.black, self.white, self._setup.geo)
            else:
                placing = self._moves = _placing_moves(self.white, self.black, self._setup.geo)
        if placing:
            return placing.bit_count()
        return 0 if self.outcome is not None else 1  # a forced pass

    def children(self) -> list["OthelloState"]:
        """Return the state after each legal move, in :meth:`legal_moves` order.

        Builds each successor straight from the bitboards: no notation is
        parsed or built, and no successor works out its own moves until asked;
        the first one asked then works out every sibling's in one pass
        (:class:`_Siblings`). Empty when the game is over; a single pass when
        that is forced.
        """
        setup, black, white, side, ply = self._setup, self.black, self.white, 1 - self._side, self.ply + 1
        moves = self._moves
        if moves is None:  # _placing(), written out: a tree walk comes here once per inner position
            if self._siblings is not None:
                moves = self._moves = self._siblings.placing(self._sibling)
            elif side == WHITE:  # Black places
                moves = self._moves = _placing_moves(black, white, setup.geo)
            else:
                moves = self._moves = _placing_moves(white, black, setup.geo)
        if not moves:
            return [] if self.outcome is not None else [_position(setup, black, white, side, ply, 0)]
        new_state, new_siblings = OthelloState, _Siblings
        children = []
        append = children.append
        if side == WHITE:  # Black places
            own, opp = black, white
        else:
            own, opp = white, black
        siblings = new_siblings()  # _Siblings(opp, setup.geo) without a Python __init__ call
        siblings.mover, siblings.placed, siblings.moves, siblings.geo = opp, [], None, setup.geo
        placed_boards = siblings.placed
        index = 0
        byte_squares = setup.geo.byte_squares
        for squares, byte in zip(byte_squares, moves.to_bytes(len(byte_squares), "little")):
            for square, rays in squares[byte]:
                flips = 0
                for first, rest in rays:  # _flips(), written out
                    if first & opp:
                        for closer, run in rest:
                            if not closer & opp:
                                if closer & own:
                                    flips |= run
                                break
                child = new_state()  # a bare OthelloState: nine slots, nothing worked out
                child._setup = setup
                child.ply = ply
                child._last = square
                placed, flipped = own | square | flips, opp ^ flips
                if side == WHITE:
                    child.black, child.white = placed, flipped
                else:
                    child.black, child.white = flipped, placed
                placed_boards.append(placed)
                child._side = side
                child._moves = None
                child._siblings = siblings
                child._sibling = index
                index += 1
                append(child)
        return children

    # -- moves -------------------------------------------------------------

    def play(self, move: str) -> "OthelloState":
        """Return the state after ``move`` (see :meth:`games.base.State.play`).

        A canonical square name (``"d3"``) where the side to move can place
        takes the short way: one lookup, no parsing, no outcome check (a
        position with a placement is not over). Anything else goes through
        the base class's checks and :meth:`_play`, which raise
        :class:`~games.base.IllegalMove` naming what was wrong.
        """
        if type(move) is str:
            setup = self._setup
            geo = setup.geo
            index = geo.index.get(move)
            if index is not None:
                moves = self._moves
                if moves is None:
                    moves = self._placing()
                if moves >> index & 1:
                    if _C is None or geo.size > 8:
                        return self._placed(index)
                    # _placed() and _position(), written out with the accelerator's flips: a server plays every move here.
                    side, black, white, square = self._side, self.black, self.white, 1 << index
                    state = _ShownState()
                    if side == BLACK:
                        flips = _C.flips(index, black, white, geo.size)
                        state.black, state.white = black | square | flips, white ^ flips
                    else:
                        flips = _C.flips(index, white, black, geo.size)
                        state.black, state.white = black ^ flips, white | square | flips
                    state._setup, state.ply, state._last, state._side = setup, self.ply + 1, square, 1 - side
                    state.last_move = geo.names[index]
                    state._moves = state._siblings = state._legal = state._rows = None
                    state._ended = _UNKNOWN
                    return state
        return State.play(self, move)

    def _play(self, move: str) -> "OthelloState":
        """Place a disc on ``move`` or play a forced ``pass``.

        Raises:
            IllegalMove: ``"d3 is occupied"``, ``"d3 flips nothing"``,
                ``"z9 is off the 8x8 board"``, ``"'xyz' is not a square
                (...)"`` or ``"pass is allowed only when no disc can be
                placed"``.
        """
        index = self._setup.geo.index.get(move)
        if index is None:
            text = "".join(move.split()).lower()
            if text == _PASS:
                return self._pass(move)
            index = self._square_index(move)
        return self._place(index, move)

    def _square_index(self, move: str) -> int:
        """Return the bit index of the square written ``move`` (forgiving).

        Raises:
            IllegalMove: if the text is not a square or is off the board.
        """
        text = "".join(move.split()).lower()
        index = self._setup.geo.index.get(text)
        if index is not None:
            return index
        match = _SQUARE.fullmatch(text)
        if match is None:
            raise IllegalMove(move, f"{move.strip()!r} is not a square ({_NOTATION_HELP})")
        size, col, digits = self.size, ord(match[1]) - ord("a"), match[2].lstrip("0") or "0"
        row = int(digits) - 1 if len(digits) <= 3 else size
        if col < size and 0 <= row < size:
            return row * size + col
        raise IllegalMove(move, f"{match[1]}{digits} is off the {size}x{size} board")

    def _place(self, index: int, move: str) -> "OthelloState":
        """Place a disc of the side to move on bit ``index``.

        Raises:
            IllegalMove: if the side to move cannot place there.
        """
        if not self._placing() >> index & 1:
            raise IllegalMove(move, self._why_not(index))
        return self._placed(index)

    def _placed(self, index: int) -> "OthelloState":
        """Return the position after the side to move places on bit ``index``, a square it can place on."""
        square = 1 << index
        geo = self._setup.geo
        if self._side == BLACK:
            flips = _flips(index, self.black, self.white, geo)
            black, white = self.black | square | flips, self.white ^ flips
        else:
            flips = _flips(index, self.white, self.black, geo)
            black, white = self.black ^ flips, self.white | square | flips
        return _position(self._setup, black, white, 1 - self._side, self.ply + 1, square)

    def _why_not(self, index: int) -> str:
        """Return why the side to move cannot place on bit ``index``."""
        name = self._setup.geo.names[index]
        if (self.black | self.white) >> index & 1:
            return f"{name} is occupied"
        if not self._placing():
            return f"{name} flips nothing; {self.game.seats[self._side]} must pass"
        return f"{name} flips nothing"

    def _pass(self, move: str) -> "OthelloState":
        """Play a forced pass: only when no disc can be placed."""
        if self._placing():
            raise IllegalMove(move, "pass is allowed only when no disc can be placed")
        return _position(self._setup, self.black, self.white, 1 - self._side, self.ply + 1, 0)

    # -- views -------------------------------------------------------------

    def view(self, seat: int | None) -> dict[str, Any]:
        """Return what ``seat`` (0, 1) or a spectator (``None``) may see (see :meth:`games.base.State.view`).

        The same map, key for key and in the same order, as the base class
        builds from :meth:`_view`, written out: the server builds a view per
        seat of every position, and this takes one call instead of a dozen.

        Raises:
            ValueError: if ``seat`` is not 0, 1 or ``None``.
        """
        if seat not in (0, 1, None):
            raise ValueError(f"seat must be 0, 1 or None, not {seat!r}")
        moves = self._moves
        if moves is None:
            moves = self._placing()
        outcome = None if moves else self.outcome
        to_move = self._side if outcome is None else None
        last = self._last
        geo = self._setup.geo
        if _C is not None and geo.row_texts is not None and self.__class__ is _ShownState:
            rows = self._rows  # _ShownState._board(), written out: the server shows every played position once at least
            if rows is None:
                rows = self._rows = _C.rows(self.black, self.white, geo.row_texts)
        else:
            rows = self._board()
        view = {
            "size": geo.size,
            "board": list(rows),
            "discs": [self.black.bit_count(), self.white.bit_count()],
            "must_pass": outcome is None and not moves,
            "last_move": None if last is None else geo.names[last.bit_length() - 1] if last else _PASS,
            "game": Othello.name,
            "ply": self.ply,
            "to_move": to_move,
            "outcome": None if outcome is None else outcome.to_dict(),
        }
        if seat is not None and seat == to_move:
            view["legal_moves"] = self.legal_moves()
        return view

    def _view(self, seat: int | None) -> dict[str, Any]:
        """Return the Othello part of the view; the same for every seat.

        Keys: ``size`` (int), ``board`` (list of ``size`` strings of
        ``X``/``O``/``.``, top row first), ``discs`` (``[black, white]``),
        ``must_pass`` (bool: the side to move cannot place a disc) and
        ``last_move`` (str or ``None``).
        """
        return {
            "size": self.size,
            "board": self.rows(),
            "discs": list(self.disc_counts()),
            "must_pass": self.must_pass,
            "last_move": self.last_move,
        }

    def __repr__(self) -> str:
        return f"<OthelloState size={self.size} ply={self.ply} to_move={self.to_move} last_move={self.last_move!r}>"


class _ShownState(OthelloState):
    """A position :meth:`OthelloState.play` (or the start, or a diagram) made: it keeps what it works out.

    Its ``last_move`` is a plain attribute, set as it is made (the square's
    name is one lookup; a property read costs a Python call). Besides the
    moves, the outcome of a position where the side to move cannot place (``_ended``, ``_UNKNOWN`` until needed), the legal moves'
    names (``_legal``) and the board's rows (``_rows``) are built on first
    need and kept: a server reads and shows every played position several
    times.
    """

    __slots__ = ("_ended", "_legal", "_rows", "last_move")

    _ended: Outcome | None | object
    _legal: tuple[str, ...] | None
    _rows: tuple[str, ...] | None
    last_move: str | None  # a plain attribute here, named as the position is made: a server reads it of every move

    def _blocked_outcome(self) -> Outcome | None:
        """:meth:`OthelloState._blocked_outcome`, worked out once and kept."""
        ended = self._ended
        if ended is _UNKNOWN:
            ended = self._ended = _outcome_if_blocked(self.black, self.white, self._side, self._setup.geo)
        return ended  # type: ignore[return-value]

    def _board(self) -> tuple[str, ...]:
        """Return the board's rows, built once and kept."""
        rows = self._rows
        if rows is None:
            texts = self._setup.geo.row_texts
            if _C is not None and texts is not None:  # the accelerator, without _board_rows()'s call: every move's view
                rows = self._rows = _C.rows(self.black, self.white, texts)
            else:
                rows = self._rows = _board_rows(self.black, self.white, self._setup.geo)
        return rows

    def legal_moves(self) -> list[str]:
        """Return the legal moves (see :meth:`OthelloState.legal_moves`); their names are built once and kept."""
        legal = self._legal
        if legal is None:  # OthelloState._legal_names(), written out: a server asks this of every played position
            moves = self._moves
            if moves is None:
                moves = self._placing()
            if moves:
                geo = self._setup.geo
                if _C is not None and geo.size <= 8:  # the accelerator, without _squares()'s call
                    legal = _C.squares(moves, geo.names)
                else:
                    legal = _squares(moves, geo)
            else:
                legal = () if self.outcome is not None else (_PASS,)
            self._legal = legal
        return list(legal)


def _squares(bitboard: int, geo: _Geometry) -> tuple[str, ...]:
    """Return the names of the squares set in ``bitboard``, in board order (see :attr:`_Geometry.byte_names`)."""
    byte_names = geo.byte_names
    if len(byte_names) == 8:  # 8x8, written out: half the instructions of the loop (a server names every position's moves)
        b = bitboard.to_bytes(8, "little")
        n0, n1, n2, n3, n4, n5, n6, n7 = byte_names
        return (*n0[b[0]], *n1[b[1]], *n2[b[2]], *n3[b[3]], *n4[b[4]], *n5[b[5]], *n6[b[6]], *n7[b[7]])
    squares: list[str] = []
    for names, byte in zip(byte_names, bitboard.to_bytes(len(byte_names), "little")):
        squares += names[byte]
    return tuple(squares)


def _check_view_rows(board: list[Any], size: int) -> None:
    """Check that a view's board is ``size`` rows of ``size`` ``X``/``O``/``.`` each.

    Raises:
        GameError: naming the first row that is not.
    """
    for row, text in enumerate(board):
        if not isinstance(text, str) or len(text) != size or not set(text) <= {"X", "O", _EMPTY}:
            raise GameError(f"row {row + 1} of an othello view's board must be {size} of X, O and .")
    if not any("X" in text or "O" in text for text in board):
        raise GameError("an othello view's board has no disc")


def _diagram_rows(diagram: str) -> list[str]:
    """Return the square rows of a diagram: spaces, header and row numbers removed.

    Raises:
        ValueError: if a row holds a character other than ``X``, ``O`` or ``.``.
    """
    rows = []
    for line in diagram.splitlines():
        text = "".join(line.split()).upper()
        if not text or text == _COLUMNS[: len(text)].upper():
            continue
        text = text.lstrip("0123456789")
        bad = set(text) - {"X", "O", _EMPTY}
        if bad:
            raise ValueError(f"diagram line {line.strip()!r} has {sorted(bad)[0]!r}; use X, O or .")
        rows.append(text)
    return rows


# ---------------------------------------------------------------------------
# The optional C accelerator
# ---------------------------------------------------------------------------

try:
    from . import _othello_accel  # built from _othello_accel.c at install time, where a C compiler was there
except ImportError:  # pragma: no cover - only without a compiler; tests run the pure path with use_accelerator(False)
    _othello_accel = None


def _accelerated_placing_moves(own: int, opp: int, geo: _Geometry) -> int:
    """:func:`_placing_moves` in C for boards up to 8x8."""
    size = geo.size
    if size <= 8:
        return _othello_accel.moves(own, opp, size)  # type: ignore[union-attr]
    return _fill_moves(own, opp, geo.steps, geo.full)


def _accelerated_flips(index: int, own: int, opp: int, geo: _Geometry) -> int:
    """:func:`_flips` in C for boards up to 8x8."""
    size = geo.size
    if size <= 8:
        return _othello_accel.flips(index, own, opp, size)  # type: ignore[union-attr]
    return _PURE_FLIPS(index, own, opp, geo)


def _accelerated_board_rows(black: int, white: int, geo: _Geometry) -> tuple[str, ...]:
    """:func:`_board_rows` in C on 8x8 (the same row texts, looked up)."""
    texts = geo.row_texts
    if texts is not None:
        return _othello_accel.rows(black, white, texts)  # type: ignore[union-attr]
    return _whole_board_rows(black, white, geo)


def _accelerated_squares(bitboard: int, geo: _Geometry) -> tuple[str, ...]:
    """:func:`_squares` in C for boards up to 8x8 (the same name strings)."""
    if geo.size <= 8:
        return _othello_accel.squares(bitboard, geo.names)  # type: ignore[union-attr]
    return _PURE_SQUARES(bitboard, geo)


_PURE_FLIPS, _PURE_SQUARES = _flips, _squares
_C: Any = None
"""The accelerator module while it is in use, else ``None``: the hottest methods call it without a wrapper."""
_PRIMITIVES = {
    False: (_placing_moves, _flips, _board_rows, _squares),
    True: (_accelerated_placing_moves, _accelerated_flips, _accelerated_board_rows, _accelerated_squares),
}


def use_accelerator(enabled: bool = True) -> bool:
    """Choose the engine's primitives: the C accelerator (when it was built) or pure Python.

    Both give the same moves, flips, boards and names (``tests/games/test_othello_accel.py``
    checks it); the accelerator serves boards up to 8x8 and costs a fraction of
    the instructions. It is chosen at import when it was built; a position
    made before a switch keeps what it already worked out. The computer
    players' search never uses it (:func:`placement_generator`).

    Returns:
        Whether the accelerator is now in use (``False`` where it was not built).
    """
    global _placing_moves, _flips, _board_rows, _squares, _C
    accelerated = bool(enabled) and _othello_accel is not None
    _placing_moves, _flips, _board_rows, _squares = _PRIMITIVES[accelerated]
    _C = _othello_accel if accelerated else None
    return accelerated


def accelerated() -> bool:
    """Whether the engine runs its C accelerator now (see :func:`use_accelerator`)."""
    return _placing_moves is _accelerated_placing_moves


use_accelerator(True)
