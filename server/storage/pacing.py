"""How long the PostgreSQL writer waits for company before a commit, and for how many writes.

A commit costs the server and PostgreSQL far more CPU than the moves it carries (one WAL
flush, one round trip), so the fewer commits the cheaper each move. With ``N`` games
playing, up to ``N`` moves wait for their commit at once; but the writer commits whatever
is pending as soon as the previous commit returns, so the games fall into two cohorts that
take turns (the moves answered by one commit come back while the next commit, of the other
cohort, is on its way): about ``N / 2`` moves a commit, twice the commits needed.

:class:`Pacing` counts how many writes took part in each commit cycle: those committed plus
those that arrived while the commit was on its way (the other cohort). While that count is
above the writes pending, the writer waits for the rest (the moves its last commit
answered, coming back), at most :data:`COMPANY_SHARE` of a recent commit's duration (and
never more than :data:`LONGEST_WAIT_S`), or the store's ``commit_delay_s`` if that is longer: a reply waits for that at most. One game's commits carry one write and nothing arrives meanwhile:
a lone writer never waits.
"""

from __future__ import annotations

__all__ = ["COMPANY_SHARE", "LONGEST_WAIT_S", "Pacing"]

COMPANY_SHARE = 2.0
"""The longest wait for company, as a share of a commit's duration (running mean). On a quiet machine the moves a
commit answered come back in more than half a commit's time: 0.5 gave 5.1 moves a commit at 10 games, 2.0 gives 9.0
(``benchmarks/pg_split.py``), and the wait ends as soon as they are all there."""

LONGEST_WAIT_S = 0.01
"""The longest wait for company (seconds) whatever a commit took: a commit that waited for a lock or a reconnection
must not make the next ones wait for long."""

WEIGHT = 0.25
"""How much the latest commit counts in the running means (the rest: the means so far)."""

WAIT_FROM = 1.5
"""The writer waits for company only while the running mean of writes per cycle is at least this."""


class Pacing:
    """Running means of the writes in a commit cycle and of a commit's duration; what to wait for next.

    Attributes:
        company: writes per commit cycle (committed + arrived meanwhile), running mean; starts at 1.
        commit_s: a commit's duration in seconds, running mean; starts at 0.
    """

    def __init__(self) -> None:
        self.company = 1.0
        self.commit_s = 0.0

    def committed(self, writes: int, arrived: int, seconds: float) -> None:
        """Count a commit of ``writes`` writes that took ``seconds`` while ``arrived`` more writes came.

        Raises:
            ValueError: a negative count or duration.
        """
        if writes < 0 or arrived < 0 or seconds < 0:
            raise ValueError(f"a commit cannot have {writes} writes, {arrived} arrivals or last {seconds} s")
        self.company += (writes + arrived - self.company) * WEIGHT
        self.commit_s += (seconds - self.commit_s) * WEIGHT

    def wanted(self, pending: int) -> float:
        """How many writes to wait for, ``pending`` being held already; 0: commit now."""
        return self.company if self.company >= WAIT_FROM and pending < self.company else 0.0

    def longest_wait_s(self, commit_delay_s: float) -> float:
        """The longest wait for company (seconds): :data:`COMPANY_SHARE` of a commit, at most :data:`LONGEST_WAIT_S`,
        or ``commit_delay_s`` if longer; 0 if that is 0."""
        return max(commit_delay_s, min(COMPANY_SHARE * self.commit_s, LONGEST_WAIT_S)) if commit_delay_s else 0.0
