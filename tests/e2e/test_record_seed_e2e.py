"""``parlour games --export`` writes a ``Seed:`` only for a setup drawn from it: real server, client and export processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .harness import ROOT, Process, start_server


def _export(db: Path, table: int) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "client.cli", "games", "--db", str(db), "--export", str(table)],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return done.stdout


def test_records_carry_a_seed_only_where_the_setup_is_drawn_from_it(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    server, port = start_server("--db", str(db))
    script = "new othello size=6\nnew hexapawn\nnew nimble board=1,2\nnew nimble seed=luck\nquit\n"
    player = Process("play", f"127.0.0.1:{port}", "--name", "ann", "--guest", stdin_text=script)
    try:
        player.expect(r"Created table 4")
        assert player.finish(timeout_s=15) == 0
        records = {table: _export(db, table) for table in (1, 2, 3, 4)}
    finally:
        player.kill()
        server.kill()
    assert [table for table, text in records.items() if "Seed:" in text] == [4], records
    assert 'Seed: "luck"' in records[4] and "Game: othello" in records[1]
