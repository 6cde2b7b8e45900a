"""The PostgreSQL writer's pacing (server.storage.pacing): whom it waits for, and how long at most."""

from __future__ import annotations

import pytest

from server.storage.pacing import COMPANY_SHARE, Pacing


def test_one_game_never_waits() -> None:
    pacing = Pacing()
    for _ in range(50):
        pacing.committed(1, 0, 0.004)  # one write a commit, nothing arriving meanwhile
    assert pacing.wanted(0) == 0.0 and pacing.wanted(1) == 0.0


def test_two_cohorts_count_as_one_cycle_and_the_wait_is_half_a_commit() -> None:
    pacing = Pacing()
    for _ in range(50):
        pacing.committed(5, 5, 0.004)  # five committed while the other five arrived
    assert pacing.wanted(5) == pytest.approx(10, abs=0.01)  # the second cohort waits for the first to come back
    assert pacing.wanted(10) == 0.0
    assert pacing.longest_wait_s(0.0005) == pytest.approx(COMPANY_SHARE * 0.004, rel=0.01)
    assert pacing.longest_wait_s(0.01) == 0.01
    assert pacing.longest_wait_s(0) == 0.0


def test_nonsense_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot have -1 writes"):
        Pacing().committed(-1, 0, 0.1)
