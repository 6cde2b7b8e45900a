"""Parlour's computer players against OpenSpiel's MCTS bot: the adapter and a match runner.

OpenSpiel (``pip install open_spiel``) is a benchmark-only dependency: the
product never imports it. Without it, :func:`available` is false and the
command line prints ``open_spiel is not installed`` and exits with status 2.

Games (Parlour name -> OpenSpiel name, Parlour options):

- ``othello`` -> ``othello`` (8x8): a square is the action ``row * 8 + col``
  (row 0 at the top, the same ``d3`` names on both sides) and ``pass`` is
  action 64.
- ``morris`` -> ``nine_mens_morris``: OpenSpiel numbers the 24 points like
  the seed (row by row from the top, :data:`games.morris.POINTS` order); a
  placement is the point's action, a slide or fly ``a-b`` is
  ``24 + 24 * a + b``, and a mill's removal ``x c`` is a second action of
  the same player (point ``c``). Parlour plays it with ``flying`` and
  ``mill_protection`` on and ``max_plies`` 200 (a draw), OpenSpiel's rules.

The mapping is checked, not assumed: :func:`check_mapping` plays random games
on both engines side by side and asserts that at every position the two agree
on whose turn it is, on the set of legal moves (each Parlour move translated
to its OpenSpiel action sequence), and on the result.

The opponent is ``open_spiel.python.algorithms.mcts.MCTSBot`` as OpenSpiel's
own example sets it up: ``uct_c=2``, a ``RandomRolloutEvaluator`` with one
uniformly random rollout per simulation, ``solve=True``.

Use from Python (``benchmarks/strength.py`` does)::

    from benchmarks.openspiel_opponent import play_against_mcts
    from games.bots import chooser
    result = play_against_mcts("othello", lambda: chooser("othello", 5), games=20,
                               simulations=1000, seed=1, seconds=1.0)
    print(result.summary())

or from the command line::

    python benchmarks/openspiel_opponent.py --game othello --level 5 --games 20
    python benchmarks/openspiel_opponent.py --game morris --check 50   # the mapping only
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import games  # noqa: E402
from games.bots import Budget, MoveChooser  # noqa: E402
from games.morris import POINTS  # noqa: E402

__all__ = ["AlphaBetaBot", "GameResult", "MatchResult", "available", "check_mapping", "game_line", "play_against_mcts",
           "wilson_interval"]

NOT_INSTALLED = "open_spiel is not installed: pip install open_spiel (benchmarks only; the product never needs it)"


def available() -> bool:
    """Whether OpenSpiel's Python package can be imported here."""
    try:
        import pyspiel  # noqa: F401
        from open_spiel.python.algorithms import mcts  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------
# Notation mappings
# ---------------------------------------------------------------------------


class _Mapping:
    """Translates one game's moves between Parlour notation and OpenSpiel action sequences."""

    game: str
    spiel_name: str
    options: dict[str, Any]

    def to_actions(self, move: str) -> list[int]:
        """Return the OpenSpiel actions of a Parlour move (canonical notation)."""
        raise NotImplementedError

    def from_actions(self, actions: Sequence[int]) -> str:
        """Return the Parlour move of one player's consecutive OpenSpiel actions."""
        raise NotImplementedError


class _OthelloMapping(_Mapping):
    game, spiel_name, options = "othello", "othello", {"size": 8}
    _PASS = 64
    _COLUMNS = "abcdefgh"

    def to_actions(self, move: str) -> list[int]:
        if move == "pass":
            return [self._PASS]
        return [(int(move[1:]) - 1) * 8 + self._COLUMNS.index(move[0])]

    def from_actions(self, actions: Sequence[int]) -> str:
        (action,) = actions
        if action == self._PASS:
            return "pass"
        return f"{self._COLUMNS[action % 8]}{action // 8 + 1}"


class _MorrisMapping(_Mapping):
    game, spiel_name = "morris", "nine_mens_morris"
    options = {"flying": True, "mill_protection": True, "max_plies": 200}
    _INDEX = {name: index for index, name in enumerate(POINTS)}

    def to_actions(self, move: str) -> list[int]:
        move, _, removed = move.partition("x")
        source, _, target = move.partition("-")
        actions = [self._INDEX[source] if not target else 24 + 24 * self._INDEX[source] + self._INDEX[target]]
        if removed:
            actions.append(self._INDEX[removed])
        return actions

    def from_actions(self, actions: Sequence[int]) -> str:
        first, *rest = actions
        if first < 24:
            move = POINTS[first]
        else:
            source, target = divmod(first - 24, 24)
            move = f"{POINTS[source]}-{POINTS[target]}"
        if rest:
            (removed,) = rest
            move += f"x{POINTS[removed]}"
        return move


_MAPPINGS: dict[str, _Mapping] = {"othello": _OthelloMapping(), "morris": _MorrisMapping()}


def _mapping(game: str) -> _Mapping:
    if game not in _MAPPINGS:
        raise ValueError(f"no OpenSpiel counterpart for {game!r}; games: {', '.join(_MAPPINGS)}")
    return _MAPPINGS[game]


def _turn_sequences(spiel_state: Any) -> set[tuple[int, ...]]:
    """Every sequence of actions the OpenSpiel player to move can play before the turn passes."""
    player = spiel_state.current_player()
    sequences = set()
    for action in spiel_state.legal_actions():
        child = spiel_state.child(action)
        if not child.is_terminal() and child.current_player() == player:
            sequences.update((action, *rest) for rest in _turn_sequences(child))
        else:
            sequences.add((action,))
    return sequences


def _spiel_winner(spiel_state: Any) -> int | None:
    """The OpenSpiel winner as a Parlour seat (player 0 moves first on both sides), ``None`` for a draw."""
    returns = spiel_state.returns()
    return 0 if returns[0] > returns[1] else 1 if returns[1] > returns[0] else None


def check_mapping(game: str, games_to_play: int, seed: int = 0) -> int:
    """Play random games on both engines at once and check that they agree everywhere.

    At every position: the same player to move, the same legal moves (as
    OpenSpiel action sequences, both ways), and at the end the same winner.

    Returns:
        The number of positions compared.

    Raises:
        AssertionError: naming the game, ply and difference on a disagreement.
        ImportError: if OpenSpiel is not installed.
    """
    import pyspiel

    mapping = _mapping(game)
    spiel_game = pyspiel.load_game(mapping.spiel_name)
    rng = random.Random(seed)
    compared = 0
    for number in range(games_to_play):
        ours = games.get(game).new_state(mapping.options)
        spiel = spiel_game.new_initial_state()
        while ours.outcome is None and not spiel.is_terminal():
            where = f"{game} game {number} ply {ours.ply}"
            assert spiel.current_player() == ours.to_move, f"{where}: player to move differs"
            translated = {tuple(mapping.to_actions(move)): move for move in ours.legal_moves()}
            sequences = _turn_sequences(spiel)
            only_ours, only_theirs = sorted(set(translated) - sequences), sorted(sequences - set(translated))
            assert not only_ours and not only_theirs, f"{where}: only Parlour {only_ours}, only OpenSpiel {only_theirs}"
            for actions, move in translated.items():
                back = mapping.from_actions(actions)
                assert back == move, f"{where}: {move} is {actions}, which reads back as {back}"
            move = rng.choice(ours.legal_moves())
            ours = ours.play(move)
            for action in mapping.to_actions(move):
                spiel.apply_action(action)
            compared += 1
        assert (ours.outcome is None) == (not spiel.is_terminal()), f"{game} game {number}: one engine ended first"
        assert ours.outcome.winner == _spiel_winner(spiel), f"{game} game {number}: the winners differ"
    return compared


# ---------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GameResult:
    """One game: our seat (0 moves first), the result for us (1 win, 0.5 draw, 0 loss) and the score."""

    our_seat: int
    points: float
    score: tuple[int, ...] | None
    plies: int
    our_seconds: float
    their_seconds: float


@dataclass
class MatchResult:
    """A match of our chooser against MCTS (or alpha-beta); :meth:`summary` prints it with a 95 % interval."""

    game: str
    simulations: int
    games: list[GameResult] = field(default_factory=list)
    opponent: str = "mcts"

    @property
    def wins(self) -> int:
        return sum(1 for g in self.games if g.points == 1)

    @property
    def draws(self) -> int:
        return sum(1 for g in self.games if g.points == 0.5)

    @property
    def losses(self) -> int:
        return sum(1 for g in self.games if g.points == 0)

    def score_share(self) -> float:
        """Our points per game (a draw is half a point)."""
        return sum(g.points for g in self.games) / len(self.games) if self.games else 0.0

    def summary(self) -> str:
        """One line: games, W/D/L, the score share and its 95 % Wilson interval, seconds per move."""
        low, high = wilson_interval(sum(g.points for g in self.games), len(self.games))
        our_moves = sum((g.plies + (1 - g.our_seat)) // 2 for g in self.games) or 1
        their_moves = sum((g.plies + g.our_seat) // 2 for g in self.games) or 1
        our_pace = sum(g.our_seconds for g in self.games) / our_moves
        their_pace = sum(g.their_seconds for g in self.games) / their_moves
        name = f"alpha-beta depth {self.simulations}" if self.opponent == "alphabeta" else f"MCTS({self.simulations})"
        return (f"{self.game} vs {name}: {len(self.games)} games, "
                f"W {self.wins} D {self.draws} L {self.losses}, score {self.score_share():.1%} "
                f"(95 % CI {low:.1%}-{high:.1%}); s/move ours {our_pace:.2f}, OpenSpiel {their_pace:.2f}")


def wilson_interval(points: float, games_played: int, z: float = 1.96) -> tuple[float, float]:
    """Return the Wilson score interval (default 95 %) of a share ``points / games_played``."""
    if games_played == 0:
        return 0.0, 1.0
    share = points / games_played
    denominator = 1 + z * z / games_played
    centre = (share + z * z / (2 * games_played)) / denominator
    margin = z * math.sqrt(share * (1 - share) / games_played + z * z / (4 * games_played ** 2)) / denominator
    return max(0.0, centre - margin), min(1.0, centre + margin)


class AlphaBetaBot:
    """OpenSpiel's own alpha-beta (``open_spiel.python.algorithms.minimax.alpha_beta_search``) to a fixed depth.

    OpenSpiel ships no Othello evaluation; the leaves are scored by the disc
    difference from the searching player's side (read from OpenSpiel's
    observation tensor, scaled below a won game's return of 1), the plain
    material count of a textbook alpha-beta player.
    """

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def step(self, state: Any) -> int:
        """Return the action alpha-beta chooses for the player to move in ``state``."""
        from open_spiel.python.algorithms import minimax  # noqa: PLC0415

        player = state.current_player()

        def discs(leaf: Any) -> float:
            planes = leaf.observation_tensor(player)
            return (sum(planes[64:128]) - sum(planes[128:192])) / 65

        _, action = minimax.alpha_beta_search(state.get_game(), state.clone(), discs, self.depth, player)
        return action


def play_against_mcts(game: str, our_chooser_factory: Callable[[], MoveChooser], games: int, simulations: int = 1000,
                      seed: int = 0, seconds: float | None = 1.0, nodes: int | None = None,
                      on_game: Callable[[int, GameResult], None] | None = None, opponent: str = "mcts") -> MatchResult:
    """Play ``games`` games of our chooser against OpenSpiel's MCTSBot (or alpha-beta), alternating who moves first.

    Args:
        game: ``"othello"`` (8x8) or ``"morris"``.
        our_chooser_factory: returns our :class:`MoveChooser` (called once per game).
        games: how many games; we move first in the even-numbered ones.
        simulations: MCTS simulations per OpenSpiel decision (a removal is a decision of its own);
            with ``opponent="alphabeta"``, its depth in plies (Othello only).
        opponent: ``"mcts"`` or ``"alphabeta"`` (:class:`AlphaBetaBot`).
        seed: seeds MCTS (``numpy.random.RandomState(seed + game)``) and our generator.
        seconds, nodes: our budget per move.
        on_game: called after each game with its number and result (for progress).

    Raises:
        ImportError: if OpenSpiel is not installed (see :func:`available`).
        ValueError: for a game without an OpenSpiel counterpart, or alpha-beta outside Othello.
    """
    if opponent not in ("mcts", "alphabeta") or (opponent == "alphabeta" and game != "othello"):
        raise ValueError(f"no OpenSpiel {opponent!r} opponent for {game!r}")
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    mapping = _mapping(game)
    spiel_game = pyspiel.load_game(mapping.spiel_name)
    budget = Budget(seconds=seconds, nodes=nodes)
    match = MatchResult(game, simulations, opponent=opponent)
    for number in range(games):
        state_rng = np.random.RandomState(seed * 1_000 + number)
        if opponent == "alphabeta":
            bot: Any = AlphaBetaBot(simulations)
        else:
            bot = mcts.MCTSBot(spiel_game, 2, simulations, mcts.RandomRolloutEvaluator(1, state_rng),
                               random_state=state_rng, solve=True)
        result = _play_one(mapping, spiel_game, our_chooser_factory(), bot, number % 2, budget,
                           random.Random(seed * 1_000 + number))
        match.games.append(result)
        if on_game is not None:
            on_game(number, result)
    return match


def _play_one(mapping: _Mapping, spiel_game: Any, chooser: MoveChooser, bot: Any, our_seat: int, budget: Budget,
              rng: random.Random) -> GameResult:
    """Play one game; both engines advance together and must agree on the end."""
    ours = games.get(mapping.game).new_state(mapping.options)
    spiel = spiel_game.new_initial_state()
    our_seconds = their_seconds = 0.0
    while ours.outcome is None:
        started = time.perf_counter()
        if ours.to_move == our_seat:
            move = chooser.choose(ours.view(our_seat), budget, rng)
            our_seconds += time.perf_counter() - started
            for action in mapping.to_actions(move):
                spiel.apply_action(action)
        else:
            player, actions = spiel.current_player(), []
            while not spiel.is_terminal() and spiel.current_player() == player:
                action = bot.step(spiel)
                actions.append(action)
                spiel.apply_action(action)
            their_seconds += time.perf_counter() - started
            move = mapping.from_actions(actions)
        ours = ours.play(move)
        if spiel.is_terminal() and ours.outcome is None:
            raise AssertionError(f"OpenSpiel ended the game at ply {ours.ply}, Parlour did not")
    winner = ours.outcome.winner
    points = 0.5 if winner is None else float(winner == our_seat)
    return GameResult(our_seat, points, ours.outcome.score, ours.ply, our_seconds, their_seconds)


def game_line(number: int, result: GameResult) -> str:
    """One finished game (``number`` from 0) as the command line prints it: who moved first, the result, the
    score, the plies and each side's mean seconds a move (so that a match cut short still says how fast both played)."""
    outcome = {1.0: "win", 0.5: "draw", 0.0: "loss"}[result.points]
    ours, theirs = (result.plies + 1 - result.our_seat) // 2, (result.plies + result.our_seat) // 2
    return (f"game {number + 1}: we played {'first' if result.our_seat == 0 else 'second'}: {outcome} "
            f"{result.score}, {result.plies} plies; s/move ours {result.our_seconds / max(1, ours):.2f}, "
            f"OpenSpiel {result.their_seconds / max(1, theirs):.2f}")


def main(argv: list[str] | None = None) -> int:
    """Command line: check the mapping, or play a match and print the score with its interval."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(_MAPPINGS), default="othello")
    parser.add_argument("--level", type=int, default=5, help="our level, 1-5 (default 5)")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--simulations", type=int, default=1000, help="MCTS simulations, or alpha-beta's depth")
    parser.add_argument("--opponent", choices=("mcts", "alphabeta"), default="mcts")
    parser.add_argument("--seconds", type=float, default=None, help="our seconds per move (default: the level's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", type=int, metavar="GAMES", default=0,
                        help="only check the notation mapping over this many random games")
    args = parser.parse_args(argv)
    if not available():
        print(NOT_INSTALLED, file=sys.stderr)
        return 2
    if args.check:
        positions = check_mapping(args.game, args.check, args.seed)
        print(f"{args.game}: the engines agree at all {positions} positions of {args.check} random games")
        return 0
    from games.bots import chooser, default_seconds

    seconds = args.seconds if args.seconds is not None else default_seconds(args.level)

    def progress(number: int, result: GameResult) -> None:
        print(game_line(number, result), flush=True)

    match = play_against_mcts(args.game, lambda: chooser(args.game, args.level), args.games, args.simulations,
                              args.seed, seconds, on_game=progress, opponent=args.opponent)
    print(f"level {args.level} at {seconds} s/move: {match.summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
