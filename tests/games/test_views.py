"""Views are unchanged by issue 10's faster building, and no caching shows through.

``benchmarks/views_reference.py`` builds every view the old way (square by
square, every call). Over random playouts of every game, in several option
sets and board sizes from the smallest an option allows to the largest, each
state's view for seat 0, seat 1 and a spectator, asked for in shuffled
orders and more than once, must equal the reference exactly: the same values, the same types (a list is
not a tuple) and the same msgpack bytes (key order, ``True`` is not ``1``).
A view is the caller's to change: changing every part of one must not
change the next. In Tactego, no view may show a rank its seat may not see,
whichever seat asked first.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import pytest

import games
from benchmarks import views_reference
from games.morris import MorrisState, Position, format_position
from games.tactego import UNKNOWN

OPTION_SETS: dict[str, list[dict[str, Any]]] = {
    "othello": [{"size": size} for size in range(6, 17, 2)],
    "nimble": [{}, {"n": 12, "p": 5}, {"board": [0, 3, 0, 2]}, {"board": [7]}],
    "hexapawn": [{"size": size} for size in range(3, 9)],
    "mingmang": [
        {"size": 4, "max_plies": 60},
        {"max_plies": 80},
        {"size": 5, "superko": True, "max_plies": 80},
        {"size": 16, "max_plies": 40},
    ],
    "morris": [{"max_plies": 200}, {"flying": True, "mill_protection": True, "max_plies": 200}],
    "tactego": [
        {"max_plies": 200},
        {"rows": 6, "cols": 4, "hidden": False, "pieces": "3 2\n1 2\nF 1", "max_plies": 200},
        {"rows": 5, "cols": 13, "max_plies": 150},
        {"rows": 26, "cols": 2, "pieces": "2 3\n1 4\nF 2", "max_plies": 150},
    ],
}

ROOT = Path(__file__).resolve().parents[2]
CASES = [(name, options) for name in games.names() for options in OPTION_SETS[name]]
SEATS = (0, 1, None)


def test_every_game_has_a_reference_and_option_sets() -> None:
    assert set(games.names()) == set(views_reference.REFERENCES) == set(OPTION_SETS)


def _playout(name: str, options: dict[str, Any], seed: int) -> list[games.State]:
    rng = random.Random(seed)
    state = games.get(name).new_state(options, str(seed))
    states = [state]
    while state.outcome is None and len(states) <= 400:
        state = state.play(rng.choice(state.legal_moves()))
        states.append(state)
    return states


def _assert_same(got: Any, expected: Any) -> None:
    """Equal values of equal types all the way down, and the same msgpack bytes."""
    assert _typed(got) == _typed(expected)
    assert msgpack.packb(got) == msgpack.packb(expected)


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", [(key, _typed(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(item) for item in value])
    return (type(value).__name__, value)


def _scramble(value: Any) -> None:
    """Change every list and map inside ``value`` in place."""
    if isinstance(value, dict):
        for item in value.values():
            _scramble(item)
        for key in list(value):
            value[key] = "scrambled"
        value["extra"] = 1
    elif isinstance(value, list):
        for item in value:
            _scramble(item)
        value[:] = ["scrambled"]


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_views_equal_the_old_square_by_square_views(name: str, options: dict[str, Any]) -> None:
    for seed in range(3):
        rng = random.Random(seed)
        for state in _playout(name, options, seed):
            for _ in range(2):
                seats = list(SEATS)
                rng.shuffle(seats)
                for seat in seats:
                    _assert_same(state.view(seat), views_reference.view(state, seat))


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_changing_a_view_does_not_change_the_next(name: str, options: dict[str, Any]) -> None:
    for state in _playout(name, options, 7)[::5]:
        for first in SEATS:
            _scramble(state.view(first))
            for seat in SEATS:
                _assert_same(state.view(seat), views_reference.view(state, seat))


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_a_game_with_public_views_shows_every_seat_the_spectator_view_but_the_moves(name: str, options: dict[str, Any]) -> None:
    """What the server relies on to make one view per move for all (server.tables.fanout.send_moved); a game that hides anything says so."""
    game = games.get(name)
    if not game.public_views:
        assert name == "tactego", "only Tactego hides information"
        return
    for state in _playout(name, options, 5):
        public = state.view(None)
        assert "legal_moves" not in public
        for seat in (0, 1):
            expected = {**public, "legal_moves": state.legal_moves()} if seat == state.to_move else public
            _assert_same(state.view(seat), expected)


def test_the_board_helpers_equal_the_old_ones() -> None:
    for options in OPTION_SETS["othello"]:
        for state in _playout("othello", options, 1)[::7]:
            old = views_reference.view(state, None)["board"]
            assert state.rows() == old and state.diagram() == "\n".join(old)
    for options in OPTION_SETS["mingmang"]:
        for state in _playout("mingmang", options, 1)[::7]:
            assert state.diagram() == "\n".join(views_reference.view(state, None)["board"])
    for options in OPTION_SETS["hexapawn"]:
        for state in _playout("hexapawn", options, 1):
            assert state.to_board() == views_reference.view(state, None)["board"]
            state.to_board()[0][0] = 9
            assert state.to_board() == views_reference.view(state, None)["board"]
    for options in OPTION_SETS["morris"]:
        for state in _playout("morris", options, 1):
            assert isinstance(state, MorrisState)
            shown = views_reference.view(state, None)
            values = tuple({None: 0, 0: 1, 1: 2}[value] for value in shown["board"].values())
            assert state.board == values
            assert state.position_text() == shown["position"] == format_position(state.position())
            assert state.position() == Position(values, state.hands, state.position().player)


def _hidden_ranks(state: Any, viewer: int | None) -> set[tuple[str, str]]:
    """(square, rank) of every piece whose rank ``viewer`` may not see."""
    return {
        (name, piece.rank)
        for name, piece in zip(state._geometry.names, state._board)
        if piece is not None and not piece.revealed and piece.owner != viewer
    }


@pytest.mark.parametrize("order", [(0, 1, None), (1, 0, None), (None, 1, 0), (1, None, 0)])
def test_tactego_views_never_show_a_rank_the_seat_may_not_see(order: tuple[int | None, ...]) -> None:
    checked = 0
    for seed in range(4):
        for state in _playout("tactego", {"max_plies": 200}, seed):
            views = {seat: state.view(seat) for seat in order}
            for seat, shown in views.items():
                cols = state._geometry.cols
                cells = {state._geometry.names[r * cols + c]: cell
                         for r, row in enumerate(shown["board"]) for c, cell in enumerate(row)}
                hidden = _hidden_ranks(state, seat)
                for square, _rank in hidden:
                    assert cells[square][1] == UNKNOWN, f"seat {seat} sees {square} at ply {state.ply}"
                    checked += 1
                shown_ranks = [cell[1] for cell in cells.values() if cell is not None]
                assert shown_ranks.count(UNKNOWN) == len(hidden)
    assert checked > 1000


@pytest.mark.slow
def test_the_views_benchmark_runs_and_checks_every_game() -> None:
    script = ROOT / "benchmarks" / "views.py"
    done = subprocess.run(
        [sys.executable, str(script), "--positions", "8", "--plies", "10", "--rounds", "1"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[2:]}
    assert set(rows) == set(games.names())
    for name, cells in rows.items():
        assert cells[1] == "8" and cells[4].endswith("x") and len(cells) == 6, (name, cells)


def test_the_views_benchmark_fails_when_a_view_differs(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from benchmarks import views

    original = views_reference.REFERENCES["nimble"]

    def wrong(state: Any, seat: int | None) -> dict[str, Any]:
        return {**original(state, seat), "pawns": -1}

    monkeypatch.setitem(views_reference.REFERENCES, "nimble", wrong)
    assert views.main(["--games", "nimble", "othello", "--positions", "5", "--plies", "5", "--rounds", "1"]) == 1
    out = capsys.readouterr().out
    assert "VIEWS DIFFER" in next(line for line in out.splitlines() if line.startswith("nimble"))
    assert "VIEWS DIFFER" not in next(line for line in out.splitlines() if line.startswith("othello"))
