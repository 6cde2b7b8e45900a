"""The move-chooser contract: what a computer player is given and returns.

A :class:`MoveChooser` picks a move for one seat from that seat's
``State.view(seat)`` alone, so a bot can never use information its seat may
not see. Perfect-information games rebuild the position with
``Game.state_from_view``; games with hidden pieces reason from the view (and
the history it carries), for example by determinization.

Everything here is pure: no I/O, no asyncio. The only outside input is the
clock a :class:`Budget` reads, which tests replace with a node budget.
"""

from __future__ import annotations

import abc
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

__all__ = ["Budget", "Deadline", "MoveChooser", "NotYourMove", "MAX_LEVEL", "MIN_LEVEL"]

MIN_LEVEL = 1
"""The weakest level: a beginner can win."""
MAX_LEVEL = 5
"""The strongest level."""


class NotYourMove(ValueError):
    """The view given to a chooser has no ``legal_moves``: its seat is not to move."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a chooser may think for one move.

    Attributes:
        seconds: wall-clock seconds (> 0), or ``None`` for no time limit.
        nodes: positions a search may examine, or ``None`` for no limit.
            With ``seconds=None`` a node budget makes a chooser deterministic
            for a given random generator, which is what tests use.
        clock: the monotonic clock read for ``seconds`` (seconds as a float).

    Raises:
        ValueError: if neither limit is set, or a limit is not positive.
    """

    seconds: float | None = None
    nodes: int | None = None
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.seconds is None and self.nodes is None:
            raise ValueError("a budget needs seconds, nodes or both")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"budget seconds must be positive, not {self.seconds!r}")
        if self.nodes is not None and (type(self.nodes) is not int or self.nodes <= 0):
            raise ValueError(f"budget nodes must be a positive integer, not {self.nodes!r}")

    def start(self) -> "Deadline":
        """Start counting: return the :class:`Deadline` a search polls."""
        return Deadline(self)


class Deadline:
    """A running budget: count nodes with :meth:`spend`, poll :meth:`expired`.

    Reading the clock costs more than a node, so it is read once every
    ``check_every`` nodes.
    """

    __slots__ = ("nodes", "_budget", "_ends_at", "_next_clock_check", "_expired")
    check_every = 256

    def __init__(self, budget: Budget) -> None:
        self.nodes = 0
        self._budget = budget
        self._ends_at = None if budget.seconds is None else budget.clock() + budget.seconds
        self._next_clock_check = self.check_every
        self._expired = False

    def spend(self, nodes: int = 1) -> None:
        """Count ``nodes`` more positions examined."""
        self.nodes += nodes

    def expired(self) -> bool:
        """Whether the node or time budget is used up (stays true once it is)."""
        if self._expired:
            return True
        budget = self._budget
        if budget.nodes is not None and self.nodes >= budget.nodes:
            self._expired = True
        elif self._ends_at is not None and self.nodes >= self._next_clock_check:
            self._next_clock_check = self.nodes + self.check_every
            self._expired = budget.clock() >= self._ends_at
        return self._expired

    def seconds_left(self) -> float | None:
        """Seconds until the time limit, or ``None`` without one (never negative)."""
        if self._ends_at is None:
            return None
        return max(0.0, self._ends_at - self._budget.clock())


class MoveChooser(abc.ABC):
    """Chooses a move for the seat to move, seeing only that seat's view.

    Attributes:
        game: the game's short name (``"othello"``).
        level: from :data:`MIN_LEVEL` (a beginner can win) to :data:`MAX_LEVEL`.
    """

    game: ClassVar[str]

    def __init__(self, level: int) -> None:
        if type(level) is not int or not MIN_LEVEL <= level <= MAX_LEVEL:
            raise ValueError(f"level must be an integer from {MIN_LEVEL} to {MAX_LEVEL}, not {level!r}")
        self.level = level

    def choose(self, view: Mapping[str, Any], budget: Budget, rng: random.Random) -> str:
        """Return one of ``view["legal_moves"]``.

        Args:
            view: ``State.view(seat)`` for the seat to move; nothing else.
            budget: how long to think; the chooser returns its best move so
                far when the budget runs out.
            rng: the only source of randomness (same seed, same view, same
                node budget: same move).

        Raises:
            NotYourMove: if the view has no legal moves for its seat.
        """
        legal = view.get("legal_moves")
        if not legal:
            raise NotYourMove("the view has no legal_moves: this seat is not to move")
        if len(legal) == 1:
            return legal[0]
        move = self._choose(view, list(legal), budget, rng)
        if move not in legal:  # a chooser bug must never become an illegal move
            raise AssertionError(f"{type(self).__name__} chose {move!r}, which is not legal here")
        return move

    @abc.abstractmethod
    def _choose(self, view: Mapping[str, Any], legal: list[str], budget: Budget, rng: random.Random) -> str:
        """Pick one of ``legal`` (at least two) for the view's seat."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game} level {self.level}>"
