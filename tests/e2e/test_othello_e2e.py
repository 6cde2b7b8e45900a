"""A real server and three real terminal clients play and watch a recorded Othello game."""

from __future__ import annotations

import games

from .harness import Process, player_scripts, read_record, start_server


def test_two_players_and_a_spectator_finish_a_recorded_game() -> None:
    moves = read_record("othello_8x8.txt")
    black_script, white_script = player_scripts("othello", {"size": 8}, moves)
    expected = games.get("othello").new_state({"size": 8})
    for move in moves:
        expected = expected.play(move)
    assert expected.outcome is not None and expected.outcome.score == (22, 42)

    server, port = start_server()
    address = f"127.0.0.1:{port}"
    clients: list[Process] = []
    try:
        black = Process("play", address, "--name", "ann", stdin_text="new othello size=8\n")
        clients.append(black)
        table = black.expect(r"Created table (\d+)")[1]
        black.send("\n".join(["wait start", *black_script, "wait end", "quit", ""]))

        watcher = Process("play", address, "--name", "cy", stdin_text=f"watch {table}\nwait end\nquit\n")
        clients.append(watcher)
        watcher.expect(rf"At table {table}, watching")

        white = Process("play", address, "--name", "bob", stdin_text=f"join {table}\n")
        clients.append(white)
        white.send("\n".join([*white_script, "wait end", "quit", ""]))

        results = []
        for client in clients:
            results.append(client.expect(r"^Result: .*", timeout_s=90)[0])
            assert client.finish() == 0
        assert results == ["Result: White wins — board full (22–42)"] * 3
        for client in clients:
            assert not any("error" in line for line in client.lines), client.lines
        assert any("Black must pass." in line for line in watcher.lines)
    finally:
        for client in clients:
            client.kill()
        server.popen.terminate()
        server.popen.wait(10)


def test_sigterm_stops_the_server_and_tells_connected_clients() -> None:
    server, port = start_server()
    client = Process("play", f"127.0.0.1:{port}", "--name", "ann", stdin_text="new othello\n")
    try:
        client.expect(r"Created table 1")
        server.popen.terminate()
        assert server.popen.wait(15) == 0
        client.expect(r"The server is shutting down")
        assert client.finish(timeout_s=15) == 0
        server.finish()
        assert any("stopping: telling 1 connected clients" in line for line in server.lines)
    finally:
        client.kill()
        server.kill()
