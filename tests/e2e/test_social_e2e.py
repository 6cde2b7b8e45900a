"""Finding an opponent with the real programs: ``parlour serve`` and two ``parlour play`` line clients."""

from __future__ import annotations

from .harness import Process, start_server


def test_two_players_find_each_other_by_seek_and_talk_privately() -> None:
    server, port = start_server()
    address = f"127.0.0.1:{port}"
    ann = Process("play", address, "--name", "ann", "--guest")
    bob = Process("play", address, "--name", "bob", "--guest")
    try:
        ann.send("seek nimble 3+2 board=1,2,3\n")
        ann.expect(r"Seek 1 posted: nimble \(Squares: 3, Board: 1,2,3\), 3\+2, casual\.")
        bob.send("who\n")
        bob.expect(r"^ann\s+idle")
        bob.send("seek nimble 3+2 board=1,2,3\n")
        for player in (ann, bob):
            player.expect(r"Paired with (ann|bob) at table 1: you play ")
            player.expect(r"The game starts")
        bob.send("tell ann good luck!\n")
        ann.expect(r"^bob tells you: good luck!$")
        for player in (ann, bob):
            player.send("quit\n")
            assert player.finish(timeout_s=15) == 0
            assert not any(line.startswith("error") for line in player.lines), player.lines
    finally:
        for process in (ann, bob, server):
            process.kill()
