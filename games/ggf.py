"""GGF game records of Othello games: write, read, and convert to and from :class:`games.record.GameRecord`.

GGF (Generic Game Format) is the format the Generic Game Server (GGS) and
Othello programs (NBoard, Edax, WZebra ...) exchange games in. The
specification is M. Buro's page "Generic Game Format (GGF)",
https://www.skatgame.net/mburo/ggsa/ggf, cited below as *GGF, properties*
(its table of properties and their arguments), *GGF, first color* (black is
Othello's first color) and *GGF, example* (its complete example game).

A game is ``(;`` properties ``;)`` (*GGF*, delimiters); a property is a name
of capital letters and its value in brackets. This module writes one game on
one line, the properties in the spec's order::

    (;GM[Othello]PC[Parlour]DT[2024.05.01_12:00:00.UTC]PB[ann]PW[bob]RB[1500.00]RW[1500.00]
    TI[05:00/00:03/00:00]TY[8]RE[-20.00]BO[8 -------- -------- -------- ---O*--- ---*O---
    -------- -------- -------- *]B[D3//5.12]W[C3//2.00]...;)

(shown wrapped here; written without line breaks)

=======  =====================================================================================
``GM``   the game: ``Othello``
``PC``   the place: where the game was played (``Parlour``, or the server's name)
``DT``   the date play began, ``year.month.day_hour:minute:second.zone`` (*GGF, properties*),
         always in UTC here
``PB``   Black's name; ``PW`` White's (left out when unknown)
``RB``   Black's rating before the game, two decimals; ``RW`` White's (only for rated games)
``TI``   both players' thinking time, ``initial/increment/extension``, each ``[[h:]mm:]ss``
         (*GGF, properties* and *GGF, example*: ``TI[30:00/00:05/02:00]``); left out
         for a game without a clock
``TY``   the game type: the board size (``8``; ``10`` for 10x10 ...)
``RE``   the result for the first color, Black (*GGF, first color*): Black's discs minus
         White's, two decimals (``RE[+12.00]``). A game won by resignation or abandonment
         gets flag ``r`` and one on time flag ``t``, with the largest margin, every square
         (``RE[-64.00:r]``, as GGS's own archives write it); a draw by agreement is the
         agreed score ``RE[+0.00:s]``. Left out for an aborted or unfinished game.
``BO``   the start: the board size, the squares row by row from the top (``*`` Black,
         ``O`` White, ``-`` empty; one group of ``size`` squares per row), the color to move
``B``    a move of Black, ``W`` of White: the square in capitals (``D3``) or ``PA`` for a
         pass, then ``/evaluation/time``, each optional (*GGF, properties*); Parlour writes
         no evaluation and the time the move took in seconds: ``B[D3//5.12]``
=======  =====================================================================================

A value's ``\\`` and ``]`` are written ``\\\\`` and ``\\]`` (the escape of SGF, GGF's
ancestor), so any name reads back. Reading (:func:`parse_ggf`) is lenient in
what other programs write: moves in any case, ``pass`` and ``--`` for a pass,
the board with or without spaces, a missing ``BO`` (the usual start), ``RE[?]``
(no result), dates in any form (kept as text), properties it does not know
(skipped). :func:`parse_ggf` of :func:`format_ggf` gives back the same value.

Everything here is pure: no I/O.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .base import GameError, Outcome
from .record import GameRecord, RecordedMove, RecordError, replay

__all__ = [
    "GgfClock",
    "GgfError",
    "GgfGame",
    "GgfMove",
    "GgfResult",
    "format_ggf",
    "ggf_to_record",
    "parse_ggf",
    "record_to_ggf",
    "usual_start",
]

BLACK, WHITE, EMPTY = "*", "O", "-"
"""A square on ``BO``: a black disc, a white disc, or empty (*GGF, properties*, BO)."""
PASS = "PA"
"""A pass, as this module writes it."""
PLACE = "Parlour"
"""The default ``PC``."""
MAX_SIZE = 26
"""The largest board a square name can have a column letter for."""
_COLUMNS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SQUARE = re.compile(r"([A-Z])([1-9][0-9]?)")
_NAME = re.compile(r"[A-Z]+")
_RESULT = re.compile(r"([+-]?\d+(?:\.\d+)?)(?::([rts]))?")
_DATE = re.compile(r"(\d{4})\.(\d{1,2})\.(\d{1,2})_(\d{1,2}):(\d{2}):(\d{2})\.(UTC|GMT|Z)")
_PASSES = {"PA", "PASS", "--"}
_SINGLE = ("GM", "PC", "DT", "PB", "PW", "RB", "RW", "TI", "TY", "RE", "BO")
"""The properties read (each at most once); ``B`` and ``W`` are the moves; others are skipped."""


class GgfError(GameError):
    """A GGF text that does not read, a value that cannot be written, or a game GGF cannot hold; the message says which."""


@dataclass(frozen=True, slots=True)
class GgfMove:
    """One ``B[...]`` or ``W[...]`` property (*GGF, properties*, B and W).

    Attributes:
        color: ``"B"`` (Black) or ``"W"`` (White).
        square: the square in capitals (``"D3"``) or :data:`PASS`.
        evaluation: the mover's evaluation, or ``None`` (Parlour writes none).
        time_s: the time the move took, in seconds (not negative), or ``None``.

    Raises:
        GgfError: a field out of range.
    """

    color: str
    square: str
    evaluation: float | None = None
    time_s: float | None = None

    def __post_init__(self) -> None:
        if self.color not in ("B", "W"):
            raise GgfError(f"a move's color is B or W, not {self.color!r}")
        if self.square != PASS and not _SQUARE.fullmatch(str(self.square)):
            raise GgfError(f"a move is a square such as D3 or {PASS}, not {self.square!r}")
        for name in ("evaluation", "time_s"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or not math.isfinite(value)):
                raise GgfError(f"a move's {name} is a finite number or None, not {value!r}")
        if self.time_s is not None and self.time_s < 0:
            raise GgfError(f"a move's time cannot be negative ({self.time_s})")


@dataclass(frozen=True, slots=True)
class GgfClock:
    """``TI``: each player's time (*GGF, properties*, TI), in seconds, none negative.

    Attributes:
        initial_s: the time each player starts with.
        increment_s: the time added after each move.
        extension_s: extra time once the first is spent (Parlour has none: 0).
    """

    initial_s: float
    increment_s: float = 0.0
    extension_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("initial_s", "increment_s", "extension_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise GgfError(f"the clock's {name} is a number of seconds, not negative, not {value!r}")


@dataclass(frozen=True, slots=True)
class GgfResult:
    """``RE``: the result for Black (*GGF, properties*, RE; *GGF, first color*).

    Attributes:
        margin: Black's discs minus White's (negative: White won).
        flag: ``""`` (counted at the end), ``"r"`` (resigned), ``"t"`` (time out)
            or ``"s"`` (a score both players agreed).
    """

    margin: float
    flag: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.margin, (int, float)) or not math.isfinite(self.margin):
            raise GgfError(f"a result's margin is a finite number, not {self.margin!r}")
        if self.flag not in ("", "r", "t", "s"):
            raise GgfError(f"a result's flag is r, t, s or nothing, not {self.flag!r}")


@dataclass(frozen=True, slots=True)
class GgfGame:
    """One Othello game as GGF holds it.

    Attributes:
        size: squares per side (even, 4 to :data:`MAX_SIZE`).
        board: the start (``BO``): ``size * size`` characters, row by row from
            the top, of ``*``, ``O`` and ``-``; ``""`` when built means the
            usual start (four discs in the centre, ``d5``/``e4`` black on 8x8).
        to_move: who moves first from ``board``: ``"*"`` or ``"O"``.
        moves: the ``B`` and ``W`` properties in order.
        place, date, black, white: ``PC``, ``DT`` (as written), ``PB``, ``PW``.
        black_rating, white_rating: ``RB``, ``RW``.
        clock: ``TI``; game_type: ``TY`` (text such as ``"8"``); result: ``RE``.
        Each ``None`` when the game has no such property.

    Raises:
        GgfError: a size, board or color out of range, or a move off the board.
    """

    size: int = 8
    board: str = ""
    to_move: str = BLACK
    moves: tuple[GgfMove, ...] = ()
    place: str | None = None
    date: str | None = None
    black: str | None = None
    white: str | None = None
    black_rating: float | None = None
    white_rating: float | None = None
    clock: GgfClock | None = None
    game_type: str | None = None
    result: GgfResult | None = None

    def __post_init__(self) -> None:
        if type(self.size) is not int or self.size % 2 or not 4 <= self.size <= MAX_SIZE:
            raise GgfError(f"a board size is an even number from 4 to {MAX_SIZE}, not {self.size!r}")
        board = self.board or usual_start(self.size)
        if len(board) != self.size * self.size or set(board) - {BLACK, WHITE, EMPTY}:
            raise GgfError(f"a {self.size}x{self.size} board is {self.size * self.size} squares of *, O and -, not {self.board!r}")
        object.__setattr__(self, "board", board)
        if self.to_move not in (BLACK, WHITE):
            raise GgfError(f"the color to move is * or O, not {self.to_move!r}")
        object.__setattr__(self, "moves", tuple(self.moves))
        for number, move in enumerate(self.moves, start=1):
            if not isinstance(move, GgfMove):
                raise GgfError(f"moves are GgfMove values, not {move!r}")
            if move.square != PASS and not _on_board(move.square, self.size):
                raise GgfError(f"move {number} ({move.square}) is not a square of a {self.size}x{self.size} board")


def usual_start(size: int) -> str:
    """The usual Othello start on a ``size`` x ``size`` board as ``BO`` squares: White on the centre's top-left and bottom-right."""
    half = size // 2
    squares = [EMPTY] * (size * size)
    for row, col, disc in ((half - 1, half - 1, WHITE), (half - 1, half, BLACK), (half, half - 1, BLACK), (half, half, WHITE)):
        squares[row * size + col] = disc
    return "".join(squares)


def _on_board(square: str, size: int) -> bool:
    match = _SQUARE.fullmatch(square)
    return match is not None and _COLUMNS.index(match[1]) < size and 1 <= int(match[2]) <= size


# --- writing ---------------------------------------------------------------------------------


def format_ggf(game: GgfGame) -> str:
    """Return ``game`` as one line of GGF (see the module docstring), ending with a newline."""
    parts = ["(;GM[Othello]"]
    for name, value in (("PC", game.place), ("DT", game.date), ("PB", game.black), ("PW", game.white)):
        if value is not None:
            parts.append(f"{name}[{_escape(value)}]")
    for name, rating in (("RB", game.black_rating), ("RW", game.white_rating)):
        if rating is not None:
            parts.append(f"{name}[{rating:.2f}]")
    if game.clock is not None:
        clock = game.clock
        parts.append(f"TI[{_duration(clock.initial_s)}/{_duration(clock.increment_s)}/{_duration(clock.extension_s)}]")
    if game.game_type is not None:
        parts.append(f"TY[{_escape(game.game_type)}]")
    if game.result is not None:
        parts.append(f"RE[{game.result.margin:+.2f}" + (f":{game.result.flag}]" if game.result.flag else "]"))
    rows = " ".join(game.board[i : i + game.size] for i in range(0, len(game.board), game.size))
    parts.append(f"BO[{game.size} {rows} {game.to_move}]")
    for move in game.moves:
        extra = ""
        if move.evaluation is not None or move.time_s is not None:
            evaluation = "" if move.evaluation is None else f"{move.evaluation:.2f}"
            extra = f"/{evaluation}" + ("" if move.time_s is None else f"/{move.time_s:.2f}")
        parts.append(f"{move.color}[{move.square}{extra}]")
    parts.append(";)")
    return "".join(parts) + "\n"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _duration(seconds: float) -> str:
    """``[h:]mm:ss`` for ``seconds``, to the millisecond (a fraction written only when there is one: ``00:01.5``)."""
    whole, millis = divmod(round(seconds * 1000), 1000)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{minutes:02d}:{secs:02d}" + (f".{millis:03d}".rstrip("0") if millis else "")
    return f"{hours}:{text}" if hours else text


# --- reading ---------------------------------------------------------------------------------


def parse_ggf(text: str) -> GgfGame:
    """Read one GGF game (``(;...;)``, with white space around it or between properties).

    Raises:
        GgfError: naming what is wrong: no ``(;`` at the start or ``;)`` at the
            end, text after the end, a property without ``[...]`` or never
            closed, a property other than a move given twice, a game other than
            Othello, or a value that does not read (a board, a move, a rating,
            a clock, a result); the message quotes the property.
    """
    if not isinstance(text, str):
        raise GgfError(f"a GGF record is a text, not {type(text).__name__}")
    properties = _properties(text)
    single: dict[str, str] = {}
    moves: list[tuple[str, str]] = []
    for name, value in properties:
        if name in ("B", "W"):
            moves.append((name, value))
        elif name in _SINGLE:
            if name in single:
                raise GgfError(f"the property {name} appears twice")
            single[name] = value
    game = single.get("GM", "")
    if game.strip().lower() != "othello":
        raise GgfError(f"this is not an Othello game (GM[{game}]); only Othello games are read" if game else "the game has no GM[Othello] property")
    size, board, to_move = _board(single.get("BO"), single.get("TY"))
    return GgfGame(
        size=size,
        board=board,
        to_move=to_move,
        moves=tuple(_move(color, value, size) for color, value in moves),
        place=single.get("PC"),
        date=single.get("DT"),
        black=single.get("PB"),
        white=single.get("PW"),
        black_rating=_number("RB", single.get("RB")),
        white_rating=_number("RW", single.get("RW")),
        clock=_clock(single.get("TI")),
        game_type=single.get("TY"),
        result=_result(single.get("RE")),
    )


def _properties(text: str) -> list[tuple[str, str]]:
    """The ``NAME[value]`` pairs of the one game in ``text``, in order, values unescaped."""
    body = text.strip()
    if not body.startswith("(;"):
        raise GgfError(f"a GGF game starts with '(;', not {body[:10]!r}")
    pos, end = 2, len(body)
    found: list[tuple[str, str]] = []
    while True:
        while pos < end and body[pos].isspace():
            pos += 1
        if body.startswith(";)", pos):
            if body[pos + 2 :].strip():
                raise GgfError(f"there is text after the end of the game ';)': {body[pos + 2 : pos + 22]!r}")
            return found
        name = _NAME.match(body, pos)
        if name is None:
            where = repr(body[pos : pos + 12]) if pos < end else "the end of the text"
            raise GgfError(f"expected a property such as PB[name], or ';)' to end the game, at character {pos + 1}, not {where}")
        pos = name.end()
        while pos < end and body[pos].isspace():
            pos += 1
        if not body.startswith("[", pos):
            raise GgfError(f"the property {name[0]} has no value in brackets")
        value, pos = _value(body, pos + 1, name[0])
        found.append((name[0], value))


def _value(body: str, pos: int, name: str) -> tuple[str, int]:
    """The unescaped value starting at ``pos`` (after ``[``), and the position after its ``]``."""
    chars: list[str] = []
    while pos < len(body):
        char = body[pos]
        if char == "\\" and pos + 1 < len(body):
            chars.append(body[pos + 1])
            pos += 2
        elif char == "]":
            return "".join(chars), pos + 1
        else:
            chars.append(char)
            pos += 1
    raise GgfError(f"the value of {name} is not closed with ']'")


def _board(value: str | None, game_type: str | None) -> tuple[int, str, str]:
    """``BO``'s size, squares and color to move; without ``BO``, the usual start of ``TY``'s size (8 by default)."""
    if value is None:
        digits = re.match(r"\D*(\d+)", game_type or "")
        size = int(digits[1]) if digits else 8
        if size % 2 or not 4 <= size <= MAX_SIZE:
            raise GgfError(f"TY[{game_type}] names no board size from 4 to {MAX_SIZE} (and there is no BO)")
        return size, usual_start(size), BLACK
    words = value.split()
    if len(words) < 2 or not words[0].isdigit():
        raise GgfError(f"BO is the size, the squares and the color to move, such as BO[8 ... *], not BO[{value}]")
    size = int(words[0])
    squares = "".join(words[1:])
    squares, to_move = squares[:-1], squares[-1]
    if size % 2 or not 4 <= size <= MAX_SIZE:
        raise GgfError(f"BO's size is an even number from 4 to {MAX_SIZE}, not {words[0]}")
    if len(squares) != size * size or set(squares) - {BLACK, WHITE, EMPTY} or to_move not in (BLACK, WHITE):
        raise GgfError(f"BO[{value}] is not {size * size} squares of *, O and - followed by * or O (the color to move)")
    return size, squares, to_move


def _move(color: str, value: str, size: int) -> GgfMove:
    parts = value.split("/")
    if len(parts) > 3:
        raise GgfError(f"a move is MOVE[/EVALUATION[/TIME]], not {color}[{value}]")
    square = parts[0].strip().upper()
    if square in _PASSES:
        square = PASS
    elif not _on_board(square, size):
        raise GgfError(f"{color}[{value}]: {parts[0].strip()!r} is not a square of a {size}x{size} board, nor a pass (PA)")
    evaluation = _number(f"{color}[{value}]'s evaluation", parts[1]) if len(parts) > 1 and parts[1].strip() else None
    time_s = _number(f"{color}[{value}]'s time", parts[2]) if len(parts) > 2 and parts[2].strip() else None
    if time_s is not None and time_s < 0:
        raise GgfError(f"{color}[{value}]: a move's time cannot be negative")
    return GgfMove(color, square, evaluation, time_s)


def _number(what: str, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise GgfError(f"{what} is a number, not {value!r}") from None
    if not math.isfinite(number):
        raise GgfError(f"{what} is a finite number, not {value!r}")
    return number


def _clock(value: str | None) -> GgfClock | None:
    """``TI[initial/increment/extension]``, each ``[[h:]mm:]ss`` (an empty part: 0)."""
    if value is None:
        return None
    parts = value.split("/")
    if len(parts) > 3:
        raise GgfError(f"TI is initial/increment/extension, not TI[{value}]")
    seconds = [_seconds(part, value) for part in parts] + [0.0] * (3 - len(parts))
    return GgfClock(*seconds)


def _seconds(part: str, value: str) -> float:
    fields = part.strip().split(":") if part.strip() else ["0"]
    if len(fields) > 3:
        raise GgfError(f"a time in TI is [[h:]mm:]ss, not {part!r} (in TI[{value}])")
    total = 0.0
    for field in fields:
        number = _number(f"a time in TI[{value}]", field)
        if number is None or number < 0:
            raise GgfError(f"a time in TI is [[h:]mm:]ss, not {part!r} (in TI[{value}])")
        total = total * 60 + number
    return total


def _result(value: str | None) -> GgfResult | None:
    if value is None or value.strip() == "?":
        return None
    match = _RESULT.fullmatch(value.strip())
    if match is None:
        raise GgfError(f"RE is Black's margin and an optional flag (:r, :t or :s), such as RE[+12.00] or RE[-64.00:r], not RE[{value}]")
    return GgfResult(float(match[1]), match[2] or "")


# --- from and to Parlour's records ------------------------------------------------------------


def record_to_ggf(
    record: GameRecord,
    *,
    ratings: tuple[float | None, float | None] = (None, None),
    clock: tuple[float, float] | None = None,
    place: str = PLACE,
) -> GgfGame:
    """The GGF game of a Parlour Othello record.

    Args:
        record: the game (finished or not: an unfinished or aborted one gets no ``RE``).
        ratings: Black's and White's ratings before the game (``RB``, ``RW``), where known.
        clock: the time control as ``(initial seconds, increment seconds)``, or ``None`` (no ``TI``).
        place: ``PC``.

    Returns:
        The game: ``DT`` is when play began (or, unknown, when it ended),
        each move's time is the seconds since the move before it (since play
        began for the first), when the record has the times.

    Raises:
        GgfError: the record is not of an Othello game ("GGF holds Othello
            games only, not nimble"), or its options are not Othello's.
    """
    import games  # here, not at the top, as in games.record

    if record.game != "othello":
        raise GgfError(f"GGF holds Othello games only, not {record.game}")
    try:
        start = games.get("othello").new_state(record.options)
    except games.GameError as exc:
        raise GgfError(f"the record's options are not Othello's: {exc}") from None
    size = int(start.options["size"])
    board = "".join(start.rows()).replace("X", BLACK).replace(".", EMPTY)
    return GgfGame(
        size=size,
        board=board,
        to_move=BLACK if start.to_move == 0 else WHITE,
        moves=_ggf_moves(record),
        place=place,
        date=_ggf_date(record.started_at or record.finished_at),
        black=record.players[0],
        white=record.players[1],
        black_rating=None if ratings[0] is None else round(ratings[0], 2),
        white_rating=None if ratings[1] is None else round(ratings[1], 2),
        clock=None if clock is None else GgfClock(clock[0], clock[1], 0.0),
        game_type=str(size),
        result=_ggf_result(record.result, size),
    )


def _ggf_moves(record: GameRecord) -> tuple[GgfMove, ...]:
    moves: list[GgfMove] = []
    before = _moment(record.started_at)
    for move in record.moves:
        at = _moment(move.at)
        took = None if at is None or before is None else round(max(0.0, (at - before).total_seconds()), 2)
        before = at
        square = PASS if move.move == "pass" else move.move.upper()
        moves.append(GgfMove("B" if move.seat == 0 else "W", square, None, took))
    return tuple(moves)


def _moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


def _ggf_date(text: str | None) -> str | None:
    moment = _moment(text)
    return None if moment is None else moment.astimezone(timezone.utc).strftime("%Y.%m.%d_%H:%M:%S.UTC")


def _ggf_result(result: dict[str, Any] | None, size: int) -> GgfResult | None:
    """``RE`` for a Parlour outcome map (see the module docstring); ``None`` for none, an aborted or a set-aside game."""
    if not result or result.get("aborted") or "set_aside" in result:
        return None
    winner, score, reason = result.get("winner"), result.get("score"), str(result.get("reason") or "")
    if isinstance(score, list) and len(score) == 2:
        return GgfResult(float(score[0] - score[1]))
    if winner in (0, 1):
        margin = float(size * size) * (1 if winner == 0 else -1)
        return GgfResult(margin, "t" if "time" in reason else "r")
    return GgfResult(0.0, "s")


def ggf_to_record(game: GgfGame) -> GameRecord:
    """The Parlour record of a GGF game, to replay it (:func:`games.record.replay`).

    ``PB``/``PW`` become the players, a ``DT`` written as this module writes
    it (or as Unix seconds) the start, the moves the plies (a pass is a
    forced ``pass``, the only move Othello then allows). The result: a
    resignation, time out or agreed score as ``RE`` says, else the replayed
    final position's (``None`` if the game did not end).

    Raises:
        GgfError: a game Parlour does not play: a type other than the plain
            board size (``TY[8r]``, ``TY[s8]``, ``TY[8a]`` ...), a start other
            than the usual one, a board size other than 6 to 16; or moves
            that do not replay (the message names the move).
    """
    import games  # here, not at the top, as in games.record

    if game.game_type is not None and game.game_type.strip() != str(game.size):
        raise GgfError(f"TY[{game.game_type}] is an Othello variant Parlour does not play (only the plain board size, TY[{game.size}])")
    if not 6 <= game.size <= 16:
        raise GgfError(f"Parlour plays Othello on boards of 6 to 16 squares a side, not {game.size}x{game.size}")
    if game.board != usual_start(game.size) or game.to_move != BLACK:
        raise GgfError("the game starts from a position other than the usual start with Black to move, which Parlour cannot replay")
    moves = tuple(
        RecordedMove(ply, 0 if move.color == "B" else 1, "pass" if move.square == PASS else move.square.lower(), forced=move.square == PASS)
        for ply, move in enumerate(game.moves, start=1)
    )
    record = GameRecord("othello", {"size": game.size}, players=(game.black, game.white), started_at=_iso_date(game.date), moves=moves)
    try:
        states = replay(record)
    except (RecordError, games.GameError) as exc:
        raise GgfError(f"the game does not replay: {exc}") from None
    result = _record_result(game.result, states[-1].outcome)
    return GameRecord(record.game, record.options, players=record.players, result=result, started_at=record.started_at, moves=moves)


def _record_result(result: GgfResult | None, outcome: Outcome | None) -> dict[str, Any] | None:
    """The outcome map of a flagged ``RE`` (resigned, time out, agreed score), else the final position's (``None``: not over)."""
    if result is not None and result.flag:
        winner = None if result.margin == 0 else 0 if result.margin > 0 else 1
        if result.flag == "s":
            return {"winner": winner, "reason": "draw by agreement" if winner is None else "agreed score", "score": None}
        if winner is None:
            return {"winner": None, "reason": f"no winner (RE[{result.margin:+.2f}:{result.flag}])", "score": None}
        loser = ("Black", "White")[1 - winner]
        reason = f"{loser} resigned" if result.flag == "r" else f"{loser} ran out of time"
        return {"winner": winner, "reason": reason, "score": None}
    return None if outcome is None else outcome.to_dict()


def _iso_date(text: str | None) -> str | None:
    """``DT`` as ISO-8601 UTC when it is in this module's form or Unix seconds, else ``None``."""
    if text is None:
        return None
    text = text.strip()
    if text.isdigit():
        return datetime.fromtimestamp(int(text), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    match = _DATE.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match[i]) for i in range(1, 7))
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
