"""A server killed with SIGKILL mid-game comes back from its database; clients resume and finish."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .harness import ROOT, Process, player_scripts, read_record, start_server

SPLIT = 24  # moves played before the crash


def test_sigkill_restart_resume_and_finish(tmp_path: Path) -> None:
    db = str(tmp_path / "parlour.sqlite3")
    moves = read_record("othello_8x8.txt")
    before = player_scripts("othello", {"size": 8}, moves[:SPLIT], to_end=False)
    after = player_scripts("othello", {"size": 8}, moves[SPLIT:], after=moves[:SPLIT])

    server, port = start_server("--db", db, "--grace", "60")
    clients: list[Process] = []
    try:
        ann = Process("play", f"127.0.0.1:{port}", "--name", "ann", stdin_text="new othello\n")
        clients.append(ann)
        ann.expect(r"Created table 1")
        ann.send("\n".join(["wait start", *before[0], ""]))
        watcher = Process("play", f"127.0.0.1:{port}", "--name", "cy", stdin_text="watch 1\n")
        clients.append(watcher)
        watcher.expect(r"At table 1, watching")
        bob = Process("play", f"127.0.0.1:{port}", "--name", "bob", stdin_text="join 1\n")
        clients.append(bob)
        bob.send("\n".join([*before[1], ""]))
        last = moves[SPLIT - 1]
        for client in clients:
            client.expect(rf"played {last}\.")

        server.popen.kill()  # SIGKILL: no goodbye, no flush beyond what was committed
        server.popen.wait(10)
        server, _ = start_server("--db", db, "--grace", "60", port=port)
        server.expect(r"restored 1 unfinished tables")
        for client in clients:
            client.expect(r"Reconnected", timeout_s=60)
            client.expect(rf"Turn {SPLIT + 1}")

        ann.send("\n".join([*after[0], "wait end", "quit", ""]))
        bob.send("\n".join([*after[1], "wait end", "quit", ""]))
        watcher.send("wait end\nquit\n")
        for client in clients:
            assert client.expect(r"^Result: .*", timeout_s=90)[0] == "Result: White wins — board full (22–42)"
            assert client.finish() == 0
    finally:
        for client in clients:
            client.kill()
        server.kill()

    export = subprocess.run(
        [sys.executable, "-m", "client.cli", "games", "--db", db, "--export", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    ).stdout
    recorded = [line.split()[1] for line in export.splitlines() if line[:1].isdigit()]
    assert recorded == moves, "every acknowledged move is in the archive, in order"
    assert "Player-0: ann" in export and "Player-1: bob" in export
