"""Remembered session tokens: per server and name, safe with several clients writing at once."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from client.tokens import TokenStore


def test_tokens_are_kept_per_server_and_name(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    assert store.get("127.0.0.1", 7420, "ann") is None
    store.put("127.0.0.1", 7420, "ann", "t1")
    store.put("127.0.0.1", 7421, "ann", "t2")
    assert store.get("127.0.0.1", 7420, "ann") == "t1"
    assert store.get("127.0.0.1", 7421, "ann") == "t2"
    store.put("127.0.0.1", 7420, "ann", None)
    assert store.get("127.0.0.1", 7420, "ann") is None
    assert (tmp_path / "tokens.json").stat().st_mode & 0o777 == 0o600


def test_a_broken_file_means_no_tokens(tmp_path: Path) -> None:
    (tmp_path / "tokens.json").write_text("{not json")
    store = TokenStore(tmp_path / "tokens.json")
    assert store.get("h", 1, "ann") is None
    store.put("h", 1, "ann", "t")
    assert store.get("h", 1, "ann") == "t"


def _write_many(path: str, writer: int) -> None:
    store = TokenStore(Path(path))
    for index in range(25):
        store.put("h", 1, f"p{writer}-{index}", "token")


def test_concurrent_clients_lose_no_token(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    writers = [multiprocessing.Process(target=_write_many, args=(str(path), n)) for n in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(30)
        assert writer.exitcode == 0
    assert len(json.loads(path.read_text())) == 100
