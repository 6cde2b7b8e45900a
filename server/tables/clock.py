"""Game clocks: time controls and a two-seat Fischer clock.

Pure logic: no asyncio, no I/O, no reading of the system clock. Every method
that depends on time takes ``now``, a float in seconds from a monotonic clock
(the server passes ``time.monotonic()`` or ``loop.time()``), so the clock is
tested with plain numbers. All durations are seconds (floats) unless a name
says ``_ms`` (integer milliseconds, for the wire).

A time control ``"5+3"`` gives each seat 5 minutes and adds 3 seconds after
each of its moves (Fischer increment). The server owns a :class:`Clock` per
timed table:

>>> clock = Clock(TimeControl.parse("5+3"))
>>> clock.start(0, now=100.0)             # seat 0 to move
>>> clock.flag_time(100.0)                # seat 0 loses at t = 400 s if silent
400.0
>>> clock.press(0, now=110.0)             # moved after 10 s: 300 - 10 + 3
293.0
>>> clock.running, clock.remaining(1, 110.0)
(1, 300.0)

Which seat's time runs is the table's choice: it starts each side's time
only after that side's own first move (:func:`server.tables.timing.clock_seat`).

The table learns of a flag fall either when it next touches the clock
(:meth:`Clock.press` raises :class:`FlagFell`) or, for a silent player, from
a timer set for :meth:`Clock.flag_time` that then asks :meth:`Clock.flagged`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

__all__ = [
    "MAX_INCREMENT_S",
    "MAX_INITIAL_S",
    "Clock",
    "FlagFell",
    "TimeControl",
    "TimeControlError",
]

MAX_INITIAL_S = 24 * 60 * 60.0
"""The longest initial time a time control may give, in seconds (24 h)."""

MAX_INCREMENT_S = 60 * 60.0
"""The largest increment a time control may give, in seconds (1 h)."""

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_SEATS = (0, 1)


class TimeControlError(ValueError):
    """A time control that cannot be used; the message says what is wrong."""


class FlagFell(Exception):
    """A seat's time ran out before it moved.

    Attributes:
        seat: the seat whose flag fell (0 or 1); that seat loses on time.
    """

    def __init__(self, seat: int) -> None:
        super().__init__(f"seat {seat} ran out of time")
        self.seat = seat


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A Fischer time control: initial time per seat, plus an increment per move.

    The fields are checked when the value is built, so every instance is usable.

    Attributes:
        initial_s: time each seat starts with, in seconds (0 to 86400).
        increment_s: time added to a seat after each of its moves, in seconds
            (0 to 3600). ``initial_s`` and ``increment_s`` are not both zero.

    Raises:
        TimeControlError: a field is negative, not finite, not a number,
            above its limit, or both are zero.
    """

    initial_s: float
    increment_s: float

    def __post_init__(self) -> None:
        for name in ("initial_s", "increment_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TimeControlError(f"{name} must be a number of seconds, not {type(value).__name__}")
            if not math.isfinite(value):
                raise TimeControlError(f"{name} must be finite, not {value}")
            object.__setattr__(self, name, float(value))
        if self.initial_s < 0:
            raise TimeControlError(f"the initial time must not be negative ({_fmt(self.initial_s)} s)")
        if self.increment_s < 0:
            raise TimeControlError(f"the increment must not be negative ({_fmt(self.increment_s)} s)")
        if self.initial_s == 0 and self.increment_s == 0:
            raise TimeControlError("the initial time and the increment cannot both be zero")
        if self.initial_s > MAX_INITIAL_S:
            raise TimeControlError(
                f"the initial time {_fmt(self.initial_s / 60)} min is above the limit of "
                f"{_fmt(MAX_INITIAL_S / 60)} min (24 h)"
            )
        if self.increment_s > MAX_INCREMENT_S:
            raise TimeControlError(
                f"the increment {_fmt(self.increment_s)} s is above the limit of {_fmt(MAX_INCREMENT_S)} s (1 h)"
            )

    @classmethod
    def parse(cls, text: str | None) -> TimeControl | None:
        """Read a time control written ``MINUTES+INCREMENT``.

        ``MINUTES`` is the initial time in minutes and ``INCREMENT`` the
        increment in seconds, each a plain decimal (``"5+3"``, ``"0.5+0"``,
        ``"90+30"``); ``"10"`` means ``"10+0"``. Spaces around the parts are
        ignored. ``None``, ``""`` and ``"none"`` (any case) mean untimed.

        Returns:
            The time control, or ``None`` for an untimed game.

        Raises:
            TimeControlError: the text is not of that form, a part is not a
                number or is negative, both parts are zero, or a limit is
                exceeded (24 h initial, 1 h increment). The message quotes the
                text and names the part at fault.

        >>> TimeControl.parse("0.5+2")
        TimeControl(initial_s=30.0, increment_s=2.0)
        >>> TimeControl.parse("none") is None
        True
        """
        if text is None:
            return None
        if not isinstance(text, str):
            raise TimeControlError(f"a time control is text like '5+3', not {type(text).__name__}")
        stripped = text.strip()
        if stripped == "" or stripped.lower() == "none":
            return None
        parts = stripped.split("+")
        if len(parts) > 2:
            raise TimeControlError(f"bad time control {text!r}: expected MINUTES+INCREMENT, with one '+'")
        minutes = _parse_number(text, parts[0], "initial time (minutes)")
        increment_s = _parse_number(text, parts[1], "increment (seconds)") if len(parts) == 2 else 0.0
        try:
            return cls(minutes * 60, increment_s)
        except TimeControlError as exc:
            raise TimeControlError(f"bad time control {text!r}: {exc}") from None

    @property
    def starting_s(self) -> float:
        """The time each seat has when the game starts, in seconds.

        This is ``initial_s``, except that a control with no initial time
        (``"0+5"``) starts each seat with one increment, so the first move
        is possible at all.
        """
        return self.initial_s if self.initial_s > 0 else self.increment_s

    def __str__(self) -> str:
        """The canonical text, ``MINUTES+INCREMENT`` (``"5+3"``, ``"0.5+0"``); :meth:`parse` reads it back."""
        return f"{_fmt(_minutes(self.initial_s))}+{_fmt(self.increment_s)}"


class Clock:
    """A two-seat chess clock with a Fischer increment.

    At most one seat's time runs at a time. Each seat has a banked time; the
    running seat's live remaining time is its banked time minus the time since
    its turn began, and its flag falls when that reaches zero, that is at
    ``now >= flag_time()``. Pressing the clock ends the mover's turn, banks
    its remaining time plus the increment, and starts the other seat.

    ``now`` is always seconds on one monotonic clock. For the running seat it
    must not precede the start of that seat's turn (``ValueError`` otherwise:
    time going backwards is a caller bug). ``seat`` is always 0 or 1.

    Args:
        control: the time control; both seats start with ``control.starting_s``.
    """

    __slots__ = ("control", "_control_text", "_banked", "_running", "_turn_began")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self._control_text = str(control)  # in every snapshot, i.e. every timed move: worked out once
        self._banked = [control.starting_s, control.starting_s]
        self._running: int | None = None
        self._turn_began = 0.0

    def __repr__(self) -> str:
        return f"<Clock {self.control} banked_s={self._banked} running={self._running}>"

    def copy(self) -> "Clock":
        """An independent copy of this clock's state (the time control, immutable, is shared).

        What the server puts back when a move's time was charged but the move
        could not be saved: a few field copies, where ``copy.deepcopy`` walks the object.
        """
        twin = Clock.__new__(Clock)
        twin.control = self.control
        twin._control_text = self._control_text
        twin._banked = list(self._banked)
        twin._running = self._running
        twin._turn_began = self._turn_began
        return twin

    @property
    def running(self) -> int | None:
        """The seat whose time is running, or ``None`` while the clock is stopped."""
        return self._running

    # --- queries --------------------------------------------------------------------

    def remaining(self, seat: int, now: float) -> float:
        """The time ``seat`` has left at ``now``, in seconds; never negative.

        Live for the running seat (0.0 once its flag has fallen), the banked
        time for the other.
        """
        _check_seat(seat)
        if seat != self._running:
            return self._banked[seat]
        return self._running_left(now)

    def _running_left(self, now: float) -> float:
        """:meth:`remaining` of the running seat."""
        self._check_now(now)
        seat = self._running
        assert seat is not None
        if now >= self._turn_began + self._banked[seat]:
            return 0.0
        return max(0.0, self._banked[seat] - (now - self._turn_began))

    def flag_time(self, now: float) -> float | None:
        """When the running seat's flag falls if it does not move, in monotonic seconds.

        The moment may already be past (the flag has fallen). ``None`` while
        the clock is stopped. The server sets its flag timer for this moment.
        """
        if self._running is None:
            return None
        self._check_now(now)
        return self._turn_began + self._banked[self._running]

    def flagged(self, now: float) -> int | None:
        """The running seat if its flag has fallen by ``now`` (``now >= flag_time``), else ``None``.

        A stopped clock reports ``None``, even if a seat was stopped at zero.
        """
        deadline = self.flag_time(now)
        if deadline is None or now < deadline:
            return None
        return self._running

    # --- changes --------------------------------------------------------------------

    def start(self, seat: int, now: float) -> None:
        """Begin ``seat``'s turn at ``now`` on a stopped clock (the first move, or resuming after :meth:`stop`).

        Raises:
            ValueError: the clock is already running.
        """
        _check_seat(seat)
        _check_finite(now)
        if self._running is not None:
            raise ValueError(f"the clock is already running for seat {self._running}")
        self._running = seat
        self._turn_began = now

    def press(self, seat: int, now: float) -> float:
        """End ``seat``'s turn at ``now`` after it moved, and start the other seat's.

        The time since the turn began is deducted, then the increment is added.
        If the move ends the game, call :meth:`stop` next (at the same ``now``
        the other seat loses nothing).

        Returns:
            ``seat``'s remaining time after the increment, in seconds.

        Raises:
            ValueError: ``seat`` is not the running seat (or the clock is stopped).
            FlagFell: ``seat``'s flag fell before ``now`` (``now >= flag_time``);
                the move is too late and the clock is left unchanged, still
                running for ``seat``, so the caller ends the game and stops it.
        """
        self._check_running(seat, now)
        if now >= self._turn_began + self._banked[seat]:  # flagged(now), written out: its checks are done just above
            raise FlagFell(seat)
        left = self._banked[seat] - (now - self._turn_began) + self.control.increment_s
        self._banked[seat] = left
        self._running = 1 - seat
        self._turn_began = now
        return left

    def pass_turn(self, seat_passing: int, next_seat: int, now: float) -> None:
        """Hand the turn from ``seat_passing`` to ``next_seat`` for a forced pass; it costs no time.

        A forced pass is made by the server at once, not by the player, so
        ``seat_passing`` is neither charged nor credited: its banked time stays
        exactly what it was when its turn began (any time since is ignored,
        the flag is not checked) and it gets no increment. ``next_seat``'s
        turn begins at ``now`` with its banked time, as with :meth:`start`.

        Raises:
            ValueError: ``seat_passing`` is not the running seat, or
                ``next_seat`` is not the other seat.
        """
        self._check_running(seat_passing, now)
        _check_seat(next_seat)
        if next_seat == seat_passing:
            raise ValueError(f"seat {seat_passing} cannot pass the turn to itself")
        self._running = next_seat
        self._turn_began = now

    def stop(self, now: float) -> None:
        """Stop the clock at ``now`` (game over, or a pause); no increment is given.

        The running seat is charged the time since its turn began (never below
        zero); :meth:`start` resumes. Stopping a stopped clock does nothing.
        """
        if self._running is None:
            return
        seat = self._running
        left = self.remaining(seat, now)
        self._banked[seat] = left
        self._running = None

    # --- persistence ----------------------------------------------------------------

    def snapshot(self, now: float) -> dict[str, Any]:
        """The clock at ``now`` as plain data, for the wire and the database.

        Returns:
            ``{"remaining_ms": [int, int], "running": 0 | 1 | None, "control": "5+3"}``:
            each seat's remaining time in whole milliseconds (rounded to the
            nearest, but at least 1 while time is left, so a seat that has
            not flagged never reads as flagged), the running seat, and the
            canonical time control.
        """
        running = self._running
        left = self._banked
        if running is not None:  # the stopped seat's time is its banked time: only the running one is worked out
            left = list(left)
            left[running] = self._running_left(now)
        return {"remaining_ms": [_to_ms(left[0]), _to_ms(left[1])], "running": running, "control": self._control_text}

    @classmethod
    def restore(cls, control: TimeControl | str, remaining_ms: list[int], running: int | None, now: float) -> Clock:
        """Rebuild a clock from a :meth:`snapshot` (after a server restart).

        The running seat's turn resumes at ``now`` with the time it had in the
        snapshot: time while the server was down is not charged to anyone.

        Args:
            control: the time control, or its text (the snapshot's ``"control"``).
            remaining_ms: each seat's remaining time in milliseconds (two ints >= 0).
            running: the running seat, or ``None`` for a stopped clock.
            now: the restore moment, in monotonic seconds.

        Raises:
            TimeControlError: ``control`` is text that does not parse, or is untimed.
            ValueError: ``remaining_ms`` or ``running`` is malformed.
        """
        if isinstance(control, str):
            parsed = TimeControl.parse(control)
            if parsed is None:
                raise TimeControlError(f"cannot restore a clock with no time control ({control!r})")
            control = parsed
        if (
            not isinstance(remaining_ms, (list, tuple))
            or len(remaining_ms) != 2
            or any(isinstance(ms, bool) or not isinstance(ms, int) or ms < 0 for ms in remaining_ms)
        ):
            raise ValueError(f"remaining_ms must be two integers >= 0, not {remaining_ms!r}")
        if running is not None:
            _check_seat(running)
        _check_finite(now)
        clock = cls(control)
        clock._banked = [ms / 1000 for ms in remaining_ms]
        if running is not None:
            clock.start(running, now)
        return clock

    # --- helpers --------------------------------------------------------------------

    def _check_now(self, now: float) -> None:
        if type(now) is not float or not math.isfinite(now):  # a finite float, as time.monotonic() gives, needs no call
            _check_finite(now)
        if self._running is not None and now < self._turn_began:
            raise ValueError(f"now={now} is before the running turn began ({self._turn_began})")

    def _check_running(self, seat: int, now: float) -> None:
        if type(seat) is not int or seat != self._running:  # the running seat (0 or 1, not a bool) passes every check below
            _check_seat(seat)
            if self._running is None:
                raise ValueError(f"the clock is stopped; seat {seat} is not running")
            if seat != self._running:
                raise ValueError(f"seat {seat} is not running; it is seat {self._running}'s turn")
        self._check_now(now)


def _check_seat(seat: int) -> None:
    if isinstance(seat, bool) or seat not in _SEATS:
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")


def _check_finite(now: float) -> None:
    if isinstance(now, bool) or not isinstance(now, (int, float)) or not math.isfinite(now):
        raise ValueError(f"now must be a finite number of seconds, not {now!r}")


def _parse_number(text: str, part: str, what: str) -> float:
    """One part of a time control: a plain non-negative decimal."""
    part = part.strip()
    if part.startswith("-"):
        raise TimeControlError(f"bad time control {text!r}: the {what} must not be negative ({part})")
    if not _NUMBER.fullmatch(part):
        hint = " (use '+' between minutes and increment)" if "-" in part else ""
        raise TimeControlError(f"bad time control {text!r}: the {what} {part!r} is not a number{hint}")
    return float(part)


def _minutes(initial_s: float) -> float:
    """``initial_s`` in minutes, chosen so that ``minutes * 60 == initial_s`` where a neighbour allows."""
    minutes = initial_s / 60
    for candidate in (minutes, math.nextafter(minutes, math.inf), math.nextafter(minutes, -math.inf)):
        if candidate * 60 == initial_s:
            return candidate
    return minutes


def _fmt(value: float) -> str:
    """A float as the shortest plain decimal (no exponent, no trailing ``.0``)."""
    if value == int(value):
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def _to_ms(seconds: float) -> int:
    ms = round(seconds * 1000)
    return 1 if ms == 0 and seconds > 0 else ms
