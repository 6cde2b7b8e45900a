"""A finished Tactego game shows every piece's strength to everyone; a running one hides them.

Raw TCP connections keep every frame the server sends to the two players and
a spectator of a game ended by a resignation (no move shows its end): every
position before ``game_over`` hides the opponent's unfought pieces, and the
``game_over`` itself carries the whole setup. A spectator who comes after the
end, the archive's record (its setup written out as a comment) and the line
client's replay of it see it too.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import games
from client import Client
from client.line_replay import Replayer
from games.record import parse_record, replay
from server.app import Server, ServerConfig

from .test_hidden_information import OPTIONS, RawConnection, _connect, _ranks_seen, _views

PLIES = 12
"""Moves played before the resignation (onto empty squares where possible, so the game still runs)."""


def _hidden_cells(view: dict[str, Any]) -> int:
    return sum(1 for row in view["board"] for cell in row if cell is not None and cell[1] == "?")


def _lands_on_empty(state: games.State, move: str) -> bool:
    """Whether ``move`` (``"b2-c3"``) steps onto an empty square: no combat, so no flag can fall."""
    target = move.split("-")[1]
    col, row = ord(target[0]) - ord("a"), int(target[1:]) - 1
    return state.board[row * state.options["cols"] + col] is None  # type: ignore[attr-defined]


async def _resigned_game(server: Server) -> tuple[dict[str, RawConnection], int, games.State]:
    """Red and Blue play :data:`PLIES` random moves watched by a spectator, then Blue resigns."""
    red, blue, spectator = [await _connect(server, name) for name in ("red", "blue", "watcher")]
    table = (await red.request("create_table", game="tactego", options=OPTIONS))["table"]["id"]
    await spectator.request("watch_table", table=table)
    await blue.request("join_table", table=table)
    engine = games.get("tactego").new_state(OPTIONS, server.tables[table].seed)
    rng, players = random.Random(11), {0: red, 1: blue}
    while engine.ply < PLIES:
        quiet = [move for move in engine.legal_moves() if _lands_on_empty(engine, move)]
        move = rng.choice(quiet or engine.legal_moves())
        await players[engine.to_move].request("move", table=table, move=move)
        engine = engine.play(move)
    assert engine.outcome is None, "the game must still run when Blue resigns"
    await blue.request("resign", table=table)
    connections = {"red": red, "blue": blue, "watcher": spectator}
    for connection in connections.values():
        await connection.until(lambda frame: frame.get("type") == "game_over")
    return connections, table, engine


async def test_a_resignation_shows_the_whole_setup_to_players_and_spectators_and_nothing_before(server: Server) -> None:
    connections, table, engine = await _resigned_game(server)
    truth = games.get("tactego").new_state({**OPTIONS, "hidden": False}, engine.seed)
    for move in [frame["move"] for frame in connections["red"].frames if frame.get("type") == "moved"]:
        truth = truth.play(move)
    for (name, connection), seat in zip(connections.items(), (0, 1, None)):
        over_at = next(i for i, frame in enumerate(connection.frames) if frame.get("type") == "game_over")
        before = _views(connection.frames[:over_at])
        assert before and all(_hidden_cells(view) > 0 for view in before), f"{name} saw every strength before the end"
        for view in before:
            for _ply, r, c, _rank in _ranks_seen(view):
                square = f"{chr(ord('a') + c)}{r + 1}"
                assert view["board"][r][c][0] == seat or square in view["revealed"], (name, square)
        over = connection.frames[over_at]
        assert over["outcome"]["reason"] == "Blue resigned"
        assert _hidden_cells(over["view"]) == 0, f"{name}'s game_over hides a strength"
        assert over["view"]["board"] == truth.view(None)["board"]
        assert over["view"]["outcome"] == over["outcome"] and over["view"]["to_move"] is None
        assert "legal_moves" not in over["view"]
    for connection in connections.values():
        connection.writer.close()


async def test_a_spectator_who_comes_after_the_end_sees_the_whole_setup(server: Server) -> None:
    connections, table, engine = await _resigned_game(server)
    late = await Client.connect("127.0.0.1", server.port, name="late")
    try:
        joined = await late.watch_table(table)
        assert joined.table.status == "over" and joined.table.seed == engine.seed
        assert _hidden_cells(joined.view) == 0
        assert joined.view["board"] == engine.revealed().view(None)["board"]
    finally:
        await late.close()
    for connection in connections.values():
        connection.writer.close()


async def test_the_archive_record_replays_with_every_strength_shown(tmp_path: Path) -> None:
    server = Server(ServerConfig(host="127.0.0.1", port=0, db_path=str(tmp_path / "parlour.sqlite3")))
    await server.start()
    try:
        connections, table, engine = await _resigned_game(server)
        reader = await Client.connect("127.0.0.1", server.port, name="reader")
        text = await reader.get_record(table)
        record = parse_record(text)
        assert record.seed == engine.seed and record.result == {"winner": 0, "reason": "Blue resigned", "score": None}
        states = replay(record)
        assert states[-1].view(None) == engine.view(None)
        setup = [line.removeprefix("#   ") for line in text.splitlines() if line.startswith("#   ")]
        truth = states[0].revealed().view(None)["board"]
        assert setup[0].split() == ["a", "b", "c", "d"] and len(setup) == 1 + len(truth)
        for line, row in zip(setup[1:], truth):
            assert line.split()[1:] == ["." if cell is None else "rb"[cell[0]] + cell[1] for cell in row]
        for state in states:
            assert _hidden_cells(state.revealed().view(None)) == 0

        written: list[str] = []
        replayer = Replayer(lambda: reader, written.append, lambda: "")
        await replayer.replay([str(table)])
        await replayer.last([])
        first, last = written
        assert "b?" not in first and "r?" not in first, "the replay's start hides a strength"
        assert "b?" not in last and "r?" not in last, "the replay's end hides a strength"
        await reader.close()
        for connection in connections.values():
            connection.writer.close()
    finally:
        await server.close()
