"""Fit the 8x8 Othello pattern evaluation (``games/bots/othello_patterns.py``) from self-play.

Four steps, each one function:

1. :func:`generate`: self-play games on 8x8 between searches of a few
   hundred nodes a move (``--nodes``), the first ``--random-plies`` plies and
   one move in ten (``--epsilon``) random so that the games differ. Once
   ``--solve-at`` squares are empty the game's exact outcome is solved and
   the rest is played perfectly: those positions are labelled exactly, the
   earlier ones with the game's outcome (from the side to move's point of
   view).
2. :func:`relabel`: one position in ``--sample-every`` before the exact
   endgame is labelled by a ``--relabel-depth``-ply search of the
   hand-weighted evaluation instead (proven results as their margin). The
   outcome of a game between weak players is too noisy a label for this
   much data: tables fitted to outcomes lost 0-12 to the hand-weighted
   evaluation; fitted to search labels they win (docs/BENCHMARKS.md).
3. :func:`fit`: least squares by stochastic gradient descent, per stage, of
   what the hand-weighted evaluation (turned into discs by its least-squares
   factor, :func:`hand_permille`) gets wrong (:func:`residuals`): one table
   entry per pattern copy and a constant; every tenth game is held out, the
   epoch with the lowest held-out error is kept, and entries seen fewer than
   ``--min-count`` times are zeroed.
   With ``--alone`` the tables and a mobility weight per stage are fitted
   to the labels themselves (no hand-weighted evaluation at play time).
   ``--tie`` fits one entry per class of configurations a board symmetry
   makes equal (a row and its mirror image: twice the data per entry);
   ``--stage-blend W`` lets a position train the neighbouring stages'
   tables too, at ``W`` times the rate.
4. :func:`compare`: the held-out error of the fitted evaluation beside the
   hand-weighted one's.
5. :func:`bootstrap` (``--bootstrap-rounds``): the same positions relabelled
   by ``--bootstrap-depth``-ply searches of the tables just fitted (or of
   ``--bootstrap-from``), exact up to ``--exact-to`` empties, and fitted
   again; each round searches the previous round's tables, as TD-leaf and
   Logistello's later rounds do, so the tables learn what their own search
   knows rather than what a 4-ply search of the hand-weighted evaluation does.

Writes ``games/bots/data/othello_patterns.bin`` (or ``--out``), with the data
set's size and both errors in its header. Samples can be kept
(``--samples``, ``--labelled``: pickles) and refitted without playing again.

How it scales: games and relabelling are the cost, both linear in the
number of games (a game with its relabelling about 0.5-0.7 s of one job's
wall time on the loaded 2-core machine; a 4-ply relabelling 4.4 ms of CPU a
position); the fit is under 0.5 s of CPU per 10,000 positions and epoch.
Games can be played in several runs (``--first-game``, each run keeping its
``--labelled`` file) and fitted as one data set (several ``--labelled``
files). The shipped tables: 15,998 games, 426,047 positions, in three runs:
games 0-6,397 (the tables before them: 171,248 positions, relabelled by a
4-ply round of the tables fitted to hand-weighted labels), 6,398-9,597
(505 s of self-play with ``--jobs 2``, 84,913 positions, a 4-ply round of
those tables: 539 s) and 9,598-15,997 (934 s, 169,886 positions, a 4-ply
round of tables fitted with ``--tie --stage-blend 0.5`` to the first run:
622 s), every
round exact to 12 empties; then one fit of all three rounds' labels with
``--tie --stage-blend 0.3 --epochs 45 --min-count 0`` (354 s): 5.13 discs
held out, where the tables before them leave 6.14 (on the first two runs'
held-out games 5.09 against 5.84; the first run alone fitted with ``--tie``
5.57, with ``--stage-blend 0.5`` too 5.35). A bootstrapping round costs a search of the tables per position: 6.0 ms of CPU
at 4 plies (623 nodes), 22.5 ms at 5, 71 ms at 6 (6,844 nodes); a solve 44-49
ms at 11-12 empties, 240 ms at 13, 520 ms at 14. Self-play is about 7 games
a second with two jobs, a 4-ply round about 270 positions a second. The
whole data set from scratch (some 40 minutes of self-play, 4 of
hand-weighted relabelling, 20 of bootstrapping rounds, 6 of fitting) takes
some 70 minutes on an idle 2-core machine; the first 6,398 games alone (the
tables before these, with ``--tie``: 60 % of 200 games against them at
7,000 nodes a move) take under 40. A 6-ply round (12 times the 4-ply one's
CPU) does not fit the hour: use ``--bootstrap-every``.

Usage::

    nice -n 10 python benchmarks/othello_train.py --games 1600 --labelled a.pkl --out /tmp/p.bin
    nice -n 10 python benchmarks/othello_train.py --games 4800 --first-game 1600 --labelled b.pkl --out /tmp/p.bin
    python benchmarks/othello_train.py --labelled a.pkl b.pkl                  # the tables before them
    python benchmarks/othello_train.py --labelled a.pkl b.pkl --alone --out /tmp/alone.bin
    python benchmarks/othello_train.py --labelled a.pkl b.pkl --bootstrap-rounds 1 --exact-to 12 \
        --bootstrap-from old.bin --epochs 34 --min-count 0 --relabelled c.pkl  # the tables before the shipped
    python benchmarks/othello_train.py --games 3200 --first-game 6398 --relabel-depth 0 --labelled n.pkl \
        --bootstrap-rounds 1 --bootstrap-from c.bin --exact-to 12 --relabelled nb.pkl --epochs 1 --out n.bin
    python benchmarks/othello_train.py --games 6400 --first-game 9598 --relabel-depth 0 --labelled n2.pkl \
        --bootstrap-rounds 1 --bootstrap-from tied.bin --exact-to 12 --relabelled nb2.pkl --epochs 1 --out n2.bin
    python benchmarks/othello_train.py --labelled c.pkl --bootstrap-rounds 1 --exact-to 12 \
        --relabelled c.pkl nb.pkl nb2.pkl --tie --stage-blend 0.3 --epochs 45 --min-count 0  # the shipped tables
    python benchmarks/othello_train.py --labelled c.pkl --bootstrap-rounds 1 --bootstrap-depth 5 --exact-to 12 \
        --bootstrap-from e30.bin --bootstrap-every 3 --bootstrap-keep-rest --bootstrap-limit 33000 \
        --min-count 0 --epochs 36 --out /tmp/d5.bin  # a second round on a share (e30.bin: c.pkl, --epochs 30); lost
    python benchmarks/othello_train.py --games 20 --out /tmp/p.bin             # a smoke run
"""

from __future__ import annotations

import argparse
import multiprocessing
import pickle
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from games.bots import Budget  # noqa: E402
from games.bots.othello_board import board  # noqa: E402
from games.bots.othello_eval import LIMIT, evaluator, hand_terms, trained_evaluator  # noqa: E402
from games.bots.othello_patterns import (  # noqa: E402
    DATA_FILE, PATTERNS, STAGES, TABLE_SIZES, PatternWeights, feature_vector, save_weights, symmetric_indices)
from games.bots.othello_search import INFINITY, SCALE, Searcher  # noqa: E402

MOBILITY_RATE = 0.0002
"""The SGD step of the mobility weight (per unit of error times mobility) when the tables stand alone."""

Sample = tuple[int, int, int, int]
"""``(own, opp, label, game)``: a position, its label in hundredths of a disc, and its game's number."""

START = (0x0000000810000000, 0x0000001008000000)
"""Black's and White's discs at the standard start (d5 and e4 Black, d4 and e5 White)."""


def play_game(number: int, seed: int, nodes: int, random_plies: int, epsilon: float, solve_at: int) -> list[Sample]:
    """Play one self-play game; return its labelled positions (see the module docstring)."""
    rng = random.Random(seed * 1_000_003 + number)
    geometry = board(8)
    moves, flips = geometry.moves, geometry.flips
    own, opp = START
    black_to_move = True
    seen: list[tuple[int, int, bool]] = []
    solved_margin = None  # Black's final margin once solved
    while True:
        legal = moves(own, opp)
        if not legal:
            if not moves(opp, own):
                break
            own, opp, black_to_move = opp, own, not black_to_move
            continue
        seen.append((own, opp, black_to_move))
        empties = 64 - (own | opp).bit_count()
        if empties <= solve_at:
            if solved_margin is None:
                margin = Searcher(8, Budget(nodes=10**12)).solve(own, opp, -INFINITY, INFINITY)
                solved_margin = margin if black_to_move else -margin
            index = Searcher(8, Budget(nodes=10**12)).best_move(own, opp, solve_empties=64).move
        elif len(seen) <= random_plies or rng.random() < epsilon:
            squares = [i for i in range(64) if legal >> i & 1]
            index = rng.choice(squares)
        else:
            index = Searcher(8, Budget(nodes=nodes)).best_move(own, opp).move
        flipped = flips(index, own, opp)
        own, opp, black_to_move = opp ^ flipped, own | (1 << index) | flipped, not black_to_move
    black = own if black_to_move else opp
    white = opp if black_to_move else own
    final = black.bit_count() - white.bit_count() if solved_margin is None else solved_margin
    return [(o, p, 100 * (final if to_move else -final), number) for o, p, to_move in seen]


def _play_task(task: tuple[int, int, int, int, float, int]) -> list[Sample]:
    return play_game(*task)


def generate(games: int, seed: int, nodes: int, random_plies: int, epsilon: float, solve_at: int,
             jobs: int, first: int = 0) -> list[Sample]:
    """Play ``games`` self-play games (numbers ``first`` on) in ``jobs`` processes; return their labelled positions."""
    tasks = [(number, seed, nodes, random_plies, epsilon, solve_at) for number in range(first, first + games)]
    samples: list[Sample] = []
    started = time.perf_counter()
    with multiprocessing.Pool(jobs) as pool:
        for done, game in enumerate(pool.imap_unordered(_play_task, tasks, chunksize=4), 1):
            samples.extend(game)
            if done % 100 == 0:
                print(f"  {done} games, {len(samples)} positions, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
    return samples


def _search_label(task: tuple[int, int, int, Path | None]) -> int:
    """An evaluation searched ``depth`` plies from ``(own, opp)``: the hand-weighted one, or the tables at ``tables``.

    In the evaluation's own units, or (a game end within reach) the proven
    margin as ``margin * SCALE`` (see :mod:`games.bots.othello_search`).
    A ``depth`` of ``EXACT`` solves the position (its margin times ``SCALE``).

    Raises:
        ValueError: if ``tables`` is not a pattern file that loads.
    """
    own, opp, depth, tables = task
    evaluate = evaluator(8) if tables is None else trained_evaluator(8, tables)
    if evaluate is None:
        raise ValueError(f"{tables} is not a pattern file that loads")
    searcher = Searcher(8, Budget(nodes=10**12), evaluate=evaluate)
    if depth == EXACT:
        return searcher.solve(own, opp, -64, 64) * SCALE
    return searcher.search(own, opp, depth, -INFINITY, INFINITY)


EXACT = 64
"""A search depth that means: solve the position exactly."""


def _to_hundredths(score: int, scale: float) -> float:
    """A search score in hundredths of a disc: proven margins exactly, heuristic scores times ``scale``."""
    if abs(score) > LIMIT:
        return score / SCALE * 100
    return scale * score


def relabel(samples: list[Sample], depth: int, share: float, solve_at: int, jobs: int,
            tables: Path | None = None, exact_to: int = 0) -> list[Sample]:
    """Blend each label with a ``depth``-ply search (share ``share``) of the hand-weighted evaluation or ``tables``.

    Positions with ``solve_at`` empties or fewer keep their exact label;
    those with up to ``exact_to`` empties are solved exactly instead of
    searched. The hand-weighted search's units are turned into hundredths of
    a disc by the least-squares factor between that evaluation and the
    labels; the tables' scores are hundredths of a disc already. Search
    labels are much less noisy than a game's outcome, which depends on every
    later move of two weak players; the blend keeps some of what only the
    outcome knows.
    """
    if tables is None:
        hand = evaluator(8)
        static = [hand(own, opp) for own, opp, _, _ in samples]
        scale = sum(h * label for h, (_, _, label, _) in zip(static, samples)) / max(1, sum(h * h for h in static))
    else:
        scale = 1.0
    todo = [i for i, (own, opp, _, _) in enumerate(samples) if 64 - (own | opp).bit_count() > solve_at]
    started = time.perf_counter()
    relabelled = list(samples)
    with multiprocessing.Pool(jobs) as pool:
        tasks = [(samples[i][0], samples[i][1],
                  EXACT if 64 - (samples[i][0] | samples[i][1]).bit_count() <= exact_to else depth, tables)
                 for i in todo]
        for done, (i, score) in enumerate(zip(todo, pool.imap(_search_label, tasks, chunksize=64)), 1):
            own, opp, label, game = samples[i]
            relabelled[i] = (own, opp, round((1 - share) * label + share * _to_hundredths(score, scale)), game)
            if done % 10_000 == 0:
                print(f"  relabelled {done} of {len(todo)}, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
    return relabelled


def bootstrap(samples: list[Sample], tables: Path, depth: int, solve_at: int, exact_to: int, jobs: int,
              every: int = 1, keep_rest: bool = False, limit: int | None = None) -> list[Sample]:
    """Relabel ``samples`` by ``depth``-ply searches of the pattern evaluation in ``tables`` (one round of bootstrapping).

    The labels a set of tables was fitted to (searches of the hand-weighted
    evaluation) are replaced by searches of those tables themselves, exact
    up to ``exact_to`` empties, as TD-leaf and Logistello's later rounds
    relabel with their own evaluation; fitting again to them lets the tables
    learn what their own deeper search knows. Only one position in ``every``
    (by position in the list) before the exact endgame is relabelled, and
    of those only the first ``limit`` (``None``: all), to bound the cost of
    deep searches. The others are left out, or with ``keep_rest`` kept with
    the labels they had; the exact ones are all kept. The order is kept.
    """
    chosen = [i for i, (own, opp, _, _) in enumerate(samples)
              if i % every == 0 and 64 - (own | opp).bit_count() > solve_at][:limit]
    fresh = relabel([samples[i] for i in chosen], depth, 1.0, solve_at, jobs, tables=tables, exact_to=exact_to)
    result = list(samples)
    for i, sample in zip(chosen, fresh):
        result[i] = sample
    if keep_rest:
        return result
    searched = set(chosen)
    return [s for i, s in enumerate(result) if i in searched or 64 - (s[0] | s[1]).bit_count() <= solve_at]


def load_labelled(paths: list[Path]) -> list[Sample]:
    """The labelled samples of several ``--labelled`` files, one data set (games played in separate runs).

    Raises:
        ValueError: if two files hold the same game number (the same games
            twice, or runs that did not use ``--first-game``).
    """
    merged: list[Sample] = []
    games: set[int] = set()
    for path in paths:
        part = pickle.loads(path.read_bytes())
        numbers = {sample[3] for sample in part}
        if numbers & games:
            raise ValueError(f"{path} holds games already read from an earlier file (numbers {min(numbers & games)}..): "
                             "play separate runs with --first-game")
        games |= numbers
        merged += part
    return merged


def _features(samples: list[Sample], tie: bool = False) -> list[tuple[int, tuple[int, ...], int, int]]:
    """``(stage, indices, mobility, label)`` per sample; with ``tie``, each index its symmetry class's
    (:func:`symmetric_indices`)."""
    features = [(*feature_vector(own, opp), label) for own, opp, label, _ in samples]
    if not tie:
        return features
    classes = [symmetric_indices(pattern.name) for pattern in PATTERNS]
    return [(stage, tuple(map(list.__getitem__, classes, indices)), mob, label)
            for stage, indices, mob, label in features]


def _untie(tables: list[dict[str, list[float]]]) -> None:
    """Give every entry its symmetry class's value (after a fit with ``tie``, only the classes' entries were fitted)."""
    for name in TABLE_SIZES:
        classes = symmetric_indices(name)
        for stage_tables in tables:
            table = stage_tables[name]
            table[:] = [table[c] for c in classes]


def _split(samples: list[Sample], held_out: float = 0.1) -> tuple[list[Sample], list[Sample]]:
    """Split by game (every tenth game held out), so that held-out positions are from unseen games."""
    every = max(2, round(1 / held_out))
    train = [s for s in samples if s[3] % every]
    test = [s for s in samples if not s[3] % every]
    return train, test


def _per_copy(tables: list[dict[str, list[float]]]) -> list[list[list[float]]]:
    """Per stage, each pattern copy's table in :data:`PATTERNS` order (the same lists, shared between copies)."""
    return [[stage_tables[pattern.name] for pattern in PATTERNS] for stage_tables in tables]


def _error(data, tables, mobility, bias) -> float:
    """Root mean square error in discs over ``data`` (feature tuples)."""
    copies, getitem = _per_copy(tables), list.__getitem__
    total = sum((bias[stage] + mobility[stage] * mob + sum(map(getitem, copies[stage], idx)) - label) ** 2
                for stage, idx, mob, label in data)
    return (total / max(1, len(data))) ** 0.5 / 100


def hand_permille(samples: list[Sample]) -> int:
    """The least-squares factor (in thousandths) that turns the hand-weighted evaluation into the labels' units."""
    hand = evaluator(8)
    static = [hand(own, opp) for own, opp, _, _ in samples]
    return round(1000 * sum(h * s[2] for h, s in zip(static, samples)) / max(1, sum(h * h for h in static)))


def residuals(samples: list[Sample], permille: int) -> list[Sample]:
    """Each label minus the hand-weighted evaluation's share (what the tables are fitted to)."""
    hand = evaluator(8)
    return [(own, opp, label - hand(own, opp) * permille // 1000, game) for own, opp, label, game in samples]


def fit(samples: list[Sample], epochs: int, seed: int, rate: float = 0.001,
        min_count: int = 0, mobility_rate: float = 0.0, tie: bool = False,
        stage_blend: float = 0.0) -> tuple[PatternWeights, dict[str, float]]:
    """Fit the tables by SGD on squared error; keep the epoch with the lowest held-out error.

    ``mobility_rate`` (0: the mobility weight stays 0, as when the tables
    correct the hand-weighted evaluation, which counts mobility itself).

    Entries seen in fewer than ``min_count`` training positions are set to 0
    afterwards (a rare pattern's entry is mostly its few positions' noise).

    With ``tie``, the configurations a board symmetry makes equal
    (:func:`symmetric_indices`) share one entry: a mirrored edge learns from
    the edge's positions too (the counts are the class's).

    With ``stage_blend`` > 0, a position also trains the two neighbouring
    stages' tables, at that share of the rate (each stage's tables see the
    positions a few discs either side of it, as Logistello's did).

    Returns the weights (rounded to ints) and the errors: ``train_rmse`` and
    ``test_rmse`` in discs, and the position counts.
    """
    train_samples, test_samples = _split(samples)
    train, test = _features(train_samples, tie), _features(test_samples, tie)
    weighted = [(stage, indices, mob, label, rate) for stage, indices, mob, label in train]
    if stage_blend:
        weighted += [(near, indices, mob, label, rate * stage_blend) for stage, indices, mob, label in train
                     for near in (stage - 1, stage + 1) if 0 <= near < STAGES]
    tables = [{name: [0.0] * size for name, size in TABLE_SIZES.items()} for _ in range(STAGES)]
    mobility, bias = [0.0] * STAGES, [0.0] * STAGES
    best = (_error(test, tables, mobility, bias), _snapshot(tables, mobility, bias), 0)
    rng = random.Random(seed)
    names = [pattern.name for pattern in PATTERNS]
    copies, getitem = _per_copy(tables), list.__getitem__
    for epoch in range(1, epochs + 1):
        rng.shuffle(weighted)
        for stage, indices, mob, label, stage_rate in weighted:
            stage_copies = copies[stage]
            error = label - (bias[stage] + mobility[stage] * mob + sum(map(getitem, stage_copies, indices)))
            step = stage_rate * error
            for table, index in zip(stage_copies, indices):
                table[index] += step
            bias[stage] += step
            mobility[stage] += mobility_rate * error * mob
        test_error = _error(test, tables, mobility, bias)
        print(f"  epoch {epoch}: held-out RMSE {test_error:.2f} discs", file=sys.stderr, flush=True)
        if test_error < best[0]:
            best = (test_error, _snapshot(tables, mobility, bias), epoch)
    tables, mobility, bias = best[1]
    seen = [{name: [0] * size for name, size in TABLE_SIZES.items()} for _ in range(STAGES)]
    for stage, indices, _, _ in train:
        for name, index in zip(names, indices):
            seen[stage][name][index] += 1
    for stage in range(STAGES):
        for name, table in tables[stage].items():
            counts = seen[stage][name]
            for index, count in enumerate(counts):
                if count < min_count:
                    table[index] = 0.0
    if tie:
        _untie(tables)
    info = {"positions": len(samples), "train_positions": len(train), "test_positions": len(test),
            "train_rmse": round(_error(train, tables, mobility, bias), 3), "test_rmse": round(best[0], 3),
            "epoch": best[2], "min_count": min_count, **({"tied": True} if tie else {}),
            **({"stage_blend": stage_blend} if stage_blend else {})}
    weights = PatternWeights(
        tables=tuple({name: [_int16(v) for v in table] for name, table in stage.items()} for stage in tables),
        mobility=tuple(round(m) for m in mobility), bias=tuple(round(b) for b in bias), info=info)
    return weights, info


def _snapshot(tables, mobility, bias):
    return [{name: list(t) for name, t in stage.items()} for stage in tables], list(mobility), list(bias)


def _int16(value: float) -> int:
    return max(-32767, min(32767, round(value)))


def compare(samples: list[Sample], weights: PatternWeights) -> dict[str, float]:
    """Held-out RMSE in discs of the fitted evaluation and of the hand-weighted one (scaled by least squares)."""
    from games.bots.othello_patterns import evaluator as pattern_evaluator  # noqa: PLC0415

    _, test = _split(samples)
    hand = evaluator(8)
    fitted = pattern_evaluator(weights, LIMIT, hand=hand_terms(8))
    labels = [label for _, _, label, _ in test]
    new = [fitted(own, opp) for own, opp, _, _ in test]
    old = [hand(own, opp) for own, opp, _, _ in test]
    scale = sum(o * y for o, y in zip(old, labels)) / max(1, sum(o * o for o in old))
    rmse = lambda guesses: (statistics.fmean((g - y) ** 2 for g, y in zip(guesses, labels)) ** 0.5) / 100  # noqa: E731
    return {"test_rmse_patterns": round(rmse(new), 3), "test_rmse_hand_weighted": round(rmse([scale * o for o in old]), 3),
            "test_rmse_constant_zero": round(rmse([0] * len(labels)), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1500, help="self-play games (default 1500)")
    parser.add_argument("--jobs", type=int, default=2, help="processes playing games (default 2)")
    parser.add_argument("--nodes", type=int, default=300, help="search nodes a move in self-play (default 300)")
    parser.add_argument("--random-plies", type=int, default=8, help="random opening plies (default 8)")
    parser.add_argument("--epsilon", type=float, default=0.1, help="share of random moves after them (default 0.1)")
    parser.add_argument("--solve-at", type=int, default=10, help="empties from which games are solved (default 10)")
    parser.add_argument("--epochs", type=int, default=15, help="SGD passes over the data (default 15)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first-game", type=int, default=0,
                        help="number the games from this one (default 0): runs that add games to a data set")
    parser.add_argument("--min-count", type=int, default=20, help="zero the entries seen fewer times (default 20)")
    parser.add_argument("--relabel-depth", type=int, default=4,
                        help="blend the labels with a search this deep of the hand-weighted evaluation (default 4; 0: no)")
    parser.add_argument("--relabel-share", type=float, default=1.0,
                        help="the search's share of the blend (default 1: search labels only)")
    parser.add_argument("--sample-every", type=int, default=3,
                        help="keep one position in this many before the exact endgame (default 3: search labels cost)")
    parser.add_argument("--labelled", type=Path, nargs="+",
                        help="keep the blended samples here, or reuse them if the file exists; several existing "
                             "files (runs with different --first-game) are fitted as one data set")
    parser.add_argument("--samples", type=Path, help="keep the positions here, or reuse them if the file exists")
    parser.add_argument("--alone", action="store_true",
                        help="fit the tables and a mobility weight alone, not as a correction of the hand-weighted "
                             "evaluation (cheaper to evaluate: no hand-weighted terms)")
    parser.add_argument("--tie", action="store_true",
                        help="configurations a board symmetry makes equal share one table entry in the fit")
    parser.add_argument("--stage-blend", type=float, default=0.0,
                        help="a position also trains the neighbouring stages' tables at this share of the rate")
    parser.add_argument("--bootstrap-rounds", type=int, default=0,
                        help="then relabel the positions this many times by searches of the last fitted tables and "
                             "refit (default 0)")
    parser.add_argument("--bootstrap-depth", type=int, default=4, help="those searches' depth (default 4)")
    parser.add_argument("--bootstrap-from", type=Path,
                        help="the first bootstrapping round searches these tables (default: fit them first)")
    parser.add_argument("--bootstrap-every", type=int, default=1,
                        help="bootstrapping keeps one position in this many before the exact endgame (default 1)")
    parser.add_argument("--bootstrap-keep-rest", action="store_true",
                        help="the positions bootstrapping does not relabel keep their labels (default: left out)")
    parser.add_argument("--bootstrap-limit", type=int, default=None,
                        help="bootstrapping relabels at most this many positions, the first in the data set's "
                             "order (default: all it keeps)")
    parser.add_argument("--exact-to", type=int, default=0,
                        help="bootstrapping solves positions with this many empties or fewer (default: --solve-at)")
    parser.add_argument("--relabelled", type=Path, nargs="+",
                        help="keep the last bootstrapping round's labels here, or reuse them if the file exists; "
                             "several existing files (rounds over separate runs' games) are fitted as one data set")
    parser.add_argument("--out", type=Path, default=DATA_FILE, help=f"the data file written (default {DATA_FILE})")
    args = parser.parse_args(argv)
    reuse = bool(args.labelled) and all(path.exists() for path in args.labelled)
    if args.labelled and len(args.labelled) > 1 and not reuse:
        parser.error("several --labelled files are read, never written: "
                     + ", ".join(str(path) for path in args.labelled if not path.exists()) + " missing")
    started = time.perf_counter()
    if reuse:
        samples = load_labelled(args.labelled)
    elif args.samples is not None and args.samples.exists():
        samples = pickle.loads(args.samples.read_bytes())
    else:
        samples = generate(args.games, args.seed, args.nodes, args.random_plies, args.epsilon, args.solve_at, args.jobs,
                           args.first_game)
        if args.samples is not None:
            args.samples.write_bytes(pickle.dumps(samples))
    played = time.perf_counter() - started
    if not reuse:
        samples = [s for i, s in enumerate(samples)
                   if i % args.sample_every == 0 or 64 - (s[0] | s[1]).bit_count() <= args.solve_at]
        if args.relabel_depth:
            samples = relabel(samples, args.relabel_depth, args.relabel_share, args.solve_at, args.jobs)
        if args.labelled:
            args.labelled[0].write_bytes(pickle.dumps(samples))
    args.seconds_playing = round(played)
    final, depth = _bootstrap_rounds(samples, args)[-1] if args.bootstrap_rounds else (samples, 0)
    _fit_and_save(final, args, args.out, started, depth)
    return 0


def _round_path(out: Path, number: int) -> Path:
    """Where bootstrapping round ``number``'s intermediate tables are written (beside ``out``)."""
    return out.with_name(f"{out.stem}.round{number}{out.suffix}")


def _bootstrap_rounds(samples: list[Sample], args: argparse.Namespace) -> list[tuple[list[Sample], int]]:
    """The data sets of ``--bootstrap-rounds`` rounds, each relabelled by the previous round's tables.

    A round's tables are fitted and written (:func:`_round_path`) before the
    next round searches them; the first round searches ``--bootstrap-from``
    or the tables fitted to ``samples``. ``--relabelled`` keeps (or reuses)
    the last round's labels.
    """
    if not args.bootstrap_rounds:
        return []
    if args.relabelled and all(path.exists() for path in args.relabelled):
        return [(load_labelled(args.relabelled), args.bootstrap_depth)]
    if args.relabelled and len(args.relabelled) > 1:
        raise SystemExit("several --relabelled files are read, never written: "
                         + ", ".join(str(path) for path in args.relabelled if not path.exists()) + " missing")
    tables = args.bootstrap_from
    if tables is None:
        tables = _round_path(args.out, 0)
        _fit_and_save(samples, args, tables, time.perf_counter(), 0)
    rounds = []
    for number in range(args.bootstrap_rounds):
        relabelled = bootstrap(samples, tables, args.bootstrap_depth, args.solve_at,
                               max(args.exact_to, args.solve_at), args.jobs, args.bootstrap_every,
                               args.bootstrap_keep_rest, args.bootstrap_limit)
        rounds.append((relabelled, args.bootstrap_depth))
        if number < args.bootstrap_rounds - 1:
            tables = _round_path(args.out, number + 1)
            _fit_and_save(relabelled, args, tables, time.perf_counter(), args.bootstrap_depth)
    if args.relabelled:
        args.relabelled[0].write_bytes(pickle.dumps(rounds[-1][0]))
    return rounds


def _fit_and_save(samples: list[Sample], args: argparse.Namespace, out: Path, started: float,
                  bootstrap_depth: int) -> PatternWeights:
    """Fit tables to ``samples`` as ``args`` ask (correction or ``--alone``), record the run in their header, write ``out``."""
    if args.alone:
        permille = 0
        weights, info = fit(samples, args.epochs, args.seed, min_count=args.min_count, mobility_rate=MOBILITY_RATE,
                            tie=args.tie, stage_blend=args.stage_blend)
    else:
        permille = hand_permille(samples)
        weights, info = fit(residuals(samples, permille), args.epochs, args.seed, min_count=args.min_count,
                            tie=args.tie, stage_blend=args.stage_blend)
    weights = PatternWeights(weights.tables, weights.mobility, weights.bias, info, permille)
    info.update(compare(samples, weights))
    info.update({"games": len({s[3] for s in samples}), "nodes_per_move": args.nodes, "solve_at": args.solve_at,
                 "relabel_depth": args.relabel_depth, "relabel_share": args.relabel_share if args.relabel_depth else 0,
                 "seconds_playing": args.seconds_playing, "seconds_total": round(time.perf_counter() - started)})
    if bootstrap_depth:
        info.update({"bootstrap_depth": bootstrap_depth, "bootstrap_rounds": args.bootstrap_rounds,
                     "exact_to": max(args.exact_to, args.solve_at), "bootstrap_every": args.bootstrap_every})
        if args.bootstrap_keep_rest or args.bootstrap_limit is not None:
            info.update({"bootstrap_keep_rest": args.bootstrap_keep_rest, "bootstrap_limit": args.bootstrap_limit})
    weights = PatternWeights(weights.tables, weights.mobility, weights.bias, info, permille)
    save_weights(weights, out)
    print(f"wrote {out} ({out.stat().st_size:,} bytes): {info}", flush=True)
    return weights


if __name__ == "__main__":
    sys.exit(main())
