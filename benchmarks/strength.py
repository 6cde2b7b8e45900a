"""Playing-strength benchmark: matches between computer players, with 95 % confidence intervals.

Every match is played in-process by the pure move choosers of
:mod:`games.bots` (no server, no sockets): each player sees only its own
seat's ``State.view(seat)``, as over the protocol. Per game it plays:

- every level against a uniformly random player (``games.bots.random_chooser``);
- every level against the game's one-ply greedy player
  (``games.bots.<game>.greedy_chooser()``; Tactego's is capture-first);
- each level against the level below it (2 vs 1, ..., 5 vs 4);
- Othello 8x8: the strongest level against the same level of the previous
  main (``benchmarks/othello_previous.py``: the player before issue 22,
  read from git history), games ``2k`` and ``2k + 1`` from opening ``k`` of
  :func:`othello_openings` (100 fixed random 4-8-ply starts), colours swapped;
  ``--tables FILE`` has that level evaluate with another pattern file, and
  ``--against-tables FILE`` adds a match against the same level evaluating
  with FILE, from the same openings (comparing fitted tables), and
  ``--against-commit REV`` one against the same level as it was at git
  revision REV (``othello_previous.load_at``: comparing a change with main);
- the strongest level against OpenSpiel's MCTS (Othello also at 10,000
  simulations, and OpenSpiel's alpha-beta to depth 6), where an OpenSpiel
  opponent is available (below);
- with ``--solver-check N``: the Othello endgame solver against brute force
  on N random endgames (``benchmarks/othello_solver_check.py``).

Colours alternate: the player under test takes seat 0 in even-numbered
games and seat 1 in odd ones, and game ``i`` of every match uses setup seed
``seed + i`` (Tactego's hidden setup) and move generators seeded from it, so
two runs with node budgets play the same games.

For each match it prints wins, draws and losses of the player under test,
its win rate with a 95 % Wilson score interval, its score (a draw counts one
half), and the longest and mean time it took for one move (the budget check:
a chooser may overrun its budget by a few ms at most).

Budgets: by default each level thinks its own default time per move
(``games.bots.default_seconds``: 0.05 s at level 1 up to 1 s at level 5);
``--seconds S`` gives every level S seconds instead; ``--nodes N`` adds a
node budget (with ``--seconds 0``: nodes alone, deterministic).

OpenSpiel: where ``open_spiel`` is importable (it is a benchmark-only
package; nothing installs it), the strongest level plays OpenSpiel's MCTS bot
at 1,000 simulations a move through ``benchmarks/openspiel_opponent.py``
(``play_against_mcts``: Othello 8x8, and Nine Men's Morris with OpenSpiel's
rules: flying, mill protection, a draw at 200 plies). Each such match is one
job (the adapter plays its games in turn). Without OpenSpiel those matches
are skipped with a note.

Usage::

    python benchmarks/strength.py                          # every game, 100 games a match
    python benchmarks/strength.py --game othello --games 40 --jobs 2
    python benchmarks/strength.py --quick                  # a few games, short budgets
    python benchmarks/strength.py --markdown > table.md    # for docs/BENCHMARKS.md
    python benchmarks/strength.py --game othello --only previous --games 200 --time-scale 0.1 --jobs 2
    python benchmarks/strength.py --game tactego --levels 5 --only greedy --games 200 --time-scale 0.1   # capture-first
    python benchmarks/strength.py --game othello --only previous --levels 5 --games 60 --time-scale 0.1 --jobs 2 \
        --tables /tmp/new.bin --against-tables /tmp/main.bin   # fitted tables against both
    python benchmarks/strength.py --game othello --only previous --no-previous --levels 5 --games 100 \
        --time-scale 0.1 --jobs 2 --against-commit main        # a change against main's level 5 head to head

Each job is a process playing whole games; give it a core of its own or
the time budgets measure the competition for the cores, not the players.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = Path(__file__).resolve().parent
for folder in (ROOT, BENCHMARKS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import games  # noqa: E402
from games.bots import MAX_LEVEL, MIN_LEVEL, Budget, MoveChooser, chooser, default_seconds  # noqa: E402
from games.bots.random_chooser import RandomChooser  # noqa: E402

Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95 % interval."""

OPENSPIEL_SIMULATIONS = 1000
"""MCTS simulations per move of the OpenSpiel opponent (the issue's yardstick)."""

DEFAULT_MAX_PLIES = 400
"""The ply limit set on games that have a ``max_plies`` option, so a match between cautious players ends."""


@dataclass(frozen=True)
class Player:
    """Who plays one side of a match.

    ``kind`` is ``"level"``, ``"previous"`` (Othello: the player before
    issue 22, read from git by ``benchmarks/othello_previous.py``, at ``level``),
    ``"commit"`` (Othello: the player of git revision ``commit``, at ``level``),
    ``"random"``, ``"greedy"`` or ``"openspiel"`` (``opponent`` says which
    OpenSpiel bot: ``"mcts"`` with ``strength`` simulations, or
    ``"alphabeta"`` to ``strength`` plies). ``tables`` (Othello levels): a
    pattern data file the level evaluates with instead of the shipped one.
    """

    kind: str
    level: int = MIN_LEVEL
    opponent: str = "mcts"
    strength: int = OPENSPIEL_SIMULATIONS
    tables: str = ""
    commit: str = ""

    @property
    def label(self) -> str:
        """How the tables name the player."""
        if self.kind == "level":
            return f"level {self.level}" + (f" ({Path(self.tables).name})" if self.tables else "")
        if self.kind == "previous":
            return f"previous level {self.level}"
        if self.kind == "commit":
            return f"level {self.level} at {self.commit}"
        if self.kind == "openspiel":
            if self.opponent == "alphabeta":
                return f"OpenSpiel alpha-beta depth {self.strength}"
            return f"OpenSpiel MCTS {self.strength}"
        return self.kind

    def build(self, game: str) -> MoveChooser:
        """The move chooser for this player in ``game`` (not for OpenSpiel, which the adapter plays).

        Raises:
            LookupError: the game has no such player (no module, no greedy).
        """
        if self.kind == "level" and self.tables:
            if game != "othello":
                raise LookupError("only Othello evaluates with pattern tables")
            from games.bots.othello import OthelloChooser  # noqa: PLC0415

            return OthelloChooser(self.level, Path(self.tables))
        if self.kind == "level":
            return chooser(game, self.level)
        if self.kind == "previous":
            if game != "othello":
                raise LookupError("only Othello keeps a copy of its previous player")
            import othello_previous  # noqa: PLC0415 (benchmarks/othello_previous.py)

            return othello_previous.make_chooser(self.level)
        if self.kind == "commit":
            if game != "othello":
                raise LookupError("only Othello can play a player read from git")
            import othello_previous  # noqa: PLC0415

            return othello_previous.load_at(self.commit).make_chooser(self.level)
        if self.kind == "random":
            return RandomChooser()
        if self.kind == "greedy":
            module = importlib.import_module(f"games.bots.{game}")
            if not hasattr(module, "greedy_chooser"):
                raise LookupError(f"games.bots.{game} has no greedy_chooser()")
            return module.greedy_chooser()
        raise LookupError(f"unknown player kind {self.kind!r}")


@dataclass(frozen=True)
class Match:
    """``player`` (the one under test) against ``opponent`` in ``game`` with ``options``.

    ``opening_plies``: games ``2k`` and ``2k + 1`` start after that many
    random legal moves drawn from seed ``k`` (the same start, colours
    swapped), so that two careful searches do not replay one game.
    """

    game: str
    options: tuple[tuple[str, Any], ...]
    player: Player
    opponent: Player
    opening_plies: int = 0


@dataclass(frozen=True)
class Budgets:
    """Per-move budgets: ``seconds`` (``None``: each level's default; 0: no time limit) and ``nodes``."""

    seconds: float | None = None
    nodes: int | None = None
    time_scale: float = 1.0
    """With ``seconds`` ``None``: each level's default times this (0.1: level 5 at 0.1 s, level 4 at 0.05 s)."""
    player_scale: float = 1.0
    """The tested player's time budget times this as well (2: what a search twice as fast would gain)."""

    def for_player(self, player: Player, tested: bool = False) -> Budget:
        """The budget ``player`` thinks with for one move (``tested``: the match's tested player)."""
        if self.seconds == 0:
            seconds = None
        elif self.seconds is not None:
            seconds = self.seconds
        else:
            level = player.level if player.kind in ("level", "previous") else MAX_LEVEL
            seconds = default_seconds(level) * self.time_scale
        if seconds is not None and tested:
            seconds *= self.player_scale
        return Budget(seconds=seconds, nodes=self.nodes)


@dataclass
class GameResult:
    """One game: the winner from the tested player's side (1 win, 0 loss, ``None`` draw) and its move times in seconds."""

    score: int | None
    plies: int
    move_seconds: list[float] = field(default_factory=list)


OPENING_COUNT = 100
"""Othello openings in :func:`othello_openings` (each played twice, colours swapped)."""


def othello_openings(count: int = OPENING_COUNT, seed: int = 22) -> tuple[tuple[str, ...], ...]:
    """Return ``count`` distinct 8x8 Othello openings of 4 to 8 plies (random legal moves, fixed by ``seed``).

    The new-against-previous match starts its games from these, so that two
    deterministic searches do not play one game over and over.
    """
    rng = random.Random(seed)
    found: dict[tuple[str, ...], None] = {}
    engine = games.get("othello")
    while len(found) < count:
        state, moves = engine.new_state({"size": 8}), []
        for _ in range(rng.randint(4, 8)):
            move = rng.choice(state.legal_moves())
            moves.append(move)
            state = state.play(move)
        if state.outcome is None and not state.must_pass:
            found[tuple(moves)] = None
    return tuple(found)


def random_opening(state: Any, plies: int, rng: random.Random) -> Any:
    """``state`` after up to ``plies`` uniformly random legal moves (fewer if the game ends first)."""
    for _ in range(plies):
        if state.outcome is not None:
            break
        state = state.play(rng.choice(state.legal_moves()))
    return state


def play_game(match: Match, index: int, seed: int, budgets: Budgets) -> GameResult:
    """Play game ``index`` of ``match``: the tested player sits in seat ``index % 2``.

    Each chooser gets a generator seeded from the game's seed and the ply, so a
    node-budget run is reproducible. Against the previous Othello player,
    games ``2k`` and ``2k + 1`` start from opening ``k`` of
    :func:`othello_openings` (the same start with colours swapped).

    Raises:
        LookupError: a player cannot be built for this game.
    """
    game_seed = seed + index
    seat_of_player = index % 2
    sides = {seat_of_player: match.player, 1 - seat_of_player: match.opponent}
    choosers = {seat: side.build(match.game) for seat, side in sides.items()}
    budgets_by_seat = {seat: budgets.for_player(side, tested=seat == seat_of_player) for seat, side in sides.items()}
    state = games.get(match.game).new_state(dict(match.options), game_seed)
    if match.game == "othello" and (match.opponent.kind in ("previous", "commit") or match.opponent.tables):
        openings = othello_openings()
        for move in openings[(index // 2) % len(openings)]:
            state = state.play(move)
    elif match.opening_plies:
        state = random_opening(state, match.opening_plies, random.Random(seed + index // 2))
    move_seconds: list[float] = []
    while state.outcome is None:
        seat = state.to_move
        rng = random.Random(game_seed * 100_003 + state.ply)
        started = time.perf_counter()
        move = choosers[seat].choose(state.view(seat), budgets_by_seat[seat], rng)
        if seat == seat_of_player:
            move_seconds.append(time.perf_counter() - started)
        state = state.play(move)
    winner = state.outcome.winner
    score = None if winner is None else int(winner == seat_of_player)
    return GameResult(score, state.ply, move_seconds)


def play_openspiel_match(match: Match, games_to_play: int, seed: int, budgets: Budgets) -> list[GameResult]:
    """Play ``match.player`` against OpenSpiel's MCTS through ``benchmarks/openspiel_opponent.py``.

    The adapter alternates colours and sets the game's options itself (OpenSpiel's rules).
    Move times are the adapter's mean per game (it reports totals).
    """
    import openspiel_opponent

    budget = budgets.for_player(match.player, tested=True)
    played = openspiel_opponent.play_against_mcts(
        match.game, lambda: match.player.build(match.game), games=games_to_play, simulations=match.opponent.strength,
        seed=seed, seconds=budget.seconds, nodes=budget.nodes, opponent=match.opponent.opponent,
    )
    results = []
    for game in played.games:
        our_moves = max(1, (game.plies + (1 - game.our_seat)) // 2)
        score = None if game.points == 0.5 else int(game.points == 1)
        results.append(GameResult(score, game.plies, [game.our_seconds / our_moves]))
    return results


def _play_task(task: tuple[Match, int | None, int, Budgets, int]) -> tuple[Match, list[GameResult]]:
    """One job: game ``index`` of a match, or (``index`` ``None``) a whole OpenSpiel match of ``count`` games."""
    match, index, seed, budgets, count = task
    if index is None:
        return match, play_openspiel_match(match, count, seed, budgets)
    return match, [play_game(match, index, seed, budgets)]


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, as (low, high) in 0..1.

    >>> [round(x, 3) for x in wilson(98, 100)]
    [0.93, 0.994]
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    """The results of one match so far."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    plies: list[int] = field(default_factory=list)
    move_seconds: list[float] = field(default_factory=list)

    def add(self, result: GameResult) -> None:
        """Count one game."""
        if result.score is None:
            self.draws += 1
        elif result.score:
            self.wins += 1
        else:
            self.losses += 1
        self.plies.append(result.plies)
        self.move_seconds += result.move_seconds

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.draws + self.losses

    def row(self) -> dict[str, str]:
        """The table cells: counts, win rate with its 95 % interval, score, move times."""
        low, high = wilson(self.wins, self.games)
        win_rate = self.wins / self.games if self.games else 0.0
        score = (self.wins + self.draws / 2) / self.games if self.games else 0.0
        times = self.move_seconds
        return {
            "games": str(self.games),
            "W": str(self.wins),
            "D": str(self.draws),
            "L": str(self.losses),
            "win %": f"{100 * win_rate:.0f} ({100 * low:.0f}–{100 * high:.0f})",
            "score %": f"{100 * score:.0f}",
            "plies": f"{statistics.mean(self.plies):.0f}" if self.plies else "-",
            "mean s/move": f"{statistics.mean(times):.3f}" if times else "-",
            "max s/move": f"{max(times):.3f}" if times else "-",
        }


COLUMNS = ("game", "player", "opponent", "games", "W", "D", "L", "win %", "score %", "plies", "mean s/move", "max s/move")


OPENSPIEL_OPPONENTS = (("mcts", 1000), ("mcts", 10000), ("alphabeta", 6))
"""The OpenSpiel bots the strongest Othello level meets (Morris: the first only)."""


def matches_for(game: str, options: dict[str, Any], levels: Sequence[int], openspiel: bool,
                previous: bool = True, tables: str = "", against_tables: str = "",
                against_commit: str = "") -> list[Match]:
    """Every match of ``game``: each level against random and greedy, adjacent levels, the strongest against
    OpenSpiel, and (8x8 Othello, ``previous``) the strongest against the previous main's same level.

    8x8 Othello only: ``tables`` (a pattern data file) is what the strongest
    level evaluates with against the previous main; ``against_tables`` adds a
    match of the strongest level (with ``tables``) against the same level
    evaluating with ``against_tables``, from the same openings, and
    ``against_commit`` one against the same level at that git revision.
    """
    frozen = tuple(sorted(options.items()))
    found: list[Match] = []
    for level in levels:
        for opponent in ("random", "greedy"):
            found.append(Match(game, frozen, Player("level", level), Player(opponent)))
    for weaker, stronger in zip(levels, levels[1:]):
        found.append(Match(game, frozen, Player("level", stronger), Player("level", weaker)))
    if game == "othello" and options.get("size", 8) == 8:
        tested = Player("level", max(levels), tables=tables)
        if previous:
            found.append(Match(game, frozen, tested, Player("previous", max(levels))))
        if against_tables:
            found.append(Match(game, frozen, tested, Player("level", max(levels), tables=against_tables)))
        if against_commit:
            found.append(Match(game, frozen, tested, Player("commit", max(levels), commit=against_commit)))
    if openspiel:
        bots = OPENSPIEL_OPPONENTS if game == "othello" else OPENSPIEL_OPPONENTS[:1]
        for kind, strength in bots:
            found.append(Match(game, frozen, Player("level", max(levels)), Player("openspiel", opponent=kind,
                                                                                  strength=strength)))
    return found


def game_options(game: str, given: dict[str, Any], max_plies: int | None) -> dict[str, Any]:
    """The options a game is played with: ``given``, plus the ply limit where the game has one."""
    options = dict(given)
    engine = games.get(game)
    if max_plies is not None and "max_plies" not in options and any(o.name == "max_plies" for o in engine.options):
        options["max_plies"] = max_plies
    engine.resolve_options(options)  # a bad option fails here, before any game is played
    return options


OPENSPIEL_GAMES = ("othello", "morris")
"""The games ``benchmarks/openspiel_opponent.py`` maps onto OpenSpiel's."""


def openspiel_available(game: str) -> str | None:
    """``None`` if OpenSpiel's MCTS can play ``game`` here, else why not (for a note)."""
    if game not in OPENSPIEL_GAMES:
        return f"OpenSpiel has no counterpart of {game}"
    if not (BENCHMARKS / "openspiel_opponent.py").exists():
        return "benchmarks/openspiel_opponent.py is not there"
    import openspiel_opponent

    if not openspiel_opponent.available():
        return "open_spiel is not installed (pip install open_spiel, for benchmarks only)"
    return None


def missing_players(game: str) -> str | None:
    """``None`` if ``game`` has its level choosers and greedy player, else what is missing."""
    try:
        module = importlib.import_module(f"games.bots.{game}")
    except ImportError as exc:
        return f"no computer player yet ({exc})"
    for name in ("make_chooser", "greedy_chooser"):
        if not hasattr(module, name):
            return f"games.bots.{game} has no {name}()"
    return None


def run(matches: list[Match], games_per_match: int, seed: int, budgets: Budgets, jobs: int,
        progress: Any = None, first_game: int = 0) -> dict[Match, Tally]:
    """Play every match; return each one's tally (in the order given).

    Games ``first_game`` to ``first_game + games_per_match - 1`` of each match
    are played, so a long match can be split over several runs (game ``i``
    always has the same seed, opening and colours).
    """
    tallies = {match: Tally() for match in matches}
    tasks: list[tuple[Match, int | None, int, Budgets, int]] = []
    for match in matches:
        if match.opponent.kind == "openspiel":
            tasks.append((match, None, seed, budgets, games_per_match))
        else:
            tasks += [(match, index, seed, budgets, 1)
                      for index in range(first_game, first_game + games_per_match)]
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        done: Iterable[tuple[Match, list[GameResult]]] = (
            map(_play_task, tasks) if pool is None else pool.map(_play_task, tasks, chunksize=1)
        )
        for match, results in done:
            for result in results:
                tallies[match].add(result)
            if progress:
                progress(match, tallies[match])
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return tallies


def table(tallies: dict[Match, Tally], markdown: bool) -> str:
    """The results as a Markdown table or aligned plain text."""
    rows = []
    for match, tally in tallies.items():
        cells = {"game": match.game, "player": match.player.label, "opponent": match.opponent.label, **tally.row()}
        rows.append([cells[column] for column in COLUMNS])
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(column), *(len(row[i]) for row in rows)) for i, column in enumerate(COLUMNS)]
    lines = ["  ".join(column.ljust(widths[i]) for i, column in enumerate(COLUMNS))]
    lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    return "\n".join(lines)


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"an option is KEY=VALUE, not {text!r}")
    return key, value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Play matches between computer players and print win/draw/loss with 95 % intervals.")
    parser.add_argument("--game", action="append", choices=games.names(), help="a game to measure (repeatable; default: all)")
    parser.add_argument("--games", type=int, default=None, help="games per match (default 100; 4 with --quick)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="seconds per move for every level (default: each level's default; 0: no time limit, needs --nodes)")
    parser.add_argument("--nodes", type=int, default=None, help="a node budget per move as well (deterministic with --seconds 0)")
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="without --seconds: each level's default seconds times this (default 1; 0.1 keeps "
                             "the levels' ratios at a tenth of the time)")
    parser.add_argument("--player-time-scale", type=float, default=1.0,
                        help="the tested player's time a move times this as well, its opponent's unchanged "
                             "(default 1; 2: what a search twice as fast would gain)")
    parser.add_argument("--levels", default=f"{MIN_LEVEL}-{MAX_LEVEL}", help="levels to measure, e.g. 1-5 or 1,3,5 (default: all)")
    parser.add_argument("--option", type=_option, action="append", default=[], metavar="KEY=VALUE",
                        help="a game option (with a single --game), e.g. --option size=6")
    parser.add_argument("--opening-plies", type=int, default=0,
                        help="start games 2k and 2k+1 after this many random moves drawn from seed k "
                             "(colours swapped; default 0; Othello's match against the previous main has its own list)")
    parser.add_argument("--max-plies", type=int, default=DEFAULT_MAX_PLIES,
                        help=f"draw games that have a max_plies option after this many plies (default {DEFAULT_MAX_PLIES})")
    parser.add_argument("--quick", action="store_true", help="a quick look: 4 games a match, 0.02 s a move")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing games at once (default 1; each wants a core)")
    parser.add_argument("--seed", type=int, default=1, help="the first game's seed (default 1)")
    parser.add_argument("--first-game", type=int, default=0,
                        help="play games N to N+GAMES-1 of each match (default 0): game i keeps its seed, opening and "
                             "colours, so a long match can be split over runs")
    parser.add_argument("--no-openspiel", action="store_true", help="skip the matches against OpenSpiel")
    parser.add_argument("--no-previous", action="store_true", help="skip Othello's match against the previous main")
    parser.add_argument("--tables", type=_tables, default=None, metavar="PATH",
                        help="Othello: the strongest level evaluates with these pattern tables against the previous "
                             "main (default: the shipped file)")
    parser.add_argument("--against-tables", type=_tables, default=None, metavar="PATH",
                        help="Othello: also play the strongest level against itself evaluating with these tables "
                             "(same openings as against the previous main; counts as --only previous)")
    parser.add_argument("--against-commit", type=_commit, default=None, metavar="REV",
                        help="Othello: also play the strongest level against itself at git revision REV (e.g. main)")
    parser.add_argument("--only", choices=("previous", "levels", "openspiel", "greedy"), default=None,
                        help="only these matches: against the previous main, adjacent levels, OpenSpiel, or the "
                             "greedy player")
    parser.add_argument("--solver-check", type=int, default=0, metavar="POSITIONS",
                        help="also check the Othello endgame solver against brute force on this many positions "
                             "(benchmarks/othello_solver_check.py)")
    parser.add_argument("--solver-empties", type=int, default=12,
                        help="with --solver-check: the most empty squares (default 12)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (for docs/BENCHMARKS.md)")
    args = parser.parse_args(argv)
    if args.option and (args.game is None or len(args.game) != 1):
        parser.error("--option needs exactly one --game")
    if args.games is None:
        args.games = 4 if args.quick else 100
    if args.quick and args.seconds is None:
        args.seconds = 0.02
    if args.seconds == 0 and args.nodes is None:
        parser.error("--seconds 0 needs --nodes")
    if args.opening_plies < 0:
        parser.error("--opening-plies must not be negative")
    if args.games < 1 or args.jobs < 1 or (args.nodes is not None and args.nodes < 1) or (args.seconds or 0) < 0 \
            or args.time_scale <= 0 or args.player_time_scale <= 0:
        parser.error("--games, --jobs, --nodes, --time-scale and --player-time-scale must be positive, "
                     "--seconds not negative")
    try:
        args.levels = _levels(args.levels)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def _tables(text: str) -> str:
    """A pattern data file given on the command line, checked now so that a bad one is named before any game."""
    from games.bots.othello_patterns import load_weights  # noqa: PLC0415

    try:
        load_weights(Path(text))
    except (OSError, ValueError) as error:
        raise argparse.ArgumentTypeError(f"not a readable Othello pattern file: {error}") from None
    return text


def _commit(text: str) -> str:
    """A git revision given on the command line, loaded now so that a bad one is named before any game."""
    import othello_previous  # noqa: PLC0415

    try:
        othello_previous.load_at(text)
    except othello_previous.PreviousPlayerUnavailable as error:
        raise argparse.ArgumentTypeError(f"no Othello player at {text!r}: {error}") from None
    return text


def _levels(text: str) -> list[int]:
    if "-" in text:
        low, _, high = text.partition("-")
        levels = list(range(int(low), int(high) + 1))
    else:
        levels = [int(part) for part in text.split(",")]
    if not levels or any(not MIN_LEVEL <= level <= MAX_LEVEL for level in levels):
        raise ValueError(f"--levels: levels go from {MIN_LEVEL} to {MAX_LEVEL}, not {text!r}")
    return sorted(set(levels))


def _solver_check(positions: int, seed: int, max_empties: int = 12) -> None:
    """Print how many of ``positions`` random endgames (1 to ``max_empties`` empties) the Othello solver gets
    exact, with the interval."""
    import othello_solver_check  # noqa: PLC0415 (benchmarks/othello_solver_check.py)

    checked, mismatches, _ = othello_solver_check.check(positions, max_empties, seed)
    exact = checked - len(mismatches)
    low, high = wilson(exact, checked)
    print(f"othello endgame solver: exact in {exact} of {checked} random positions with 1-{max_empties} empties "
          f"({100 * exact / checked:.1f} %, 95 % interval {100 * low:.1f}-{100 * high:.1f} %)")
    for mismatch in mismatches:
        print(mismatch)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status (1 when no game could be measured)."""
    args = parse_args(argv)
    budgets = Budgets(seconds=args.seconds, nodes=args.nodes, time_scale=args.time_scale,
                      player_scale=args.player_time_scale)
    notes: list[str] = []
    matches: list[Match] = []
    for game in args.game or games.names():
        missing = missing_players(game)
        if missing is not None:
            notes.append(f"{game}: skipped, {missing}")
            continue
        given = {}
        for key, text in args.option:
            given[key] = games.get(game).option(key).parse_text(text)
        options = game_options(game, given, args.max_plies)
        why_not = "skipped (--no-openspiel)" if args.no_openspiel else openspiel_available(game)
        if why_not is not None and game in OPENSPIEL_GAMES:
            notes.append(f"{game}: no match against OpenSpiel: {why_not}")
        found = matches_for(game, options, args.levels, openspiel=why_not is None, previous=not args.no_previous,
                            tables=args.tables or "", against_tables=args.against_tables or "",
                            against_commit=args.against_commit or "")
        if args.only is not None:
            wanted = {"previous": ("previous",), "levels": ("level",), "openspiel": ("openspiel",),
                      "greedy": ("greedy",)}[args.only]
            found = [match for match in found if match.opponent.kind in wanted
                     or (args.only == "previous" and (match.opponent.tables or match.opponent.kind == "commit"))]
        matches += [dataclasses.replace(match, opening_plies=args.opening_plies) for match in found]
    budget_text = (f"each level's default seconds x {args.time_scale:g}" if args.time_scale != 1 else
                   "each level's default seconds") if args.seconds is None else (
        "no time limit" if args.seconds == 0 else f"{args.seconds:g} s")
    nodes_text = "" if args.nodes is None else f", at most {args.nodes} nodes"
    if args.player_time_scale != 1 and args.seconds != 0:
        nodes_text += f", the tested player's time x {args.player_time_scale:g}"
    if args.opening_plies:
        nodes_text += f", {args.opening_plies} random opening plies per pair of games"
    print(f"strength: {args.games} games a match, colours alternating, {budget_text} a move{nodes_text}, "
          f"seed {args.seed}, games from {args.first_game}, {args.jobs} job(s), {os.cpu_count()} cores", file=sys.stderr)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.solver_check:
        _solver_check(args.solver_check, args.seed, args.solver_empties)
    if not matches:
        return 0 if args.solver_check else 1
    started = time.monotonic()

    def progress(match: Match, tally: Tally) -> None:
        if tally.games == args.games or tally.games % 10 == 0:
            print(f"  {match.game}: {match.player.label} vs {match.opponent.label}: "
                  f"+{tally.wins} ={tally.draws} -{tally.losses} ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    tallies = run(matches, args.games, args.seed, budgets, args.jobs, progress, args.first_game)
    print(table(tallies, args.markdown))
    print(f"({time.monotonic() - started:.0f} s; win % is the tested player's, with its 95 % Wilson interval; "
          "score counts a draw as one half)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
