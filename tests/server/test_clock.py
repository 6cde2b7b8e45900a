"""The game clock: time control parsing, Fischer increments, flag fall, forced passes, persistence."""

from __future__ import annotations

import doctest
import math

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

import server.tables.clock
from server.tables.clock import MAX_INCREMENT_S, MAX_INITIAL_S, Clock, FlagFell, TimeControl, TimeControlError

T0 = 1000.0


def make(text: str = "5+3", seat: int = 0, now: float = T0) -> Clock:
    control = TimeControl.parse(text)
    assert control is not None
    clock = Clock(control)
    clock.start(seat, now)
    return clock


def test_doctests() -> None:
    assert doctest.testmod(server.tables.clock).failed == 0


# --- parsing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "initial_s", "increment_s", "canonical"),
    [
        ("5+3", 300.0, 3.0, "5+3"),
        ("0.5+0", 30.0, 0.0, "0.5+0"),
        ("10", 600.0, 0.0, "10+0"),
        (" 3 + 2 ", 180.0, 2.0, "3+2"),
        ("90+30", 5400.0, 30.0, "90+30"),
        ("1.5+0.5", 90.0, 0.5, "1.5+0.5"),
        (".5+1.", 30.0, 1.0, "0.5+1"),
        ("0+5", 0.0, 5.0, "0+5"),
        ("1440+3600", MAX_INITIAL_S, MAX_INCREMENT_S, "1440+3600"),
        ("05+03", 300.0, 3.0, "5+3"),
    ],
)
def test_parse_valid(text: str, initial_s: float, increment_s: float, canonical: str) -> None:
    control = TimeControl.parse(text)
    assert control == TimeControl(initial_s, increment_s)
    assert str(control) == canonical
    assert TimeControl.parse(canonical) == control


@pytest.mark.parametrize("text", [None, "", "  ", "none", "None", "NONE"])
def test_parse_untimed(text: str | None) -> None:
    assert TimeControl.parse(text) is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("-5+3", "initial time (minutes) must not be negative"),
        ("5+-3", "increment (seconds) must not be negative"),
        ("abc", "initial time (minutes) 'abc' is not a number"),
        ("5+x", "increment (seconds) 'x' is not a number"),
        ("5+", "increment (seconds) '' is not a number"),
        ("+3", "initial time (minutes) '' is not a number"),
        ("inf+0", "is not a number"),
        ("nan", "is not a number"),
        ("1e3+0", "is not a number"),
        ("5-3", "use '+' between minutes and increment"),
        ("5+3+1", "with one '+'"),
        ("0+0", "cannot both be zero"),
        ("0", "cannot both be zero"),
        ("0.0+0.0", "cannot both be zero"),
        ("1441+0", "above the limit of 1440 min (24 h)"),
        ("5+3601", "above the limit of 3600 s (1 h)"),
    ],
)
def test_parse_invalid(text: str, fragment: str) -> None:
    with pytest.raises(TimeControlError) as info:
        TimeControl.parse(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_parse_refuses_non_text() -> None:
    with pytest.raises(TimeControlError, match="not int"):
        TimeControl.parse(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("initial_s", "increment_s", "fragment"),
    [
        (-1.0, 0.0, "must not be negative"),
        (60.0, -1.0, "must not be negative"),
        (0.0, 0.0, "both be zero"),
        (math.inf, 0.0, "finite"),
        (60.0, math.nan, "finite"),
        ("60", 0.0, "not str"),
        (True, 0.0, "not bool"),
        (MAX_INITIAL_S + 1, 0.0, "limit"),
        (60.0, MAX_INCREMENT_S + 0.5, "limit"),
    ],
)
def test_constructor_checks_itself(initial_s: object, increment_s: object, fragment: str) -> None:
    with pytest.raises(TimeControlError, match=fragment):
        TimeControl(initial_s, increment_s)  # type: ignore[arg-type]


def test_time_control_is_frozen_and_coerces_to_float() -> None:
    control = TimeControl(300, 3)
    assert isinstance(control.initial_s, float) and isinstance(control.increment_s, float)
    assert str(control) == "5+3"
    with pytest.raises(AttributeError):
        control.initial_s = 1.0  # type: ignore[misc]


_decimals = st.decimals(min_value=0, max_value=1440, places=3, allow_nan=False, allow_infinity=False)
_increments = st.decimals(min_value=0, max_value=3600, places=3, allow_nan=False, allow_infinity=False)


@given(_decimals, _increments)
def test_canonical_form_round_trips(minutes: object, increment: object) -> None:
    text = f"{minutes}+{increment}"
    try:
        control = TimeControl.parse(text)
    except TimeControlError:
        assert float(str(minutes)) == 0 and float(str(increment)) == 0
        return
    assert control is not None
    assert TimeControl.parse(str(control)) == control
    assert "e" not in str(control).lower()


# --- increment and pressing ---------------------------------------------------------


def test_increment_is_added_after_the_move() -> None:
    clock = make("5+3")
    assert clock.remaining(0, T0) == 300.0
    assert clock.remaining(0, T0 + 10) == 290.0  # no increment while thinking
    assert clock.press(0, T0 + 10) == 293.0
    assert clock.running == 1
    assert clock.remaining(0, T0 + 50) == 293.0  # banked while the opponent thinks
    assert clock.remaining(1, T0 + 50) == 260.0  # opponent's time started at the press
    assert clock.press(1, T0 + 50) == 263.0
    assert clock.running == 0


def test_press_returns_more_than_before_on_a_fast_move() -> None:
    clock = make("1+2")
    assert clock.press(0, T0 + 0.5) == 61.5


def test_zero_initial_starts_with_one_increment() -> None:
    control = TimeControl.parse("0+5")
    assert control is not None and control.starting_s == 5.0
    clock = make("0+5")
    assert clock.flag_time(T0) == T0 + 5
    assert clock.press(0, T0 + 4) == 6.0


def test_pressing_the_wrong_seat_raises() -> None:
    clock = make("5+3", seat=0)
    with pytest.raises(ValueError, match="seat 1 is not running"):
        clock.press(1, T0 + 1)
    assert clock.running == 0 and clock.remaining(1, T0 + 1) == 300.0


def test_pressing_a_stopped_clock_raises() -> None:
    clock = Clock(TimeControl(60, 0))
    with pytest.raises(ValueError, match="stopped"):
        clock.press(0, T0)


@pytest.mark.parametrize("seat", [-1, 2, True, None])
def test_bad_seats_raise(seat: object) -> None:
    clock = make()
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        clock.remaining(seat, T0)  # type: ignore[arg-type]


def test_start_on_a_running_clock_raises() -> None:
    clock = make()
    with pytest.raises(ValueError, match="already running"):
        clock.start(1, T0 + 1)


@pytest.mark.parametrize("now", [T0 - 0.001, math.nan, math.inf])
def test_time_going_backwards_or_not_finite_raises(now: float) -> None:
    clock = make()
    with pytest.raises(ValueError):
        clock.press(0, now)
    with pytest.raises(ValueError):
        clock.remaining(0, now)


# --- flag fall ----------------------------------------------------------------------


def test_flag_time_is_exact() -> None:
    clock = make("1+0")
    deadline = clock.flag_time(T0)
    assert deadline == T0 + 60
    assert clock.flagged(math.nextafter(deadline, -math.inf)) is None
    assert clock.remaining(0, math.nextafter(deadline, -math.inf)) > 0
    assert clock.flagged(deadline) == 0
    assert clock.remaining(0, deadline) == 0.0


def test_flag_time_follows_the_running_seat() -> None:
    clock = make("1+10")
    clock.press(0, T0 + 20)  # seat 0 banks 50 s
    assert clock.flag_time(T0 + 20) == T0 + 20 + 60  # seat 1's full minute
    clock.press(1, T0 + 30)
    assert clock.flag_time(T0 + 30) == T0 + 30 + 50


def test_flag_time_is_none_when_stopped() -> None:
    clock = Clock(TimeControl(60, 0))
    assert clock.flag_time(T0) is None
    assert clock.flagged(T0) is None


def test_press_after_flag_raises_flag_fell() -> None:
    clock = make("1+5")
    with pytest.raises(FlagFell) as info:
        clock.press(0, T0 + 60)
    assert info.value.seat == 0
    # Unchanged: still running for the flagged seat, no increment given.
    assert clock.running == 0 and clock.flagged(T0 + 61) == 0
    assert clock.remaining(0, T0 + 61) == 0.0
    clock.stop(T0 + 61)
    assert clock.running is None and clock.remaining(0, T0 + 62) == 0.0
    assert clock.flagged(T0 + 62) is None
    assert clock.snapshot(T0 + 62)["remaining_ms"] == [0, 60_000]


def test_silent_player_flags_without_any_press() -> None:
    clock = make("0.5+0", seat=1)
    assert clock.flagged(T0 + 29.999) is None
    assert clock.flagged(T0 + 30) == 1
    assert clock.flagged(T0 + 3600) == 1


@given(
    st.lists(st.floats(min_value=0, max_value=200, allow_nan=False), min_size=1, max_size=30),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
def test_remaining_is_never_negative(thinks: list[float], start: float) -> None:
    clock = make("1+2", now=start)
    now = start
    for think in thinks:
        now += think
        seat = clock.running
        assert seat is not None
        for s in (0, 1):
            assert clock.remaining(s, now) >= 0
        deadline = clock.flag_time(now)
        assert deadline is not None
        if now >= deadline:
            assert clock.flagged(now) == seat and clock.remaining(seat, now) == 0.0
            with pytest.raises(FlagFell):
                clock.press(seat, now)
            return
        expected = clock.remaining(seat, now) + 2.0
        left = clock.press(seat, now)
        assert left > 2.0
        assert left == pytest.approx(expected)


# --- forced passes ------------------------------------------------------------------


def test_forced_pass_costs_no_time() -> None:
    clock = make("5+3")
    clock.press(0, T0 + 10)  # seat 0 moves: 293 s; seat 1 must pass
    clock.pass_turn(1, 0, T0 + 10)
    assert clock.running == 0
    assert clock.remaining(1, T0 + 10) == 300.0  # no increment for the pass
    assert clock.remaining(0, T0 + 10) == 293.0
    assert clock.flag_time(T0 + 10) == T0 + 10 + 293


def test_forced_pass_ignores_time_since_the_turn_began() -> None:
    clock = make("5+3")
    clock.press(0, T0)
    clock.pass_turn(1, 0, T0 + 0.25)  # the server took a moment to force it
    assert clock.remaining(1, T0 + 1) == 300.0
    assert clock.remaining(0, T0 + 1) == pytest.approx(303.0 - 0.75)


def test_forced_pass_checks_seats() -> None:
    clock = make("5+3", seat=0)
    with pytest.raises(ValueError, match="seat 1 is not running"):
        clock.pass_turn(1, 0, T0)
    with pytest.raises(ValueError, match="to itself"):
        clock.pass_turn(0, 0, T0)
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        clock.pass_turn(0, 2, T0)
    assert clock.running == 0


# --- stop, snapshot, restore --------------------------------------------------------


def test_stop_charges_elapsed_without_increment_and_start_resumes() -> None:
    clock = make("5+3")
    clock.stop(T0 + 20)
    assert clock.running is None
    assert clock.remaining(0, T0 + 500) == 280.0
    clock.stop(T0 + 30)  # idempotent
    assert clock.remaining(0, T0 + 500) == 280.0
    clock.start(0, T0 + 500)
    assert clock.flag_time(T0 + 500) == T0 + 500 + 280


def test_a_copy_is_independent_of_the_clock_it_was_copied_from() -> None:
    clock = make("5+3", seat=0)
    twin = clock.copy()
    assert twin.snapshot(T0 + 10) == clock.snapshot(T0 + 10)
    clock.press(0, T0 + 10)  # charged on the original only (a move whose commit then failed)
    assert clock.running == 1 and twin.running == 0
    assert twin.remaining(0, T0 + 10) == pytest.approx(290.0) and clock.remaining(0, T0 + 10) == pytest.approx(293.0)
    assert twin.control is clock.control


def test_snapshot_is_msgpack_ready() -> None:
    clock = make("5+3")
    clock.press(0, T0 + 10.0004)
    snap = clock.snapshot(T0 + 12.5)
    assert snap == {"remaining_ms": [293_000, 297_500], "running": 1, "control": "5+3"}  # 292_999.6 ms rounded
    assert all(type(ms) is int for ms in snap["remaining_ms"])
    assert msgpack.unpackb(msgpack.packb(snap)) == snap


def test_snapshot_keeps_a_sliver_of_time_above_zero() -> None:
    clock = make("1+0")
    snap = clock.snapshot(T0 + 59.9999)
    assert snap["remaining_ms"][0] == 1
    restored = Clock.restore(snap["control"], snap["remaining_ms"], snap["running"], T0 + 100)
    assert restored.flagged(T0 + 100) is None


def test_stop_snapshot_restore_round_trip() -> None:
    clock = make("3+2")
    clock.press(0, T0 + 15)
    clock.stop(T0 + 40)
    snap = clock.snapshot(T0 + 40)
    assert snap == {"remaining_ms": [167_000, 155_000], "running": None, "control": "3+2"}
    restored = Clock.restore(snap["control"], snap["remaining_ms"], snap["running"], now=5.0)
    assert restored.control == clock.control
    assert restored.running is None
    assert restored.snapshot(99.0) == snap


def test_restore_resumes_the_running_seat_without_charging_downtime() -> None:
    clock = make("5+3")
    clock.press(0, T0 + 10)
    snap = clock.snapshot(T0 + 25)  # seat 1 has used 15 s
    assert snap["remaining_ms"] == [293_000, 285_000] and snap["running"] == 1
    # The server was down; the new process's monotonic clock starts elsewhere.
    restored = Clock.restore(TimeControl(300, 3), snap["remaining_ms"], snap["running"], now=7.0)
    assert restored.running == 1
    assert restored.remaining(1, 7.0) == 285.0
    assert restored.flag_time(7.0) == 7.0 + 285.0
    assert restored.press(1, 17.0) == 278.0
    assert restored.running == 0 and restored.remaining(0, 17.0) == 293.0


def test_restore_of_a_flagged_running_seat_is_flagged_at_once() -> None:
    restored = Clock.restore("1+0", [0, 60_000], 0, now=3.0)
    assert restored.flag_time(3.0) == 3.0
    assert restored.flagged(3.0) == 0


@pytest.mark.parametrize(
    ("control", "remaining_ms", "running", "error"),
    [
        ("none", [1, 1], None, TimeControlError),
        ("5+x", [1, 1], None, TimeControlError),
        ("5+3", [1], None, ValueError),
        ("5+3", [1, -1], None, ValueError),
        ("5+3", [1, 1.5], None, ValueError),
        ("5+3", [True, 1], None, ValueError),
        ("5+3", "12", None, ValueError),
        ("5+3", [1, 1], 2, ValueError),
    ],
)
def test_restore_refuses_malformed_snapshots(control: str, remaining_ms: object, running: object, error: type) -> None:
    with pytest.raises(error):
        Clock.restore(control, remaining_ms, running, 0.0)  # type: ignore[arg-type]


@given(
    st.lists(st.tuples(st.sampled_from(["press", "pass"]), st.floats(min_value=0, max_value=30)), max_size=20),
    st.floats(min_value=0, max_value=100),
    st.floats(min_value=-1e6, max_value=1e6),
)
def test_snapshot_restore_preserves_the_clock_to_the_millisecond(
    actions: list[tuple[str, float]], gap: float, restore_at: float
) -> None:
    clock = make("10+5")
    now = T0
    for action, think in actions:
        now += think
        seat = clock.running
        assert seat is not None
        if action == "press":
            clock.press(seat, now)
        else:
            clock.pass_turn(seat, 1 - seat, now)
    now += gap
    snap = clock.snapshot(now)
    restored = Clock.restore(snap["control"], snap["remaining_ms"], snap["running"], restore_at)
    assert restored.running == clock.running
    for seat in (0, 1):
        assert restored.remaining(seat, restore_at) == pytest.approx(clock.remaining(seat, now), abs=0.0005)
    assert restored.snapshot(restore_at) == snap
