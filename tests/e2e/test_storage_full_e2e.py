"""A move the server cannot save because its disk is full is refused with ``storage_full`` and changes nothing.

The server runs as a real process with its database on a small tmpfs mounted
in a private mount namespace (root only; skipped otherwise). The test fills
that tmpfs through ``/proc/PID/root`` while the game runs, then frees it.
"""

from __future__ import annotations

import errno
from pathlib import Path


from .harness import Process, othello_after_d3, private_tmpfs_prefix, assert_no_traceback_nor_error, refused_until_fixed, start_server


def fill(path: Path) -> None:
    """Write zeros to ``path`` until its file system is full."""
    block = b"\0" * 65536
    with path.open("wb", buffering=0) as file:
        try:
            while True:
                file.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    with path.open("ab", buffering=0) as file:  # the last partial block
        try:
            while True:
                file.write(b"\0" * 512)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc


def test_a_move_on_a_full_disk_gets_storage_full_and_the_same_move_succeeds_later(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    prefix = private_tmpfs_prefix(disk, "2m")
    server, port = start_server("--db", str(disk / "parlour.sqlite3"), "--grace", "60", "--abort-after", "0", prefix=prefix)
    address = f"127.0.0.1:{port}"
    ann, bob = othello_after_d3(address, options="tc=5+0", bob_args=("--keep-going",))
    try:
        dan = Process("play", address, "--name", "dan")
        dan.expect(r"Connected to .* as dan\.")
        filler = Path(f"/proc/{server.popen.pid}/root") / disk.relative_to("/") / "filler"
        fill(filler)
        dan.send("quit\n")  # forgetting dan's session is a write that fails in the background
        assert dan.finish() == 0
        server.expect(r"ERROR .*a background write failed: .*database or disk is full")

        refused_until_fixed(
            server, address, ann, bob, code="storage_full", logged=".*disk is full", fix=filler.unlink,
            text=r"The server cannot save moves right now \(its disk is full\); nothing was changed\. Try again later\.",
        )  # fmt: skip
    finally:
        ann.kill()
        bob.kill()
        server.kill()
    assert_no_traceback_nor_error(server, ann, bob)
