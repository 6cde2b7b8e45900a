"""The table view's words: clock readings, the move list, the result banner."""

from __future__ import annotations

from client.app.table_text import clock_text, move_list_lines, result_text


def test_clock_readings_show_tenths_only_under_ten_seconds() -> None:
    assert [clock_text(ms) for ms in (272_000, 3_723_000, 10_000, 9_450, 0, -5)] == [
        "4:32", "1:02:03", "0:10", "0:09.4", "0:00.0", "0:00.0",
    ]  # fmt: skip


def test_the_move_list_numbers_plies_two_a_line_and_brackets_forced_passes() -> None:
    assert move_list_lines([], []) == []
    assert move_list_lines(["d3", "c5", "pass"], [False, False, True]) == ["  1 d3          2 c5", "  3 (pass)"]


def test_the_banner_speaks_to_the_winner_the_loser_and_a_spectator() -> None:
    outcome = {"winner": 0, "reason": "more discs", "score": [40, 24]}
    seats, players = ("Black", "White"), ["ann", "bob"]
    assert result_text(outcome, 0, seats, players) == "You won: Black (ann) wins, more discs, 40-24"
    assert result_text(outcome, 1, seats, players) == "You lost: Black (ann) wins, more discs, 40-24"
    assert result_text(outcome, None, seats, players) == "Black (ann) wins, more discs, 40-24"
    draw = {"winner": None, "reason": "draw by agreement", "score": None}
    assert result_text(draw, 0, seats, players) == "Draw, draw by agreement"


def test_the_banner_makes_names_and_reasons_printable() -> None:
    outcome = {"winner": 1, "reason": "White resigned\x1b[2J", "score": None}
    text = result_text(outcome, None, ("White", "Black"), ["ann", "b\x1b]0;x\x07ob"])
    assert "\x1b" not in text and "\x07" not in text and text.startswith("Black (b")
