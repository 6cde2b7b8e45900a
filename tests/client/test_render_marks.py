"""The renderers' last-move marks and compact pictures, on real game states."""

from __future__ import annotations

import games
from client.render import destination, render
from client.render.tactego import _side_line


def _after(game: str, *moves: str, options: dict | None = None) -> games.State:
    state = games.get(game).new_state(options or {}, seed=1)
    for move in moves:
        state = state.play(move)
    return state


def test_the_square_moved_to_is_bracketed() -> None:
    othello = render(_after("othello", "d3").view(0), 0, last_move="d3").splitlines()
    assert othello[3] == " 3  . . .[X]. . . ."
    hexapawn = render(_after("hexapawn", "a1-a2").view(0), 0, last_move="a1-a2").splitlines()
    assert hexapawn[2] == "  2[w]- - 2"
    morris = render(_after("morris", "d7").view(0), 0, last_move="d7", compact=True).splitlines()
    assert morris[0] == "7 +----[X]----+"


def test_destination_reads_each_notation() -> None:
    assert [destination(move) for move in ("d3", "b1-b2", "a1-a4xd7", "pass", "4-2", None)] == ["d3", "b2", "a4", None, None, None]


def test_compact_morris_has_one_row_per_rank() -> None:
    picture = render(_after("morris").view(0), 0, compact=True).splitlines()
    assert len(picture) <= 11 and max(map(len, picture)) <= 60
    assert picture[:8] == [
        "7 +-----+-----+",
        "6 | +---+---+ |",
        "5 | | +-+-+ | |",
        "4 +-+-+   +-+-+",
        "3 | | +-+-+ | |",
        "2 | +---+---+ |",
        "1 +-----+-----+",
        "  a b c d e f g",
    ]


def test_tactego_side_lines_stay_within_80_columns_however_much_was_lost() -> None:
    view = {"counts": [1, 16], "flags": [1, 1], "lost": [[str(rank) for rank in range(1, 11)] * 2 + ["B"] * 6, []]}
    lines = [_side_line(view, side) for side in (0, 1)]
    assert max(map(len, lines)) < 80 and lines[1].endswith("lost: none")
