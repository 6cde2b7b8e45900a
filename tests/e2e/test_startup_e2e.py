"""``parlour serve`` refuses to start with one clear line and a non-zero status, never a traceback.

Every case runs the real command in a child process. Conditions that must bind
root too (tests run as root in CI, where file modes do not stop writes) use
``chattr +i`` or a tmpfs in a private mount namespace, and are skipped with
the reason when this machine cannot create them.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
import time
from pathlib import Path

from server.storage.rows import MoveRow, TableRow
from server.storage.sqlite import SQLiteStore

from .harness import ROOT, make_immutable, private_read_only_prefix, private_tmpfs_prefix, start_server

SERVE = [sys.executable, "-m", "client.cli", "serve", "--host", "127.0.0.1", "--port", "0"]


def serve_fails(*args: str, prefix: list[str] | None = None) -> str:
    """Run ``parlour serve ARGS``, expecting it to exit non-zero at once; return its one error line."""
    done = subprocess.run([*(prefix or []), *SERVE, *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    output = done.stdout + done.stderr
    assert done.returncode != 0, f"the server started:\n{output}"
    assert "Traceback" not in output, output
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr:\n{done.stderr}"
    return lines[0]


def make_database(path: Path, tables: int) -> None:
    """A real Parlour database with ``tables`` othello games of one move each."""

    async def fill() -> None:
        async with SQLiteStore.open(path) as store:
            for table_id in range(1, tables + 1):
                row = TableRow(id=table_id, game="othello", options={}, seed=None, created=time.time(), status="playing",
                               seat_names=(f"a{table_id}", f"b{table_id}"))  # fmt: skip
                await store.create_table(row)
                await store.append_move(table_id, MoveRow(ply=1, seat=0, move="d3", at=time.time()))

    asyncio.run(fill())


def test_a_port_out_of_range_is_refused_in_one_line() -> None:
    for port in ("70000", "-5"):
        done = subprocess.run([*SERVE[:-1], port, "--no-db"], cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert f"argument --port: expected a whole number from 0 to 65535, not '{port}'" in done.stderr


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    line = serve_fails("--db", str(tmp_path))
    assert f"{tmp_path} is a directory, not a database file" in line
    assert not Path(f"{tmp_path}.lock").exists(), "nothing is created beside it"


def test_a_damaged_page_is_named(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    make_database(db, 300)
    size = db.stat().st_size
    with db.open("r+b") as file:
        file.seek(size // 2)
        file.write(b"\xa5" * 8192)
    line = serve_fails("--db", str(db))
    assert "the file is damaged (database disk image is malformed)" in line and str(db) in line


def test_a_read_only_database_file(tmp_path: Path, immutable: list[Path]) -> None:
    db = tmp_path / "parlour.sqlite3"
    make_database(db, 1)
    make_immutable(immutable, db)
    line = serve_fails("--db", str(db))
    assert f"cannot write {db}: Operation not permitted; it must be writable to be used by a server" in line


def test_a_database_on_a_read_only_mount(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    make_database(db, 1)
    line = serve_fails("--db", str(db), prefix=private_read_only_prefix(tmp_path))
    assert "cannot create the lock file" in line and "Read-only file system" in line


def test_a_directory_that_cannot_be_written(tmp_path: Path, immutable: list[Path]) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    make_immutable(immutable, folder)
    line = serve_fails("--db", str(folder / "parlour.sqlite3"))
    assert "its directory must be writable" in line and "locked" in line


def test_a_full_disk(tmp_path: Path) -> None:
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    fill = f"dd if=/dev/zero of={shlex.quote(str(mount_point / 'filler'))} bs=4k 2>/dev/null;"
    prefix = private_tmpfs_prefix(mount_point, "256k", then=fill)
    line = serve_fails("--db", str(mount_point / "parlour.sqlite3"), prefix=prefix)
    assert "the disk is full" in line


def test_a_second_server_on_the_same_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "parlour.sqlite3"
    first, _ = start_server("--db", str(db))
    try:
        line = serve_fails("--db", str(db))
        assert f"{db} is in use by another Parlour server (process {first.popen.pid} holds {db}.lock)" in line
        games = subprocess.run(
            [sys.executable, "-m", "client.cli", "games", "--db", str(db)], cwd=ROOT, capture_output=True, text=True, timeout=30
        )
        assert games.returncode == 0 and "No finished games" in games.stdout, "the archive reads while a server runs"
        first.popen.kill()  # SIGKILL: the kernel drops the lock with the process
        first.popen.wait(10)
        again, _ = start_server("--db", str(db))
        again.kill()
    finally:
        first.kill()
