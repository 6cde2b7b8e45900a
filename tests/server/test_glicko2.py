"""Glicko-2 against Glickman's worked example, the properties any rating update must have, time-control families, idle aging."""

from __future__ import annotations

import pytest

from server.tables.clock import TimeControl
from server.ratings.glicko2 import DEFAULT_DEVIATION, IDLE_DAYS_PER_PERIOD, Rating, age, expected_score, rate, rate_game
from server.ratings.ratings import Rating as RatingsRating, Ratings, family_of


def test_the_papers_worked_example() -> None:
    # "Example of the Glicko-2 system": 1500/200/0.06 beats 1400/30, loses to 1550/100 and 1700/300.
    player = Rating(1500, 200, 0.06)
    new = rate(player, [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)])
    assert new.rating == pytest.approx(1464.06, abs=0.02)
    assert new.deviation == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.05999, abs=0.00001)


def test_two_newcomers_one_game_as_lichess_rates_it() -> None:
    winner = rate_game(Rating(), Rating(), 1.0)
    loser = rate_game(Rating(), Rating(), 0.0)
    assert winner.rating == pytest.approx(1662.31, abs=0.01) and loser.rating == pytest.approx(1337.69, abs=0.01)
    assert winner.deviation == pytest.approx(290.32, abs=0.01) == loser.deviation


@pytest.mark.parametrize("player, opponent", [(Rating(), Rating()), (Rating(1800, 60, 0.05), Rating(1400, 200)), (Rating(1200, 300), Rating(2100, 40))])
def test_a_win_raises_a_loss_lowers_a_game_narrows(player: Rating, opponent: Rating) -> None:
    won, lost, drew = (rate_game(player, opponent, score) for score in (1.0, 0.0, 0.5))
    assert lost.rating < drew.rating < won.rating
    assert won.rating > player.rating > lost.rating
    # a game is information: the deviation ends below what a period without games would leave
    assert max(won.deviation, lost.deviation, drew.deviation) < age(player, 1).deviation
    # a draw moves the rating towards the opponent's
    assert (drew.rating - player.rating) * (opponent.rating - player.rating) >= 0


def test_results_are_symmetric() -> None:
    ann, bob = Rating(1600, 120, 0.06), Rating(1600, 120, 0.06)
    ann_won, bob_lost = rate_game(ann, bob, 1.0), rate_game(bob, ann, 0.0)
    assert ann_won.rating - 1600 == pytest.approx(1600 - bob_lost.rating)
    assert ann_won.deviation == pytest.approx(bob_lost.deviation)
    drew = rate_game(ann, bob, 0.5)
    assert drew.rating == pytest.approx(1600)
    assert expected_score(ann, bob) == pytest.approx(0.5)


def test_an_upset_moves_more_than_an_expected_result() -> None:
    weak, strong = Rating(1400, 80), Rating(1800, 80)
    upset = rate_game(weak, strong, 1.0).rating - weak.rating
    expected = rate_game(strong, weak, 1.0).rating - strong.rating
    assert upset > 5 * expected > 0


def test_idle_periods_widen_the_deviation_up_to_the_newcomers() -> None:
    player = Rating(1700, 50, 0.06)
    assert age(player, 0).deviation == pytest.approx(50)
    assert 50 < age(player, 1).deviation < age(player, 10).deviation < DEFAULT_DEVIATION
    assert age(player, 1e9).deviation == DEFAULT_DEVIATION
    assert age(player, 3).rating == 1700
    assert rate(player, []).deviation == pytest.approx(age(player, 1).deviation)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="score"):
        rate_game(Rating(), Rating(), 2.0)
    with pytest.raises(ValueError, match="positive deviation"):
        rate_game(Rating(1500, 0), Rating(), 1.0)
    with pytest.raises(ValueError, match="periods"):
        age(Rating(), -1)


@pytest.mark.parametrize(
    "time_control, family",
    [("0.5+0", "bullet"), ("2+0", "bullet"), ("2+1", "bullet"), ("3+0", "blitz"), ("1+3", "blitz"), ("5+3", "blitz"),
     ("7+2", "rapid"), ("8+0", "rapid"), ("15+10", "rapid"), ("25+0", "classical"), ("10+30", "classical"), (None, "untimed"), ("none", "untimed")],
)  # fmt: skip
def test_time_control_families_by_estimated_duration(time_control: str | None, family: str) -> None:
    assert family_of(time_control) == family
    if time_control is not None and time_control != "none":
        assert family_of(TimeControl.parse(time_control)) == family


def test_a_stored_rating_widens_with_idle_days_when_read() -> None:
    now = 1_000_000.0
    ratings = Ratings(clock=lambda: now)  # in memory, on a clock the test moves
    change = ratings.plan(1, "othello", "blitz", [("Ann", "ann"), ("Bob", "bob")], winner=0)
    ratings.apply(change)
    fresh = ratings.get("ann", "othello", "blitz")
    assert fresh.rating == pytest.approx(1662.31, abs=0.01) and fresh.deviation == pytest.approx(290.32, abs=0.01)
    now += 30 * 86400.0  # a month without a rated game
    idle = ratings.get("ann", "othello", "blitz")
    assert idle.rating == fresh.rating and fresh.deviation < idle.deviation <= DEFAULT_DEVIATION
    assert idle.deviation == pytest.approx(age(fresh.glicko(), 30 / IDLE_DAYS_PER_PERIOD).deviation)
    assert ratings.get("carol", "othello", "blitz") == RatingsRating()
