"""The rules-engine contract shared by every game.

A :class:`Game` describes one game: its name, its two seats, and its options.
``Game.new_state(options, seed)`` validates the options and returns the
starting :class:`State`. States are immutable: ``state.play(move)`` returns a
new state and never changes the old one. Moves travel as notation strings.

Everything here is pure: no I/O, no asyncio, no third-party imports.
Source: ``RULES.md``, "Common to all games".
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

__all__ = [
    "GameError",
    "InvalidOption",
    "IllegalMove",
    "Option",
    "Outcome",
    "Game",
    "State",
    "MAX_PLIES",
]


class GameError(ValueError):
    """Base class of every error a rules engine raises on bad input."""


class InvalidOption(GameError):
    """An option is unknown, of the wrong type, or out of range.

    Attributes:
        option: the option's name (``None`` when the whole options value is bad).
    """

    def __init__(self, option: str | None, message: str) -> None:
        super().__init__(message)
        self.option = option


class IllegalMove(GameError):
    """A move cannot be parsed or breaks a rule.

    Attributes:
        move: the text that was asked for.
        reason: a human reason naming the rule, e.g. ``"d3 flips nothing"``.
    """

    def __init__(self, move: str, reason: str) -> None:
        super().__init__(f"illegal move {move!r}: {reason}")
        self.move = move
        self.reason = reason


_TYPE_NAMES = {"int": int, "bool": bool, "str": str}


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a game, as the lobby and clients show it.

    Attributes:
        name: the key in the options map (``"size"``).
        type: ``"int"``, ``"bool"``, ``"str"`` or ``"list[int]"``.
        default: the value used when the option is absent or ``None``.
        minimum, maximum: inclusive bounds for ``int`` options (and for the
            items of ``list[int]`` options); ``None`` means unbounded.
        doc: one line for humans.
        max_length: for ``str`` options, the longest text accepted
            (characters); for ``list[int]``, the most items.
        label: a few words for people (forms, lobby lines); empty: the name
            with spaces for underscores, capitalised (see :attr:`title`).
    """

    name: str
    type: str
    default: Any
    doc: str = ""
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None
    label: str = ""

    @property
    def title(self) -> str:
        """The label people read: :attr:`label`, or ``"Mill protection"`` made from ``mill_protection``."""
        return self.label or self.name.replace("_", " ").capitalize()

    def describe(self) -> dict[str, Any]:
        """Return the option as a plain map, ready for the wire."""
        return {
            "name": self.name,
            "label": self.title,
            "type": self.type,
            "default": self.default,
            "min": self.minimum,
            "max": self.maximum,
            "doc": self.doc,
        }

    def allowed(self) -> str:
        """Describe the allowed values in words, e.g. ``"an integer from 6 to 16"``."""
        if self.type == "bool":
            return "true or false"
        if self.type == "str":
            return "a text" + (f" of at most {self.max_length} characters" if self.max_length else "")
        bounds = _bounds_text(self.minimum, self.maximum)
        if self.type == "int":
            return "an integer" + bounds
        return "a list of integers" + (f" each{bounds}" if bounds else "")

    def check(self, value: Any) -> Any:
        """Return ``value`` if it is allowed for this option.

        ``None`` yields the default. Types are strict: ``"8"`` is not an
        integer and ``0``/``1`` are not booleans.

        Raises:
            InvalidOption: naming the option and what is allowed.
        """
        if value is None:
            return self.default
        if self.type == "list[int]":
            return self._check_list(value)
        expected = _TYPE_NAMES[self.type]
        if type(value) is not expected:
            raise InvalidOption(self.name, f"option {self.name!r} must be {self.allowed()}, not {value!r}")
        if self.type == "int":
            self._check_bounds(value)
        if self.type == "str" and self.max_length is not None and len(value) > self.max_length:
            raise InvalidOption(self.name, f"option {self.name!r} must be {self.allowed()}")
        return value

    def _check_list(self, value: Any) -> tuple[int, ...]:
        if not isinstance(value, (list, tuple)) or any(type(v) is not int for v in value):
            raise InvalidOption(self.name, f"option {self.name!r} must be {self.allowed()}, not {value!r}")
        if self.max_length is not None and len(value) > self.max_length:
            raise InvalidOption(self.name, f"option {self.name!r} has {len(value)} items; at most {self.max_length} allowed")
        for item in value:
            self._check_bounds(item)
        return tuple(value)

    def _check_bounds(self, value: int) -> None:
        too_small = self.minimum is not None and value < self.minimum
        too_large = self.maximum is not None and value > self.maximum
        if too_small or too_large:
            raise InvalidOption(self.name, f"option {self.name!r} must be {self.allowed()}, not {value}")

    def parse_text(self, text: str) -> Any:
        """Turn command-line text (``"8"``, ``"on"``, ``"1,2,3"``) into a typed value.

        Raises:
            InvalidOption: when the text does not read as this option's type.
        """
        try:
            if self.type == "int":
                return int(text)
            if self.type == "list[int]":
                return [int(part) for part in text.replace(" ", "").split(",") if part]
        except ValueError:
            raise InvalidOption(self.name, f"option {self.name!r} must be {self.allowed()}, not {text!r}") from None
        if self.type == "bool":
            lowered = text.strip().lower()
            if lowered in ("true", "on", "yes"):
                return True
            if lowered in ("false", "off", "no"):
                return False
            raise InvalidOption(self.name, f"option {self.name!r} must be {self.allowed()}, not {text!r}")
        return text


def _bounds_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" of at least {minimum}"
    if maximum is not None:
        return f" of at most {maximum}"
    return ""


MAX_PLIES = Option(
    "max_plies", "int", None, "the game is drawn once this many plies have been played", minimum=1, label="Most plies"
)
"""The common ``max_plies`` option (RULES.md, "Common to all games")."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended.

    Attributes:
        winner: the winning seat (0 or 1), or ``None`` for a draw.
        reason: why it ended, in words (``"more discs"``, ``"no legal move"``).
        score: a per-seat score where the game has one (disc counts), else ``None``.
        aborted: the game was called off before both sides had moved: no
            result at all (``winner`` is ``None``), not a draw, and not rated.
    """

    winner: int | None
    reason: str
    score: tuple[int, int] | None = None
    aborted: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return the outcome as a plain map, ready for the wire (``"aborted": true`` only for an aborted game)."""
        plain: dict[str, Any] = {
            "winner": self.winner,
            "reason": self.reason,
            "score": list(self.score) if self.score is not None else None,
        }
        if self.aborted:
            plain["aborted"] = True
        return plain


class Game(abc.ABC):
    """One game's metadata and its starting position.

    Subclasses set the class attributes and implement :meth:`_setup`.

    Attributes:
        name: short name used on the wire and the command line (``"othello"``).
        title: the name people know it by.
        seats: the two seats' colour names, seat 0 first.
        options: the options this game accepts.
        uses_seed: whether setup involves chance (a seed is drawn and recorded).
        public_views: whether every seat's view is the spectator's, but for the
            ``legal_moves`` of the seat to move (the game hides nothing): a
            server may then make one view and add the moves for that seat.
            Leave it ``False`` for a game with hidden information.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    seats: ClassVar[tuple[str, str]]
    options: ClassVar[tuple[Option, ...]] = ()
    uses_seed: ClassVar[bool] = False
    public_views: ClassVar[bool] = False

    def describe(self) -> dict[str, Any]:
        """Return the game's metadata as a plain map, ready for the wire."""
        return {
            "name": self.name,
            "title": self.title,
            "seats": list(self.seats),
            "options": [option.describe() for option in self.options],
            "uses_seed": self.uses_seed,
        }

    def option(self, name: str) -> Option:
        """Return the option called ``name``.

        Raises:
            InvalidOption: if the game has no such option, listing the known ones.
        """
        for option in self.options:
            if option.name == name:
                return option
        known = ", ".join(o.name for o in self.options) or "none"
        raise InvalidOption(name, f"{self.name} has no option {name!r} (options: {known})")

    def resolve_options(self, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Validate ``options`` and fill in defaults.

        Returns:
            A map with every option of the game.

        Raises:
            InvalidOption: for an unknown option, a wrong type or a value out of range.
        """
        given = dict(options or {})
        if not all(isinstance(key, str) for key in given):
            raise InvalidOption(None, "option names must be strings")
        for key in given:
            self.option(key)
        resolved = {opt.name: opt.check(given.get(opt.name)) for opt in self.options}
        self._check_options(resolved)
        return resolved

    def _check_options(self, options: dict[str, Any]) -> None:
        """Hook for checks that involve several options; raise InvalidOption."""

    def new_state(self, options: Mapping[str, Any] | None = None, seed: str | int | None = None) -> "State":
        """Return the starting state.

        Args:
            options: option values by name; absent or ``None`` means the default.
            seed: the setup seed for games with chance; ignored by the others.

        Raises:
            InvalidOption: if an option is unknown, mistyped, out of range, or the
                options together describe an impossible setup.
        """
        if seed is not None and (type(seed) not in (int, str)):
            raise InvalidOption("seed", f"the seed must be a text or an integer, not {seed!r}")
        return self._setup(self.resolve_options(options), seed)

    @abc.abstractmethod
    def _setup(self, options: dict[str, Any], seed: str | int | None) -> "State":
        """Return the starting state for validated ``options``."""

    def state_from_view(self, view: Mapping[str, Any]) -> "State":
        """Rebuild the position a view shows, for a computer player to search from.

        Only games whose views show everything can do this; the rebuilt
        state plays the same legal moves as the original. Engines override it.

        Args:
            view: a map returned by ``State.view(seat)`` (any seat).

        Raises:
            GameError: if the game hides information (Tactego: sample a
                consistent position instead) or the view is not one of this
                game's.
        """
        raise GameError(f"{self.name} cannot rebuild a position from a view")

    def _require_own_view(self, view: Mapping[str, Any]) -> None:
        """For :meth:`state_from_view`: refuse a view of another game.

        Raises:
            GameError: naming the game the view is of.
        """
        if view.get("game") != self.name:
            raise GameError(f"not a {self.name} view: game is {view.get('game')!r}")

    def setup_uses_chance(self, options: Mapping[str, Any]) -> bool:
        """Whether a table with these options (resolved, or as the lobby shows them) draws its setup from the seed.

        :attr:`uses_seed` by default; a game whose options can fix the whole
        setup (Nimble's ``board``) says ``False`` for them. Where this is false
        the seed changes nothing, so it is not worth showing or recording.
        """
        return self.uses_seed

    def setup_lines(self, state: "State") -> list[str]:
        """The whole starting position ``state`` as text lines, for a finished game's record (a comment).

        Only games that hide part of their setup while playing say anything
        (the record's seed gives it, but no reader can see it there); the
        others return ``[]``.
        """
        return []

    def seed_is_secret(self, options: Mapping[str, Any]) -> bool:
        """Whether the setup seed reveals hidden information while the game runs.

        The server keeps such a seed from every connection until the game is over.
        """
        return False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class State(abc.ABC):
    """An immutable game position.

    Subclasses implement :meth:`legal_moves`, :meth:`_play` and :meth:`_view`
    and provide ``game``, ``options``, ``ply``, ``to_move``, ``outcome`` and
    ``last_move`` (plain attributes, or properties that work a value out on
    first use); the base class refuses moves once the game is over and builds
    the common part of :meth:`view`. :meth:`children`, :meth:`move_count`
    and :meth:`turn` have generic versions an engine may speed up.

    Attributes:
        game: the :class:`Game` this is a position of.
        options: the resolved options.
        ply: half-moves played so far (forced passes count).
        to_move: the seat to move, or ``None`` when the game is over.
        outcome: ``None`` while the game runs, else an :class:`Outcome`.
        last_move: the canonical notation of the move that led here, or
            ``None`` for a starting position. The server stores this form.
    """

    __slots__ = ()

    game: Game
    options: Mapping[str, Any]
    ply: int
    to_move: int | None
    outcome: Outcome | None
    last_move: str | None

    @abc.abstractmethod
    def legal_moves(self) -> list[str]:
        """Return every legal move in canonical notation (empty when the game is over)."""

    def play(self, move: str) -> "State":
        """Return the state after ``move``.

        Args:
            move: notation, parsed forgivingly (case, spaces, the seed's formats).

        Raises:
            IllegalMove: if the game is over, the text cannot be parsed, or the
                move breaks a rule; the reason names the rule.
        """
        if not isinstance(move, str):
            raise IllegalMove(repr(move), "a move must be a text in the game's notation")
        if self.outcome is not None:
            raise IllegalMove(move, "the game is over")
        return self._play(move)

    def turn(self) -> tuple[int | None, Outcome | None, bool]:
        """Return ``(to_move, outcome, only_pass)``: :attr:`to_move`, :attr:`outcome`, and whether the
        side to move's only legal move is ``"pass"`` (``legal_moves() == ["pass"]``: a server plays it itself).

        What a server asks of every position a move leads to, in one call; an
        engine may answer without building the list of legal moves.
        """
        return self.to_move, self.outcome, self.legal_moves() == ["pass"]

    def children(self) -> list["State"]:
        """Return the state after each legal move, in :meth:`legal_moves` order.

        ``children()[i]`` equals ``play(legal_moves()[i])`` and its
        ``last_move`` is that move; the list is empty when the game is over.
        This is the cheap way to walk the move tree (search, perft): engines
        may override it to skip parsing notation and building move texts.
        """
        return [self.play(move) for move in self.legal_moves()]

    def move_count(self) -> int:
        """Return ``len(legal_moves())``; engines may count without building the list."""
        return len(self.legal_moves())

    @abc.abstractmethod
    def _play(self, move: str) -> "State":
        """Apply ``move`` to a running game; raise IllegalMove if it is not legal."""

    def view(self, seat: int | None) -> dict[str, Any]:
        """Return what ``seat`` (0 or 1) or a spectator (``None``) may see.

        The map is built of plain types, ready for msgpack. It always has
        ``game``, ``ply``, ``to_move`` and ``outcome``; ``legal_moves`` only for
        the seat to move; the rest is per game (see each game's ``_view``).

        Raises:
            ValueError: if ``seat`` is not 0, 1 or ``None``.
        """
        if seat not in (0, 1, None):
            raise ValueError(f"seat must be 0, 1 or None, not {seat!r}")
        view = self._view(seat)
        to_move, outcome = self.to_move, self.outcome
        view["game"] = self.game.name
        view["ply"] = self.ply
        view["to_move"] = to_move
        view["outcome"] = outcome.to_dict() if outcome is not None else None
        if seat is not None and seat == to_move:
            view["legal_moves"] = self.legal_moves()
        return view

    def revealed(self) -> "State":
        """This position with nothing hidden from anyone: every seat's view (a spectator's too) shows all of it.

        For a game that is over, whose hidden parts are public then, and for
        replays of finished games. Games that hide nothing return the state
        itself.
        """
        return self

    @abc.abstractmethod
    def _view(self, seat: int | None) -> dict[str, Any]:
        """Return the game-specific part of the view for ``seat``."""
