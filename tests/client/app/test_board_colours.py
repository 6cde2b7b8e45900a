"""Each game's pieces in the colours its seats are named after, read off the drawn board.

A position is built by the real engine, drawn by the real board widget in an
app, and the colour of the character in the middle of a square is read from
the rendered text. Colours are judged by what they look like (dark, light,
red, blue, amber), not by the palette's values, so a palette that gave a
game's pieces each other's colours fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from rich.color import Color
from rich.console import Console
from rich.style import Style

from client.app.boards import BoardWidget, make_board

from .test_board_snapshots import TACTEGO_TO_A_COMBAT, BoardApp, view

_CONSOLE = Console(width=200)


def looks(color: Color | None) -> str:
    """What a colour looks like: ``black``, ``white``, ``red``, ``blue``, ``amber``, ``green`` or ``other`` (``none`` without one)."""
    if color is None:
        return "none"
    r, g, b = color.get_truecolor()
    if r > 2 * max(g, b) and r > 100:
        return "red"
    if b > 2 * max(r, g) and b > 100:
        return "blue"
    if g > 1.5 * max(r, b) and g > 80:
        return "green"
    if r > 200 and 100 < g < 200 and b < 100:
        return "amber"
    luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
    return "black" if luminance < 0.2 else "white" if luminance > 0.85 else "other"


async def drawn(board_view: dict[str, Any], seat: int | None, **style: Any) -> dict[str, tuple[str, Style]]:
    """Every square of ``board_view`` drawn for ``seat``: its name -> (the characters in its cell, the style of its middle one)."""
    app = BoardApp(board_view, seat, **style)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        board = app.query_one(BoardWidget)
        lines = board.render().split("\n")
        cells = {}
        for square in board.squares():
            line = lines[square.row]
            text = line.plain[square.col : square.col + square.width]
            cells[square.name] = (text, line.get_style_at_offset(_CONSOLE, square.centre))
        return cells


def piece_colours(cells: dict[str, tuple[str, Style]], names: str) -> dict[str, str]:
    """What the piece colours of the squares ``names`` (space-separated) look like."""
    return {name: looks(cells[name][1].color) for name in names.split()}


async def test_othello_black_discs_are_dark_and_white_discs_light_on_green() -> None:
    cells = await drawn(view("othello", ["d3"], 0), 0)  # Black d3 turns d4: Black d3 d4 d5 e4, White e5
    assert piece_colours(cells, "d3 d4 d5 e4 e5") == {"d3": "black", "d4": "black", "d5": "black", "e4": "black", "e5": "white"}
    assert {cells[name][0].strip() for name in ("d3", "e5")} == {"●"}
    backgrounds = {looks(style.bgcolor) for name, (text, style) in cells.items() if name not in ("d3", "c4", "e6", "f5", "c3", "e3", "c5")}
    assert backgrounds == {"green"}  # one plain green board (the last move and the moves to play are marked)


async def test_othello_is_the_same_for_white() -> None:
    cells = await drawn(view("othello", ["d3"], 1), 1)
    assert piece_colours(cells, "d3 e5") == {"d3": "black", "e5": "white"}


@pytest.mark.parametrize("seat", [0, 1])
async def test_hexapawn_white_pawns_are_light_and_black_pawns_dark(seat: int) -> None:
    cells = await drawn(view("hexapawn", [], seat), seat)
    assert [cells[name][0].strip() for name in ("a1", "a3")] == ["w", "b"]
    assert piece_colours(cells, "a1 b1 c1 a3 b3 c3") == dict.fromkeys(["a1", "b1", "c1"], "white") | dict.fromkeys(["a3", "b3", "c3"], "black")


@pytest.mark.parametrize("seat", [0, 1])
async def test_mingmang_white_pawns_are_light_and_black_pawns_dark(seat: int) -> None:
    cells = await drawn(view("mingmang", [], seat, {"size": 6}), seat)  # White: column a and row 6; Black: row 1 and column f
    assert piece_colours(cells, "a2 c6 c1 f3") == {"a2": "white", "c6": "white", "c1": "black", "f3": "black"}


@pytest.mark.parametrize("seat", [0, 1])
async def test_tactego_red_pieces_are_red_and_blue_pieces_blue(seat: int) -> None:
    cells = await drawn(view("tactego", TACTEGO_TO_A_COMBAT[:2], seat, seed="demo"), seat)  # Red g2-f3, Blue h7-g6
    assert cells["f3"][0].strip().startswith("r") and cells["g6"][0].strip().startswith("b")
    assert piece_colours(cells, "f3 a1 g6 a8") == {"f3": "red", "a1": "red", "g6": "blue", "a8": "blue"}


async def test_morris_player_one_is_light_and_player_two_amber() -> None:
    cells = await drawn(view("morris", ["d1", "a1"], 0), 0)
    assert [cells[name][0].strip("─ ") for name in ("d1", "a1")] == ["X", "O"]
    assert piece_colours(cells, "d1 a1") == {"d1": "white", "a1": "amber"}


async def test_nimble_pawns_belong_to_nobody_and_take_no_seat_colour() -> None:
    cells = await drawn(view("nimble", [], 0, {"n": 4, "board": [0, 2, 1, 3]}), 0)
    assert piece_colours(cells, " ".join(cells)) == dict.fromkeys(cells, "none")
    assert any(text.strip() not in ("", "0") for text, _ in cells.values())  # there are pawns to colour


def screen_order(board_view: dict[str, Any], seat: int | None, names: str) -> list[tuple[int, int]]:
    """The (screen row, screen column) of each square of ``names`` as ``seat`` sees the board."""
    board = make_board(board_view, seat)
    places = {square.name: (square.row, square.col) for square in board.squares()}
    return [places[name] for name in names.split()]


@pytest.mark.parametrize(
    ("game", "board_view", "seat"),
    [
        ("hexapawn", view("hexapawn", [], 0), 0),  # White starts on row 1, the top of the notation
        ("tactego", view("tactego", [], 0, seed="demo"), 0),  # Red deals from row 1
    ],
)
def test_a_board_turned_for_its_first_seat_keeps_the_files_in_reading_order(game: str, board_view: dict[str, Any], seat: int) -> None:
    (a1, b1, a3) = screen_order(board_view, seat, "a1 b1 a3")
    assert a1[0] > a3[0], f"{game}: row 1, the seat's own, is at the bottom"
    assert a1[0] == b1[0] and a1[1] < b1[1], f"{game}: file a is left of file b, as read"
    assert a1[1] == a3[1]


@pytest.mark.parametrize(("game", "board_view"), [("hexapawn", view("hexapawn", [], 1)), ("tactego", view("tactego", [], 1, seed="demo"))])
def test_the_other_seat_and_spectators_see_the_notation_as_drawn(game: str, board_view: dict[str, Any]) -> None:
    for seat in (1, None):
        (a1, b1, a3) = screen_order(board_view, seat, "a1 b1 a3")
        assert a1[0] < a3[0] and a1[1] < b1[1], game


async def test_the_file_letters_of_a_turned_board_read_a_to_c() -> None:
    app = BoardApp(view("hexapawn", [], 0), 0)
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        lines = app.query_one(BoardWidget).render().plain.splitlines()
        assert lines[0].split() == ["a", "b", "c"] and lines[4].split() == ["a", "b", "c"]
        assert [line.split()[0] for line in lines[1:4]] == ["3", "2", "1"]
