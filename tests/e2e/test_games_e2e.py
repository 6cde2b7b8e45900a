"""Every game through real processes: two terminal clients play a recorded game, one watches.

All three must see the same result, the engine's, with its score where the game has one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import games
from client.line_script import EXIT_REFUSED

from .harness import Process, player_scripts, read_record, read_record_headers, start_server

GAMES = games.names()


def _new_command(game: str, options: dict[str, Any], seed: str | None, tmp_path: Path) -> str:
    """The terminal's ``new`` line for these options; text options go through files."""
    words = ["new", game]
    for key, value in options.items():
        if isinstance(value, str):
            path = tmp_path / f"{key}.txt"
            path.write_text(value)
            value = str(path)
        elif isinstance(value, list):
            value = ",".join(map(str, value))
        words.append(f"{key}={value}")
    if seed is not None:
        words.append(f"seed={seed}")
    return " ".join(words)


def _expected_result(game: str, options: dict[str, Any], seed: str | None, moves: list[str]) -> games.State:
    state = games.get(game).new_state(options, seed)
    for move in moves:
        state = state.play(move)
    assert state.outcome is not None
    return state


def _passing_seats(game: str, options: dict[str, Any], seed: str | None, moves: list[str]) -> list[int]:
    state = games.get(game).new_state(options, seed)
    seats = []
    for move in moves:
        if move == "pass":
            assert state.to_move is not None
            seats.append(state.to_move)
        state = state.play(move)
    return seats


@pytest.mark.parametrize("game", GAMES)
def test_recorded_game_through_real_processes(game: str, tmp_path: Path) -> None:
    record = f"{game}.txt"
    headers = read_record_headers(record)
    options = json.loads(headers["options"])
    seed = headers.get("seed")
    moves = read_record(record)
    final = _expected_result(game, options, seed, moves)
    first, second = player_scripts(game, options, moves, seed)
    seat_names = games.get(game).seats
    assert final.outcome is not None
    winner, score = final.outcome.winner, final.outcome.score
    expected = f"Result: {seat_names[winner]} wins — {final.outcome.reason}" if winner is not None else "Result: draw"
    if score is not None:
        expected += f" ({score[0]}–{score[1]})"
    forced_passes = [seat_names[s] for s in _passing_seats(game, options, seed, moves)]

    server, port = start_server()
    address = f"127.0.0.1:{port}"
    clients: list[Process] = []
    try:
        creator = Process("play", address, "--name", "ann", stdin_text=_new_command(game, options, seed, tmp_path) + "\n")
        clients.append(creator)
        table = creator.expect(r"Created table (\d+)")[1]
        save = [f"save {tmp_path / 'final.txt'}"] if game == "morris" else []
        creator.send("\n".join(["wait start", *first, "wait end", *save, "quit", ""]))
        watcher = Process("play", address, "--name", "cy", stdin_text=f"watch {table}\nwait end\nquit\n")
        clients.append(watcher)
        watcher.expect(rf"At table {table}, watching")
        joiner = Process("play", address, "--name", "bob", stdin_text=f"join {table}\n")
        clients.append(joiner)
        joiner.send("\n".join([*second, "wait end", "quit", ""]))

        for client in clients:
            assert client.expect(r"^Result: .*", timeout_s=90)[0].startswith(expected)
            assert client.finish() == 0
            assert not any(line.startswith("error") for line in client.lines), client.lines
        passes = [line.removesuffix(" must pass.") for line in watcher.lines if line.endswith(" must pass.")]
        assert passes == forced_passes, "the server plays and announces every forced pass"
        if game == "morris":
            assert (tmp_path / "final.txt").read_text() == final.view(None)["position"]
    finally:
        for client in clients:
            client.kill()
        server.kill()


def test_illegal_move_and_bad_option_leave_the_table_unchanged(tmp_path: Path) -> None:
    server, port = start_server()
    address = f"127.0.0.1:{port}"
    bad_pieces = tmp_path / "pieces.txt"
    bad_pieces.write_text("7 2\nX 1\n")
    player = Process("play", address, "--name", "ann", "--keep-going")
    try:
        player.send(f"new tactego pieces={bad_pieces}\n")
        player.expect(r"error \(bad_option\): .*line 2")
        player.send("new nimble n=1\n")
        player.expect(r"error \(bad_option\): .*n")
        player.send("new nimble board=0,2,1 seed=x\n")
        player.expect(r"Created table 1")
        player.send("join 1\n")
        player.expect(r"Switched to table 1 \(nimble, playing as Player 1\)")  # your own table: join only focuses it
        opponent = Process("play", address, "--name", "bob", stdin_text="join 1\nwait end\nquit\n")
        player.expect(r"The game starts")
        player.send("3-3\n")
        player.expect(r"error \(illegal_move\): .*")
        player.send("moves\n")
        player.expect(r"Legal moves: 2-1 3-1 3-2")
        player.send("3-1\nhistory\ntables\n")
        player.expect(r"1\.3-1")
        player.expect(r"\* t1 nimble \(Squares: 3, Board: 0,2,1\) — ann vs bob — you are Player 1")
        player.send("resign\n")
        player.expect(r"Result: Player 2 wins")
        opponent.expect(r"Result: Player 2 wins")
        assert player.finish() == EXIT_REFUSED and opponent.finish() == 0  # the first refusal: bad_option
    finally:
        player.kill()
        server.kill()


def test_morris_starts_from_a_position_file_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    position = "1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0\n7\n7\n1\n"
    good = tmp_path / "good.txt"
    good.write_text(position)
    bad = tmp_path / "bad.txt"
    bad.write_text("1, 1, 0\n7\n7\n1\n")
    server, port = start_server()
    player = Process("play", f"127.0.0.1:{port}", "--name", "ann", "--keep-going")
    try:
        player.send(f"new morris position={bad}\n")
        player.expect(r"error \(bad_option\): position line 1: expected 24 point values")
        player.send(f"new morris position={good}\nmoves\n")
        player.expect(r"Created table 1")
        player.expect(r"7 in hand")
        player.send(f"save {tmp_path / 'copy.txt'}\nquit\n")
        assert player.finish() == EXIT_REFUSED
        assert (tmp_path / "copy.txt").read_text() == position
    finally:
        player.kill()
        server.kill()
