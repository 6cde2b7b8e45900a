"""Nine Men's Morris.

Source: ``RULES.md``, section "Nine Men's Morris", and the seed
``seeds/001_8d7197ad4898b0cf.txt`` (its point numbers, adjacency examples and
four-line position file).

The board has 24 points on three nested squares joined at their mid-points,
named in the standard algebraic way (columns ``a``-``g`` from the left, ranks
``1``-``7`` from the BOTTOM)::

    a7 ------- d7 ------- g7        0 -------- 1 -------- 2
    |  b6 ---- d6 ---- f6  |        |  3 ----- 4 ----- 5  |
    |  |  c5 - d5 - e5  |  |        |  |  6 -- 7 -- 8  |  |
    a4-b4-c4        e4-f4-g4        9--10--11     12--13--14
    |  |  c3 - d3 - e3  |  |        |  |  15-16-17  |  |
    |  b2 ---- d2 ---- f2  |        |  18 --- 19 --- 20 |
    a1 ------- d1 ------- g1        21 ------ 22 ------ 23

The right-hand numbers are the seed's (row by row from the top); they are
accepted on input wherever a point name is.

Notation (canonical output, always lower case, no spaces):

- ``d2``: place a counter from the hand on the empty point d2;
- ``d2-d3``: slide the counter on d2 to d3 (or fly it, see ``flying``);
- ``d2xa1`` / ``d2-d3xa1``: the same, forming a mill and removing the
  opponent's counter on a1. The removal is part of the move: a move that
  forms a mill (one or two at once) must name exactly one counter, unless the
  opponent has none on the board; a move that forms none must name none.

``legal_moves()`` lists full moves, a mill move once per counter it may
remove, sorted as text (by source or placed point, destination, removal).

Accepted on input: any case, spaces around the parts, a point given by its
seed number (``22``, ``22-19``, ``22x0``, ``d1-19xa7``), and a space instead
of the dash between the two points of a slide (``d2 d3``, ``22 19``).

Where RULES.md and the seed are silent, these points follow the best-known
published rules (or the seed's reference program):

- The counters in hand are per player: a player places while they hold
  counters, then slides, whatever the other player holds (the seed's turn()).
- Moving a counter out of a mill and back in forms that mill again.
- A move that forms a mill is judged by the lines through the counter that
  was placed or moved, after it arrived (so sliding along a line cannot
  complete that line).
- The loss conditions are checked for the player to move only, when their
  turn starts (the seed's turn(), step 1): fewer than three counters in hand
  and on the board is checked first, then "cannot move". A loaded position
  whose other player already has fewer than three counters is playable; that
  player loses when their turn comes.
- A position file may end with a newline and blank lines; we write one
  final newline.

>>> state = Morris().new_state().play("D2").play("22")
>>> state.last_move, state.to_move, state.hands
('d1', 0, (8, 8))
>>> state.play("b2-19")
Traceback (most recent call last):
...
games.base.IllegalMove: illegal move 'b2-19': Player 1 has 8 counters in hand and must place one, e.g. a1
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from .base import MAX_PLIES, Game, GameError, IllegalMove, InvalidOption, Option, Outcome, State

__all__ = [
    "POINTS",
    "MILLS",
    "NEIGHBOURS",
    "Morris",
    "MorrisState",
    "Position",
    "PositionError",
    "format_position",
    "is_adjacent",
    "parse_point",
    "parse_position",
]

POINTS: tuple[str, ...] = (
    "a7", "d7", "g7",
    "b6", "d6", "f6",
    "c5", "d5", "e5",
    "a4", "b4", "c4", "e4", "f4", "g4",
    "c3", "d3", "e3",
    "b2", "d2", "f2",
    "a1", "d1", "g1",
)  # fmt: skip
"""Point names indexed by the seed's point number (0 = a7 ... 23 = g1)."""

MILLS: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11),
    (12, 13, 14), (15, 16, 17), (18, 19, 20), (21, 22, 23),
    (0, 9, 21), (3, 10, 18), (6, 11, 15), (1, 4, 7),
    (16, 19, 22), (8, 12, 17), (5, 13, 20), (2, 14, 23),
)  # fmt: skip
"""The 16 lines of the board as triples of seed point numbers, in line order."""


def _neighbours() -> tuple[tuple[int, ...], ...]:
    """Adjacent points: consecutive points of a line (the board has no diagonals)."""
    near: list[set[int]] = [set() for _ in POINTS]
    for a, b, c in MILLS:
        near[a].add(b)
        near[b].update((a, c))
        near[c].add(b)
    return tuple(tuple(sorted(points)) for points in near)


NEIGHBOURS: tuple[tuple[int, ...], ...] = _neighbours()
"""``NEIGHBOURS[i]``: the seed numbers of the points adjacent to point ``i``."""

_INDEX: dict[str, int] = {name: i for i, name in enumerate(POINTS)}
_ORDER: tuple[int, ...] = tuple(sorted(range(24), key=POINTS.__getitem__))
"""Point numbers sorted by name (a1, a4, a7, b2, ...): the order of legal_moves()."""
# Sets of points are 24-bit masks whose bit k is the k-th point in name order,
# so walking a mask from its low bit lists its points sorted by name.
_BIT: tuple[int, ...] = tuple(1 << _ORDER.index(p) for p in range(24))
_BYTE_POINTS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(_ORDER[8 * k + i] for i in range(8) if byte >> i & 1) for byte in range(256)) for k in range(3)
)
_FULL = (1 << 24) - 1
_BYTE_NAMES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(POINTS[p] for p in points) for points in table) for table in _BYTE_POINTS
)
"""Like ``_BYTE_POINTS``, with the points' names."""
_EMPTY_VIEW_BOARD: dict[str, int | None] = dict.fromkeys(POINTS)
"""The view's board map with every point empty, in seed order (copy it before filling it in)."""
_POSITION_DIGITS = {None: "0", 0: "1", 1: "2"}
"""A point of the view's board map as the position file writes it."""
_ADJ: tuple[int, ...] = tuple(sum(_BIT[j] for j in near) for near in NEIGHBOURS)
_MILL_MASKS: tuple[int, ...] = tuple(_BIT[a] | _BIT[b] | _BIT[c] for a, b, c in MILLS)
_MILLS_AT: tuple[tuple[int, ...], ...] = tuple(
    tuple(mask for mask in _MILL_MASKS if mask & _BIT[p]) for p in range(24)
)
_NOTATION_HELP = (
    "write a placement as d2, a slide as d2-d3, and a removal after x "
    "as in d2xa1 or d2-d3xa1 (points a1..g7, or numbered 0-23 as in 22-19x0)"
)


def is_adjacent(i: int, j: int) -> bool:
    """Whether points ``i`` and ``j`` (seed numbers 0..23) are joined by a line
    with no point between them. A point is not adjacent to itself.

    Source: the seed, task 1.

    >>> is_adjacent(21, 22), is_adjacent(21, 23), is_adjacent(21, 20)
    (True, False, False)

    Raises:
        ValueError: if ``i`` or ``j`` is not a point number.
    """
    if not (0 <= i < 24 and 0 <= j < 24):
        raise ValueError(f"points are numbered 0 to 23, not {i} and {j}")
    return bool(_ADJ[i] & _BIT[j])


def parse_point(token: str) -> int:
    """Return the seed number (0..23) of a point given as ``"d2"``/``"D2"`` or ``"19"``.

    Raises:
        ValueError: with a reason saying what a point is, e.g.
            ``"b1 is not a point of the board"``.
    """
    text = token.strip().lower()
    if text in _INDEX:
        return _INDEX[text]
    if text.isdigit() and text.isascii():
        number = int(text)
        if number < 24:
            return number
        raise ValueError(f"{text} is not a point: the points are numbered 0 to 23")
    if len(text) == 2 and text[0] in "abcdefg" and text[1] in "1234567":
        raise ValueError(f"{text} is not a point of the board")
    raise ValueError(f"{token.strip()!r} is not a point: name points a1..g7 (e.g. d2) or by number 0-23")


def _parse_move(text: str) -> tuple[int | None, int, int | None]:
    """Split move text into (source or None, destination, removal or None).

    Raises:
        IllegalMove: naming the notation, or the part that is not a point.
    """
    body, cross, removal = text.lower().partition("x")
    parts = body.split("-") if "-" in body else body.split()
    well_formed = 1 <= len(parts) <= 2 and all(part.strip() for part in parts)
    if not well_formed or "x" in removal or (cross and not removal.strip()):
        raise IllegalMove(text, f"cannot read {text.strip()!r}: {_NOTATION_HELP}")
    try:
        points = [parse_point(part) for part in parts]
        removed = parse_point(removal) if cross else None
    except ValueError as error:
        raise IllegalMove(text, str(error)) from None
    if len(points) == 1:
        return None, points[0], removed
    return points[0], points[1], removed


def _forms_mill(mine: int, point: int) -> bool:
    """Whether the counter on ``point`` is in a full line of ``mine`` (a bit mask)."""
    for mask in _MILLS_AT[point]:
        if mine & mask == mask:
            return True
    return False


def _in_mills(mine: int) -> int:
    """The bit mask of the counters of ``mine`` that stand in at least one mill."""
    covered = 0
    for mask in _MILL_MASKS:
        if mine & mask == mask:
            covered |= mask
    return covered


def _names_of(mask: int) -> tuple[str, ...]:
    """The names of the points set in ``mask``, sorted by name."""
    low, middle, high = _BYTE_NAMES
    return low[mask & 255] + middle[mask >> 8 & 255] + high[mask >> 16]


def _points_of(mask: int) -> tuple[int, ...]:
    """The point numbers set in ``mask``, sorted by point name."""
    low, middle, high = _BYTE_POINTS
    return low[mask & 255] + middle[mask >> 8 & 255] + high[mask >> 16]


# --------------------------------------------------------------- positions


class PositionError(InvalidOption):
    """A position text (the seed's four-line file) is malformed.

    It is an :class:`InvalidOption` for the option ``position``, so the server
    reports it like any bad option.

    Attributes:
        line: the 1-based line number at fault (the first line named).
    """

    def __init__(self, line: int, message: str, lines: str | None = None) -> None:
        super().__init__("position", f"position {lines or f'line {line}'}: {message}")
        self.line = line


class Position(NamedTuple):
    """A position in the seed's own terms (its task 10 file).

    Attributes:
        board: 24 values in seed point order, 0 empty, 1 Player 1, 2 Player 2.
        hands: counters in hand of Player 1 and Player 2, each 0..9.
        player: the player to move, 1 or 2.
    """

    board: tuple[int, ...]
    hands: tuple[int, int]
    player: int


_LINE_NAMES = ("the board", "Player 1's counters in hand", "Player 2's counters in hand", "the player to move")


def parse_position(text: str) -> Position:
    """Read the seed's four-line position text.

    Line 1 holds the 24 point values (0, 1 or 2) in seed order separated by
    commas (with or without spaces); lines 2 and 3 the counters in hand of
    Players 1 and 2 (0..9); line 4 the player to move (1 or 2). Spaces around
    values, ``\\r\\n`` line ends and trailing blank lines are accepted.

    Source: the seed, task 10; RULES.md, "Nine Men's Morris".

    >>> parse_position("0, " * 23 + "1\\n8\\n9\\n2").hands
    (8, 9)

    Raises:
        PositionError: naming the line and what is wrong: missing lines, extra
            text, wrong count of values, a value not 0/1/2, a hand outside
            0..9, more than nine counters of one player, a player not 1/2.
    """
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 4:
        missing = ", ".join(_LINE_NAMES[len(lines):])
        raise PositionError(len(lines) + 1, f"missing (expected four lines; missing: {missing})")
    if len(lines) > 4:
        raise PositionError(5, "unexpected text after the four lines")
    board = _parse_board_line(lines[0])
    hands = (_parse_number(lines[1], 2, range(10)), _parse_number(lines[2], 3, range(10)))
    player = _parse_number(lines[3], 4, range(1, 3))
    for index, hand in enumerate(hands):
        on_board = board.count(index + 1)
        if on_board + hand > 9:
            raise PositionError(
                1,
                f"Player {index + 1} has {on_board + hand} counters ({on_board} on the board + "
                f"{hand} in hand); at most nine",
                lines=f"lines 1 and {index + 2}",
            )
    return Position(board, hands, player)


def _parse_board_line(line: str) -> tuple[int, ...]:
    """Read line 1: 24 comma-separated values 0/1/2."""
    items = [item.strip() for item in line.split(",")]
    if len(items) != 24 or not all(items):
        found = len([item for item in items if item])
        raise PositionError(1, f"expected 24 point values separated by commas, found {found}")
    values = []
    for number, item in enumerate(items):
        if item not in ("0", "1", "2"):
            raise PositionError(
                1, f"value {number + 1} (point {POINTS[number]}) must be 0, 1 or 2, not {item!r}"
            )
        values.append(int(item))
    return tuple(values)


def _parse_number(line: str, number: int, allowed: range) -> int:
    """Read a one-integer line (``number`` is its 1-based line number)."""
    item = line.strip()
    if not (item.isascii() and item.isdigit() and int(item) in allowed):
        what = _LINE_NAMES[number - 1]
        low, high = allowed[0], allowed[-1]
        expected = f"{low} or {high}" if len(allowed) == 2 else f"an integer from {low} to {high}"
        raise PositionError(number, f"{what} must be {expected}, not {item!r}")
    return int(item)


def format_position(position: Position) -> str:
    """Write a position as the seed's four-line text, ending with a newline.

    >>> format_position(Position((0,) * 24, (9, 9), 1)).splitlines()[1:]
    ['9', '9', '1']
    """
    board = ", ".join(str(value) for value in position.board)
    return f"{board}\n{position.hands[0]}\n{position.hands[1]}\n{position.player}\n"


# ------------------------------------------------------------------ the game


class Morris(Game):
    """Nine Men's Morris (RULES.md, "Nine Men's Morris").

    Options:
        flying: a player with exactly three counters on the board and none in
            hand may move a counter to any empty point (default off).
        mill_protection: a counter in a mill may be removed only if all the
            opponent's counters are in mills (default off).
        max_plies: the game is drawn once ``ply`` reaches it (default none).
        position: the seed's four-line position text to start from (default:
            the empty board, nine counters in each hand, Player 1 to move).
    """

    name = "morris"
    title = "Nine Men's Morris"
    seats = ("Player 1", "Player 2")
    public_views = True
    options = (
        Option("flying", "bool", False, "a player down to three counters may move to any empty point"),
        Option("mill_protection", "bool", False, "counters in a mill may not be removed unless all are"),
        MAX_PLIES,
        Option("position", "str", None, "start from this saved position (the four-line file)", max_length=1000),
    )

    def _check_options(self, options: dict[str, Any]) -> None:
        """Refuse a malformed ``position`` (raises :class:`PositionError`)."""
        if options["position"] is not None:
            parse_position(options["position"])

    def state_from_view(self, view: Mapping[str, Any]) -> "MorrisState":
        """Rebuild the position a view shows (every view shows all of it).

        The view's ``position`` text gives the board, the hands and whose
        turn it is (also once the game is over); ``flying``,
        ``mill_protection`` and ``max_plies`` the rules; ``ply`` and
        ``last_move`` the rest. Morris has no repetition rule, so nothing
        else is needed for the rebuilt state to play the original's moves.

        Raises:
            GameError: if ``view`` is not a Morris view (wrong game, a key
                missing, a bad option or position text, a bad ply).
        """
        self._require_own_view(view)
        try:
            given = {name: view[name] for name in ("flying", "mill_protection", "max_plies", "position")}
            ply = view["ply"]
        except KeyError as missing:
            raise GameError(f"a morris view needs {missing}") from None
        if type(ply) is not int or ply < 0:
            raise GameError(f"a morris view has a ply >= 0, not {ply!r}")
        options = self.resolve_options(given)
        position = parse_position(options["position"])
        boards = tuple(sum(_BIT[p] for p, value in enumerate(position.board) if value == seat + 1) for seat in (0, 1))
        return MorrisState(self, options, ply, position.player - 1, boards, position.hands, view.get("last_move"))

    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "MorrisState":
        """Return the empty board, or the state of the ``position`` option."""
        if options["position"] is None:
            return MorrisState(self, options, 0, 0, (0, 0), (9, 9), None)
        position = parse_position(options["position"])
        boards = tuple(
            sum(_BIT[p] for p, value in enumerate(position.board) if value == seat + 1) for seat in (0, 1)
        )
        return MorrisState(self, options, 0, position.player - 1, boards, position.hands, None)


class MorrisState(State):
    """An immutable Nine Men's Morris position.

    Attributes (besides those of :class:`State`):
        board: 24 values in seed point order (0 empty, 1/2 the player's counter).
        hands: counters in hand of seats 0 and 1.
        on_board: counters on the board of seats 0 and 1.
    """

    __slots__ = (
        "game", "options", "ply", "to_move", "outcome", "last_move", "_turn", "_boards", "_hands", "_legal", "_shown",
    )  # fmt: skip

    def __init__(
        self,
        game: Game,
        options: Mapping[str, Any],
        ply: int,
        turn: int,
        boards: tuple[int, int],
        hands: tuple[int, int],
        last_move: str | None,
    ) -> None:
        """Build a state and judge it; ``turn`` is the seat whose turn it is.

        Internal: use ``Morris().new_state(...)`` or :meth:`from_position_text`.
        """
        init = object.__setattr__
        init(self, "game", game)
        init(self, "options", options)
        init(self, "ply", ply)
        init(self, "_turn", turn)
        init(self, "_boards", boards)
        init(self, "_hands", hands)
        init(self, "last_move", last_move)
        init(self, "_legal", None)
        init(self, "_shown", None)
        outcome = self._judge()
        init(self, "outcome", outcome)
        init(self, "to_move", None if outcome is not None else turn)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        return f"<MorrisState ply={self.ply} to_move={self.to_move} position={self.position_text()!r}>"

    @classmethod
    def from_position_text(cls, text: str, options: Mapping[str, Any] | None = None) -> "MorrisState":
        """Return the state of a saved position (the seed's four-line text).

        Args:
            text: the position text (see :func:`parse_position`).
            options: the other options (``flying``, ...); a ``position`` in it is replaced.

        Raises:
            PositionError: if the text is malformed (an :class:`InvalidOption`).
            InvalidOption: if another option is bad.
        """
        state = Morris().new_state({**(options or {}), "position": text})
        assert isinstance(state, MorrisState)
        return state

    # ---------------------------------------------------------- properties

    @property
    def board(self) -> tuple[int, ...]:
        """24 values in seed point order: 0 empty, 1 Player 1, 2 Player 2."""
        first, second = self._boards
        return tuple(1 if first & bit else 2 if second & bit else 0 for bit in _BIT)

    @property
    def hands(self) -> tuple[int, int]:
        """Counters in hand of seats 0 and 1."""
        return self._hands

    @property
    def on_board(self) -> tuple[int, int]:
        """Counters on the board of seats 0 and 1."""
        return (self._boards[0].bit_count(), self._boards[1].bit_count())

    def key(self) -> tuple[int, int, int, int, int]:
        """Return ``(seat 0's counters, seat 1's counters, hand 0, hand 1, whose turn)``.

        The counters are 24-bit masks (any fixed bit per point); equal keys
        mean the same position and, up to ``max_plies``, the same future.
        Searches key their transposition tables by it.
        """
        return (*self._boards, *self._hands, self._turn)

    def position(self) -> Position:
        """This position in the seed's terms; the player is whose turn it is
        (for a finished game: who would have moved next)."""
        return Position(self.board, self._hands, self._turn + 1)

    def position_text(self) -> str:
        """This position as the seed's four-line text (read back by :func:`parse_position`).

        The same text as ``format_position(self.position())``, worked out once per position.
        """
        return self._shown_parts()[1]

    def _shown_parts(self) -> tuple[dict[str, int | None], str]:
        """Return (and keep) what every seat's view shows alike: the view's
        board map (point name -> 0, 1 or None, in seed order; callers copy it)
        and the position text."""
        shown = self._shown
        if shown is None:
            board = _EMPTY_VIEW_BOARD.copy()
            for seat, counters in enumerate(self._boards):
                for name in _names_of(counters):
                    board[name] = seat
            digits = ", ".join(map(_POSITION_DIGITS.__getitem__, board.values()))
            hands = self._hands
            text = f"{digits}\n{hands[0]}\n{hands[1]}\n{self._turn + 1}\n"
            shown = (board, text)
            object.__setattr__(self, "_shown", shown)
        return shown

    # --------------------------------------------------------------- rules

    def _flies(self, seat: int) -> bool:
        """Whether ``seat`` may move to any empty point (option ``flying``)."""
        return self.options["flying"] and not self._hands[seat] and self._boards[seat].bit_count() == 3

    def _can_move(self, seat: int) -> bool:
        """Whether ``seat`` has a legal move (a removal never blocks a move)."""
        mine = self._boards[seat]
        empty = _FULL & ~(mine | self._boards[1 - seat])
        if self._hands[seat] or self._flies(seat):
            return empty != 0
        for point in _points_of(mine):
            if _ADJ[point] & empty:
                return True
        return False

    def _judge(self) -> Outcome | None:
        """The outcome for the player whose turn it is, checked in RULES.md order."""
        seat = self._turn
        name = self.game.seats[seat]
        winner = 1 - seat
        if self._hands[seat] + self._boards[seat].bit_count() < 3:
            return Outcome(winner, f"{name} has fewer than three counters")
        if not self._can_move(seat):
            return Outcome(winner, f"{name} cannot move")
        limit = self.options["max_plies"]
        if limit is not None and self.ply >= limit:
            return Outcome(None, f"draw: {limit} plies played (max_plies)")
        return None

    def _removable(self, seat: int) -> int:
        """The counters of ``seat`` that an opponent's mill may remove (a mask)."""
        theirs = self._boards[seat]
        if not self.options["mill_protection"]:
            return theirs
        free = theirs & ~_in_mills(theirs)
        return free or theirs

    def legal_moves(self) -> list[str]:
        """Every legal move in canonical notation, sorted by point name of the
        source (or placed point), then destination, then removal; a mill move
        is listed once per counter it may remove. Empty once the game is over."""
        if self.outcome is not None:
            return []
        if self._legal is None:
            object.__setattr__(self, "_legal", self._generate())
        return list(self._legal)

    def _generate(self) -> tuple[str, ...]:
        """Compute the legal moves of the running game."""
        seat = self._turn
        mine, theirs = self._boards[seat], self._boards[1 - seat]
        empty = _FULL & ~(mine | theirs)
        removals = [POINTS[p] for p in _points_of(self._removable(1 - seat))] if theirs else []
        moves: list[str] = []
        if self._hands[seat]:
            steps = [(None, p) for p in _points_of(empty)]
        else:
            flies = self._flies(seat)
            steps = [(s, d) for s in _points_of(mine) for d in _points_of(empty if flies else _ADJ[s] & empty)]
        for source, target in steps:
            if source is None:
                after, text = mine | _BIT[target], POINTS[target]
            else:
                after, text = mine ^ _BIT[source] | _BIT[target], f"{POINTS[source]}-{POINTS[target]}"
            if removals and _forms_mill(after, target):
                moves.extend(f"{text}x{removed}" for removed in removals)
            else:
                moves.append(text)
        return tuple(moves)

    def _play(self, move: str) -> "MorrisState":
        """Apply ``move``; see the module docstring for the notation.

        Raises:
            IllegalMove: unreadable text, or the rule broken, e.g. "d2 is
                occupied", "a1 is not adjacent to g1", "this move forms a
                mill: name a counter to remove, e.g. d2xa1", "a7 is in a mill
                (mill protection)".
        """
        source, target, removed = _parse_move(move)
        seat = self._turn
        after = self._moved(move, seat, source, target)
        text = POINTS[target] if source is None else f"{POINTS[source]}-{POINTS[target]}"
        theirs = self._boards[1 - seat]
        if _forms_mill(after, target) and theirs:
            removed = self._check_removal(move, text, seat, removed)
            theirs ^= _BIT[removed]
            text = f"{text}x{POINTS[removed]}"
        elif removed is not None:
            if not theirs:
                other = self.game.seats[1 - seat]
                raise IllegalMove(move, f"{other} has no counter on the board to remove")
            raise IllegalMove(move, f"{text} forms no mill, so no counter may be removed")
        boards = (after, theirs) if seat == 0 else (theirs, after)
        hands = self._hands
        if source is None:
            hands = (hands[0] - 1, hands[1]) if seat == 0 else (hands[0], hands[1] - 1)
        return MorrisState(self.game, self.options, self.ply + 1, 1 - seat, boards, hands, text)

    def _moved(self, move: str, seat: int, source: int | None, target: int) -> int:
        """Check the placement or slide and return the mover's counters after it."""
        name = self.game.seats[seat]
        mine, theirs = self._boards[seat], self._boards[1 - seat]
        hand = self._hands[seat]
        if hand and source is not None:
            example = POINTS[_points_of(_FULL & ~(mine | theirs))[0]]
            counters = "counter" if hand == 1 else "counters"
            raise IllegalMove(move, f"{name} has {hand} {counters} in hand and must place one, e.g. {example}")
        if not hand and source is None:
            example = self.legal_moves()[0]
            raise IllegalMove(move, f"{name} has no counters in hand: move a counter along a line, e.g. {example}")
        if source is not None and not mine & _BIT[source]:
            owner = "is empty" if not theirs & _BIT[source] else f"holds {self.game.seats[1 - seat]}'s counter"
            raise IllegalMove(move, f"{POINTS[source]} {owner}")
        if (mine | theirs) & _BIT[target]:
            raise IllegalMove(move, f"{POINTS[target]} is occupied")
        if source is None:
            return mine | _BIT[target]
        if not _ADJ[source] & _BIT[target] and not self._flies(seat):
            hint = " (flying needs exactly three counters on the board)" if self.options["flying"] else ""
            raise IllegalMove(move, f"{POINTS[source]} is not adjacent to {POINTS[target]}{hint}")
        return mine ^ _BIT[source] | _BIT[target]

    def _check_removal(self, move: str, text: str, seat: int, removed: int | None) -> int:
        """Check and return the removal of a move that forms a mill (the
        opponent has counters on the board)."""
        other = 1 - seat
        allowed = self._removable(other)
        if removed is None:
            example = POINTS[_points_of(allowed)[0]]
            raise IllegalMove(move, f"this move forms a mill: name a counter to remove, e.g. {text}x{example}")
        if not self._boards[other] & _BIT[removed]:
            raise IllegalMove(move, f"{POINTS[removed]} is not a counter of {self.game.seats[other]}")
        if not allowed & _BIT[removed]:
            raise IllegalMove(move, f"{POINTS[removed]} is in a mill (mill protection)")
        return removed

    # ---------------------------------------------------------------- view

    def _view(self, seat: int | None) -> dict[str, Any]:
        """The whole position (Morris has no hidden information).

        Keys: ``board`` (point name -> 0, 1 or None, in seed order),
        ``in_hand`` and ``on_board`` ([seat 0, seat 1] counts), ``phase``
        (per seat "placing", "moving" or "flying"), ``flying``,
        ``mill_protection``, ``max_plies``, ``last_move`` and ``position``
        (the four-line text, for saving).
        """
        board, position = self._shown_parts()
        return {
            "board": dict(board),
            "in_hand": list(self._hands),
            "on_board": list(self.on_board),
            "phase": [self._phase(s) for s in (0, 1)],
            "flying": self.options["flying"],
            "mill_protection": self.options["mill_protection"],
            "max_plies": self.options["max_plies"],
            "last_move": self.last_move,
            "position": position,
        }

    def _phase(self, seat: int) -> str:
        """``"placing"`` while ``seat`` holds counters, then ``"flying"`` or ``"moving"``."""
        if self._hands[seat]:
            return "placing"
        return "flying" if self._flies(seat) else "moving"
