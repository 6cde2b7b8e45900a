"""What every board widget shares: squares on a canvas, picking moves, marks.

A board draws one seat's view of a position (``State.view(seat)``, PROTOCOL.md
§9) and turns clicks and keys into a move in the game's notation. Each game's
module says where its squares are on screen and what stands on them; this
module does the rest:

* **Picking a move.** A move is a path of squares (``"a1-b2"`` is ``a1`` then
  ``b2``; Morris ``"d2-d3xa1"`` is ``d2``, ``d3``, ``a1``; Othello ``"d3"`` is
  just ``d3``). A click or Enter on a square extends the path; the moves of
  the view's ``legal_moves`` whose path starts with it are the candidates,
  and the squares that could come next are highlighted. When the path is a
  whole legal move, the board posts :class:`BoardWidget.MoveChosen`. Moves
  are only ever taken from ``legal_moves``: the board never invents one.
* **Marks.** The last move's squares, the selected squares, the possible
  next squares, squares captured by the last move and the keyboard cursor.
  With colour they are backgrounds; in monochrome (``NO_COLOR``, or
  ``mono``) they are brackets, dots and reverse video, so nothing depends on
  colour alone.
* **Sides.** Where a game has sides, a seated player sees their own side at
  the bottom (``flipped``).
* **Colours.** Each game names its seats' colours (:attr:`BoardWidget.sides`:
  Othello's seat 0 is ``"black"``, Hexapawn's ``"white"``, Tactego's
  ``"red"``), and a piece takes its colour from that name, never from the
  seat number, so no palette can give a game's pieces each other's colours.
* **Hint.** The squares of a hinted move (:meth:`BoardWidget.show_hint`) are
  marked until the position changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Iterable, Mapping

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

__all__ = ["BoardWidget", "Canvas", "Square", "Palette", "PIECE_COLOURS", "wants_mono"]

PIECE_COLOURS = ("black", "white", "red", "blue", "light", "amber")
"""The colour names a board may give its seats (:attr:`BoardWidget.sides`): every palette styles each."""


@dataclass(frozen=True, slots=True)
class Square:
    """Where one square (or point) of the board sits on screen.

    Attributes:
        name: the square's name in the game's notation (``"a1"``, ``"4"``).
        row, col: the canvas row and the column of the cell's first character.
        width: how many characters the cell takes (clicks anywhere in it count).
    """

    name: str
    row: int
    col: int
    width: int

    @property
    def centre(self) -> int:
        """The column of the cell's middle character."""
        return self.col + self.width // 2


@dataclass(frozen=True, slots=True)
class Palette:
    """The styles of a board; :data:`COLOUR` or :data:`MONO`.

    Attributes:
        light, dark: the chequered squares' backgrounds.
        felt: the background of a board of one colour (Othello's green).
        pieces: a piece's style by its colour name (every name of :data:`PIECE_COLOURS`).
        hint: the mark of the hinted move's squares.
    """

    light: Style
    dark: Style
    felt: Style
    frame: Style
    pieces: Mapping[str, Style]
    last: Style
    selected: Style
    target: Style
    captured: Style
    hint: Style
    cursor: Style
    mono: bool


COLOUR = Palette(
    light=Style(bgcolor="#b58863", color="black"),
    dark=Style(bgcolor="#8b6440", color="black"),
    felt=Style(bgcolor="#1f7a3a", color="black"),
    frame=Style(color="grey62"),
    pieces=MappingProxyType(
        {
            "black": Style(color="#101010", bold=True),
            "white": Style(color="#f4f4f4", bold=True),
            "red": Style(color="#b00000", bold=True),
            "blue": Style(color="#0030b0", bold=True),
            "light": Style(color="#f0f0f0", bold=True),
            "amber": Style(color="#f0a030", bold=True),
        }
    ),
    last=Style(bgcolor="#c8a83a"),
    selected=Style(bgcolor="#4a9a4a"),
    target=Style(bgcolor="#6cbf6c"),
    captured=Style(bgcolor="#c05050"),
    hint=Style(bgcolor="#5f8fd7"),
    cursor=Style(reverse=True),
    mono=False,
)
"""The colour palette: a wooden board (Othello's green), pieces in their game's colours."""

MONO = Palette(
    light=Style(),
    dark=Style(),
    felt=Style(),
    frame=Style(dim=True),
    pieces=MappingProxyType({name: Style(bold=True) if name in ("black", "red", "light") else Style() for name in PIECE_COLOURS}),
    last=Style(underline=True),
    selected=Style(bold=True),
    target=Style(),
    captured=Style(strike=True),
    hint=Style(italic=True),
    cursor=Style(reverse=True),
    mono=True,
)
"""The monochrome palette: marks are brackets, dots, underline and reverse video; pieces differ by letter."""


def wants_mono(app: Any) -> bool:
    """Whether ``app`` should draw boards without colour (``NO_COLOR``, or an app-wide ``mono`` flag)."""
    return bool(getattr(app, "no_color", False) or getattr(app, "mono", False))


class Canvas:
    """A grid of characters, each with a style, turned into Rich text at the end."""

    def __init__(self, height: int, width: int) -> None:
        self.height = height
        self.width = width
        self._chars = [[" "] * width for _ in range(height)]
        self._styles: list[list[Style | None]] = [[None] * width for _ in range(height)]

    def put(self, row: int, col: int, text: str, style: Style | None = None) -> None:
        """Write ``text`` from (``row``, ``col``); characters past the edge are dropped."""
        if not 0 <= row < self.height:
            return
        for offset, char in enumerate(text):
            x = col + offset
            if 0 <= x < self.width:
                self._chars[row][x] = char
                if style is not None:
                    self._styles[row][x] = style

    def char(self, row: int, col: int) -> str:
        """The character at (``row``, ``col``)."""
        return self._chars[row][col]

    def to_text(self) -> Text:
        """The canvas as Rich text, one line per row, trailing blanks kept."""
        text = Text()
        for row in range(self.height):
            if row:
                text.append("\n")
            start = 0
            chars, styles = self._chars[row], self._styles[row]
            for x in range(1, self.width + 1):
                if x == self.width or styles[x] != styles[start]:
                    text.append("".join(chars[start:x]), styles[start] or "")
                    start = x
        return text


class BoardWidget(Widget, can_focus=True):
    """A board drawing one seat's view, picking moves by mouse and keys.

    Subclasses (one per game) implement :meth:`layout`, :meth:`paint`,
    :meth:`piece` and :meth:`status_lines`, and may override :meth:`path_of`,
    :meth:`flipped`, :meth:`last_squares` and :meth:`captured_squares`.

    Attributes:
        game: the game's name, as in views (``"othello"``).
        view: the view shown (a map from ``State.view``), or ``None``.
        seat: the viewer's seat (0, 1) or ``None`` for a spectator.
        last_move: the last move's notation; the view's ``last_move`` unless
            set (Tactego views have none: the table passes ``moved.move``).
        compact: draw the small style (60x20 terminals).
        mono: draw without colour.
        path: the squares picked so far towards a move.
        cursor: the square under the keyboard cursor.
    """

    game: ClassVar[str] = ""
    sides: ClassVar[tuple[str, str]] = ("white", "black")
    """The colours of seat 0's and seat 1's pieces, as the game names its seats (names of :data:`PIECE_COLOURS`)."""

    DEFAULT_CSS = """
    BoardWidget {
        width: auto;
        height: auto;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("up", "cursor(0, -1)", "Up", show=False),
        Binding("down", "cursor(0, 1)", "Down", show=False),
        Binding("left", "cursor(-1, 0)", "Left", show=False),
        Binding("right", "cursor(1, 0)", "Right", show=False),
        Binding("enter,space", "pick", "Pick square", show=False),
        Binding("escape", "cancel", "Cancel selection", show=False),
    ]

    compact: reactive[bool] = reactive(False, layout=True)
    mono: reactive[bool] = reactive(False)

    class MoveChosen(Message):
        """The player picked a whole legal move on the board.

        Attributes:
            board: the board it was picked on.
            move: the move, exactly as in the view's ``legal_moves``.
        """

        def __init__(self, board: "BoardWidget", move: str) -> None:
            super().__init__()
            self.board = board
            self.move = move

        @property
        def control(self) -> "BoardWidget":
            """The board the move was picked on."""
            return self.board

    def __init__(
        self,
        view: dict[str, Any] | None = None,
        seat: int | None = None,
        *,
        last_move: str | None = None,
        compact: bool = False,
        mono: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.view = view
        self.seat = seat
        self._last_move = last_move
        self.path: list[str] = []
        self.cursor: str | None = None
        self.hint: tuple[str, ...] = ()
        self._hint_ply: Any = None
        self.set_reactive(BoardWidget.compact, compact)
        self.set_reactive(BoardWidget.mono, mono)

    # --- what a game supplies ---------------------------------------------------------------

    def layout(self) -> tuple[int, int, list[Square]]:
        """The canvas size (rows, columns) and every square's place, for the current view and style."""
        raise NotImplementedError

    def paint(self, canvas: Canvas, palette: Palette) -> None:
        """Draw everything but the squares' contents: coordinates, lines, frame."""
        raise NotImplementedError

    def piece(self, square: Square, palette: Palette) -> tuple[str, Style]:
        """The text (``square.width`` characters) and style of ``square`` with nothing marked."""
        raise NotImplementedError

    def status_lines(self) -> list[str]:
        """The lines under the board: counts, forced passes, captures."""
        return []

    def path_of(self, move: str) -> list[str]:
        """The squares a move is picked by, in order (``"a1-b2"`` -> ``["a1", "b2"]``)."""
        return move.split("-")

    def flipped(self) -> bool:
        """Whether the board is turned half a turn for the viewer (games with sides)."""
        return False

    def last_squares(self) -> set[str]:
        """The squares the last move touched."""
        move = self.last_move
        if not move or move == "pass":
            return set()
        return set(self.path_of(move))

    def captured_squares(self) -> set[str]:
        """Squares where the last move captured something."""
        return set()

    def side_style(self, owner: int, palette: Palette) -> Style:
        """The style of seat ``owner``'s pieces: its colour as the game names it (:attr:`sides`)."""
        return palette.pieces[self.sides[owner]]

    # --- state -------------------------------------------------------------------------------

    @property
    def last_move(self) -> str | None:
        """The last move's notation (set explicitly, or the view's ``last_move``)."""
        if self._last_move is not None:
            return self._last_move
        return (self.view or {}).get("last_move")

    def show(self, view: dict[str, Any] | None, seat: int | None = None, *, last_move: str | None = None) -> None:
        """Show a new position; drop a half-picked move that it no longer allows."""
        if (view or {}).get("ply") != self._hint_ply:
            self.hint = ()
        self.view = view
        self.seat = seat
        self._last_move = last_move
        if self.path and not self._candidates(self.path):
            self.path = []
        self.refresh(layout=True)

    def show_hint(self, move: str) -> None:
        """Mark the squares of ``move`` (a move in notation) as the hint, until the position changes."""
        self.hint = tuple(self.path_of(move)) if move and move != "pass" else ()
        self._hint_ply = (self.view or {}).get("ply")
        self.refresh()

    @property
    def legal_moves(self) -> list[str]:
        """The moves the viewer may play now (empty unless it is their turn)."""
        if self.view is None or self.view.get("forced_pass"):
            return []
        return list(self.view.get("legal_moves") or [])

    def squares(self) -> list[Square]:
        """Every square's place on screen, for the current view and style."""
        return self.layout()[2]

    def square_at(self, x: int, y: int) -> str | None:
        """The name of the square drawn at content offset (``x``, ``y``), or ``None``."""
        for square in self.squares():
            if square.row == y and square.col <= x < square.col + square.width:
                return square.name
        return None

    def targets(self) -> set[str]:
        """The squares that could be picked next, once something is selected (where the selected piece may go)."""
        depth = len(self.path)
        if depth == 0:
            return set()
        return {path[depth] for path in self._candidates(self.path) if len(path) > depth}

    def _candidates(self, path: list[str]) -> list[list[str]]:
        """The paths of the legal moves that start with ``path``."""
        paths = (self.path_of(move) for move in self.legal_moves)
        return [candidate for candidate in paths if candidate[: len(path)] == path]

    def pick(self, name: str) -> str | None:
        """Pick the square ``name``, as a click on it does.

        Returns:
            The legal move now complete (the board also posts
            :class:`MoveChosen`), or ``None`` while more squares are needed
            or when the square cannot be picked (the selection then starts
            again from it if it begins a move, else it is cleared).
        """
        if self.path and name == self.path[-1]:
            self.path = []  # a second click on the selected square puts it down again
            self.refresh(layout=True)  # the status lines may change with the selection
            return None
        for path in (self.path + [name], [name]):
            if not self._candidates(path):
                continue
            whole = [move for move in self.legal_moves if self.path_of(move) == path]
            if whole:
                self.path = []
                self.refresh(layout=True)
                self.post_message(self.MoveChosen(self, whole[0]))
                return whole[0]
            self.path = path
            self.refresh(layout=True)
            return None
        self.path = []
        self.refresh(layout=True)
        return None

    # --- drawing -----------------------------------------------------------------------------

    def get_content_width(self, container: Any, viewport: Any) -> int:
        """The board's own width: a wide board is scrolled by its container, never wrapped."""
        if self.view is None:
            return 20
        return max([self.layout()[1], *(len(line) for line in self.status_lines())])

    def height_in(self, *, compact: bool) -> int:
        """The rows the board and its status lines take in the normal or the compact style."""
        return self.size_in(compact=compact)[1]

    def width_in(self, *, compact: bool) -> int:
        """The columns the board and its status lines take in the normal or the compact style."""
        return self.size_in(compact=compact)[0]

    def size_in(self, *, compact: bool) -> tuple[int, int]:
        """The (columns, rows) the board and its status lines take in the normal or the compact style, padding included."""
        if self.view is None:
            return 20, 1
        shown = self.compact
        self.set_reactive(BoardWidget.compact, compact)
        try:
            gutter = self.styles.gutter
            width = max([self.layout()[1], *(len(line) for line in self.status_lines())])
            return width + gutter.width, self.layout()[0] + len(self.status_lines()) + gutter.height
        finally:
            self.set_reactive(BoardWidget.compact, shown)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """The board's rows and the status lines under it."""
        if self.view is None:
            return 1
        return self.layout()[0] + len(self.status_lines())

    def palette(self) -> Palette:
        """The palette in use (monochrome when ``mono`` or the app has no colour)."""
        return MONO if self.mono or wants_mono(self.app) else COLOUR

    def render(self) -> Text:
        """Draw the board, its marks and the status lines."""
        if self.view is None:
            return Text("(no position yet)")
        palette = self.palette()
        height, width, squares = self.layout()
        canvas = Canvas(height, width)
        self.paint(canvas, palette)
        marks = _Marks(self, palette)
        for square in squares:
            text, style = self.piece(square, palette)
            text, style = marks.apply(square, text, style)
            canvas.put(square.row, square.col, text, style)
        board = canvas.to_text()
        for line in self.status_lines():
            board.append("\n" + line)
        board.no_wrap = True
        return board

    # --- input -------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        """Pick the square under the mouse."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        name = self.square_at(offset.x, offset.y)
        if name is not None:
            self.cursor = name
            self.pick(name)

    def action_pick(self) -> None:
        """Pick the square under the cursor (Enter, Space)."""
        if self.cursor is None:
            self.cursor = self._first_square()
            self.refresh()
            return
        self.pick(self.cursor)

    def action_cancel(self) -> None:
        """Drop the half-picked move (Escape)."""
        self.path = []
        self.refresh(layout=True)

    def action_cursor(self, dx: int, dy: int) -> None:
        """Move the cursor to the nearest square in direction (``dx``, ``dy``) on screen."""
        squares = self.squares()
        if not squares:
            return
        here = next((s for s in squares if s.name == self.cursor), None)
        if here is None:
            self.cursor = self._first_square()
        else:
            self.cursor = _nearest(here, squares, dx, dy) or here.name
        self.refresh()

    def _first_square(self) -> str | None:
        """Where the cursor starts: a square that begins a legal move, else the first square."""
        squares = self.squares()
        starts = {self.path_of(move)[0] for move in self.legal_moves}
        for square in squares:
            if square.name in starts:
                return square.name
        return squares[0].name if squares else None


def _nearest(here: Square, squares: Iterable[Square], dx: int, dy: int) -> str | None:
    """The square nearest ``here`` in the screen direction (dx, dy), preferring straight lines."""
    best: tuple[float, str] | None = None
    for square in squares:
        across = (square.centre - here.centre) * dx + (square.row - here.row) * dy * 2
        if across <= 0:
            continue
        aside = abs((square.centre - here.centre) * dy) + abs((square.row - here.row) * dx) * 2
        score = across + aside * 3
        if best is None or score < best[0]:
            best = (score, square.name)
    return best[1] if best else None


class _Marks:
    """The marks of one drawing: last move, selection, targets, captures, cursor."""

    def __init__(self, board: BoardWidget, palette: Palette) -> None:
        self.palette = palette
        self.last = board.last_squares()
        self.selected = set(board.path)
        self.targets = board.targets()
        self.captured = board.captured_squares()
        self.hint = set(board.hint)
        self.cursor = board.cursor if board.has_focus else None

    def apply(self, square: Square, text: str, style: Style) -> tuple[str, Style]:
        """Return the square's text and style with its marks on."""
        name, palette = square.name, self.palette
        if name in self.captured:
            style += palette.captured
        if name in self.last:
            style += palette.last
        if name in self.hint:
            style += palette.hint
            if palette.mono:
                text = _bracketed(text, "<", ">")
        if name in self.targets:
            style += palette.target
            if not text.strip():
                text = _centred("·", square.width)
            elif palette.mono:
                text = _bracketed(text, "(", ")")
        if name in self.selected:
            style += palette.selected
            if palette.mono:
                text = _bracketed(text, "[", "]")
        if name == self.cursor:
            style += palette.cursor
        return text, style


def _centred(mark: str, width: int) -> str:
    return mark.center(width)


def _bracketed(text: str, left: str, right: str) -> str:
    """Put brackets at the cell's edges when it has room (3 characters or more)."""
    if len(text) < 3:
        return text
    return left + text[1:-1] + right
