"""What a server says once, read from real processes: the schema of a new database, the shutdown notice."""

from __future__ import annotations

from pathlib import Path

from server.storage.schema import SCHEMA_VERSION

from .harness import Process, start_server


def test_a_new_database_prints_one_line_for_its_schema(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite3"
    server, _ = start_server("--db", str(db))  # read up to "listening on port"
    server.kill()
    schema = [line for line in server.lines if "schema" in line]
    assert len(schema) == 1, server.lines
    assert schema[0].endswith(f"{db}: new database, schema version {SCHEMA_VERSION}"), schema


def test_the_shutdown_notice_says_shutting_down_once() -> None:
    server, port = start_server()
    client = Process("play", f"127.0.0.1:{port}", "--name", "ann", "--guest", stdin_text="new nimble\ntables\n")
    try:
        client.expect(r"switch N focuses a table")
        server.popen.terminate()
        assert server.popen.wait(15) == 0
        client.expect(r"^The server is shutting down\.$")
        client.expect(r"^Reconnecting when the server is back\.\.\.$")
        assert client.finish(timeout_s=15) == 0
        said = [line for line in client.lines if "shutting down" in line.lower()]
        assert said == ["The server is shutting down."], client.lines
    finally:
        client.kill()
        server.kill()
