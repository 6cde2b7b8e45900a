"""The Glicko-2 rating system: pure functions, no I/O.

Follows Mark Glickman's "Example of the Glicko-2 system" (Boston
University, 2013), step by step: ratings are converted to the Glicko-2
scale (``mu``, ``phi``), the estimated variance ``v`` and improvement
``delta`` are computed from the period's results, the new volatility is
found with the Illinois algorithm (the paper's step 5), and the deviation
and rating are updated and converted back.

Parlour rates after every game, as lichess does: each game is a rating
period of its own (:func:`rate_game`), against the opponent's rating as it
was before the game. :func:`rate` takes a whole period of results, which is
what the paper's worked example uses.

Between games a rating grows less certain: :func:`age` applies the paper's
rule for a player who did not compete in a period (``phi' = sqrt(phi² +
sigma²)``) once per idle period, fractional periods included; the server
(:mod:`server.ratings.ratings`) counts one rating period per
:data:`IDLE_DAYS_PER_PERIOD` days without a rated game, as lichess does, and
no deviation ever exceeds :data:`DEFAULT_DEVIATION`.

Why a module of our own: the Glicko-2 packages on PyPI are small
single-author projects without type hints or recent maintenance, and the
most used one (``glicko2``) installs a top-level ``tests`` package that
would shadow this project's own; the algorithm is a page of arithmetic,
tested here against the paper's worked example (``tests/server/test_glicko2.py``).

>>> player = Rating(1500, 200, 0.06)
>>> new = rate(player, [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)])
>>> round(new.rating, 2), round(new.deviation, 2), round(new.volatility, 6)
(1464.05, 151.52, 0.059996)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "CONVERGENCE",
    "DEFAULT_DEVIATION",
    "DEFAULT_RATING",
    "DEFAULT_VOLATILITY",
    "IDLE_DAYS_PER_PERIOD",
    "SCALE",
    "TAU",
    "Rating",
    "age",
    "expected_score",
    "rate",
    "rate_game",
]

DEFAULT_RATING = 1500.0
"""The rating of a player who has not played yet (Glicko scale)."""
DEFAULT_DEVIATION = 350.0
"""The rating deviation of a player who has not played yet; also the most a deviation can grow to."""
DEFAULT_VOLATILITY = 0.06
"""The volatility of a player who has not played yet."""
TAU = 0.5
"""The system constant: how much the volatility may change per period (the paper suggests 0.3 to 1.2)."""
SCALE = 173.7178
"""The factor between the Glicko scale and the Glicko-2 scale (400 / ln 10)."""
CONVERGENCE = 0.000001
"""The tolerance of the Illinois algorithm in step 5 (the paper's epsilon)."""
IDLE_DAYS_PER_PERIOD = 1 / 0.21436
"""Days without a rated game that count as one idle rating period (about 4.67, lichess's setting)."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's Glicko-2 rating on the Glicko scale.

    Attributes:
        rating: the rating (1500 for a newcomer).
        deviation: the rating deviation (RD), the uncertainty of ``rating``; about 95%
            of the time the true strength lies within two deviations of it.
        volatility: how erratic the player's results are (sigma).
    """

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY


def _g(phi: float) -> float:
    """The paper's g(phi): how much a result against an uncertain opponent counts."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_opponent: float, phi_opponent: float) -> float:
    """The paper's E(mu, mu_j, phi_j): the expected score against the opponent."""
    return 1.0 / (1.0 + math.exp(-_g(phi_opponent) * (mu - mu_opponent)))


def expected_score(player: Rating, opponent: Rating) -> float:
    """The score ``player`` is expected to make against ``opponent`` (0 to 1), given both ratings."""
    return _expected((player.rating - DEFAULT_RATING) / SCALE, (opponent.rating - DEFAULT_RATING) / SCALE, opponent.deviation / SCALE)


def rate(player: Rating, results: Iterable[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The player's rating after one rating period.

    Args:
        player: the rating before the period.
        results: the period's games as ``(opponent's rating before the period, score)``,
            the score 1 for a win, 0.5 for a draw, 0 for a loss.
        tau: the system constant (:data:`TAU`).

    Returns:
        The new rating. Without results only the deviation grows (see :func:`age`).

    Raises:
        ValueError: a score outside 0 to 1, or a rating whose deviation or volatility is not positive.
    """
    _check(player)
    games = list(results)
    if not games:
        return age(player, 1.0)
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.deviation / SCALE
    improvement_sum = 0.0
    information = 0.0
    for opponent, score in games:
        _check(opponent)
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score is between 0 and 1, not {score}")
        mu_j = (opponent.rating - DEFAULT_RATING) / SCALE
        g_j = _g(opponent.deviation / SCALE)
        e_j = _expected(mu, mu_j, opponent.deviation / SCALE)
        information += g_j * g_j * e_j * (1.0 - e_j)
        improvement_sum += g_j * (score - e_j)
    variance = 1.0 / information  # step 3: v
    delta = variance * improvement_sum  # step 4
    sigma = _new_volatility(phi, player.volatility, variance, delta, tau)  # step 5
    phi_star = math.sqrt(phi * phi + sigma * sigma)  # step 6
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / variance)  # step 7
    new_mu = mu + new_phi * new_phi * improvement_sum
    return Rating(new_mu * SCALE + DEFAULT_RATING, min(new_phi * SCALE, DEFAULT_DEVIATION), sigma)  # step 8


def rate_game(player: Rating, opponent: Rating, score: float, tau: float = TAU) -> Rating:
    """The player's rating after one game (a rating period of one game, as lichess rates).

    Args:
        player: the player's rating before the game.
        opponent: the opponent's rating before the game.
        score: 1 for a win, 0.5 for a draw, 0 for a loss.
        tau: the system constant.

    Raises:
        ValueError: as :func:`rate`.
    """
    return rate(player, [(opponent, score)], tau)


def age(player: Rating, periods: float) -> Rating:
    """The rating after ``periods`` rating periods without a game: the deviation grows, capped at 350.

    ``phi' = sqrt(phi² + periods * sigma²)``: the paper's rule for a period
    without games, applied ``periods`` times (a fraction of a period counts
    as that fraction).

    Raises:
        ValueError: ``periods`` is negative or not finite.
    """
    if not (math.isfinite(periods) and periods >= 0):
        raise ValueError(f"periods must be a finite number of at least 0, not {periods}")
    phi = player.deviation / SCALE
    grown = math.sqrt(phi * phi + periods * player.volatility * player.volatility) * SCALE
    return Rating(player.rating, min(grown, max(DEFAULT_DEVIATION, player.deviation)), player.volatility)


def _new_volatility(phi: float, sigma: float, variance: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the new volatility, the root of f(x) found by the Illinois algorithm."""
    a = math.log(sigma * sigma)
    phi2 = phi * phi
    delta2 = delta * delta

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta2 - phi2 - variance - ex) / (2.0 * (phi2 + variance + ex) ** 2) - (x - a) / (tau * tau)

    low = a
    if delta2 > phi2 + variance:
        high = math.log(delta2 - phi2 - variance)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        high = a - k * tau
    f_low, f_high = f(low), f(high)
    while abs(high - low) > CONVERGENCE:
        middle = low + (low - high) * f_low / (f_high - f_low)
        f_middle = f(middle)
        if f_middle * f_high <= 0:
            low, f_low = high, f_high
        else:
            f_low /= 2.0
        high, f_high = middle, f_middle
    return math.exp(low / 2.0)


def _check(rating: Rating) -> None:
    if not (rating.deviation > 0 and rating.volatility > 0) or not all(map(math.isfinite, (rating.rating, rating.deviation, rating.volatility))):
        raise ValueError(f"a rating needs a finite rating and a positive deviation and volatility, not {rating}")
