"""A server killed with SIGKILL mid-game comes back from its database; clients resume and finish."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from client import Client
from protocol import PROTOCOL_VERSION, encode_frame
from protocol import messages as m

from .harness import ROOT, Process, othello_after_d3, player_scripts, read_record, start_server

SPLITS = (24, 41)  # moves each table has played when the server is killed


def test_sigkill_restart_resume_and_finish_several_games(any_db: str) -> None:
    """On SQLite, and on PostgreSQL (``parlour serve --db postgresql://...``)."""
    db = any_db
    moves = read_record("othello.txt")
    server, port = start_server("--db", db, "--grace", "60")
    address = f"127.0.0.1:{port}"
    clients: list[Process] = []
    tables = []
    try:
        for index, split in enumerate(SPLITS):
            black_name, white_name = f"black{index}", f"white{index}"
            before = player_scripts("othello", {}, moves[:split], to_end=False)
            black = Process("play", address, "--name", black_name, stdin_text="new othello\n")
            table = black.expect(r"Created table (\d+)")[1]
            black.send("\n".join(["wait start", *before[0], ""]))
            watcher = Process("play", address, "--name", f"watcher{index}", stdin_text=f"watch {table}\n")
            watcher.expect(rf"At table {table}, watching")
            white = Process("play", address, "--name", white_name, stdin_text=f"join {table}\n")
            white.send("\n".join([*before[1], ""]))
            clients += [black, white, watcher]
            tables.append((table, split, black, white, watcher))
        for _table, split, *players in tables:
            for client in players:
                client.expect(rf"played {moves[split - 1]}\.")

        server.popen.kill()  # SIGKILL: no goodbye; only what was committed survives
        server.popen.wait(10)
        server, _ = start_server("--db", db, "--grace", "60", port=port)
        server.expect(rf"restored {len(SPLITS)} unfinished tables")
        for _table, split, *players in tables:
            for client in players:
                client.expect(r"Reconnected", timeout_s=60)
                client.expect(rf"Turn {split + 1}")

        for _table, split, black, white, watcher in tables:
            after = player_scripts("othello", {}, moves[split:], after=moves[:split])
            black.send("\n".join([*after[0], "wait end", "quit", ""]))
            white.send("\n".join([*after[1], "wait end", "quit", ""]))
            watcher.send("wait end\nquit\n")
        for client in clients:
            assert client.expect(r"^Result: .*", timeout_s=90)[0] == "Result: White wins — board full (22–42)"
            assert client.finish() == 0
    finally:
        for client in clients:
            client.kill()
        server.kill()

    for table, *_ in tables:
        export = subprocess.run(
            [sys.executable, "-m", "client.cli", "games", "--db", db, "--export", table],
            cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
        ).stdout
        recorded = [line.split()[1] for line in export.splitlines() if line[:1].isdigit()]
        assert recorded == moves, "every acknowledged move is in the archive, in order"


def test_a_restarted_client_resumes_its_seat_with_the_remembered_token() -> None:
    server, port = start_server("--grace", "60")
    address = f"127.0.0.1:{port}"
    ann, bob = othello_after_d3(address)
    try:
        ann.popen.kill()  # the laptop's client dies; its seat is held
        bob.expect(r"ann lost their connection; their seat is forfeited in 60 s")
        ann = Process("play", address, "--name", "ann", stdin_text="moves\n")
        ann.expect(r"Table 1 · othello · Black: ann")
        bob.expect(r"ann is back\.")
        bob.send("c3\n")
        ann.expect(r"White played c3\.")
        ann.send("quit\n")
        bob.send("quit\n")
        assert ann.finish() == 0 and bob.finish() == 0
    finally:
        ann.kill()
        bob.kill()
        server.kill()


async def test_a_resume_cut_short_by_sigkill_leaves_the_token_working(tmp_path: Path) -> None:
    """The server handles a resume, then dies before the client reads its welcome: the token still resumes the seat."""
    db = str(tmp_path / "parlour.sqlite3")
    server, port = start_server("--db", db, "--grace", "60")
    try:
        ann = await Client.connect("127.0.0.1", port, name="ann")
        bob = await Client.connect("127.0.0.1", port, name="bob")
        table = (await ann.create_table("othello")).table.id
        await bob.join_table(table)
        await ann.move(table, "d3")
        token = bob.token
        await bob.close()
        await ann.next_event(m.PlayerAway, timeout_s=10)
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(encode_frame({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "bob", "token": token}))
        await writer.drain()
        await ann.next_event(m.PlayerBack, timeout_s=10)  # the resume was handled, whatever it wrote committed...
        server.popen.kill()  # ...and the server dies before bob reads the welcome
        server.popen.wait(10)
        writer.close()
        await ann.close()

        server, port = start_server("--db", db, "--grace", "60")
        back = await Client.connect("127.0.0.1", port, name="bob", token=token)
        try:
            resumed = await back.next_event(m.Resumed, timeout_s=10)
            assert (resumed.table.id, resumed.seat, resumed.moves) == (table, 1, ["d3"])
            await back.move(table, resumed.view["legal_moves"][0])
        finally:
            await back.close()
    finally:
        server.kill()
