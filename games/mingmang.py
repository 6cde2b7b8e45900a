"""Ming Mang, the Tibetan custodian-capture game.

Source: ``RULES.md``, "Ming Mang", and the seed ``000_1562508aff83c89d.txt``,
part 3 (rules in 3.1, display in 3.2, the superko bonus in 3.3).

>>> state = MingMang().new_state()
>>> state.to_move, len(state.legal_moves())
(0, 72)
>>> state = state.play("A4 F4")
>>> state.last_move, state.to_move
('a4-f4', 1)

Board ``size`` x ``size`` (4..16, default 8). Seat 0 is White (``x``, moves
first), seat 1 is Black (``o``). White fills the first column and the last
row except the bottom-right corner; Black fills the first row except the
top-left corner and the last column. Squares are named by a column letter
from the left and a row number from the TOP, so ``a1`` is the top-left
square. A move slides one pawn any distance along its row or column through
empty squares onto an empty square; notation ``a4-f4`` (``"A4 F4"`` and
``"a4f4"`` are accepted on input).

After a move, in each of the four orthogonal directions from the moved pawn,
an unbroken run of one or more enemy pawns closed by a friendly pawn is
captured and changes colour. A player with no pawns or no legal move on
their turn loses. Option ``superko`` forbids a move whose resulting board
occurred earlier in the game (the starting board included); option
``max_plies`` draws the game once ``ply`` reaches it, unless the player to
move has already lost.

Points settled here because RULES.md and the seed are silent (following the
usual published rules of Ming Mang and of custodian capture):

- Pawns that change colour in a capture do not capture in turn: only the
  moved pawn closes a sandwich, so there are no chain reactions.
- A run of enemy pawns that reaches the edge of the board is not captured;
  it must be closed by a friendly pawn.
- Superko compares boards only (not whose turn it is): a board seen earlier
  with either player to move counts as a repetition.
- The game records no score; :attr:`Outcome.score` is ``None`` (the pawn
  counts are in the view).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Mapping

from .base import MAX_PLIES, Game, GameError, IllegalMove, InvalidOption, Option, Outcome, State

__all__ = ["MingMang", "MingMangState", "captures"]

_EMPTY, _WHITE, _BLACK, _EDGE = 0, 1, 2, 3
"""Cell codes in the board bytes: a seat's pawn is ``seat + 1``."""

_SYMBOLS = ".xo"
"""Display symbol of each cell code (the seed's 3.2: ``.``, ``x``, ``o``)."""

_CELL_SYMBOLS = bytes.maketrans(bytes([_EMPTY, _WHITE, _BLACK, _EDGE]), (_SYMBOLS + "#").encode("ascii"))
"""Turns a board's cell codes into their display symbols in one ``bytes.translate`` (``#`` for the border)."""

_DIAGRAM_CELLS = {".": _EMPTY, "-": _EMPTY, "x": _WHITE, "○": _WHITE, "o": _BLACK, "●": _BLACK}
"""Characters read by :meth:`MingMang.from_diagram` (the seed prints White ``○``/``x``)."""

_HISTORY_CHUNK = 32
"""Superko history: boards newer than the last snapshot kept in a short tuple."""

_MOVE_RE = re.compile(
    r"\s*([a-z])\s*(\d{1,2})\s*(?:-|–|—|x|:|to|\s)?\s*([a-z])\s*(\d{1,2})\s*", re.IGNORECASE | re.ASCII
)
"""Accepted move text: two squares, optionally joined by ``-`` (or a space, ``to``...)."""

_SUPERKO_REASON = "superko: this move repeats an earlier position"
"""The refusal of a move under the ``superko`` option (RULES.md; seed 3.3)."""


class _Geometry:
    """Precomputed tables for one board size.

    The board is a ``bytes`` of ``width * width`` cells, ``width = size + 2``:
    a one-cell border of ``_EDGE`` around the playing area, so a slide or a
    capture run stops at the edge without bounds checks. The square in column
    ``c`` (0-based from the left) and row ``r`` (1-based from the top) has
    index ``r * width + c + 1``.

    Attributes:
        size: squares per side.
        width: cells per padded row (``size + 2``).
        dirs: index steps up, left, right, down.
        squares: the indices of the playing squares, row by row from the top.
        names: square name per index (``""`` for border cells).
        row_starts: the index of each row's first square, top row first.
        rays: per index, the slides from that square: for each direction (up,
            left, right, down) with room, a tuple of ``(index, "from-to")``
            pairs, nearest first. Built once per size, so move generation
            neither computes indices nor formats text.
        mark: ``mark[code][i] == code << (2 * i)``, the contribution of cell ``i``
            holding ``code`` to the board's integer key (see :meth:`key`), an
            exact encoding of the board with two bits per cell.
    """

    __slots__ = ("size", "width", "dirs", "names", "mark", "squares", "rays", "row_starts")

    def __init__(self, size: int) -> None:
        self.size = size
        self.width = width = size + 2
        self.dirs = (-width, -1, 1, width)
        self.squares = tuple(r * width + c + 1 for r in range(1, size + 1) for c in range(size))
        self.row_starts = tuple(r * width + 1 for r in range(1, size + 1))
        names = [""] * (width * width)
        for r in range(1, size + 1):
            for c in range(size):
                names[r * width + c + 1] = f"{chr(ord('a') + c)}{r}"
        self.names = tuple(names)
        self.mark = tuple(tuple(code << (2 * i) for i in range(width * width)) for code in range(4))
        self.rays = tuple(self._rays(i) for i in range(width * width))

    def _rays(self, start: int) -> tuple[tuple[tuple[int, str], ...], ...]:
        """Return the non-empty rays from ``start``: per direction, ``(square, "from-to")`` nearest first."""
        if not self.names[start]:
            return ()
        rays = []
        for d in self.dirs:
            ray = []
            j = start + d
            while self.names[j]:
                ray.append((j, f"{self.names[start]}-{self.names[j]}"))
                j += d
            if ray:
                rays.append(tuple(ray))
        return tuple(rays)

    def index(self, column: str, row: int) -> int | None:
        """Return the index of the square ``column``/``row``, or ``None`` if off the board."""
        c = ord(column.lower()) - ord("a")
        if not (0 <= c < self.size and 1 <= row <= self.size):
            return None
        return row * self.width + c + 1

    def key(self, board: bytes) -> int:
        """Return the integer key of ``board``: cell ``i``'s code at bits ``2i, 2i+1``.

        Equal boards have equal keys and different boards different keys; a
        move updates the key by XOR with :attr:`mark` entries.
        """
        mark = self.mark
        return sum(mark[code][i] for i, code in enumerate(board))

    def empty_board(self) -> bytearray:
        """Return a board with the border set and every square empty."""
        board = bytearray([_EDGE]) * (self.width * self.width)
        for i in self.squares:
            board[i] = _EMPTY
        return board

    def start_board(self) -> bytes:
        """Return the starting board (RULES.md "Ming Mang", "Start")."""
        board = self.empty_board()
        n, w = self.size, self.width
        for r in range(1, n + 1):
            board[r * w + 1] = _WHITE  # first column, a1..a(n)
            board[r * w + n] = _BLACK  # last column, h1..h(n)
        for c in range(1, n):
            board[n * w + c] = _WHITE  # last row except the bottom-right corner
            board[1 * w + c + 1] = _BLACK  # first row except the top-left corner
        return bytes(board)


@lru_cache(maxsize=None)
def _geometry(size: int) -> _Geometry:
    """Return the (shared, immutable) tables for ``size``."""
    return _Geometry(size)


def captures(board: bytes | bytearray, to: int, me: int, dirs: tuple[int, ...]) -> list[int]:
    """Return the indices captured by a pawn of colour ``me`` (1 White, 2 Black) arriving on ``to``.

    ``board`` is a padded board (``0`` empty, ``1`` White, ``2`` Black, ``3``
    border); ``dirs`` its index steps (``_Geometry.dirs``). It may be the board before the move: looking back towards the
    origin, the first cell is the origin itself (still holding ``me``) or an
    empty square, so no run starts that way and the stale origin never
    closes one. Converted pawns do not capture in turn.
    Source: RULES.md "Ming Mang", "Capture (custodian)".
    """
    foe = me ^ 3
    caught: list[int] = []
    for d in dirs:
        j = to + d
        if board[j] != foe:
            continue
        while board[j] == foe:
            j += d
        if board[j] == me:
            caught.extend(range(to + d, j, d))
    return caught


class MingMang(Game):
    """The game of Ming Mang (RULES.md "Ming Mang"; seed 000, part 3)."""

    name = "mingmang"
    title = "Ming Mang"
    seats = ("White", "Black")
    public_views = True
    options = (
        Option("size", "int", 8, "squares per side of the board", minimum=4, maximum=16),
        Option("superko", "bool", False, "a move may not repeat an earlier board"),
        MAX_PLIES,
    )

    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "MingMangState":
        geo = _geometry(options["size"])
        return MingMangState._start(self, options, geo, geo.start_board(), 0)

    def state_from_view(self, view: Mapping[str, Any]) -> "MingMangState":
        """Rebuild the position a view shows (every view shows all of it).

        With ``superko`` the game is replayed from the view's ``history``
        (starting board, first seat, moves), so the rebuilt state remembers
        every earlier board and forbids the same moves; the replay must
        arrive at the view's board and ply. Without it, the board, seat to
        move, ply, last move and captured squares are taken as shown.

        Raises:
            GameError: if ``view`` is not a Ming Mang view (wrong game, a key
                missing, a bad option or board, a history that does not lead
                to the board, or a move in it that is illegal).
        """
        self._require_own_view(view)
        try:
            given = {name: view[name] for name in ("size", "superko", "max_plies")}
            rows, ply, history = view["board"], view["ply"], view["history"]
        except KeyError as missing:
            raise GameError(f"a mingmang view needs {missing}") from None
        if type(ply) is not int or ply < 0:
            raise GameError(f"a mingmang view has a ply >= 0, not {ply!r}")
        options = self.resolve_options(given)
        if not isinstance(rows, list) or not all(isinstance(row, str) for row in rows):
            raise GameError("a mingmang view's board is a list of rows of text")
        if options["superko"]:
            state = self._replay(history, options)
            if state.ply != ply or state.diagram().split("\n") != rows:
                raise GameError("the view's history does not lead to its board")
            return state
        return self._shown(view, options, rows, ply)

    def _replay(self, history: Any, options: dict[str, Any]) -> "MingMangState":
        """Play a view's ``history`` from its starting board (superko games)."""
        try:
            start, first, moves = history["board"], history["to_move"], history["moves"]
            state = self.from_diagram("\n".join(start), first, options)
        except (TypeError, KeyError):
            raise GameError("a superko view's history is {board, to_move, moves}") from None
        for move in moves:
            state = state.play(move)
        return state

    def _shown(self, view: Mapping[str, Any], options: dict[str, Any], rows: list[str], ply: int
               ) -> "MingMangState":
        """Build the state a view without superko shows (the seat to move of a drawn game is found by trying)."""
        geo = _geometry(options["size"])
        cells = _read_diagram("\n".join(rows))
        if len(cells) != geo.size:
            raise GameError(f"a mingmang view of size {geo.size} has {geo.size} rows, not {len(cells)}")
        board = geo.empty_board()
        for i, code in zip(geo.squares, (code for row in cells for code in row)):
            board[i] = code
        board = bytes(board)
        index = {name: i for i, name in enumerate(geo.names) if name}
        try:
            captured = tuple(sorted(index[name] for name in view.get("captured") or ()))
        except (KeyError, TypeError):
            raise GameError("a mingmang view's captured squares must be squares of the board") from None
        to_move, outcome = view.get("to_move"), view.get("outcome")
        if to_move in (0, 1):
            sides = (to_move,)
        elif isinstance(outcome, dict) and outcome.get("winner") in (0, 1):
            sides = (1 - outcome["winner"],)
        else:
            sides = (ply % 2, 1 - ply % 2)
        for side in sides:
            state = MingMangState(self, options, geo, board, geo.key(board), side, ply, view.get("last_move"),
                                  captured, frozenset(), (), (board, side), None)
            if state.to_move == to_move and (state.outcome.to_dict() if state.outcome else None) == outcome:
                return state
        raise GameError("a mingmang view's to_move and outcome do not fit its board")

    def from_diagram(
        self, diagram: str, to_move: int = 0, options: Mapping[str, Any] | None = None
    ) -> "MingMangState":
        """Return a position built from a text diagram, with ``to_move`` to play.

        Meant for tests, puzzles and analysis. The position is a fresh game:
        ``ply`` 0, no last move, and for ``superko`` the diagram's board is the
        only one seen so far. If ``to_move`` has no legal move there, the game is
        over at once.

        Args:
            diagram: one line per row, top row first, one character per square:
                ``x`` (or ``○``) a White pawn, ``o`` (or ``●``) a Black pawn,
                ``.`` (or ``-``) empty; case and whitespace inside a line are
                ignored, blank lines skipped. The rows must form a square of
                side 4..16, e.g. ``"x.o.\\n....\\n....\\n.o.x"``.
            to_move: the seat to play, 0 (White) or 1 (Black).
            options: other options (``superko``, ``max_plies``); a ``size``, if
                given, must match the diagram.

        Raises:
            InvalidOption: if the diagram is not a square of known characters of
                an allowed size, ``to_move`` is not 0 or 1, or an option is bad.

        >>> state = MingMang().from_diagram("x...\\no...\\n..x.\\n....", 0)
        >>> after = state.play("c3-a3")
        >>> after.view(None)["captured"], after.outcome.reason
        (['a2'], 'Black has no pawns left; White wins')
        """
        rows = _read_diagram(diagram)
        given = dict(options or {})
        if given.get("size") is not None and given["size"] != len(rows):
            raise InvalidOption("size", f"option 'size' is {given['size']!r} but the diagram has {len(rows)} rows")
        given["size"] = len(rows)
        resolved = self.resolve_options(given)
        if type(to_move) is not int or to_move not in (0, 1):
            raise InvalidOption("to_move", f"to_move must be 0 (White) or 1 (Black), not {to_move!r}")
        geo = _geometry(resolved["size"])
        board = geo.empty_board()
        for i, code in zip(geo.squares, (code for row in rows for code in row)):
            board[i] = code
        return MingMangState._start(self, resolved, geo, bytes(board), to_move)


def _read_diagram(diagram: str) -> list[list[int]]:
    """Read the rows of a diagram into cell codes (see :meth:`MingMang.from_diagram`)."""
    rows: list[list[int]] = []
    for line in diagram.splitlines():
        cells = "".join(line.split()).lower()
        if not cells:
            continue
        bad = sorted(set(cells) - set(_DIAGRAM_CELLS))
        if bad:
            raise InvalidOption("diagram", f"the diagram has unknown characters {''.join(bad)!r}; use x, o and .")
        rows.append([_DIAGRAM_CELLS[ch] for ch in cells])
    size = len(rows)
    if not 4 <= size <= 16:
        raise InvalidOption("diagram", f"the diagram must have 4 to 16 rows, not {size}")
    for number, row in enumerate(rows, 1):
        if len(row) != size:
            raise InvalidOption("diagram", f"row {number} of the diagram has {len(row)} squares, not {size}")
    return rows


def _rows(board: bytes, geo: _Geometry) -> tuple[str, ...]:
    """Return a board's rows as text, top first: one ``bytes.translate``, then a slice per row."""
    text = board.translate(_CELL_SYMBOLS).decode("ascii")
    n = geo.size
    return tuple([text[start:start + n] for start in geo.row_starts])


class MingMangState(State):
    """An immutable Ming Mang position.

    Build one with :meth:`MingMang.new_state` or :meth:`MingMang.from_diagram`
    and move on with :meth:`play`. See the module docstring for the rules and
    notation; :meth:`view` for what clients receive.
    """

    __slots__ = (
        "game",
        "options",
        "ply",
        "to_move",
        "outcome",
        "last_move",
        "_geo",
        "_board",
        "_key",
        "_side",
        "_captured",
        "_snap",
        "_recent",
        "_moves",
        "_rows",
        "_origin",
        "_trail",
    )

    def __init__(
        self,
        game: MingMang,
        options: Mapping[str, Any],
        geo: _Geometry,
        board: bytes,
        key: int,
        side: int,
        ply: int,
        last_move: str | None,
        captured: tuple[int, ...],
        snap: frozenset[int],
        recent: tuple[int, ...],
        origin: tuple[bytes, int],
        trail: tuple | None,
    ) -> None:
        """Set every field; private (use the game's constructors or :meth:`play`).

        ``side`` is the seat whose turn it is on the board (kept when the game
        ends, unlike ``to_move``); ``snap`` and ``recent`` together hold the keys
        of every board seen so far, this one included (empty without superko).
        ``origin`` is the game's starting board and seat to move; ``trail``
        the moves since, newest first as nested pairs ``(earlier, move)``
        (kept only with superko, for the view's ``history``).
        """
        self.game = game
        self.options = options
        self._geo = geo
        self._board = board
        self._key = key
        self._side = side
        self.ply = ply
        self.last_move = last_move
        self._captured = captured
        self._snap = snap
        self._recent = recent
        self._origin = origin
        self._trail = trail
        self._moves: list[str] | None = None
        self._rows: tuple[str, ...] | None = None
        self.outcome = self._judge()
        self.to_move = side if self.outcome is None else None

    @classmethod
    def _start(
        cls, game: MingMang, options: Mapping[str, Any], geo: _Geometry, board: bytes, side: int
    ) -> "MingMangState":
        """Return a starting position on ``board`` with ``side`` to move."""
        key = geo.key(board)
        recent = (key,) if options["superko"] else ()
        return cls(game, options, geo, board, key, side, 0, None, (), frozenset(), recent, (board, side), None)

    # -- rules -----------------------------------------------------------

    def _seen(self, key: int) -> bool:
        """Whether the board with integer key ``key`` occurred so far (superko)."""
        return key in self._recent or key in self._snap

    def _key_after(self, start: int, to: int, caught: list[int]) -> int:
        """Return the board key after the pawn on ``start`` slides to ``to`` capturing ``caught``."""
        mark = self._geo.mark
        me = self._side + 1
        key = self._key ^ mark[me][start] ^ mark[me][to]
        flip = mark[3]
        for c in caught:
            key ^= flip[c]
        return key

    def _legal(self, superko: bool, first_only: bool = False) -> list[str]:
        """Return the mover's slides in canonical text, minus superko repeats if ``superko``.

        With ``first_only``, stop at the first one found (to test for any move).
        Order: see :meth:`legal_moves`.
        """
        if superko:
            return self._legal_superko(first_only)
        board, rays = self._board, self._geo.rays
        me = self._side + 1
        moves: list[str] = []
        append = moves.append
        i = board.find(me)
        while i >= 0:
            for ray in rays[i]:
                for j, text in ray:
                    if board[j]:
                        break
                    if first_only:
                        return [text]
                    append(text)
            i = board.find(me, i + 1)
        return moves

    def _legal_superko(self, first_only: bool) -> list[str]:
        """:meth:`_legal` under superko: each slide's resulting key is checked against the history.

        The key after a slide is computed without building the board: XOR out
        the origin, XOR in the destination, flip each captured cell (the capture
        scan of :func:`captures`, inlined for speed).
        """
        board, geo = self._board, self._geo
        rays, dirs, flip = geo.rays, geo.dirs, geo.mark[3]
        me = self._side + 1
        foe, mark_me = me ^ 3, geo.mark[me]
        recent, snap = set(self._recent), self._snap
        moves: list[str] = []
        i = board.find(me)
        while i >= 0:
            lifted = self._key ^ mark_me[i]
            for ray in rays[i]:
                for j, text in ray:
                    if board[j]:
                        break
                    key = lifted ^ mark_me[j]
                    for d in dirs:
                        c = j + d
                        if board[c] == foe:
                            while board[c] == foe:
                                c += d
                            if board[c] == me:
                                for x in range(j + d, c, d):
                                    key ^= flip[x]
                    if key in recent or key in snap:
                        continue
                    if first_only:
                        return [text]
                    moves.append(text)
            i = board.find(me, i + 1)
        return moves

    def _judge(self) -> Outcome | None:
        """Return the outcome if the game is over here (RULES.md order), else ``None``.

        Losing by the rules (no pawns, no legal move) comes before the
        ``max_plies`` draw.
        """
        side = self._side
        if not self._legal(self.options["superko"], first_only=True):
            mover, winner = self.game.seats[side], self.game.seats[1 - side]
            if self._board.find(side + 1) < 0:
                reason = f"{mover} has no pawns left; {winner} wins"
            elif self.options["superko"] and self._legal(False, first_only=True):
                reason = (
                    f"{mover} has no legal move (every move would repeat an earlier position: superko);"
                    f" {winner} wins"
                )
            else:
                reason = f"{mover} has no legal move; {winner} wins"
            return Outcome(1 - side, reason)
        limit = self.options["max_plies"]
        if limit is not None and self.ply >= limit:
            return Outcome(None, f"drawn: the limit of {limit} plies (max_plies) was reached")
        return None

    # -- the State contract -----------------------------------------------

    def legal_moves(self) -> list[str]:
        """Return every legal move as canonical ``a4-f4`` text.

        Ordered by the moved pawn's square (row by row from the top), then up,
        left, right, down, nearest first. Empty once the game is over.
        """
        if self.outcome is not None:
            return []
        if self._moves is None:
            self._moves = self._legal(self.options["superko"])
        return list(self._moves)

    def _play(self, move: str) -> "MingMangState":
        """Return the position after ``move``.

        Raises:
            IllegalMove: the text is not two squares, a square is off the board,
                the pawn is not the mover's, the move is not along a row or
                column, the destination is occupied, the path is blocked, or
                (with ``superko``) the resulting board occurred before.
        """
        start, to = self._parse(move)
        names, board, me = self._geo.names, self._board, self._side + 1
        text = f"{names[start]}-{names[to]}"
        self._check_slide(move, text, start, to)
        caught = captures(board, to, me, self._geo.dirs)
        key = self._key_after(start, to, caught)
        snap, recent, trail = self._snap, self._recent, None
        if self.options["superko"]:
            if self._seen(key):
                raise IllegalMove(move, _SUPERKO_REASON)
            recent += (key,)
            if len(recent) > _HISTORY_CHUNK:
                snap, recent = snap.union(recent), ()
            trail = (self._trail, text)
        after = bytearray(board)
        after[start] = _EMPTY
        after[to] = me
        for c in caught:
            after[c] = me
        return MingMangState(
            self.game, self.options, self._geo, bytes(after), key, 1 - self._side,
            self.ply + 1, text, tuple(sorted(caught)), snap, recent, self._origin, trail,
        )  # fmt: skip

    def _parse(self, move: str) -> tuple[int, int]:
        """Return the ``(from, to)`` indices named by ``move``.

        Raises:
            IllegalMove: if the text is not two squares or one is off the board.
        """
        found = _MOVE_RE.fullmatch(move)
        if found is None:
            raise IllegalMove(move, "a move is two squares, the pawn's and its destination, like a4-f4")
        fc, fr, tc, tr = found.groups()
        geo = self._geo
        squares = []
        for column, row in ((fc, fr), (tc, tr)):
            index = geo.index(column, int(row))
            if index is None:
                last = chr(ord("a") + geo.size - 1)
                raise IllegalMove(
                    move, f"{column.lower()}{int(row)} is off the board (columns a-{last}, rows 1-{geo.size})"
                )
            squares.append(index)
        return squares[0], squares[1]

    def _check_slide(self, move: str, text: str, start: int, to: int) -> None:
        """Refuse a move that is not a slide of the mover's pawn through empty squares.

        Raises:
            IllegalMove: naming the first rule broken.
        """
        names, board, w = self._geo.names, self._board, self._geo.width
        if board[start] != self._side + 1:
            what = "it is empty" if board[start] == _EMPTY else f"it is {self.game.seats[1 - self._side]}'s"
            raise IllegalMove(move, f"{names[start]} is not your pawn ({what})")
        if start == to:
            raise IllegalMove(move, f"{text} does not move the pawn")
        if start // w != to // w and start % w != to % w:
            raise IllegalMove(move, f"{text} is not a straight line (a pawn moves along its row or column)")
        if board[to] != _EMPTY:
            raise IllegalMove(move, f"{names[to]} is occupied")
        step = (1 if to > start else -1) * (1 if start // w == to // w else w)
        for j in range(start + step, to, step):
            if board[j] != _EMPTY:
                raise IllegalMove(move, f"the path from {names[start]} to {names[to]} is blocked at {names[j]}")

    def _view(self, seat: int | None) -> dict[str, Any]:
        """Return the position for any seat (nothing is hidden in Ming Mang).

        Keys:
            size: squares per side.
            board: ``size`` strings, top row first, one character per square:
                ``x`` White, ``o`` Black, ``.`` empty.
            counts: ``[white pawns, black pawns]``.
            last_move: canonical notation of the last move, or ``None``.
            captured: squares captured by the last move, e.g. ``["d4", "e4"]``.
            superko: whether the superko rule is on.
            max_plies: the ply limit, or ``None``.
            history: ``None`` without superko; with it, what the rule
                remembers, so that a computer player can rebuild the game
                (``MingMang.state_from_view``): ``{"board": the starting
                board's rows, "to_move": the seat that moved first,
                "moves": every move since, in order}``.
        """
        names, board = self._geo.names, self._board
        return {
            "size": self._geo.size,
            "board": list(self._board_rows()),
            "counts": [board.count(_WHITE), board.count(_BLACK)],
            "last_move": self.last_move,
            "captured": [names[c] for c in self._captured],
            "superko": self.options["superko"],
            "max_plies": self.options["max_plies"],
            "history": self._history() if self.options["superko"] else None,
        }

    def key(self) -> tuple[int, int]:
        """Return ``(board key, seat to move on the board)``: equal keys, equal boards and turns.

        The superko history is not part of it. Searches key their
        transposition tables by it.
        """
        return self._key, self._side

    def counts(self) -> tuple[int, int]:
        """Return ``(White's pawns, Black's pawns)``."""
        board = self._board
        return board.count(_WHITE), board.count(_BLACK)

    def mobility(self, seat: int) -> int:
        """Return how many slides ``seat``'s pawns have on this board (superko aside), whoever is to move."""
        board, rays = self._board, self._geo.rays
        me, count = seat + 1, 0
        i = board.find(me)
        while i >= 0:
            for ray in rays[i]:
                for j, _ in ray:
                    if board[j]:
                        break
                    count += 1
            i = board.find(me, i + 1)
        return count

    def _history(self) -> dict[str, Any]:
        """Return the view's ``history``: the starting board and seat, and the moves since."""
        moves: list[str] = []
        trail = self._trail
        while trail is not None:
            trail, move = trail
            moves.append(move)
        moves.reverse()
        start, side = self._origin
        return {"board": list(_rows(start, self._geo)), "to_move": side, "moves": moves}

    # -- helpers for people and tests ----------------------------------------

    def diagram(self) -> str:
        """Return the board as text, rows top first: ``x`` White, ``o`` Black, ``.`` empty.

        The result reads back with :meth:`MingMang.from_diagram`.
        """
        return "\n".join(self._board_rows())

    def _board_rows(self) -> tuple[str, ...]:
        """Return (and keep) the board's rows as text, top first: ``x`` White, ``o`` Black, ``.`` empty.

        One ``bytes.translate`` of the padded board, then a slice per row;
        worked out once per position (every seat's view shows the same board).
        """
        rows = self._rows
        if rows is None:
            rows = self._rows = _rows(self._board, self._geo)
        return rows

    def __repr__(self) -> str:
        turn = f"{self.game.seats[self.to_move]} to move" if self.to_move is not None else "over"
        return f"<MingMangState ply={self.ply} {turn} last_move={self.last_move!r}>"
