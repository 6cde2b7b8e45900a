"""The Othello opening book: the shipped file loads, its moves are legal in every symmetric copy, and it is used.

Levels 4 and 5 play from it on 8x8 with variety; levels 1 to 3 do not. The builder searches with
the tables it is given and records which.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

import games
from games.bots import Budget
from games.bots.othello import make_chooser
from games.bots.othello_board import board
from games.bots.othello_book import BOOK_FILE, book_move, canonical, load_book, transforms

OTHELLO = games.get("othello")
START = (0x0000000810000000, 0x0000001008000000)


def _apply(perm: tuple[int, ...], bits: int) -> int:
    return sum(1 << perm[i] for i in range(64) if bits >> i & 1)


def test_the_shipped_book_loads_and_every_move_is_legal_in_every_symmetric_copy() -> None:
    book = load_book()
    assert 20 <= len(book) and BOOK_FILE.stat().st_size < 1_000_000
    assert canonical(*START)[0] in book
    moves = board(8).moves
    for (own, opp), entries in book.items():
        assert canonical(own, opp)[0] == (own, opp)
        legal = moves(own, opp)
        assert all(legal >> square & 1 for square, _ in entries)
        for perm in transforms():
            copy = (_apply(perm, own), _apply(perm, opp))
            chosen = book_move(book, *copy, random.Random(1), margin=10_000)
            assert chosen is not None and moves(*copy) >> chosen & 1


def test_book_moves_vary_within_the_margin_and_never_outside_it() -> None:
    book = load_book()
    varied = [(pair, entries) for pair, entries in book.items()
              if sum(score >= max(s for _, s in entries) - 80 for _, score in entries) >= 2]
    assert varied, "no book position offers two moves within 0.8 discs"
    (own, opp), entries = varied[0]
    best = max(score for _, score in entries)
    allowed = {square for square, score in entries if score >= best - 80}
    chosen = {book_move(book, own, opp, random.Random(seed), margin=80) for seed in range(40)}
    assert chosen == allowed
    assert {book_move(book, own, opp, random.Random(seed), margin=0) for seed in range(20)} == {
        square for square, score in entries if score == best}


def test_a_position_out_of_the_book_gets_no_book_move() -> None:
    state = OTHELLO.new_state({"size": 8})
    rng = random.Random(2)
    for _ in range(20):
        state = state.play(rng.choice(state.legal_moves()))
    sides = (state.black, state.white) if state.to_move == 0 else (state.white, state.black)
    assert book_move(load_book(), *sides, random.Random(1), margin=100) is None


def test_levels_4_and_5_open_from_the_book_in_several_lines() -> None:
    lines = {4: set(), 5: set()}
    for level in (4, 5):
        for seed in range(12):
            state = OTHELLO.new_state({"size": 8})
            line = []
            for _ in range(4):
                move = make_chooser(level).choose(state.view(state.to_move), Budget(nodes=1), random.Random(seed * 7 + len(line)))
                sides = (state.black, state.white) if state.to_move == 0 else (state.white, state.black)
                pair, perm = canonical(*sides)
                square = board(8).names.index(move)
                assert perm[square] in {s for s, _ in load_book()[pair]}  # a book move, not the 1-node search's
                line.append(move)
                state = state.play(move)
            lines[level].add(tuple(line))
    assert len(lines[4]) >= 2 and len(lines[5]) >= 2


def test_a_broken_book_file_is_refused_with_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "book.json"
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not a parlour-othello-book-1 file"):
        load_book(path)
    path.write_text(json.dumps({"format": "parlour-othello-book-1", "positions": {"zz:1": [[19, 0]]}}))
    with pytest.raises(ValueError, match="bad book entry 'zz:1'"):
        load_book(path)


def test_the_book_builder_scores_with_the_tables_it_is_given_and_records_them(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import othello_book_build  # noqa: PLC0415

    from games.bots import othello_patterns  # noqa: PLC0415
    from games.bots.othello_eval import trained_evaluator  # noqa: PLC0415
    from games.bots.othello_search import Searcher  # noqa: PLC0415

    flat = tmp_path / "flat.bin"
    tables = tuple({name: [0] * size for name, size in othello_patterns.TABLE_SIZES.items()}
                   for _ in range(othello_patterns.STAGES))
    othello_patterns.save_weights(othello_patterns.PatternWeights(tables, (100,) * 8, (0,) * 8, {}), flat)
    out = tmp_path / "book.json"
    assert othello_book_build.main(["--plies", "2", "--depth", "2", "--jobs", "1", "--tables", str(flat),
                                    "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["tables"] == hashlib.sha256(flat.read_bytes()).hexdigest()
    evaluate = trained_evaluator(8, flat)
    for key, stored in data["positions"].items():
        own, opp = (int(part, 16) for part in key.split(":"))
        scores = Searcher(8, Budget(nodes=10**12), evaluate=evaluate).move_scores(own, opp, 2)
        best = max(score for _, score in scores)
        assert sorted(map(tuple, stored)) == sorted((move, score) for move, score in scores if score >= best - 150)
