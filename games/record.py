"""Plain-text game records: write, read and replay a finished (or running) game.

A record is a few header lines, a blank line, then one line per ply::

    # Lines starting with '#' are comments, anywhere in the file.
    Game: othello
    Options: {"size":8,"max_plies":null}
    Player-0: ann
    Player-1: bob
    Result: {"winner":1,"reason":"more discs","score":[22,42]}
    Started: 2024-05-01T12:00:00.000Z
    Finished: 2024-05-01T12:09:41.250Z

    1. c4 at=2024-05-01T12:00:05.123Z
    2. e3 at=2024-05-01T12:00:09.870Z
    ...
    59. pass forced at=2024-05-01T12:09:20.004Z

Headers (``Key: value``, any order, each at most once; only ``Game`` is required):

=============  ==============================================================
``Game``       the game's short name (:func:`games.get`)
``Options``    the options as a compact JSON object (absent: ``{}``)
``Seed``       the setup seed as JSON: ``42`` or ``"abc"`` (absent: no seed)
``Player-0``   the name of the player in seat 0 (absent: unknown)
``Player-1``   the name of the player in seat 1
``Result``     how the game ended, a JSON object like :meth:`Outcome.to_dict`
``Started``    when play began, ISO-8601 UTC (``2024-05-01T12:00:00Z``)
``Finished``   when the game ended, ISO-8601 UTC
=============  ==============================================================

A finished game whose setup was hidden while it ran (Tactego) gets its whole
setup as comment lines after the headers (:meth:`games.Game.setup_lines`).

Text values (game, names) are written bare when they are printable with no
surrounding spaces and do not start with ``"``; otherwise as a JSON string.

A move line is ``PLY. MOVE`` followed by annotations separated by spaces:
``forced`` (the server played it because it was the only legal move),
``seat=N`` (only when the mover is not the usual one: seat 0 on odd plies,
seat 1 on even plies) and ``at=TIME`` (when it was played, ISO-8601 UTC).
Anything from a ``#`` token on is a comment. Plies count from 1 and follow
each other without gaps.

The format round-trips: ``parse_record(format_record(r)) == r`` for every
valid :class:`GameRecord`. Everything here is pure: no I/O.

>>> record = GameRecord("othello", {"size": 6}, moves=(RecordedMove(1, 0, "b3"),))
>>> print(format_record(record), end="")
Game: othello
Options: {"size":6}
<BLANKLINE>
1. b3
>>> [state.ply for state in replay(parse_record(format_record(record)))]
[0, 1]
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Mapping

from .base import GameError, IllegalMove, InvalidOption, State

__all__ = ["GameRecord", "RecordedMove", "RecordError", "format_record", "parse_record", "replay"]


class RecordError(GameError):
    """A game record is malformed, or its moves do not replay.

    Attributes:
        reason: what is wrong, in words.
        line: the 1-based line of the text at fault (``None`` when not parsing).
        ply: the ply at fault (``None`` when it is not about one move).
    """

    def __init__(self, reason: str, *, line: int | None = None, ply: int | None = None) -> None:
        where = f"line {line}: " if line is not None else ""
        super().__init__(where + reason)
        self.reason = reason
        self.line = line
        self.ply = ply


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """One ply of a recorded game.

    Attributes:
        ply: the ply number, from 1 (the position after it has ``state.ply == ply``).
        seat: the seat that moved (0 or 1).
        move: the move in the game's notation; one token (no spaces), not
            starting with ``#``.
        at: when it was played, ISO-8601 UTC text, or ``None``.
        forced: whether the server played it because it was the only legal move.

    Raises:
        RecordError: if a field is out of range or not writable in a record.
    """

    ply: int
    seat: int
    move: str
    at: str | None = None
    forced: bool = False

    def __post_init__(self) -> None:
        if type(self.ply) is not int or self.ply < 1:
            raise RecordError(f"a ply number must be a positive integer, not {self.ply!r}", ply=_ply_or_none(self.ply))
        if self.seat not in (0, 1) or type(self.seat) is not int:
            raise RecordError(f"ply {self.ply}: the seat must be 0 or 1, not {self.seat!r}", ply=self.ply)
        problem = _move_problem(self.move)
        if problem:
            raise RecordError(f"ply {self.ply}: {problem}", ply=self.ply)
        if type(self.forced) is not bool:
            raise RecordError(f"ply {self.ply}: forced must be true or false, not {self.forced!r}", ply=self.ply)
        if self.at is not None:
            problem = _time_problem(self.at)
            if problem:
                raise RecordError(f"ply {self.ply}: {problem}", ply=self.ply)


@dataclass(frozen=True, slots=True)
class GameRecord:
    """Everything needed to show and replay one game.

    ``options`` and ``result`` are kept as plain JSON values: tuples become
    lists when the record is built, so a record equals its own round trip.

    Attributes:
        game: the game's short name (``"othello"``).
        options: option values by name (normally the resolved options).
        seed: the setup seed (``None`` for games without chance).
        players: the names in seat 0 and seat 1 (``None``: unknown or empty).
        result: how the game ended, shaped like :meth:`Outcome.to_dict`, or
            ``None`` while it runs.
        started_at: when play began, ISO-8601 UTC text, or ``None``.
        finished_at: when it ended, ISO-8601 UTC text, or ``None``.
        moves: the plies in order, numbered 1, 2, 3, ...

    Raises:
        RecordError: if a field is of the wrong type, not JSON-representable,
            a time is not ISO-8601 UTC, or the plies are not numbered 1, 2, 3, ...
    """

    game: str
    options: dict[str, Any] = field(default_factory=dict)
    seed: str | int | None = None
    players: tuple[str | None, str | None] = (None, None)
    result: dict[str, Any] | None = None
    started_at: str | None = None
    finished_at: str | None = None
    moves: tuple[RecordedMove, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.game, str) or not self.game:
            raise RecordError(f"the game must be a non-empty text, not {self.game!r}")
        object.__setattr__(self, "options", _json_object("options", self.options))
        if self.seed is not None and type(self.seed) not in (int, str):
            raise RecordError(f"the seed must be a text, an integer or None, not {self.seed!r}")
        players = tuple(self.players)
        if len(players) != 2 or any(p is not None and not isinstance(p, str) for p in players):
            raise RecordError(f"players must be two names (text or None), not {self.players!r}")
        object.__setattr__(self, "players", players)
        if self.result is not None:
            object.__setattr__(self, "result", _json_object("result", self.result))
        for name in ("started_at", "finished_at"):
            value = getattr(self, name)
            problem = _time_problem(value) if value is not None else ""
            if problem:
                raise RecordError(f"{name}: {problem}")
        moves = tuple(self.moves)
        for index, move in enumerate(moves, start=1):
            if not isinstance(move, RecordedMove):
                raise RecordError(f"moves must be RecordedMove values, not {move!r}")
            if move.ply != index:
                raise RecordError(f"ply {move.ply} is out of order: expected ply {index}", ply=move.ply)
        object.__setattr__(self, "moves", moves)


# --- writing ---------------------------------------------------------------------------


def format_record(record: GameRecord) -> str:
    """Return ``record`` as plain text (see the module docstring); ends with a newline."""
    lines = [f"Game: {_text_value(record.game)}", f"Options: {_dump(record.options)}"]
    if record.seed is not None:
        lines.append(f"Seed: {_dump(record.seed)}")
    for seat, name in enumerate(record.players):
        if name is not None:
            lines.append(f"Player-{seat}: {_text_value(name)}")
    if record.result is not None:
        lines.append(f"Result: {_dump(record.result)}")
    if record.started_at is not None:
        lines.append(f"Started: {record.started_at}")
    if record.finished_at is not None:
        lines.append(f"Finished: {record.finished_at}")
    lines += _setup_comment(record)
    lines.append("")
    for move in record.moves:
        parts = [f"{move.ply}.", move.move]
        if move.seat != _usual_seat(move.ply):
            parts.append(f"seat={move.seat}")
        if move.forced:
            parts.append("forced")
        if move.at is not None:
            parts.append(f"at={move.at}")
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


def _setup_comment(record: GameRecord) -> list[str]:
    """For a finished game whose setup was hidden while it ran: its whole setup as comment lines (else none)."""
    if record.result is None or record.seed is None:
        return []
    import games  # here, not at the top, as in replay()

    try:
        game = games.get(record.game)
        lines = game.setup_lines(game.new_state(record.options, record.seed))
    except GameError:
        return []
    if not lines:
        return []
    return ["# The setup, public now that the game is over:"] + [f"#   {line}" for line in lines]


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _text_value(text: str) -> str:
    plain = text and text == text.strip() and text.isprintable() and not text.startswith('"')
    return text if plain else json.dumps(text)


def _usual_seat(ply: int) -> int:
    return (ply - 1) % 2


# --- reading ---------------------------------------------------------------------------

_HEADERS = ("Game", "Options", "Seed", "Player-0", "Player-1", "Result", "Started", "Finished")


def parse_record(text: str) -> GameRecord:
    """Read a record written by :func:`format_record` (or by hand in the same format).

    Lines end with ``\\n`` (a ``\\r`` before it is ignored). Comment lines
    (first non-space character ``#``) and blank lines between moves are ignored.

    Raises:
        RecordError: naming the line and what is wrong: an unknown, repeated
            or missing header, a value that does not read (bad JSON options, a
            seed that is neither text nor integer, a time that is not
            ISO-8601 UTC), or a malformed move line.
    """
    if not isinstance(text, str):
        raise RecordError(f"a record must be a text, not {type(text).__name__}")
    headers: dict[str, Any] = {}
    moves: list[RecordedMove] = []
    in_moves = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if not stripped:
            in_moves = in_moves or bool(headers)
            continue
        if in_moves:
            moves.append(_parse_move(line, number, expected_ply=len(moves) + 1))
        else:
            key, value = _parse_header(line, number)
            if key in headers:
                raise RecordError(f"the {key} header appears twice", line=number)
            headers[key] = value
    if "Game" not in headers:
        raise RecordError("the record has no Game header")
    try:
        return GameRecord(
            game=headers["Game"],
            options=headers.get("Options", {}),
            seed=headers.get("Seed"),
            players=(headers.get("Player-0"), headers.get("Player-1")),
            result=headers.get("Result"),
            started_at=headers.get("Started"),
            finished_at=headers.get("Finished"),
            moves=tuple(moves),
        )
    except RecordError as exc:  # every field was checked above; kept as a safety net
        raise RecordError(exc.reason, ply=exc.ply) from None


def _parse_header(line: str, number: int) -> tuple[str, Any]:
    key, colon, rest = line.partition(":")
    if not colon or not key or key != key.strip():
        raise RecordError(f"expected a header line 'Key: value' (or a blank line before the moves), not {line!r}", line=number)
    if key not in _HEADERS:
        raise RecordError(f"unknown header {key!r} (known: {', '.join(_HEADERS)})", line=number)
    value = rest.strip()
    if not value:
        raise RecordError(f"the {key} header has no value (leave the line out instead)", line=number)
    if key in ("Options", "Result"):
        parsed = _load(value, key, number)
        if not isinstance(parsed, dict):
            raise RecordError(f"{key} must be a JSON object, not {value!r}", line=number)
        return key, parsed
    if key == "Seed":
        seed = _load(value, key, number)
        if seed is not None and type(seed) not in (int, str):
            raise RecordError(f"Seed must be a JSON integer or string, not {value!r}", line=number)
        return key, seed
    if value.startswith('"'):
        text = _load(value, key, number)
        if not isinstance(text, str):
            raise RecordError(f"{key} must be a text, not {value!r}", line=number)
        value = text
    if key in ("Started", "Finished"):
        problem = _time_problem(value)
        if problem:
            raise RecordError(f"{key}: {problem}", line=number)
    return key, value


def _load(value: str, key: str, number: int) -> Any:
    try:
        return json.loads(value, parse_constant=_refuse_constant)
    except ValueError as exc:
        raise RecordError(f"{key} is not valid JSON ({exc}): {value!r}", line=number) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _parse_move(line: str, number: int, expected_ply: int) -> RecordedMove:
    tokens = line.split()
    for index, token in enumerate(tokens):
        if token.startswith("#"):
            tokens = tokens[:index]
            break
    if len(tokens) < 2 or not tokens[0].endswith(".") or not tokens[0][:-1].isdigit():
        raise RecordError(f"expected a move line 'PLY. MOVE [forced] [seat=N] [at=TIME]', not {line.strip()!r}", line=number)
    ply = int(tokens[0][:-1])
    if ply != expected_ply:
        raise RecordError(f"expected ply {expected_ply}, not ply {ply}", line=number, ply=ply)
    move = tokens[1]
    problem = _move_problem(move)
    if problem:
        raise RecordError(f"ply {ply}: {problem}", line=number, ply=ply)
    seat, at, forced = _usual_seat(ply), None, False
    seen: set[str] = set()
    for token in tokens[2:]:
        name, equals, value = token.partition("=")
        if name in seen:
            raise RecordError(f"ply {ply}: {name!r} is given twice", line=number, ply=ply)
        seen.add(name)
        if token == "forced":
            forced = True
        elif name == "seat" and equals and value in ("0", "1"):
            seat = int(value)
        elif name == "at" and equals:
            problem = _time_problem(value)
            if problem:
                raise RecordError(f"ply {ply}: {problem}", line=number, ply=ply)
            at = value
        else:
            raise RecordError(
                f"ply {ply}: unknown annotation {token!r} (expected forced, seat=0, seat=1 or at=TIME)", line=number, ply=ply
            )
    return RecordedMove(ply, seat, move, at, forced)


# --- checks shared by building and parsing ----------------------------------------------


def _move_problem(move: object) -> str:
    if not isinstance(move, str) or not move:
        return f"a move must be a non-empty text, not {move!r}"
    if not move.isprintable() or any(ch.isspace() for ch in move):
        return f"a move must be one printable token without spaces, not {move!r}"
    if move.startswith("#"):
        return f"a move cannot start with '#' (that starts a comment): {move!r}"
    return ""


def _time_problem(text: object) -> str:
    """Return why ``text`` is not an ISO-8601 UTC time without spaces, or ``""``."""
    if not isinstance(text, str) or not text or not text.isprintable() or any(ch.isspace() for ch in text):
        return f"a time must be ISO-8601 UTC text without spaces, such as 2024-05-01T12:00:00Z, not {text!r}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return f"{text!r} is not an ISO-8601 time such as 2024-05-01T12:00:00Z"
    if moment.utcoffset() != timedelta(0):
        return f"{text!r} is not in UTC (end it with Z or +00:00)"
    return ""


def _json_object(name: str, value: Any) -> dict[str, Any]:
    """Return ``value`` as a plain JSON object (tuples become lists)."""
    if not isinstance(value, Mapping):
        raise RecordError(f"{name} must be a map, not {value!r}")
    try:
        _check_keys(value)
        return json.loads(json.dumps(dict(value), allow_nan=False))  # type: ignore[no-any-return]
    except (TypeError, ValueError) as exc:
        raise RecordError(f"{name} must hold only JSON values: {exc}") from None


def _check_keys(value: Any) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"key {key!r} is not a text")
            _check_keys(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_keys(item)


def _ply_or_none(ply: object) -> int | None:
    return ply if type(ply) is int else None


# --- replaying ---------------------------------------------------------------------------


def replay(record: GameRecord) -> list[State]:
    """Return every position of the game: the start, then the one after each ply.

    ``replay(r)[n]`` is the position after ply ``n`` (``[0]`` is the start).

    Raises:
        RecordError: if the game is unknown, the options or seed are refused,
            or a move is played by the wrong seat, is illegal, or is marked
            forced when it was not the only legal move; ``ply`` names the move.
    """
    import games  # here, not at the top, so that games/__init__.py may re-export this module

    try:
        game = games.get(record.game)
    except games.UnknownGame as exc:
        raise RecordError(str(exc)) from None
    try:
        state = game.new_state(record.options, record.seed)
    except InvalidOption as exc:
        raise RecordError(f"the record's options are refused: {exc}") from None
    states = [state]
    for move in record.moves:
        if state.outcome is not None:
            raise RecordError(f"ply {move.ply} ({move.move}) comes after the end of the game", ply=move.ply)
        if state.to_move != move.seat:
            raise RecordError(
                f"ply {move.ply} ({move.move}) is recorded for seat {move.seat}, but seat {state.to_move} is to move",
                ply=move.ply,
            )
        legal = state.legal_moves() if move.forced else None
        try:
            state = state.play(move.move)
        except IllegalMove as exc:
            raise RecordError(f"ply {move.ply}: {exc}", ply=move.ply) from None
        if legal is not None and legal != [state.last_move]:
            raise RecordError(
                f"ply {move.ply} ({move.move}) is marked forced, but {len(legal)} moves were legal", ply=move.ply
            )
        states.append(state)
    return states
