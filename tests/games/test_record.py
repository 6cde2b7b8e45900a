"""Tests of the plain-text game record: round trip, every error, replay of real games."""

from __future__ import annotations

import doctest
import random
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
import games.record
from games.record import GameRecord, RecordedMove, RecordError, format_record, parse_record, replay

E2E_RECORD = Path(__file__).parent.parent / "e2e" / "records" / "othello.txt"


# --- strategies ---------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
times = st.datetimes(timezones=st.just(timezone.utc)).map(lambda moment: moment.isoformat())
moves_text = st.text(st.characters(exclude_categories=("C", "Z")), min_size=1, max_size=10).filter(
    lambda m: not m.startswith("#")
)


@st.composite
def records(draw: st.DrawFn) -> GameRecord:
    count = draw(st.integers(0, 12))
    moves = tuple(
        RecordedMove(
            ply=ply,
            seat=draw(st.sampled_from([0, 1])),
            move=draw(moves_text),
            at=draw(st.none() | times),
            forced=draw(st.booleans()),
        )
        for ply in range(1, count + 1)
    )
    return GameRecord(
        game=draw(st.text(min_size=1, max_size=12)),
        options=draw(st.dictionaries(st.text(max_size=8), json_values, max_size=4)),
        seed=draw(st.none() | st.integers() | st.text()),
        players=(draw(st.none() | st.text(max_size=12)), draw(st.none() | st.text(max_size=12))),
        result=draw(st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=3)),
        started_at=draw(st.none() | times),
        finished_at=draw(st.none() | times),
        moves=moves,
    )


# --- round trip ---------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(records())
def test_round_trip(record: GameRecord) -> None:
    text = format_record(record)
    assert parse_record(text) == record
    assert parse_record(text.replace("\n", "\r\n")) == record


def test_layout_is_plain() -> None:
    record = GameRecord(
        game="othello",
        options={"size": 8},
        seed=None,
        players=("ann", "bob"),
        result={"winner": 1, "reason": "more discs", "score": [22, 42]},
        started_at="2024-05-01T12:00:00.000Z",
        finished_at="2024-05-01T12:09:41.250Z",
        moves=(
            RecordedMove(1, 0, "c4", "2024-05-01T12:00:05.123Z"),
            RecordedMove(2, 1, "pass", None, forced=True),
            RecordedMove(3, 1, "e3"),
        ),
    )
    assert format_record(record) == (
        "Game: othello\n"
        'Options: {"size":8}\n'
        "Player-0: ann\n"
        "Player-1: bob\n"
        'Result: {"winner":1,"reason":"more discs","score":[22,42]}\n'
        "Started: 2024-05-01T12:00:00.000Z\n"
        "Finished: 2024-05-01T12:09:41.250Z\n"
        "\n"
        "1. c4 at=2024-05-01T12:00:05.123Z\n"
        "2. pass forced\n"
        "3. e3 seat=1\n"
    )


def test_odd_texts_are_quoted() -> None:
    record = GameRecord(game="othello", seed="42", players=(" spaced ", '"quoted'))
    text = format_record(record)
    assert 'Seed: "42"' in text and 'Player-0: " spaced "' in text and 'Player-1: "\\"quoted"' in text
    assert parse_record(text) == record
    assert parse_record(format_record(GameRecord(game="othello", seed=42))).seed == 42


def test_tuples_become_lists() -> None:
    record = GameRecord(game="tactego", options={"setup": (1, 2)}, result={"score": (3, 4)})
    assert record.options == {"setup": [1, 2]} and record.result == {"score": [3, 4]}
    assert parse_record(format_record(record)) == record


def test_comments_blank_lines_and_trailing_comments_are_ignored() -> None:
    text = (
        "# a game from the club night\n"
        "\n"
        "Game: othello\n"
        "  # options left at their defaults\n"
        "\n"
        "1. f5   # the usual\n"
        "\n"
        "2. d6 at=2024-05-01T12:00:00+00:00 # reply\n"
    )
    record = parse_record(text)
    assert record.options == {} and [m.move for m in record.moves] == ["f5", "d6"]
    assert record.moves[1].at == "2024-05-01T12:00:00+00:00"


def test_module_doctest() -> None:
    assert doctest.testmod(games.record).failed == 0


# --- parse errors ---------------------------------------------------------------------

GOOD_HEAD = "Game: othello\n"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", None, "no Game header"),
        ("Options: {}\n", None, "no Game header"),
        ("Game: othello\nColour: red\n", 2, "unknown header 'Colour'"),
        ("Game: othello\nGame: nimble\n", 2, "appears twice"),
        ("Game othello\n", 1, "expected a header line"),
        (" Game: othello\n", 1, "expected a header line"),
        ("Game:\n", 1, "has no value"),
        ("Game: othello\nOptions: {size: 8}\n", 2, "Options is not valid JSON"),
        ("Game: othello\nOptions: [8]\n", 2, "Options must be a JSON object"),
        ("Game: othello\nOptions: {\"x\": NaN}\n", 2, "Options is not valid JSON"),
        ("Game: othello\nResult: 1-0\n", 2, "Result is not valid JSON"),
        ("Game: othello\nSeed: abc\n", 2, "Seed is not valid JSON"),
        ("Game: othello\nSeed: 1.5\n", 2, "Seed must be a JSON integer or string"),
        ("Game: othello\nSeed: true\n", 2, "Seed must be a JSON integer or string"),
        ('Game: othello\nPlayer-0: "ann\n', 2, "Player-0 is not valid JSON"),
        ("Game: othello\nPlayer-0: [1]x\n", None, None),  # bare text: accepted as a name
        ('Game: othello\nPlayer-1: "\\u0061" 1\n', 2, "Player-1 is not valid JSON"),
        ("Game: othello\nStarted: yesterday\n", 2, "not an ISO-8601 time"),
        ("Game: othello\nStarted: 2024-05-01T12:00:00\n", 2, "not in UTC"),
        ("Game: othello\nFinished: 2024-05-01T12:00:00+02:00\n", 2, "not in UTC"),
        (GOOD_HEAD + "\nc4\n", 3, "expected a move line"),
        (GOOD_HEAD + "\n1 c4\n", 3, "expected a move line"),
        (GOOD_HEAD + "\n1.\n", 3, "expected a move line"),
        (GOOD_HEAD + "\n-1. c4\n", 3, "expected a move line"),
        (GOOD_HEAD + "\n2. c4\n", 3, "expected ply 1, not ply 2"),
        (GOOD_HEAD + "\n1. c4\n1. e3\n", 4, "expected ply 2, not ply 1"),
        (GOOD_HEAD + "\n1. c4 quickly\n", 3, "unknown annotation 'quickly'"),
        (GOOD_HEAD + "\n1. c4 seat=2\n", 3, "unknown annotation 'seat=2'"),
        (GOOD_HEAD + "\n1. c4 forced forced\n", 3, "'forced' is given twice"),
        (GOOD_HEAD + "\n1. c4 seat=0 seat=1\n", 3, "'seat' is given twice"),
        (GOOD_HEAD + "\n1. c4 at=noon\n", 3, "not an ISO-8601 time"),
        (GOOD_HEAD + "\n1. c4 at=\n", 3, "a time must be ISO-8601 UTC"),
    ],
)
def test_parse_errors_name_the_line(text: str, line: int | None, fragment: str | None) -> None:
    if fragment is None:
        parse_record(text)
        return
    with pytest.raises(RecordError) as info:
        parse_record(text)
    assert fragment in str(info.value)
    assert info.value.line == line
    if line is not None:
        assert str(info.value).startswith(f"line {line}: ")


def test_parse_error_is_a_game_error_and_names_the_ply() -> None:
    with pytest.raises(games.GameError) as info:
        parse_record(GOOD_HEAD + "\n1. c4\n2. e3 at=x\n")
    assert isinstance(info.value, RecordError) and info.value.ply == 2 and info.value.line == 4


def test_parse_refuses_non_text() -> None:
    with pytest.raises(RecordError, match="must be a text"):
        parse_record(b"Game: othello\n")  # type: ignore[arg-type]


# --- construction errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: RecordedMove(0, 0, "c4"), "positive integer"),
        (lambda: RecordedMove(True, 0, "c4"), "positive integer"),
        (lambda: RecordedMove(1, 2, "c4"), "seat must be 0 or 1"),
        (lambda: RecordedMove(1, True, "c4"), "seat must be 0 or 1"),
        (lambda: RecordedMove(1, 0, ""), "non-empty text"),
        (lambda: RecordedMove(1, 0, "c 4"), "without spaces"),
        (lambda: RecordedMove(1, 0, "c4\n"), "without spaces"),
        (lambda: RecordedMove(1, 0, "#c4"), "comment"),
        (lambda: RecordedMove(1, 0, "c4", at="2024-05-01 12:00:00Z"), "without spaces"),
        (lambda: RecordedMove(1, 0, "c4", at="2024-05-01T12:00:00"), "not in UTC"),
        (lambda: RecordedMove(1, 0, "c4", forced=1), "forced must be"),  # type: ignore[arg-type]
        (lambda: GameRecord(""), "non-empty text"),
        (lambda: GameRecord("othello", options=[("size", 8)]), "options must be a map"),  # type: ignore[arg-type]
        (lambda: GameRecord("othello", options={1: 2}), "only JSON values"),  # type: ignore[dict-item]
        (lambda: GameRecord("othello", options={"x": float("nan")}), "only JSON values"),
        (lambda: GameRecord("othello", options={"x": object()}), "only JSON values"),
        (lambda: GameRecord("othello", seed=1.5), "seed must be"),  # type: ignore[arg-type]
        (lambda: GameRecord("othello", players=("ann",)), "two names"),  # type: ignore[arg-type]
        (lambda: GameRecord("othello", players=("ann", 3)), "two names"),  # type: ignore[arg-type]
        (lambda: GameRecord("othello", result=[1]), "result must be a map"),  # type: ignore[arg-type]
        (lambda: GameRecord("othello", started_at="now"), "started_at"),
        (lambda: GameRecord("othello", moves=(RecordedMove(2, 0, "c4"),)), "expected ply 1"),
        (lambda: GameRecord("othello", moves=("c4",)), "RecordedMove values"),  # type: ignore[arg-type]
    ],
)
def test_construction_errors(build, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RecordError) as info:
        build()
    assert fragment in str(info.value)


# --- replay ---------------------------------------------------------------------------------


def random_othello_record(rng: random.Random, size: int = 8) -> tuple[GameRecord, list[games.State]]:
    """Play random legal moves to the end, as the server would record them."""
    state = games.get("othello").new_state({"size": size})
    states = [state]
    moves = []
    clock = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc).timestamp()
    while state.outcome is None:
        legal = state.legal_moves()
        seat = state.to_move
        assert seat is not None
        state = state.play(rng.choice(legal))
        clock += rng.uniform(0.5, 30)
        at = datetime.fromtimestamp(clock, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        assert state.last_move is not None
        moves.append(RecordedMove(state.ply, seat, state.last_move, at, forced=legal == ["pass"]))
        states.append(state)
    assert state.outcome is not None
    record = GameRecord(
        game="othello",
        options=dict(states[0].options),
        players=("ann", "bob"),
        result=state.outcome.to_dict(),
        started_at=moves[0].at,
        finished_at=moves[-1].at,
        moves=tuple(moves),
    )
    return record, states


@pytest.mark.parametrize("seed", range(8))
def test_replay_of_random_othello_games(seed: int) -> None:
    record, played = random_othello_record(random.Random(seed), size=(6, 8, 10)[seed % 3])
    states = replay(parse_record(format_record(record)))
    assert len(states) == len(record.moves) + 1
    assert [s.ply for s in states] == list(range(len(states)))
    assert [s.view(None) for s in states] == [s.view(None) for s in played]
    assert states[-1].outcome is not None and states[-1].outcome.to_dict() == record.result


def test_replay_finds_forced_passes() -> None:
    rng = random.Random(0)
    for _ in range(200):
        record, _ = random_othello_record(rng, size=6)
        if any(m.forced for m in record.moves):
            break
    else:
        pytest.skip("no random 6x6 game with a forced pass")
    assert "forced" in format_record(record)
    replay(parse_record(format_record(record)))


def test_replay_of_the_e2e_game_file() -> None:
    text = "\n".join(line for line in E2E_RECORD.read_text().splitlines() if not line.startswith("#"))
    notation = text.split()
    lines = ["Game: othello", 'Options: {"size":8}', ""]
    lines += [f"{ply}. {move}" + (" forced" if move == "pass" else "") for ply, move in enumerate(notation, start=1)]
    states = replay(parse_record("\n".join(lines)))
    outcome = states[-1].outcome
    assert outcome is not None and outcome.winner == 1 and outcome.score == (22, 42)


def othello(*moves: RecordedMove) -> GameRecord:
    return GameRecord("othello", {"size": 8}, moves=moves)


@pytest.mark.parametrize(
    ("record", "ply", "fragment"),
    [
        (othello(RecordedMove(1, 0, "c4"), RecordedMove(2, 1, "c4")), 2, "ply 2: illegal move 'c4'"),
        (othello(RecordedMove(1, 0, "z9")), 1, "ply 1: illegal move 'z9'"),
        (othello(RecordedMove(1, 1, "c4")), 1, "recorded for seat 1, but seat 0 is to move"),
        (othello(RecordedMove(1, 0, "c4", forced=True)), 1, "marked forced, but 4 moves were legal"),
        (othello(RecordedMove(1, 0, "pass", forced=True)), 1, "ply 1: illegal move 'pass'"),
        (GameRecord("chess"), None, "no game called 'chess'"),
        (GameRecord("othello", {"size": 7}), None, "options are refused"),
        (GameRecord("othello", {"colour": "red"}), None, "options are refused"),
    ],
)
def test_replay_errors_name_the_ply(record: GameRecord, ply: int | None, fragment: str) -> None:
    with pytest.raises(RecordError) as info:
        replay(record)
    assert fragment in str(info.value)
    assert info.value.ply == ply


def test_replay_refuses_moves_after_the_end() -> None:
    record, _ = random_othello_record(random.Random(3), size=6)
    extra = RecordedMove(len(record.moves) + 1, 0, "a1")
    longer = GameRecord(record.game, record.options, moves=record.moves + (extra,))
    with pytest.raises(RecordError) as info:
        replay(longer)
    assert info.value.ply == extra.ply and "after the end of the game" in str(info.value)


def test_replay_uses_the_seed() -> None:
    tactego = games.get("tactego")
    first = tactego.new_state({}, "club-night")
    move = first.legal_moves()[0]
    record = GameRecord("tactego", {}, seed="club-night", moves=(RecordedMove(1, 0, move),))
    states = replay(parse_record(format_record(record)))
    assert states[0].view(None) == first.view(None)
    assert states[1].view(None) == first.play(move).view(None)
