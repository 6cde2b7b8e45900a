"""``parlour host`` takes the server options a host needs: a real host process, piped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .harness import Process


def test_host_keeps_its_games_in_the_db_it_is_given_and_logs_at_the_level_asked(tmp_path: Path) -> None:
    db = tmp_path / "hosted.sqlite3"
    host = Process(
        "host", "--name", "ann", "--host", "127.0.0.1", "--port", "0", "--no-advertise",
        "--db", str(db), "--grace", "5", "--log-level", "INFO", stdin_text="new nimble\nquit\n",
    )  # fmt: skip
    try:
        host.expect(rf"INFO server\.storage\.schema: {db}: new database, schema version \d+$")
        host.expect(rf"^Hosting \(games kept in {db}; ")
        host.expect(r"Created table 1")
        assert host.finish(timeout_s=30) == 0
    finally:
        host.kill()
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT id, game FROM tables").fetchall() == [(1, "nimble")]


def test_host_with_no_db_keeps_nothing_and_logs_only_warnings_by_default() -> None:
    host = Process(
        "host", "--name", "ann", "--host", "127.0.0.1", "--port", "0", "--no-advertise", "--no-db",
        stdin_text="list\nquit\n",
    )  # fmt: skip
    try:
        host.expect(r"^Hosting \(nothing kept on disk; ")
        host.expect(r"^Connected to .* as ann\.")
        assert host.finish(timeout_s=30) == 0
    finally:
        host.kill()
    assert not any(" INFO " in line for line in host.lines), host.lines
