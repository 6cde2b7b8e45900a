"""GGF records of Othello games (games/ggf.py): a known game written exactly, round trips, other programs' records, errors."""

from __future__ import annotations

import random

import pytest

import games
from games.ggf import GgfClock, GgfError, GgfGame, GgfMove, GgfResult, format_ggf, ggf_to_record, parse_ggf, record_to_ggf
from games.record import GameRecord, RecordedMove, replay

SHORTEST = ["d3", "c3", "b3", "d2", "e1", "d6", "d7", "e3", "f4"]
"""A shortest possible Othello game: nine plies, and White has no disc left (13-0)."""

SHORTEST_GGF = (
    "(;GM[Othello]PC[Parlour]DT[2024.05.01_12:00:00.UTC]PB[ann]PW[bob]RB[1500.00]RW[1612.25]"
    "TI[05:00/00:03/00:00]TY[8]RE[+13.00]"
    "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"
    "B[D3//2.50]W[C3//1.00]B[B3//1.00]W[D2//1.00]B[E1//1.00]W[D6//1.00]B[D7//1.00]W[E3//1.00]B[F4//61.25];)\n"
)


def timed(moves: list[str], start_s: int = 0) -> tuple[RecordedMove, ...]:
    """The plies of ``moves`` from Othello's start, played 2.5 s, then 1 s each after 12:00:00, the last 61.25 s after."""
    state = games.get("othello").new_state({})
    out, at = [], 2.5
    for ply, move in enumerate(moves, start=1):
        seat = state.to_move
        forced = state.legal_moves() == ["pass"]
        state = state.play(move)
        out.append(RecordedMove(ply, seat, move, at=f"2024-05-01T12:00:{at:06.3f}Z" if at < 60 else f"2024-05-01T12:01:{at - 60:06.3f}Z", forced=forced))
        at += 61.25 if ply == len(moves) - 1 else 1.0
    return tuple(out)


def shortest_record() -> GameRecord:
    final = replay(GameRecord("othello", {"size": 8}, moves=timed(SHORTEST)))[-1]
    return GameRecord(
        "othello",
        {"size": 8},
        players=("ann", "bob"),
        result=final.outcome.to_dict(),
        started_at="2024-05-01T12:00:00.000Z",
        finished_at="2024-05-01T12:01:11.750Z",
        moves=timed(SHORTEST),
    )


def test_a_known_game_is_written_exactly_and_reads_back() -> None:
    record = shortest_record()
    assert record.result == {"winner": 0, "reason": "elimination", "score": [13, 0]}
    game = record_to_ggf(record, ratings=(1500.0, 1612.25), clock=(300.0, 3.0))
    text = format_ggf(game)
    assert text == SHORTEST_GGF
    assert parse_ggf(text) == game
    back = ggf_to_record(parse_ggf(text))
    assert [(m.seat, m.move) for m in back.moves] == [(m.seat, m.move) for m in record.moves]
    assert back.players == ("ann", "bob") and back.started_at == "2024-05-01T12:00:00Z"
    assert back.result == record.result
    assert replay(back)[-1].disc_counts() == (13, 0)


def random_record(rng: random.Random, size: int) -> GameRecord:
    state = games.get("othello").new_state({"size": size})
    moves = []
    while state.outcome is None:
        legal = state.legal_moves()
        move = rng.choice(legal)
        moves.append(RecordedMove(len(moves) + 1, state.to_move, move, forced=legal == ["pass"]))
        state = state.play(move)
    return GameRecord("othello", {"size": size}, players=("Ann ]\\[x", None), result=state.outcome.to_dict(), moves=tuple(moves))


@pytest.mark.parametrize("size", [6, 8, 10, 16])
def test_random_games_round_trip_passes_and_all(size: int) -> None:
    rng = random.Random(size)
    passes = 0
    for _ in range(15):
        record = random_record(rng, size)
        game = record_to_ggf(record)
        text = format_ggf(game)
        assert text.startswith("(;GM[Othello]") and text.endswith(";)\n") and text.count("\n") == 1
        assert parse_ggf(text) == game
        assert format_ggf(parse_ggf(text)) == text
        back = ggf_to_record(parse_ggf(text))
        assert back.moves == record.moves and back.result == record.result and back.players == record.players
        assert f"TY[{size}]" in text and f"BO[{size} " in text
        passes += sum(move.move == "pass" for move in record.moves)
        assert text.count("[PA]") == sum(move.move == "pass" for move in record.moves)
    if size <= 8:
        assert passes > 0, "some of these games have passes"


@pytest.mark.parametrize(
    ("result", "re", "back"),
    [
        ({"winner": 1, "reason": "Black resigned", "score": None}, "RE[-36.00:r]", {"winner": 1, "reason": "Black resigned", "score": None}),
        ({"winner": 0, "reason": "White abandoned the game", "score": None}, "RE[+36.00:r]", {"winner": 0, "reason": "White resigned", "score": None}),
        ({"winner": 0, "reason": "White ran out of time", "score": None}, "RE[+36.00:t]", {"winner": 0, "reason": "White ran out of time", "score": None}),
        ({"winner": None, "reason": "draw by agreement", "score": None}, "RE[+0.00:s]", {"winner": None, "reason": "draw by agreement", "score": None}),
        ({"winner": None, "reason": "mutual blocking", "score": [18, 18]}, "RE[+0.00]", None),
        ({"winner": None, "reason": "Black aborted the game", "score": None, "aborted": True}, None, None),
        (None, None, None),
    ],
)
def test_results_are_written_for_black_with_the_spec_flags(result: dict | None, re: str | None, back: dict | None) -> None:
    record = GameRecord("othello", {"size": 6}, players=("ann", "bob"), result=result, moves=(RecordedMove(1, 0, "c2"),))
    text = format_ggf(record_to_ggf(record))
    if re is None:
        assert "RE[" not in text
    else:
        assert re in text
    assert ggf_to_record(parse_ggf(text)).result == back


def test_other_games_are_refused_by_name() -> None:
    with pytest.raises(GgfError, match="GGF holds Othello games only, not nimble"):
        record_to_ggf(GameRecord("nimble", {}))


def test_records_of_other_programs_read_and_replay() -> None:
    """GGS's archive style (lower- and upper-case moves, ``pass``, other dates), NBoard's (a board without spaces, RE[?])."""
    ggs = (
        "(;GM[Othello]PC[GGS/os]DT[2003-4-16 11:13 EST]PB[fangr]PW[patzer]RB[1457.12]RW[1631.74]"
        "TI[15:00//02:00]TY[8]RE[-40.00:r]\n BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"
        "B[f5//4.09]W[D6/1.50/0.01] B[c3//1.67]W[d3];)"
    )
    game = parse_ggf(ggs)
    assert (game.place, game.date, game.black, game.white) == ("GGS/os", "2003-4-16 11:13 EST", "fangr", "patzer")
    assert (game.black_rating, game.white_rating) == (1457.12, 1631.74)
    assert game.clock == GgfClock(900.0, 0.0, 120.0)
    assert game.result == GgfResult(-40.0, "r")
    assert game.moves == (GgfMove("B", "F5", None, 4.09), GgfMove("W", "D6", 1.5, 0.01), GgfMove("B", "C3", None, 1.67), GgfMove("W", "D3"))
    record = ggf_to_record(game)
    assert [m.move for m in record.moves] == ["f5", "d6", "c3", "d3"] and record.started_at is None
    assert record.result == {"winner": 1, "reason": "Black resigned", "score": None}

    nboard = "(;GM[Othello]PC[NBoard]DT[1710000000]PB[me]PW[]RE[?]TI[0]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[pass];)"
    with pytest.raises(GgfError, match="does not replay"):
        ggf_to_record(parse_ggf(nboard))  # White can move after f5: a pass is illegal there
    game = parse_ggf(nboard.replace("W[pass]", "W[--]B[a1]").replace("B[a1]", ""))
    assert game.result is None and game.clock == GgfClock(0.0) and game.moves[-1] == GgfMove("W", "PA")
    assert ggf_to_record(parse_ggf(nboard.replace("W[pass]", ""))).started_at == "2024-03-09T16:00:00Z"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "starts with '(;'"),
        ("(;GM[Othello]PB[ann]", "or ';)' to end the game"),
        ("(;GM[Othello]PB[ann;)", "PB is not closed"),
        ("(;GM[Othello]PB ann;)", "PB has no value"),
        ("(;GM[Othello];) (;GM[Othello];)", "text after the end"),
        ("(;GM[Amazons];)", "not an Othello game (GM[Amazons])"),
        ("(;PB[x];)", "no GM[Othello]"),
        ("(;GM[Othello]PB[a]PB[b];)", "PB appears twice"),
        ("(;GM[Othello]BO[8 --- *];)", "is not 64 squares"),
        ("(;GM[Othello]BO[7 " + "-" * 49 + " *];)", "even number"),
        ("(;GM[Othello]B[Z9];)", "'Z9' is not a square of a 8x8 board"),
        ("(;GM[Othello]B[D3//-1];)", "cannot be negative"),
        ("(;GM[Othello]B[D3/x];)", "evaluation is a number"),
        ("(;GM[Othello]RB[strong];)", "RB is a number"),
        ("(;GM[Othello]RE[black wins];)", "RE is Black's margin"),
        ("(;GM[Othello]TI[5 min];)", "TI"),
        ("(;GM[Othello]TY[s40];)", "TY[s40] names no board size"),
    ],
)
def test_bad_texts_are_refused_naming_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(GgfError) as caught:
        parse_ggf(text)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("game", "message"),
    [
        (GgfGame(game_type="8r"), "TY[8r] is an Othello variant"),
        (GgfGame(size=4), "boards of 6 to 16 squares a side, not 4x4"),
        (GgfGame(board="-" * 63 + "*"), "other than the usual start"),
        (GgfGame(to_move="O"), "other than the usual start"),
        (GgfGame(moves=(GgfMove("W", "D3"),)), "ply 1"),
    ],
)
def test_games_parlour_cannot_replay_are_refused(game: GgfGame, message: str) -> None:
    """A variant, a size Parlour has no board for, another start, a move out of turn."""
    with pytest.raises(GgfError) as caught:
        ggf_to_record(game)
    assert message in str(caught.value)


def test_values_are_checked_when_built() -> None:
    with pytest.raises(GgfError, match="color is B or W"):
        GgfMove("X", "D3")
    with pytest.raises(GgfError, match="not a square of a 6x6 board"):
        GgfGame(size=6, moves=(GgfMove("B", "H8"),))
    with pytest.raises(GgfError, match="flag"):
        GgfResult(1.0, "x")
    with pytest.raises(GgfError, match="seconds"):
        GgfClock(-1.0)


def test_long_and_fractional_clocks_round_trip() -> None:
    game = GgfGame(clock=GgfClock(5400.0, 1.5, 0.0))
    text = format_ggf(game)
    assert "TI[1:30:00/00:01.5/00:00]" in text
    assert parse_ggf(text) == game
    assert "TI[01:00/00:00.25/00:00]" in format_ggf(GgfGame(clock=GgfClock(59.9996, 0.25)))  # rounded to the millisecond


def test_ratings_are_kept_to_two_decimals_so_the_game_equals_its_round_trip() -> None:
    game = record_to_ggf(GameRecord("othello", {}), ratings=(1662.3141, None))
    assert (game.black_rating, game.white_rating) == (1662.31, None)
    assert parse_ggf(format_ggf(game)) == game
