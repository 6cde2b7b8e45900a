"""The terminal client: sanitised output, game controls, chat, clocks and replay.

The shells run against a real in-process server (the ``connect`` fixture).
Pushes of features the server may not send yet are fed to ``on_event``
directly, and requests the server may not answer yet are captured by
replacing the client's method, so these tests check the terminal's side only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

import msgspec
import pytest

import games
from client import Client
from client.render import render
from client.terminal import HELP, PromptInput, TerminalClient, describe_archived, describe_table, format_clock
from games.record import GameRecord, RecordedMove, format_record, replay
from protocol import messages as m

Connect = Callable[..., Awaitable[Client]]
HOSTILE = "\x1b[2J\x1b]0;pwned\x07eve\u202e"
CONTROL_CHARS = ("\x1b", "\x07", "\u202e", "\x9b")
RECORDS = Path(__file__).resolve().parent.parent / "e2e" / "records"


class Shell:
    """A TerminalClient writing into a list, with a clock the test sets."""

    def __init__(self, client: Client) -> None:
        self.out: list[str] = []
        self.time = 100.0
        self.term = TerminalClient(client, self.out.append, now=lambda: self.time)

    async def run(self, line: str) -> str:
        """Run one command; return what it printed."""
        start = len(self.out)
        assert await self.term.handle(line)
        return "\n".join(self.out[start:])

    def feed(self, event: m.Message) -> str:
        """Give the shell one push; return what it printed."""
        start = len(self.out)
        self.term.on_event(event)
        return "\n".join(self.out[start:])

    async def next_push(self, kind: type[m.Message]) -> Any:
        """The next push of ``kind`` this shell's real connection receives (others are skipped)."""
        return await self.term.client.next_event(kind, timeout_s=5.0)


def _clean(text: str) -> bool:
    return not any(char in text for char in CONTROL_CHARS)


async def _shell(connect: Connect, name: str) -> Shell:
    return Shell(await connect(name))


async def _two_at_a_table(connect: Connect) -> tuple[Shell, Shell]:
    """ann (Black, seat 0) and bob (White, seat 1) at a 6x6 Othello table, game started."""
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    assert "Created table 1" in await ann.run("new othello size=6")
    await bob.run("join 1")
    assert ann.term.at is not None and bob.term.at is not None
    ann.feed(await ann.next_push(m.GameStarted))  # brings ann's first view with her moves
    assert ann.term.at.info.status == "playing"
    return ann, bob


def _table(**changes: Any) -> m.TableInfo:
    fields: dict[str, Any] = dict(id=1, game="othello", options={"size": 6}, seats=["ann", None], status="waiting", spectators=0, ply=0)
    fields.update(changes)
    return m.TableInfo(**fields)


# --- sanitising ------------------------------------------------------------------------


def test_describe_table_sanitises_names_and_options() -> None:
    line = describe_table(_table(seats=[HOSTILE, "bob\x9b2J"], options={"pieces": "x\x1b[31m"}, time_control="5+3"))
    assert _clean(line)
    assert "␛[2J␛]0;pwned␇eve<U+202E>" in line
    assert "bob<U+009B>2J" in line
    assert "(Pieces: x␛[31m)" in line
    assert "tc=5+3" in line


async def test_lobby_push_with_a_hostile_name_is_sanitised(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    out = shell.feed(m.TableUpdated(table=_table(seats=[HOSTILE, None])))
    assert out.startswith("lobby: #1 othello (Size: 6) — ␛[2J")
    assert _clean(out)


async def test_list_against_the_real_server(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    await ann.run("new othello size=6")
    out = await bob.run("list")
    assert out.startswith("#1 othello (Size: 6)")
    assert "ann vs (free) — waiting" in out


def test_a_summarized_option_text_shows_its_length() -> None:
    line = describe_table(_table(game="tactego", options={"rows": 8, "pieces": {"length": 10000, "sha256": "0123456789abcdef"}}))
    assert line.startswith("#1 tactego (Pieces: <10000 chars>) — ")  # rows=8 is the default
    archived = describe_archived({"id": 3, "game": "tactego", "options": {"pieces": {"length": 70, "sha256": "x"}}, "players": ["a", "b"]})
    assert archived.startswith("#3 tactego (Pieces: <70 chars>) — ")


async def test_list_shows_long_options_as_summaries_and_the_table_keeps_its_full_options(connect: Connect, tmp_path: Path) -> None:
    pieces = tmp_path / "pieces.txt"
    pieces.write_text("0" * 100 + "5 3\nF 1\n")
    ann, bob, cat = await _shell(connect, "ann"), await _shell(connect, "bob"), await _shell(connect, "cat")
    await ann.run(f"new tactego pieces={pieces}")
    assert "(Pieces: <108 chars>)" in await bob.run("list")
    await bob.run("join 1")
    update = await cat.next_push(m.TableUpdated)  # cat, in the lobby, watches it; players at a table do not
    while update.table.seats != ["ann", "bob"]:  # skip the push of ann's own creation
        update = await cat.next_push(m.TableUpdated)
    # bob joined: the lobby push carries the summary
    assert update.table.options["pieces"] == {"length": 108, "sha256": update.table.options["pieces"]["sha256"]}
    ann.feed(update)
    assert ann.term.at is not None and ann.term.at.info.options["pieces"] == pieces.read_text()
    assert ann.term.at.info.seats == ["ann", "bob"]


async def test_names_at_the_table_are_sanitised(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    table_id = 1
    out = ann.feed(m.GameStarted(table=table_id, seats=["ann", HOSTILE], view=ann.term.at.view))  # type: ignore[union-attr]
    out += ann.feed(m.PlayerAway(table=table_id, seat=1, name=HOSTILE, forfeit_in_s=60))
    out += ann.feed(m.PlayerBack(table=table_id, seat=1, name=HOSTILE))
    ann.term.at.info = msgspec.structs.replace(ann.term.at.info, seats=["ann", HOSTILE])  # type: ignore[union-attr]
    out += await ann.run("board")
    out += ann.feed(m.Offered(table=table_id, seat=1, kind="draw"))
    assert out.count("␛[2J") == 5
    assert _clean(out)


async def test_chat_pushes_are_shown_and_sanitised(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    await shell.run("new othello size=6")  # table 1: chat of tables we are not at never comes
    assert shell.feed(m.Chat(name="bob", text="hello", table=3)) == ""
    assert shell.feed(m.Chat(name="bob", text="hello", table=1)) == "[table 1] bob: hello"
    assert shell.feed(m.Chat(name="bob", text="hi all 👋")) == "[lobby] bob: hi all 👋"
    forged = shell.feed(m.Chat(name="eve", text="gg\nbob offers a draw — type accept or decline\x1b[8m", table=1))
    assert forged == "[table 1] eve: gg␊bob offers a draw — type accept or decline␛[8m"
    assert shell.feed(m.Chat(name="e\u202eve", text="x")) == "[lobby] e<U+202E>ve: x"


async def test_say_and_shout_send_the_text_as_typed(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    await shell.run("say don't \"quote\" me")
    said = await shell.next_push(m.Chat)
    assert (said.text, said.table) == ("don't \"quote\" me", None)
    await shell.run("new othello size=6")
    await shell.run("say   at the table  ")
    said = await shell.next_push(m.Chat)
    assert (said.text, said.table) == ("at the table", 1)
    listener = await _shell(connect, "bob")  # in the lobby; ann, at a table, no longer follows lobby chat
    await shell.run("shout to everyone")
    said = await listener.next_push(m.Chat)
    assert (said.name, said.text, said.table) == ("ann", "to everyone", None)
    assert await shell.run("say") == "usage: say TEXT"
    assert "at most 500" in await shell.run("say " + "x" * 501)


# --- game controls -----------------------------------------------------------------------


async def test_an_offer_from_the_opponent_is_shown_and_answered(connect: Connect) -> None:
    ann, bob = await _two_at_a_table(connect)
    await bob.run("draw")
    offered = await ann.next_push(m.Offered)
    assert ann.feed(offered) == "bob offers a draw — type accept or decline"
    assert "bob's draw offer" in ann.term.status_line()
    await ann.run("decline")
    answered = await bob.next_push(m.Answered)
    assert (answered.kind, answered.accepted) == ("draw", False)
    assert ann.term.at.opponent_offer() is None  # type: ignore[union-attr]
    assert await ann.run("accept") == "There is no offer to answer."

    move = ann.term.at.view["legal_moves"][0]  # type: ignore[union-attr]
    await ann.run(move)  # a move of ann's to take back, on bob's turn: that move alone
    bob.feed(await bob.next_push(m.Moved))
    ann.feed(await ann.next_push(m.Moved))
    assert await ann.run("takeback") == f"You asked for a takeback, which takes back your move {move}; waiting for bob to accept or decline."
    offered = await bob.next_push(m.Offered)
    assert bob.feed(offered) == f"ann asks for a takeback, which takes back their move {move} — type accept or decline"
    await bob.run("accept takeback")
    assert ann.feed(await ann.next_push(m.Answered)) == "The takeback request was accepted."
    taken = await ann.next_push(m.TakenBack)
    assert taken.plies == 1 and taken.moves == []
    assert await ann.run("accept chess") == "usage: accept [draw|takeback|rematch]"


def _othello_moves_with_a_pass(size: int = 6) -> list[str]:
    """The moves of the first random Othello game (seeds from 0) that has a forced pass."""
    import random

    for seed in range(500):
        rng, state, moves = random.Random(seed), games.get("othello").new_state({"size": size}), []
        while state.outcome is None:
            moves.append(rng.choice(state.legal_moves()))
            state = state.play(moves[-1])
        if "pass" in moves:
            return moves
    raise AssertionError("no random game with a pass")


async def test_a_pass_the_server_will_play_is_shown_as_such_not_as_a_turn(connect: Connect) -> None:
    ann, bob = await _two_at_a_table(connect)
    moves = _othello_moves_with_a_pass()
    first_pass = moves.index("pass")
    shells = (ann, bob)
    for ply, move in enumerate(moves[:first_pass]):
        await shells[ply % 2].term.client.move(1, move)
    passer = shells[first_pass % 2]
    for _ in range(first_pass - 1):
        passer.feed(await passer.next_push(m.Moved))
    shown = passer.feed(await passer.next_push(m.Moved))
    assert "must pass; the server passes for them." in shown and "your turn" not in shown, shown
    assert await passer.run("moves") == "You must pass; the server passes for you."
    shown = passer.feed(await passer.next_push(m.Moved))
    assert f"{passer.term.view.seat_name(first_pass % 2)} must pass." in shown
    assert "your turn" not in shown


async def test_offers_are_made_with_the_right_kind(connect: Connect) -> None:
    ann, bob = await _two_at_a_table(connect)
    assert await ann.run("draw") == "You offered a draw; waiting for bob to accept or decline."
    assert (await bob.next_push(m.Offered)).kind == "draw"
    assert await ann.run("takeback") == "you have no move of your own to take back yet"
    assert (await ann.run("takeback 3")).startswith("usage: takeback (it takes back your last move")
    await ann.run("resign")
    await bob.next_push(m.GameOver)
    assert "rematch" in await ann.run("rematch")
    offered = await bob.next_push(m.Offered)
    assert (offered.kind, offered.seat) == ("rematch", 0)
    assert ann.feed(m.Offered(table=1, seat=0, kind="draw")) == ""  # our own offer, echoed: already said


async def test_spectators_see_offers_but_cannot_answer(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    carl = await _shell(connect, "carl")
    await carl.run("watch 1")
    assert carl.feed(m.Offered(table=1, seat=0, kind="draw")) == "ann offers a draw."
    assert "only the players" in await carl.run("accept")
    assert "only the players" in await carl.run("draw")
    assert ann.feed(m.Offered(table=2, seat=1, kind="draw")) == ""  # another table


async def test_answered_pushes_are_shown_and_clear_the_offer(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    ann.feed(m.Offered(table=1, seat=1, kind="draw"))
    assert ann.feed(m.Answered(table=1, kind="draw", accepted=False, lapsed=True)) == "The draw offer lapsed."
    assert ann.term.at.opponent_offer() is None  # type: ignore[union-attr]
    assert ann.feed(m.Answered(table=1, kind="takeback", accepted=True)) == "The takeback request was accepted."
    assert ann.feed(m.Answered(table=1, kind="rematch", accepted=False)) == "The rematch offer was declined."


async def test_an_offer_lapses_when_its_maker_moves(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    at = ann.term.at
    assert at is not None
    state = games.get("othello").new_state({"size": 6})
    after = state.play(state.legal_moves()[0])
    ann.feed(m.Offered(table=1, seat=1, kind="draw"))
    ann.feed(m.Moved(table=1, seat=0, move=after.last_move, ply=1, view=after.view(0)))
    assert at.opponent_offer() is not None  # our own move does not lapse bob's offer
    later = after.play(after.legal_moves()[0])
    ann.feed(m.Moved(table=1, seat=1, move=later.last_move, ply=2, view=later.view(0)))
    assert at.opponent_offer() is None


async def test_taken_back_updates_the_position_and_gives_the_turn_back(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    at = ann.term.at
    assert at is not None
    start = games.get("othello").new_state({"size": 6})
    move = start.legal_moves()[0]
    after = start.play(move)
    at.moved_at_ply = 0  # as if ann had just played
    ann.feed(m.Moved(table=1, seat=0, move=move, ply=1, view=after.view(0)))
    assert at.moves == [move] and not at.my_turn
    out = ann.feed(m.TakenBack(table=1, plies=1, view=start.view(0), moves=[]))
    assert out.startswith("1 ply taken back.")
    assert render(start.view(0), 0) in out
    assert "Turn 1" in out and "your turn" in out
    assert at.moves == [] and at.view["ply"] == 0
    assert at.my_turn


async def test_rematch_started_moves_to_the_new_table(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    ann.feed(m.GameOver(table=1, outcome={"winner": 0, "reason": "resignation"}))
    state = games.get("othello").new_state({"size": 6})
    table = _table(id=2, seats=["bob", "ann"], status="playing")
    out = ann.feed(m.RematchStarted(previous=1, table=table, seat=1, view=state.view(1)))
    assert out.startswith("Rematch at table 2: you play White this time.") and out.count("Rematch at") == 1
    assert "Black: bob  vs  White: ann" in out
    at = ann.term.at
    assert at is not None and at.info.id == 2 and at.seat == 1 and at.moves == []


async def test_game_over_suggests_a_rematch(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    out = ann.feed(m.GameOver(table=1, outcome={"winner": 1, "reason": "resignation"}))
    assert out.splitlines() == ["Result: White wins — resignation", "Type rematch to offer a rematch with seats swapped, or leave."]


# --- clocks ---------------------------------------------------------------------------------

SNAPSHOT = {"remaining_ms": [300_000, 300_000], "running": 0, "control": "5+3"}


def test_format_clock() -> None:
    names = ("Black", "White")
    assert format_clock(SNAPSHOT, names, 0) == "Clock: Black 5:00 · White 5:00 (running: Black)"
    assert format_clock(SNAPSHOT, names, 27.5) == "Clock: Black 4:32 · White 5:00 (running: Black)"
    running_white = {"remaining_ms": [272_400, 300_000], "running": 1, "control": "5+3"}
    assert format_clock(running_white, names, 61) == "Clock: Black 4:32 · White 3:59 (running: White)"
    stopped = {"remaining_ms": [272_400, 65_000], "running": None, "control": "5+3"}
    assert format_clock(stopped, names, 1000) == "Clock: Black 4:32 · White 1:05"


def test_format_clock_short_and_long_times() -> None:
    names = ("White", "Black")
    assert format_clock({"remaining_ms": [9_960, 10_000], "running": 0}, names, 0) == "Clock: White 0:09.9 · Black 0:10 (running: White)"
    assert format_clock({"remaining_ms": [3_000, 1], "running": 0}, names, 2.75) == "Clock: White 0:00.2 · Black 0:00.0 (running: White)"
    assert format_clock({"remaining_ms": [3_000, 0], "running": 0}, names, 99) == "Clock: White 0:00.0 · Black 0:00.0 (running: White)"
    assert format_clock({"remaining_ms": [5_400_000, 3_599_999], "running": None}, names, 0) == "Clock: White 1:30:00 · Black 59:59"
    assert format_clock(SNAPSHOT, names, -5) == "Clock: White 5:00 · Black 5:00 (running: White)"  # no time travel


async def test_the_clock_counts_down_locally_between_updates(connect: Connect) -> None:
    ann, _ = await _two_at_a_table(connect)
    at = ann.term.at
    assert at is not None and at.clock is None
    assert "Clock" not in await ann.run("board")
    assert ann.term.status_line() == "Table 1 · othello"
    ann.time = 100.0
    ann.feed(m.TableUpdated(table=msgspec.structs.replace(at.info, time_control="5+3", clock=SNAPSHOT)))
    board = await ann.run("board")
    assert "Clock: Black 5:00 · White 5:00 (running: Black)\nTurn 1" in board
    ann.time = 103.5
    assert ann.term.status_line() == "Table 1 · othello  |  Clock: Black 4:56 · White 5:00 (running: Black)"
    # a move brings a fresh snapshot: White's time runs from its arrival
    state = games.get("othello").new_state({"size": 6})
    after = state.play(state.legal_moves()[0])
    moved = ann.feed(m.Moved(table=1, seat=0, move=after.last_move, ply=1, view=after.view(0), clock={"remaining_ms": [299_500, 300_000], "running": 1, "control": "5+3"}))
    assert "Clock: Black 4:59 · White 5:00 (running: White)" in moved
    ann.time = 113.5
    assert "Black 4:59 · White 4:50 (running: White)" in ann.term.status_line()
    # the game ends: the clock stops where it was
    ann.feed(m.GameOver(table=1, outcome={"winner": 0, "reason": "resignation"}))
    ann.time = 500.0
    assert ann.term.status_line().endswith("Clock: Black 4:59 · White 4:50")


async def test_new_with_a_time_control(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    real = shell.term.client.create_table
    calls: list[dict[str, Any]] = []

    async def create_table(game: str, options: dict[str, Any], **kwargs: Any) -> m.TableJoined:
        calls.append(dict(kwargs, game=game, options=options))
        kwargs["time_control"] = None  # the server under test may not have clocks yet
        return await real(game, options, **kwargs)

    shell.term.client.create_table = create_table  # type: ignore[method-assign]
    assert "Created table 1" in await shell.run("new othello size=6 tc=5+3 seed=x")
    assert calls == [{"game": "othello", "options": {"size": 6}, "seed": "x", "time_control": "5+3",
                      "seat": 0, "computer": {}, "hints": False, "rated": False}]  # fmt: skip
    await shell.run("new othello size=6")
    assert calls[-1]["time_control"] is None


async def test_status_line_never_raises(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    assert shell.term.status_line() == ""
    await shell.run("new othello size=6")
    shell.term.at.clock = {"remaining_ms": "garbage", "running": 0}  # type: ignore[union-attr]
    assert "unreadable" in shell.term.status_line()
    assert "Clock: (unreadable" in await shell.run("board")
    shell.feed(m.GameOver(table=1, outcome={"winner": 0, "reason": "resignation"}))  # does not raise either


def test_prompt_input_takes_a_live_toolbar() -> None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        toolbar = lambda: "Clock: Black 5:00 · White 5:00"  # noqa: E731
        prompt = PromptInput(toolbar=toolbar)
        assert prompt._session.bottom_toolbar is toolbar
        assert prompt._session.refresh_interval == 0.5
        assert PromptInput()._session.bottom_toolbar is None


# --- archive and replay -----------------------------------------------------------------------


def _hexapawn_record(players: tuple[str | None, str | None] = ("ann", "bob")) -> tuple[GameRecord, list[games.State]]:
    lines = [line for line in (RECORDS / "hexapawn.txt").read_text().splitlines() if line and not line.startswith("#")]
    moves = " ".join(lines).split()
    state = games.get("hexapawn").new_state({"size": 4})
    recorded = []
    for ply, move in enumerate(moves, start=1):
        recorded.append(RecordedMove(ply, state.to_move, move))  # type: ignore[arg-type]
        state = state.play(move)
    assert state.outcome is not None
    record = GameRecord("hexapawn", {"size": 4}, players=players, result=state.outcome.to_dict(), moves=tuple(recorded))
    return record, replay(record)


async def test_replay_a_record_file(connect: Connect, tmp_path: Path) -> None:
    record, states = _hexapawn_record(players=("ann", HOSTILE))
    path = tmp_path / "game.txt"
    path.write_text(format_record(record))
    last = len(record.moves)
    shell = await _shell(connect, "ann")

    out = await shell.run(f"replay {path}")
    assert out.startswith(f"Replay of {path} · hexapawn · White: ann  vs  Black: ␛[2J")
    assert render(states[0].view(None), None) in out
    assert out.endswith(f"Replay of {path}: ply 0/{last} — forward [N], back [N], first, last, goto N, stop")
    assert _clean(out)

    def at_ply(out: str, ply: int) -> None:
        assert f": ply {ply}/{last} —" in out
        assert render(states[ply].view(None), None) in out

    out = await shell.run("forward")
    at_ply(out, 1)
    assert f"Ply 1: White played {record.moves[0].move}" in out
    at_ply(await shell.run("f 3"), 4)
    at_ply(await shell.run("back"), 3)
    at_ply(await shell.run("b 2"), 1)
    at_ply(await shell.run("goto 7"), 7)
    at_ply(await shell.run("board"), 7)
    out = await shell.run("last")
    at_ply(out, last)
    assert "Recorded result: White wins" in out
    assert (await shell.run("forward")).startswith("Already at the end")
    at_ply(await shell.run("back 100"), 0)
    at_ply(await shell.run("goto 5"), 5)
    at_ply(await shell.run("first"), 0)
    assert await shell.run("goto 99") == f"usage: goto N, with N from 0 to {last}"
    assert "type stop" in await shell.run(record.moves[0].move)  # a move while replaying
    assert shell.term.status_line() == f"Replay of {path}: ply 0/{last}"
    assert (await shell.run("stop")).startswith(f"Stopped the replay of {path}.")
    assert shell.term.replaying is None
    assert (await shell.run("forward")).startswith("You are not replaying a game")
    assert await shell.run("f") == "unknown command 'f'; type help"  # f is a command only while replaying


async def test_replay_keeps_the_table(connect: Connect, tmp_path: Path) -> None:
    record, _ = _hexapawn_record()
    path = tmp_path / "game.txt"
    path.write_text(format_record(record))
    ann, _ = await _two_at_a_table(connect)
    await ann.run(f"replay {path}")
    assert ann.term.at is not None and ann.term.at.info.id == 1
    assert "Table 1 · othello" in ann.term.status_line() and "Replay of" in ann.term.status_line()
    assert (await ann.run("stop")).endswith("You are at table 1; type board to see it.")
    assert "Table 1 · othello" in await ann.run("board")


async def test_replay_a_file_named_like_a_number(connect: Connect, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record, _ = _hexapawn_record()
    (tmp_path / "12").write_text(format_record(record))
    monkeypatch.chdir(tmp_path)
    shell = await _shell(connect, "ann")
    assert "Replay of 12: ply 0/" in await shell.run("replay 12")


async def test_replay_refuses_bad_files(connect: Connect, tmp_path: Path) -> None:
    shell = await _shell(connect, "ann")
    assert (await shell.run(f"replay {tmp_path / 'missing.txt'}")).startswith("cannot read the record file")
    bad = tmp_path / "bad.txt"
    bad.write_text("Game: hexapawn\nOptions: {\"size\":4}\n\n1. d1-d2\n2. zz-zz\n")
    out = await shell.run(f"replay {bad}")
    assert out.startswith(f"cannot replay {bad}:") and "ply 2" in out
    bad.write_text("Game: hexapawn\nBogus: 1\n")
    assert "line 2" in await shell.run(f"replay {bad}")
    assert shell.term.replaying is None
    assert (await shell.run("replay")).startswith("usage: replay ID")
    assert (await shell.run("export 3")).startswith("usage: export ID FILE")


def test_describe_archived() -> None:
    entry = {
        "id": 12,
        "game": "othello",
        "options": {"size": 8, "max_plies": None},
        "players": ["ann", HOSTILE],
        "result": {"winner": 1, "reason": "more discs", "score": [22, 42]},
        "plies": 60,
        "finished": "2024-05-01T12:09:41.250Z",
    }
    line = describe_archived(entry)
    assert line.startswith("#12 othello — Black ann vs White ␛[2J")  # size 8 is the default
    assert line.endswith(" — White wins — more discs (22–42) — 60 plies — finished 2024-05-01 12:09")
    assert _clean(line)
    draw = describe_archived(dict(entry, result={"winner": None, "reason": "agreement"}, players=["ann", None]))
    assert "Black ann vs White ? — draw — agreement —" in draw


def test_help_lists_the_new_commands() -> None:
    for word in ("tc=", "draw", "takeback", "rematch", "tables", "switch N", "leave [N|all]", "history", "accept", "decline", "say TEXT", "shout TEXT", "archive", "replay ID", "replay FILE", "export ID FILE", "forward", "back", "first", "last", "goto N", "stop"):
        assert word in HELP


# --- rules ---------------------------------------------------------------------------

DOCS_RULES = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"


def _doc_section(heading: str) -> str:
    """The ``## heading`` section of docs/RULES.md, read here without the client's code."""
    text = DOCS_RULES.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n") + 1
    end = text.find("\n## ", start)
    return text[start:end if end >= 0 else len(text)].rstrip()


async def test_rules_prints_one_games_section(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    out = await shell.run("rules tactego")
    assert out == _doc_section("Tactego")
    assert "### Pieces files" in out and "b2-c3" in out
    assert "## Hexapawn" not in out and "## Othello" not in out


async def test_rules_finds_a_game_by_its_title(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    assert await shell.run("rules Nine Men's Morris") == _doc_section("Nine Men's Morris")
    assert await shell.run("RULES ming mang") == _doc_section("Ming Mang")


async def test_rules_of_an_unknown_game_is_a_clear_error(connect: Connect) -> None:
    shell = await _shell(connect, "ann")
    out = await shell.run("rules chess")
    assert out == "no rules for a game called 'chess'; games: othello, nimble, mingmang, morris, tactego, hexapawn"
    usage = await shell.run("rules")
    assert usage.startswith("usage: rules GAME") and "tactego" in usage


async def test_rules_alone_shows_the_game_at_the_table_or_in_the_replay(connect: Connect, tmp_path: Path) -> None:
    shell = await _shell(connect, "ann")
    await shell.run("new othello size=6")
    assert await shell.run("rules") == _doc_section("Othello")
    record, _ = _hexapawn_record()
    path = tmp_path / "game.txt"
    path.write_text(format_record(record))
    await shell.run(f"replay {path}")
    assert await shell.run("rules") == _doc_section("Hexapawn")
    await shell.run("stop")
    assert await shell.run("rules") == _doc_section("Othello")


def test_help_lists_rules_and_the_rules_document() -> None:
    assert "rules [GAME]" in HELP
    assert "docs/RULES.md" in HELP


async def test_games_never_calls_the_original_rules_a_seed(connect: Connect) -> None:
    """The option texts come from the server; "seed" there means only a random seed."""
    shell = await _shell(connect, "ann")
    out = await shell.run("games")
    assert "superko=bool" in out and "rows=int" in out
    assert "seed's" not in out
    assert "with a random setup (nimble, tactego): seed=TEXT" in out


# --- the lobby subscription ---------------------------------------------------------------------


async def test_the_terminal_follows_the_lobby_only_while_at_no_table(connect: Connect) -> None:
    ann = Shell(await connect("ann", watch_lobby=False))
    bob = await connect("bob", watch_lobby=False)
    await ann.term.follow_lobby()
    await bob.create_table("nimble")
    assert ann.feed(await ann.next_push(m.TableUpdated)).startswith("lobby: #1 nimble")
    await ann.run("new othello size=6")
    assert not ann.term.client.watching_lobby, "at a table: no lobby traffic"
    await bob.say("in the lobby")
    await ann.run("say at my table")
    chat = await ann.next_push(m.Chat)
    assert chat.table == 2, "the lobby line did not reach the player at a table"
    await ann.run("leave")
    assert ann.term.client.watching_lobby
    await bob.say("back?")
    assert (await ann.next_push(m.Chat)).text == "back?"


# --- the end of a game ----------------------------------------------------------------------

HEXAPAWN_GAME = "d1-d2 d4-d3 a1-a2 b4-b3 a2-b3 c4-b3 c1-c2 a4-a3 c2-b3 a3-a2 b3-b4".split()
"""A complete 4x4 Hexapawn game (tests/e2e/records/hexapawn.txt): White, seat 0, wins at ply 11."""


async def _following(shell: Shell) -> asyncio.Task[None]:
    """Print the shell's pushes as they come, as ``parlour play`` does."""
    return asyncio.create_task(shell.term.follow_events())


async def test_a_finished_game_prints_its_result_once_and_no_next_turn(connect: Connect) -> None:
    ann, bob = await _shell(connect, "ann"), await _shell(connect, "bob")
    await ann.run("new hexapawn size=4")
    await bob.run("join 1")
    followers = [await _following(ann), await _following(bob)]
    try:
        for ply, move in enumerate(HEXAPAWN_GAME):
            shell = (ann, bob)[ply % 2]
            await asyncio.wait_for(shell.run("wait turn"), 5)
            await shell.run(move)
        for shell in (ann, bob):
            await asyncio.wait_for(shell.run("wait end"), 5)
            text = "\n".join(shell.out)
            assert text.count("Result: ") == 1, text
            assert "Turn 12" not in text, text
            board = await shell.run("board")
            assert board.count("Result: ") == 1 and "Turn " not in board, board
    finally:
        for task in followers:
            task.cancel()


async def test_the_shutdown_notice_says_shutting_down_once(connect: Connect) -> None:
    ann = await _shell(connect, "ann")
    assert ann.feed(m.Shutdown(message="the server is shutting down")) == "The server is shutting down."
    custom = ann.feed(m.Shutdown(message="back at 9 UTC\x1b[2J"))
    assert custom.startswith("The server is shutting down: back at 9 UTC") and _clean(custom), custom
    assert ann.feed(m.Shutdown(message="")) == "The server is shutting down."


async def test_the_lobby_shows_a_seed_only_where_the_setup_is_drawn_from_it(connect: Connect) -> None:
    ann = await _shell(connect, "ann")
    for command in ("new othello size=6", "new hexapawn", "new nimble board=1,2", "new nimble seed=luck", "new tactego hidden=false seed=luck"):
        assert "Created table" in await ann.run(command)
    lines = {int(line.split()[0].lstrip("#")): line for line in (await ann.run("list")).splitlines()}
    assert "seed=" not in lines[1] and "seed=" not in lines[2] and "seed=" not in lines[3], lines
    assert "seed=luck" in lines[4] and "seed=luck" in lines[5], lines


async def test_options_read_as_words_in_list_tables_archive_and_challenges(configured_server: Any, tmp_path: Path) -> None:
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite3"))  # the archive needs a database
    clients = [await Client.connect("127.0.0.1", server.port, name=name, watch_lobby=True) for name in ("ann", "bob")]
    ann, bob = Shell(clients[0]), Shell(clients[1])
    assert "Created table 1" in await ann.run("new morris flying=yes mill_protection=on")
    words = "(Flying: yes, Mill protection: yes)"
    listing = await bob.run("list")
    assert listing.startswith(f"#1 morris {words} — ann vs (free)"), listing
    assert f"t1 morris {words} — ann vs (free)" in await ann.run("tables")
    await bob.run("join 1")
    await ann.run("leave")  # before the first move: the game is aborted, and archived
    archive = await bob.run("archive")
    assert f"#1 morris {words} — " in archive, archive
    challenge = await bob.run("challenge ann morris flying=yes")
    assert "morris (Flying: yes), no clock, casual" in challenge, challenge
    for text in (listing, archive, challenge):
        assert "=True" not in text and "flying=" not in text and "mill_protection" not in text, text
    for client in clients:
        await client.close()
