"""The line-mode client's §17 commands against a real server: who, challenge/accept/decline, seek, tell, mute."""

from __future__ import annotations

import pytest

from client.social_commands import parse_seek
from protocol import messages as m

from .test_terminal import HOSTILE, Connect, Shell, _clean


async def _shell(connect: Connect, name: str) -> Shell:
    return Shell(await connect(name, watch_lobby=False))


async def test_who_shows_names_and_statuses(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    await ann.run("new othello size=6")
    out = await bob.run("who")
    assert out.splitlines()[0].split() == ["ann", "playing"] and out.splitlines()[1].split() == ["bob", "idle"]
    assert "(2 online)" in out
    assert "usage: who" in await bob.run("who othello nimble")
    assert "error (unknown_game)" in await bob.run("who chess")


async def test_a_challenge_accepted_by_id_seats_both_shells(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    out = await ann.run("challenge bob othello size=6 tc=5+3 seat=1")
    assert out.startswith("Challenge 1 sent to bob: othello (Size: 6), 5+3, casual.")
    shown = bob.feed(await bob.next_push(m.ChallengeReceived))
    assert shown == "ann challenges you to othello (Size: 6), 5+3, casual, you play Black — type accept 1 or decline 1"
    await bob.run("accept 1")
    for shell, seat in ((ann, 1), (bob, 0)):
        assert "Challenge 1 was accepted." == shell.feed(await shell.next_push(m.ChallengeEnded))
        assert shell.feed(await shell.next_push(m.Paired)).startswith("Paired with ")
        assert shell.term.at is not None and shell.term.at.seat == seat and shell.term.at.game == "othello"
        shell.feed(await shell.next_push(m.GameStarted))
    assert bob.term.at is not None and bob.term.at.status == "playing"
    move = bob.term.at.view["legal_moves"][0]
    assert await bob.run(move) == ""  # bob (seat 0, Black) moves first: a move goes to the paired table
    assert (await ann.next_push(m.Moved)).move == move


async def test_decline_alone_answers_the_one_pending_challenge(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    await ann.run("challenge bob nimble")
    bob.feed(await bob.next_push(m.ChallengeReceived))
    await bob.run("decline")
    assert ann.feed(await ann.next_push(m.ChallengeEnded)) == "Challenge 1 was declined."
    assert "usage: challenge" in await ann.run("challenge bob")
    assert "leave out vs" in await ann.run("challenge bob othello vs=computer")
    assert "error (no_such_player)" in await ann.run("challenge nobody othello")
    assert "error (rated_needs_claim)" in await ann.run("challenge bob othello rated")
    assert "error (rated_needs_claim)" in await ann.run("challenge bob othello rated=yes")


async def test_seeks_pair_and_are_listed(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    assert (await ann.run("seek nimble 3+2 casual")).startswith("Seek 1 posted: nimble, 3+2, casual.")
    assert "seek 1: ann nimble, 3+2, casual" in await bob.run("seeks")
    assert await bob.run("seek nimble tc=3+2") == ""
    assert bob.feed(await bob.next_push(m.Paired)).startswith("Paired with ann at table 1")
    assert "No open seeks" in await bob.run("seeks")
    assert "not 'soon'" in await ann.run("seek othello soon")


async def test_tells_are_shown_printable_and_mutes_stop_them(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    await ann.run(f"tell bob hi {HOSTILE} 'quoted'")
    shown = bob.feed(await bob.next_push(m.Told))
    assert shown.startswith("ann tells you: hi ␛[2J") and shown.endswith("'quoted'") and _clean(shown)
    assert "Muted ann" in await bob.run("mute ann")
    assert await ann.run("tell bob anyone?") == ""
    assert "no longer muted" in await bob.run("unmute ann")
    await ann.run("tell bob back")
    assert bob.feed(await bob.next_push(m.Told)) == "ann tells you: back"
    assert "usage: tell NAME TEXT" in await ann.run("tell bob")


def test_seek_words() -> None:
    seek = parse_seek(["othello", "5+3", "rated", "1400-1800", "size=6"])
    assert (seek.time_control, seek.rated, seek.rating_min, seek.rating_max, seek.options) == ("5+3", True, 1400, 1800, {"size": 6})
    seek = parse_seek(["nimble", "-1600"])
    assert (seek.rating_min, seek.rating_max, seek.time_control) == (None, 1600, None)
    with pytest.raises(Exception, match="has no option"):
        parse_seek(["othello", "colour=red"])


async def test_muteguests_stops_tells_from_every_guest(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    assert "only claimed names can tell or challenge you" in await bob.run("muteguests")
    assert await ann.run("tell bob anyone?") == ""
    assert "error (muted)" in await ann.run("challenge bob othello")
    assert "no longer muted" in await bob.run("unmuteguests")
    await ann.run("tell bob back")
    assert bob.feed(await bob.next_push(m.Told)) == "ann tells you: back"
    assert "usage: muteguests" in await bob.run("muteguests now")


async def test_mutes_lists_the_names_you_mute(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    assert await bob.run("mutes") == "You mute nobody."
    await bob.run("mute ann")
    await bob.run("mute Zed")
    assert await bob.run("mutes") == "You mute 2: ann, zed. unmute NAME lifts one."
    await bob.run("unmute zed")
    assert await bob.run("mutes") == "You mute 1: ann. unmute NAME lifts one."
    assert (await bob.run("mutes ann")).startswith("usage: mutes")
    assert "mutes                     the names you mute" in await ann.run("help")
