"""``parlour games`` reads a database without writing to it, even where nothing can be written."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from server.storage.rows import TableRow
from server.storage.schema import SCHEMA_VERSION
from server.storage.sqlite import SQLiteStore

from .harness import ROOT, make_immutable, private_read_only_prefix

GAMES = [sys.executable, "-m", "client.cli", "games"]


def finished_game_db(path: Path) -> None:
    async def fill() -> None:
        async with SQLiteStore.open(path) as store:
            row = TableRow(id=1, game="othello", options={}, seed=None, created=time.time(), status="over",
                           seat_names=("ann", "bob"), finished=time.time(), outcome={"winner": 1, "reason": "board full"})  # fmt: skip
            await store.create_table(row)

    asyncio.run(fill())


def games(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*prefix, *GAMES, *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {name: ((folder / name).read_bytes(), (folder / name).stat().st_mtime_ns) for name in sorted(os.listdir(folder))}


def test_games_never_writes(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    finished_game_db(db)
    before = snapshot(tmp_path)
    assert list(before) == ["parlour.sqlite3"]
    listed = games("--db", str(db))
    assert listed.returncode == 0 and "ann (Black) vs bob" not in listed.stderr and "bob (White) won" in listed.stdout
    exported = games("--db", str(db), "--export", "1")
    assert exported.returncode == 0 and "othello" in exported.stdout
    assert snapshot(tmp_path) == before, "no byte, no time stamp and no -wal or -shm file changed"


def test_games_reads_a_database_in_a_directory_that_cannot_be_written(tmp_path: Path, immutable: list[Path]) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    db = folder / "parlour.sqlite3"
    finished_game_db(db)
    make_immutable(immutable, folder)
    listed = games("--db", str(db))
    assert listed.returncode == 0 and "bob (White) won" in listed.stdout, listed.stderr


def test_games_reads_a_database_on_a_read_only_mount(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    finished_game_db(db)
    listed = games("--db", str(db), prefix=tuple(private_read_only_prefix(tmp_path)))
    assert listed.returncode == 0 and "bob (White) won" in listed.stdout, listed.stderr


def test_a_database_that_needs_an_upgrade_it_cannot_get_is_one_clear_line(tmp_path: Path, immutable: list[Path]) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    db = folder / "parlour.sqlite3"
    db.touch()  # schema version 0: the first migration must run
    make_immutable(immutable, db)
    make_immutable(immutable, folder)
    done = games("--db", str(db))
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"Cannot read the archive: {db} has schema version 0 and must be upgraded to version {SCHEMA_VERSION}, which needs write access: "
    ), done.stderr
