"""Alpha-beta over one determinization of a Tactego position.

A determinization is a full position drawn by ``Tactego.sample_state``: the
opponent's hidden ranks are guessed consistently with the seat's view. Here
it becomes a mutable board of small integers so the search can make and
unmake moves in place:

* a square holds ``0`` (empty), ``strength + 1`` for a seat-0 piece or
  ``-(strength + 1)`` for a seat-1 piece, so a flag is ``1`` or ``-1``;
* ``score`` is seat 0's material and placement minus seat 1's, kept up to
  date move by move; negamax reads it as ``sign * score`` for the seat to
  move (``sign`` is ``+1`` for seat 0, ``-1`` for seat 1).

Leaves look one capture further (a one-move quiescence): the seat to move
may stand pat or make its best winning capture, so a piece left where an
enemy beats it is seen as lost one ply beyond the nominal depth.
"""

from __future__ import annotations

import functools
import random
from typing import Sequence

from ..tactego import FLAG, TactegoState
from .base import Deadline

__all__ = ["OutOfBudget", "SearchBoard", "WIN", "piece_value"]

WIN = 10_000.0
"""The value of a won game (a captured last flag, an opponent left without a move).

A win ``n`` plies into the game is worth ``WIN - n``, so a sooner win is preferred."""

_PLACEMENT_WEIGHT = 0.15
"""Value per square closer to the (sampled) enemy flag, for a movable piece."""
_CLOSING_IN = {2: 1.5, 1: 2.5}
"""Extra value of a movable piece this many squares (8 directions) from an enemy flag."""
_GUARD_WEIGHT = 0.08
"""Value per point of strength of a piece at most two squares from its own flag."""
_UNGUARDED_APPROACH = 5.0
"""The cost of an enemy piece two squares from one's last flag that no piece of one's own
within two squares of it can beat: one step more and the flag may fall."""


class OutOfBudget(Exception):
    """The deadline expired in the middle of a search; its partial result is void."""


def piece_value(strength: int) -> float:
    """Material value of a movable piece of ``strength`` (>= 1).

    Stronger pieces are worth more than their strength says: with the
    attacker winning ties, the strongest pieces are the ones that can attack
    almost anything.
    """
    return strength + 0.04 * strength * strength


class SearchBoard:
    """One determinization as a mutable board searched by depth-limited negamax.

    Attributes:
        board: the squares (see the module docstring), row-major.
        score: seat 0's material and placement minus seat 1's.
        flags: flags left per seat.
        ply: plies played; at ``max_plies`` the game is a draw.
        unlimited: when true the search counts nodes but ignores the
            deadline (a chooser's first, cheapest pass must always finish).
    """

    __slots__ = ("board", "score", "flags", "ply", "max_plies", "unlimited", "_steps", "_value", "_placement",
                 "_guard", "_flag_squares", "_near", "_deadline", "_rows", "_cols", "_hidden")

    def __init__(self, state: TactegoState, steps: Sequence[Sequence[int]], deadline: Deadline) -> None:
        self._steps = steps
        self._deadline = deadline
        self.unlimited = False
        self.ply = state.ply
        self.max_plies = state.options["max_plies"]
        self._hidden = tuple((i, p.moved) for i, p in enumerate(state.board) if p is not None and not p.revealed)
        board = [0 if p is None else (p.strength + 1) * (1 if p.owner == 0 else -1) for p in state.board]
        self._set_board(board, state.options["rows"], state.options["cols"])

    def _set_board(self, board: list[int], rows: int, cols: int) -> None:
        """Take ``board`` as the position: flags, tables and score follow from it."""
        self.board = board
        self._rows, self._cols = rows, cols
        self.flags = [0, 0]
        self._flag_squares: tuple[list[int], list[int]] = ([], [])
        for i, v in enumerate(board):
            if v == 1 or v == -1:
                self.flags[0 if v > 0 else 1] += 1
                self._flag_squares[0 if v > 0 else 1].append(i)
        top = max(s for s in (abs(v) for v in board) if s) if any(board) else 1
        self._value = [0.0] + [piece_value(s) for s in range(0, top)]  # indexed by |square| (flag 0)
        self._value[1] = 0.0
        red_flags, blue_flags = tuple(self._flag_squares[0]), tuple(self._flag_squares[1])
        self._placement = (_placement_table(rows, cols, blue_flags), _placement_table(rows, cols, red_flags))
        self._guard = (_guard_table(rows, cols, red_flags), _guard_table(rows, cols, blue_flags))
        self._near = _within_two(rows, cols)
        self.score = sum(self._contribution(v, i) for i, v in enumerate(board) if v)

    def belief(self, sign: int, origin: int, target: int, defender: int, rng: random.Random) -> "SearchBoard":
        """This board as the other seat may believe it, right after the seat with ``sign`` played origin-target.

        ``defender`` is what stood on ``target`` before the move (0: a step).
        The move must be the only one made since this board was built (the
        pieces that never fought are known as of the sampled position).

        The other seat sees where ``sign``'s pieces stand but not the ranks
        of those that never fought: their ranks are shuffled among them, a
        flag only onto a piece that never moved (``has_moved`` is public).
        The move's attacker, if it fought, is seen. The copy shares the
        deadline; this board is unchanged.
        """
        board = self.board
        unmoved, moved = [], []
        for square, has_moved in self._hidden:
            if square == origin:
                if defender == 0:
                    moved.append(target)
            elif square != target and board[square] * sign > 0:  # the target held none of ours
                (moved if has_moved else unmoved).append(square)
        believed = list(board)
        flags = [square for square in unmoved if board[square] == sign]
        squares = unmoved + moved
        if len(squares) > 1:
            ranks = [board[square] for square in squares if board[square] != sign]
            rng.shuffle(ranks)
            flag_squares = set(rng.sample(unmoved, len(flags)))
            rest = iter(ranks)
            for square in squares:
                believed[square] = sign if square in flag_squares else next(rest)
        copy = SearchBoard.__new__(SearchBoard)
        copy._steps, copy._deadline, copy.unlimited = self._steps, self._deadline, self.unlimited
        copy.ply, copy.max_plies, copy._hidden = self.ply, self.max_plies, ()
        copy._set_board(believed, self._rows, self._cols)
        return copy

    def _contribution(self, v: int, square: int) -> float:
        """Seat 0's view of what piece ``v`` on ``square`` is worth."""
        if v == 1 or v == -1:
            return 0.0
        if v > 0:
            return self._value[v] + self._placement[0][square] + v * self._guard[0][square]
        return -self._value[-v] - self._placement[1][square] + v * self._guard[1][square]

    def out_of_time(self) -> bool:
        """Whether the time limit has passed, reading the clock now.

        The deadline itself reads the clock only every few hundred nodes;
        :meth:`negamax` calls this every 64 nodes and a chooser between root
        moves, so a search overruns its time by a few milliseconds at most.
        """
        return self._deadline.seconds_left() == 0.0

    # -- moves ---------------------------------------------------------

    def moves(self, sign: int) -> list[tuple[int, int]]:
        """Every legal (origin, target) of the seat with ``sign``, captures first."""
        board, steps = self.board, self._steps
        captures, quiet = [], []
        for i, v in enumerate(board):
            if v * sign <= 1:  # empty, enemy or own flag
                continue
            for j in steps[i]:
                w = board[j] * sign
                if w < 0:
                    captures.append((i, j))
                elif w == 0:
                    quiet.append((i, j))
        captures.extend(quiet)
        return captures

    def make(self, origin: int, target: int) -> tuple[int, float]:
        """Play (origin, target), combat included; return what :meth:`unmake` needs."""
        board = self.board
        a, d = board[origin], board[target]
        saved = (d, self.score)
        board[origin] = 0
        score = self.score - self._contribution(a, origin)
        if d == 0:
            board[target] = a
            score += self._contribution(a, target)
        elif d == 1 or d == -1:
            self.flags[0 if d > 0 else 1] -= 1
            board[target] = a
            score += self._contribution(a, target)
        elif abs(a) >= abs(d):
            board[target] = a
            score += self._contribution(a, target) - self._contribution(d, target)
        self.score = score
        self.ply += 1
        return saved

    # -- search --------------------------------------------------------

    def negamax(self, sign: int, depth: int, alpha: float, beta: float) -> float:
        """The value for the seat with ``sign`` to move, searching ``depth`` plies then one capture.

        Raises:
            OutOfBudget: when the deadline expires.
        """
        deadline = self._deadline
        deadline.nodes += 1
        if not self.unlimited and (deadline.expired() or (deadline.nodes & 63 == 0 and self.out_of_time())):
            raise OutOfBudget  # a node here costs tens of microseconds: the clock is read every 64
        if self.max_plies is not None and self.ply >= self.max_plies:
            return 0.0
        if depth <= 0:
            return self._quiesce(sign)
        moves = self.moves(sign)
        if not moves:
            return -(WIN - self.ply)
        best = -WIN - 1.0
        enemy = 1 if sign > 0 else 0
        for origin, target in moves:
            attacker = self.board[origin]
            saved = self.make(origin, target)
            if self.flags[enemy] == 0:
                value = WIN - self.ply
            else:
                value = -self.negamax(-sign, depth - 1, -beta, -alpha)
            self.unmake(origin, target, attacker, saved)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best

    def blind_reply(self, sign: int, belief: "SearchBoard") -> float:
        """The value for the seat with ``sign`` when the opponent, to move, chooses its reply on ``belief``.

        The opponent picks the reply that is best for it on ``belief`` (a
        board of :meth:`belief`: what it may think ``sign``'s hidden pieces
        are), looking one capture further; that reply is then played here,
        on the real board, and valued after ``sign``'s best single capture.
        So an opponent that cannot see the flag goes for it only where it
        guesses it.

        Raises:
            OutOfBudget: when the deadline expires.
        """
        enemy, ours = -sign, (0 if sign > 0 else 1)
        chosen, best = None, -WIN - 2.0
        for origin, target in belief.moves(enemy):
            self._tick()
            attacker = belief.board[origin]
            saved = belief.make(origin, target)
            value = WIN - belief.ply if belief.flags[ours] == 0 else -belief._quiesce(sign)
            belief.unmake(origin, target, attacker, saved)
            if value > best:
                chosen, best = (origin, target), value
        if chosen is None:
            return WIN - self.ply
        origin, target = chosen
        attacker = self.board[origin]
        saved = self.make(origin, target)
        if self.flags[ours] == 0:
            value = -(WIN - self.ply)
        elif self.max_plies is not None and self.ply >= self.max_plies:
            value = 0.0
        else:
            value = self._quiesce(sign)
        self.unmake(origin, target, attacker, saved)
        return value

    def _tick(self) -> None:
        """Count one node; raise :class:`OutOfBudget` when the deadline has passed."""
        deadline = self._deadline
        deadline.nodes += 1
        if not self.unlimited and (deadline.expired() or (deadline.nodes & 63 == 0 and self.out_of_time())):
            raise OutOfBudget

    def unmake(self, origin: int, target: int, attacker: int, saved: tuple[int, float]) -> None:
        """Undo the move of ``attacker`` from origin to target (``saved``: what :meth:`make` returned)."""
        d, self.score = saved
        board = self.board
        board[origin] = attacker
        board[target] = d
        if d == 1 or d == -1:
            self.flags[0 if d > 0 else 1] += 1
        self.ply -= 1

    def _quiesce(self, sign: int) -> float:
        """Stand pat, or the best single winning capture for the seat with ``sign``.

        An enemy piece next to the seat's last flag must be captured at once,
        or the flag falls on the next move.
        """
        board, steps = self.board, self._steps
        enemy = 1 if sign > 0 else 0
        gain = 0.0
        for i, v in enumerate(board):
            strength = v * sign
            if strength <= 1:
                continue
            for j in steps[i]:
                w = -board[j] * sign
                if w <= 0:
                    continue
                if w == 1:
                    if self.flags[enemy] == 1:
                        return WIN - self.ply - 1
                    continue
                if strength >= w:
                    value = self._value[w]
                    if value > gain:
                        gain = value
        if self.flags[1 - enemy] == 1:
            threat = self._flag_threat(sign)
            if threat is not None:
                return threat
        return sign * self.score + gain - self._approach(sign) + self._approach(-sign)

    def _flag_threat(self, sign: int) -> float | None:
        """The leaf value when enemies stand next to the last flag of the seat to move, else ``None``.

        One attacker that the seat can capture costs nothing more than the
        capture gains; otherwise the flag is lost.
        """
        board, steps = self.board, self._steps
        own_flag = sign
        attackers = set()
        for square in self._flag_squares[0 if sign > 0 else 1]:
            if board[square] == own_flag:
                attackers.update(j for j in steps[square] if board[j] * sign < -1)
        if not attackers:
            return None
        if len(attackers) == 1:
            (square,) = attackers
            strength = -board[square] * sign
            if any(board[j] * sign >= strength for j in steps[square]):
                return sign * self.score + self._value[strength]
        return -(WIN - self.ply - 2)

    def _approach(self, sign: int) -> float:
        """What enemies two squares from the last flag of the seat with ``sign`` cost it (see
        :data:`_UNGUARDED_APPROACH`); nothing while it has more than one flag."""
        seat = 0 if sign > 0 else 1
        if self.flags[seat] != 1:
            return 0.0
        board, near, steps = self.board, self._near, self._steps
        cost = 0.0
        for flag in self._flag_squares[seat]:
            if board[flag] != sign:
                continue
            adjacent = steps[flag]
            for square in near[flag]:
                strength = -board[square] * sign
                if strength > 1 and square not in adjacent:
                    if not any(board[j] * sign >= strength for j in near[square]):
                        cost += _UNGUARDED_APPROACH
        return cost


@functools.lru_cache(maxsize=4096)
def _placement_table(rows: int, cols: int, enemy_flags: tuple[int, ...]) -> tuple[float, ...]:
    """Per square: how close a movable piece there stands to the nearest of ``enemy_flags``."""
    span = max(rows, cols)
    table = []
    for i in range(rows * cols):
        nearest = min((_distance(i, t, cols) for t in enemy_flags), default=span)
        table.append(_PLACEMENT_WEIGHT * (span - nearest) + _CLOSING_IN.get(nearest, 0.0))
    return tuple(table)


@functools.lru_cache(maxsize=4096)
def _guard_table(rows: int, cols: int, own_flags: tuple[int, ...]) -> tuple[float, ...]:
    """Per square: value per point of strength of a piece guarding one of ``own_flags`` from there."""
    return tuple(_GUARD_WEIGHT if any(_distance(i, t, cols) <= 2 for t in own_flags) else 0.0
                 for i in range(rows * cols))


@functools.lru_cache(maxsize=None)
def _within_two(rows: int, cols: int) -> tuple[tuple[int, ...], ...]:
    """Each square's squares at king-move distance 1 or 2."""
    return tuple(
        tuple(j for j in range(rows * cols) if 0 < _distance(i, j, cols) <= 2) for i in range(rows * cols)
    )


def _distance(a: int, b: int, cols: int) -> int:
    """King-move distance between squares ``a`` and ``b`` of a board ``cols`` wide."""
    return max(abs(a // cols - b // cols), abs(a % cols - b % cols))
