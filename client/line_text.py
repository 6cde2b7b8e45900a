"""Text the line client reads and writes: lobby and archive lines, clocks, outcomes, and the words of commands.

Everything that comes from another user (names, options, reasons) goes through
:func:`client.sanitize.printable` here before it is printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

import games
from protocol import messages as m

from .option_text import options_text, schema
from .ratings_text import rating_text
from .sanitize import printable, printable_lines

__all__ = [
    "UsageError",
    "NewTable",
    "describe_table",
    "describe_archived",
    "options_words",
    "player_label",
    "computer_label",
    "format_clock",
    "outcome_text",
    "shutdown_text",
    "game_seats",
    "name_text",
    "plies_text",
    "example_move",
    "mill_line",
    "read_file",
    "write_file",
    "table_and_seat",
    "game_id",
    "count_arg",
    "chat_text",
    "DEFAULT_COMPUTER_LEVEL",
    "COMPUTER_LEVELS",
]

DEFAULT_COMPUTER_LEVEL = 3
"""The computer's level when ``new GAME vs=computer`` names none: a fair game for most players."""
COMPUTER_LEVELS = range(1, 6)


class UsageError(Exception):
    """A command typed wrongly; the message says how to type it."""


def describe_table(table: m.TableInfo, described_games: Iterable[Any] | None = None) -> str:
    """One lobby line: id, game, options, clock, seats, status, spectators (sanitised: names come from users).

    ``#1 othello (Size: 6) tc=5+3 — ann vs (free) — waiting, ply 0, 0 watching``:
    the options by label, values in words (:func:`options_words`; ``described_games``
    is ``welcome.games``, else this client's own schemas are used).
    """
    options = options_words(table.game, table.options, described_games)
    words = [options] if options else []
    if table.time_control:
        words.append(f"tc={printable(table.time_control)}")
    if table.seed is not None and table.status == "waiting" and _seed_matters(table):
        words.append(f"seed={printable(str(table.seed))}")  # a chosen seed: the setup is no secret at this table
    if table.hints and table.computer is None:
        words.append("hints")
    if table.ratings is not None:
        words.append("rated")
    seats = " vs ".join(player_label(table, seat) for seat in range(len(table.seats)))
    return (
        f"#{table.id} {printable(table.game)} {' '.join(words)} — {seats} — "
        f"{printable(table.status)}, ply {table.ply}, {table.spectators} watching"
    )


def options_words(game: str, options: Mapping[str, Any], described_games: Iterable[Any] | None = None) -> str:
    """``(Size: 6, Flying: yes)``: a game's options set away from their defaults, as a person reads them; ``""`` when none is.

    ``options`` as the server sent them (long texts summarized); labels come from
    the game's schema in ``described_games`` (``welcome.games``) or this client's own.
    """
    text = options_text(schema(game, described_games), options)
    return f"({text})" if text else ""


def _seed_matters(table: m.TableInfo) -> bool:
    """Whether the table's setup is drawn from its seed (a game unknown here: assume so)."""
    try:
        return games.get(table.game).setup_uses_chance(table.options)
    except games.UnknownGame:
        return True


def player_label(table: m.TableInfo, seat: int) -> str:
    """How a seat's player reads (sanitised): ``ann``, ``(free)``, ``computer (level 4)``, ``bot-1 (bot)``."""
    level = table.computer[seat] if table.computer is not None and seat < len(table.computer) else None
    if level is not None:
        return computer_label(level)
    label = name_text(table.seats[seat])
    if table.bots is not None and seat < len(table.bots) and table.bots[seat] and table.seats[seat]:
        label += " (bot)"
    rating = table.ratings[seat] if table.ratings is not None and seat < len(table.ratings) else None
    if rating is not None and table.seats[seat]:
        label += f" ({rating_text(rating.rating, rating.provisional)})"
    return label


def computer_label(level: int | None) -> str:
    """``computer (level 4)`` for a computer seat's level; ``(free)`` for ``None``."""
    return f"computer (level {level})" if level is not None else "(free)"


@dataclass
class NewTable:
    """What ``new GAME key=value ...`` asks for: the request's fields, read and checked.

    Keys of the command itself (``seed``, ``tc``, ``seat``, ``vs``, ``level``,
    ``computer``, ``hints``, ``rated``) come before the game's options of the same name.
    """

    options: dict[str, Any] = field(default_factory=dict)
    seed: str | None = None
    time_control: str | None = None
    seat: int | None = 0
    computer: dict[int, int] = field(default_factory=dict)
    hints: bool = False
    rated: bool = False

    @classmethod
    def parse(cls, game: games.Game, words: Sequence[str]) -> "NewTable":
        """Read ``words`` (``key=value``) for ``game``.

        Raises:
            UsageError: a word that is not key=value, a bad seat, level or
                ``computer`` list, a text option's file that cannot be read.
            games.GameError: an option the game does not have, or a bad value.
        """
        table = cls()
        seen: dict[str, str] = {}
        for word in words:
            key, sep, text = word.partition("=")
            if not sep:
                raise UsageError(f"options are key=value, not {word!r}")
            if key in ("seed", "tc", "seat", "vs", "level", "computer", "hints", "rated"):
                seen[key] = text
                continue
            option = game.option(key)
            table.options[key] = read_file(key, text) if option.type == "str" else option.parse_text(text)
        table.seed = seen.get("seed")
        tc = seen.get("tc")
        table.time_control = None if tc is None or tc.lower() in ("", "none", "-") else tc
        table.hints = _switch("hints", seen.get("hints", "off"))
        table.rated = _switch("rated", seen.get("rated", "no"))
        if "seat" in seen:
            table.seat = _seat_word(seen["seat"])
        table._read_computer(seen)
        return table

    def _read_computer(self, seen: dict[str, str]) -> None:
        if "computer" in seen:
            if "vs" in seen or "level" in seen or "seat" in seen:
                raise UsageError("computer=L0,L1 seats the computer in both seats (you watch): leave out vs, level and seat")
            levels = seen["computer"].split(",")
            if len(levels) != 2:
                raise UsageError("usage: computer=L0,L1, the levels of seat 0 and seat 1, e.g. computer=3,5")
            self.computer = {0: _level(levels[0]), 1: _level(levels[1])}
            self.seat = None
            return
        vs = seen.get("vs")
        if vs is not None and vs.lower() not in ("computer", "cpu", "bot"):
            raise UsageError(f"vs=computer is the one opponent new can seat, not vs={vs}")
        if vs is None and "level" not in seen:
            return
        level = _level(seen["level"]) if "level" in seen else DEFAULT_COMPUTER_LEVEL
        assert self.seat is not None
        self.computer = {1 - self.seat: level}


def _level(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) not in COMPUTER_LEVELS:
        raise UsageError(f"a computer level is 1 (a beginner can win) to 5 (the strongest), not {text!r}")
    return int(text)


def _seat_word(text: str) -> int:
    if text not in ("0", "1"):
        raise UsageError(f"seat=0 (moves first) or seat=1, not seat={text}")
    return int(text)


def _switch(key: str, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("on", "yes", "true", "1"):
        return True
    if lowered in ("off", "no", "false", "0"):
        return False
    raise UsageError(f"{key}=on or {key}=off, not {key}={text}")


def describe_archived(entry: dict[str, Any], described_games: Iterable[Any] | None = None) -> str:
    """One line of the archive: id, game, options (as :func:`options_words`), players, result, plies, when it finished (sanitised)."""
    game = printable(str(entry.get("game", "?")))
    seats = game_seats(game)
    players = list(entry.get("players") or [])[:2]
    players += [None] * (2 - len(players))
    names = " vs ".join(f"{seats[i]} {name_text(players[i], '?')}" for i in (0, 1))
    result = entry.get("result")
    result_text = outcome_text(result, seats) if isinstance(result, dict) else "no result"
    options = entry.get("options")
    words = options_words(game, options, described_games) if isinstance(options, dict) else ""
    words = f" {words}" if words else ""
    plies = entry.get("plies")
    return (
        f"#{entry.get('id', '?')} {game}{words} — {names} — {result_text} — "
        f"{plies if plies is not None else '?'} plies — finished {_when(entry.get('finished'))}"
    )


def format_clock(snapshot: dict[str, Any], seat_names: Sequence[str], elapsed_s: float) -> str:
    """The clock line for a snapshot, counted down locally.

    Args:
        snapshot: ``{"remaining_ms": [int, int], "running": 0 | 1 | None, "control": "5+3"}``
            as the server sent it.
        seat_names: the two seats' names (``("Black", "White")``).
        elapsed_s: seconds since the snapshot arrived; taken off the running seat.

    >>> format_clock({"remaining_ms": [272_000, 300_000], "running": 0, "control": "5+3"}, ("Black", "White"), 0.4)
    'Clock: Black 4:31 · White 5:00 (running: Black)'
    """
    remaining = [int(ms) for ms in snapshot["remaining_ms"]]
    running = snapshot.get("running")
    if running in (0, 1):
        remaining[running] -= max(0, round(elapsed_s * 1000))
    text = f"Clock: {seat_names[0]} {_clock_time(remaining[0])} · {seat_names[1]} {_clock_time(remaining[1])}"
    if running in (0, 1):
        text += f" (running: {seat_names[running]})"
    return text


def _clock_time(ms: int) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour; ``0:ss.t`` under ten seconds), rounded down."""
    ms = max(0, ms)
    if ms < 10_000:
        return f"0:{ms // 1000:02d}.{ms % 1000 // 100}"
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def shutdown_text(message: str) -> str:
    """The line for a ``shutdown`` push, saying once that the server is shutting down.

    ``message`` is the server's text (sanitised here): shown as it is when it says
    so itself (``the server is shutting down``: ``The server is shutting down.``),
    else after the notice (``The server is shutting down: back at 9 UTC.``).
    """
    text = printable_lines(message).strip().rstrip(".")
    if not text:
        return "The server is shutting down."
    if "shutting down" in text.lower():
        return text[0].upper() + text[1:] + "."
    return f"The server is shutting down: {text}."


def outcome_text(outcome: dict[str, Any], seats: Sequence[str]) -> str:
    """An outcome map as words, e.g. ``Black wins — resignation (20–13)``, ``draw — …`` or ``aborted — …`` (sanitised)."""
    score = outcome.get("score")
    tail = f" ({score[0]}–{score[1]})" if score else ""
    reason = printable(str(outcome.get("reason", "")))
    winner = outcome.get("winner")
    if outcome.get("aborted") is True:
        return f"aborted — {reason}{tail}"
    if winner is None:
        return f"draw — {reason}{tail}"
    who = seats[winner] if winner in (0, 1) else f"seat {winner}"
    return f"{who} wins — {reason}{tail}"


def game_seats(name: str) -> tuple[str, str]:
    """The two seat names of game ``name`` (``("Black", "White")``); ``("seat 0", "seat 1")`` for an unknown game."""
    try:
        seats = games.get(name).seats
    except games.GameError:
        return ("seat 0", "seat 1")
    return (seats[0], seats[1])


def name_text(name: str | None, missing: str = "(free)") -> str:
    """A player's name, sanitised; ``missing`` when there is none."""
    return printable(name) if name else missing


def _when(text: Any) -> str:
    if not isinstance(text, str):
        return "?"
    try:
        return datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return printable(text)


def plies_text(count: int) -> str:
    """``1 ply`` or ``N plies``."""
    return f"{count} ply" if count == 1 else f"{count} plies"


def example_move(view: dict[str, Any]) -> str:
    """A legal move of ``view`` to show as an example (``d3`` when none is known)."""
    legal = view.get("legal_moves") or []
    return legal[0] if legal else "d3"


def mill_line(view: dict[str, Any]) -> str | None:
    """For a Morris view on the viewer's turn where a move closes a mill: the line saying a counter must be removed.

    >>> mill_line({"game": "morris", "legal_moves": ["c4", "d2xa1", "d2xa7"]})
    "A mill: d2 closes one, so it must remove one of your opponent's counters: type it with x and the counter's point, e.g. d2xa1."
    """
    mills = [move for move in view.get("legal_moves") or [] if "x" in move]
    if view.get("game") != "morris" or not mills:
        return None
    closing = sorted({move.split("x")[0] for move in mills})
    which = closing[0] if len(closing) == 1 else ", ".join(closing[:-1]) + " or " + closing[-1]
    verb = "closes" if len(closing) == 1 else "each close"
    return f"A mill: {which} {verb} one, so it must remove one of your opponent's counters: type it with x and the counter's point, e.g. {mills[0]}."


def read_file(key: str, path: str) -> str:
    """The text of the file named by a ``key=FILE`` option (pieces, position) or command."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the {key} file {path!r}: {exc}") from None


def write_file(path: str, text: str) -> None:
    """Write ``text`` to ``path``.

    Raises:
        UsageError: the file cannot be written.
    """
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc}") from None


def table_and_seat(args: list[str]) -> tuple[int, int | None]:
    """The table id and optional seat of ``join ID [SEAT]`` / ``watch ID``.

    Raises:
        UsageError: no id, or words that are not numbers.
    """
    try:
        table_id = int(args[0].lstrip("#"))
        seat = int(args[1]) if len(args) > 1 else None
    except (IndexError, ValueError):
        raise UsageError("usage: join ID [SEAT] / watch ID, e.g. join 3") from None
    return table_id, seat


def game_id(text: str) -> int | None:
    """The game id in ``12`` or ``#12``, or ``None`` when ``text`` is not one."""
    digits = text[1:] if text.startswith("#") else text
    return int(digits) if digits.isascii() and digits.isdigit() and int(digits) >= 1 else None


def count_arg(args: list[str], usage: str, default: int = 1) -> int:
    """The optional positive count in ``args`` (``default`` when absent)."""
    if not args:
        return default
    if len(args) > 1 or not (args[0].isascii() and args[0].isdigit()) or int(args[0]) < 1:
        raise UsageError(usage)
    return int(args[0])


def chat_text(args: list[str], command: str) -> str:
    """The text of ``say``/``shout`` (``args`` holds the rest of the line).

    Raises:
        UsageError: no text, or more than the protocol's most characters.
    """
    text = args[0].strip() if args else ""
    if not text:
        raise UsageError(f"usage: {command} TEXT")
    if len(text) > m.MAX_CHAT_CHARS:
        raise UsageError(f"a chat line holds at most {m.MAX_CHAT_CHARS} characters, not {len(text)}")
    return text
