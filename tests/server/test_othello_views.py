"""The C writer of Othello views (server.tables.othello_views): the very bytes msgspec writes for the view dict.

Over real sockets, tests/server/test_move_views.py holds every receiver's
frame equal to the pure engine's; here the writer itself is held to the
encoded dict on every position of random games, on every integer width, and
refuses bad arguments by name.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import games
from protocol.codec import ENCODER
from server.tables import othello_views
from server.tables.table import Table

needs_writer = pytest.mark.skipif(othello_views.view_map is None, reason="the C view writer was not built here")


def written(state: Any, legal: list[str] | None) -> bytes:
    assert othello_views.view_map is not None
    return othello_views.view_map(state.black, state.white, state.ply, state.to_move, state.last_move, legal)


@needs_writer
def test_every_view_of_random_games_is_written_as_the_encoded_dict() -> None:
    rng, checked = random.Random(7), 0
    for _ in range(60):
        state = games.get("othello").new_state({"size": 8})
        while state.outcome is None:
            if not state.must_pass:
                assert written(state, None) == ENCODER.encode(state.view(None))
                assert written(state, state.legal_moves()) == ENCODER.encode(state.view(state.to_move))
                checked += 1
            state = state.play(rng.choice(state.legal_moves()))
    assert checked > 60 * 50  # the passes and the ends are the dicts' (fanout.send_moved)


@needs_writer
@pytest.mark.parametrize("ply", [0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1])
def test_every_integer_width_is_written_as_msgspec_writes_it(ply: int) -> None:
    state = games.get("othello").new_state({"size": 8}).play("d3")
    assert othello_views.view_map is not None
    view = othello_views.view_map(state.black, state.white, ply, state.to_move, state.last_move, None)
    assert view == ENCODER.encode({**state.view(None), "ply": ply})


@needs_writer
def test_sixteen_legal_moves_or_more_are_an_array_of_their_own_width() -> None:
    state = games.get("othello").new_state({"size": 8})
    names = [f"{column}{row}" for column in "abcdefgh" for row in range(1, 5)]  # 32: not a fixarray
    assert othello_views.view_map is not None
    view = othello_views.view_map(state.black, state.white, 0, 0, None, names)
    assert view == ENCODER.encode({**state.view(None), "legal_moves": names})


@needs_writer
@pytest.mark.parametrize(
    ("arguments", "error", "words"),
    [
        (("x", 0, 0, 0, None, None), TypeError, "bitboard must be an int"),
        ((-1, 0, 0, 0, None, None), ValueError, "from 0 to 2**64 - 1"),
        ((2**64, 0, 0, 0, None, None), ValueError, "from 0 to 2**64 - 1"),
        ((1, 1, 0, 0, None, None), ValueError, "black and white share a square"),
        ((0, 0, -1, 0, None, None), ValueError, "ply must be 0 or more"),
        ((0, 0, 0, 2, None, None), ValueError, "to_move 0 or 1"),
        ((0, 0, 0, 0, 3, None), TypeError, "last_move must be a str or None"),
        ((0, 0, 0, 0, "x" * 32, None), ValueError, "last_move must be shorter than 32 bytes"),
        ((0, 0, 0, 0, None, 5), TypeError, "legal_moves must be a tuple or list of str"),
        ((0, 0, 0, 0, None, [1]), TypeError, "legal_moves must hold str"),
        ((0, 0, 0, 0, None, ["a1"] * 65), ValueError, "at most 64 legal moves"),
        ((0, 0, 0, 0, None), TypeError, "takes 6 arguments"),
    ],
)
def test_bad_arguments_are_refused_by_name(arguments: tuple[Any, ...], error: type[Exception], words: str) -> None:
    assert othello_views.view_map is not None
    with pytest.raises(error, match=words.replace("*", r"\*")):
        othello_views.view_map(*arguments)


@pytest.mark.parametrize(
    ("game", "options", "writes"),
    [("othello", {"size": 8}, True), ("othello", {"size": 6}, False), ("othello", {"size": 10}, False), ("tactego", {}, False), ("nimble", {}, False)],
)
def test_only_othello_tables_of_8x8_write_their_views(game: str, options: dict[str, Any], writes: bool) -> None:
    table = Table.create(1, game, options, seed="s")
    assert (table.view_map is not None) == (writes and othello_views.view_map is not None)
    assert othello_views.applies(game, table.options) == (writes and othello_views.view_map is not None)
