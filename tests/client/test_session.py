"""The client-side session model: pushes applied as state, actions by explicit table, lichess takebacks.

``apply`` is fed real message objects built from the real game engines; the
actions run against a real in-process server (the ``connect`` fixture).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

import pytest

import games
from client import Client
from client.session import (
    CHAT_LINES,
    Change,
    ClientSession,
    SessionError,
    TableState,
    describe_takeback,
    takeback_plan,
)
from protocol import messages as m

Connect = Callable[..., Awaitable[Client]]


def _info(table: int = 1, status: str = "playing", clock: dict[str, Any] | None = None) -> m.TableInfo:
    return m.TableInfo(
        id=table, game="othello", options={"size": 8}, seats=["ann", "bob"], status=status, spectators=0, ply=0, clock=clock
    )


def _state(*moves: str) -> games.State:
    state = games.get("othello").new_state({"size": 8})
    for move in moves:
        state = state.play(move)
    return state


class _Offline:
    """Stands in for the connection in pure ``apply`` tests: the model reads only ``welcome`` from it."""

    welcome = None


def _session(*, now: list[float] | None = None) -> tuple[ClientSession, list[Change]]:
    clock = now if now is not None else [100.0]
    session = ClientSession(_Offline(), now=lambda: clock[0])  # type: ignore[arg-type]
    seen: list[Change] = []
    session.subscribe(seen.append)
    return session, seen


def _resume(session: ClientSession, seat: int | None, *moves: str, table: int = 1, clock: dict[str, Any] | None = None) -> TableState:
    state = _state(*moves)
    session.apply(m.Resumed(table=_info(table, clock=clock), seat=seat, view=state.view(seat), moves=list(moves)))
    return session.tables[table]


def _moved(seat: int, *moves: str, table: int = 1, viewer: int | None = 0, clock: dict[str, Any] | None = None) -> m.Moved:
    state = _state(*moves)
    return m.Moved(table=table, seat=seat, move=moves[-1], ply=state.ply, view=state.view(viewer), clock=clock)


def test_resumed_and_moved_build_the_move_list_turn_and_last_move() -> None:
    session, seen = _session()
    table = _resume(session, 0)
    assert session.focus == 1 and table.my_turn and table.legal_moves == _state().legal_moves()
    session.apply(_moved(0, "d3"))
    assert table.moves == ["d3"] and table.last_move == "d3" and table.to_move == 1 and not table.my_turn
    changes = session.apply(_moved(1, "d3", "c3"))
    assert changes == [Change("moved", 1, changes[0].event)]
    assert table.moves == ["d3", "c3"] and table.my_turn and table.ply == 2
    assert [change.kind for change in seen] == ["table_added", "focus", "moved", "moved"]


def test_pushes_of_other_tables_touch_only_the_lobby() -> None:
    session, seen = _session()
    table = _resume(session, 0)
    assert session.apply(_moved(0, "d3", table=7)) == []
    session.apply(m.TableUpdated(table=_info(7)))
    assert table.moves == [] and set(session.lobby) == {7}
    session.apply(m.TableClosed(table=7))
    assert session.lobby == {}


def test_offers_lapse_and_are_answered_by_kind() -> None:
    session, _ = _session()
    table = _resume(session, 0, "d3")
    session.apply(m.Offered(table=1, seat=1, kind="draw"))
    session.apply(m.Offered(table=1, seat=1, kind="takeback", plies=1))
    assert table.opponent_offer().kind == "takeback" and table.opponent_offer("draw").seat == 1
    session.apply(m.Answered(table=1, kind="takeback", accepted=False))
    assert list(table.offers) == ["draw"]
    session.apply(_moved(1, "d3", "c3"))  # the draw's maker moved: it lapses
    assert table.offers == {}


def test_game_over_freezes_the_clock_and_drops_draw_offers() -> None:
    now = [100.0]
    session, _ = _session(now=now)
    table = _resume(session, 0, clock={"remaining_ms": [60_000, 60_000], "running": 0, "control": "1+0"})
    now[0] = 102.5
    assert table.remaining_ms(now[0]) == [57_500, 60_000]
    session.apply(m.Offered(table=1, seat=1, kind="draw"))
    session.apply(m.GameOver(table=1, outcome={"winner": 1, "reason": "flag fall", "score": None}))
    now[0] = 110.0
    assert table.remaining_ms(now[0]) == [57_500, 60_000] and table.status == "over" and table.legal_moves is None
    assert table.offers == {} and not table.my_turn


def test_chat_is_bounded_and_away_seats_have_a_deadline() -> None:
    session, _ = _session()
    table = _resume(session, 0)
    for number in range(CHAT_LINES + 5):
        session.apply(m.Chat(name="bob", text=f"line {number}", table=1))
    session.apply(m.Chat(name="cy", text="hello lobby"))
    assert len(table.chat) == CHAT_LINES and table.chat[-1].text == f"line {CHAT_LINES + 4}"
    assert [line.text for line in session.lobby_chat] == ["hello lobby"]
    session.apply(m.PlayerAway(table=1, seat=1, name="bob", forfeit_in_s=30.0))
    assert table.away == {1: 130.0}
    session.apply(m.PlayerBack(table=1, seat=1, name="bob"))
    assert table.away == {}


def test_forced_passes_are_marked_and_not_counted_by_takebacks() -> None:
    moves, forced, movers = ["d3", "c3", "pass", "e6"], [False, False, True, False], [0, 1, 0, 1]
    assert takeback_plan(moves, forced, movers, 1).plies == 1
    plan = takeback_plan(moves, forced, movers, 0)  # our move d3, their reply c3, our forced pass, their e6
    assert plan.plies == 3 and [move for _, move, _ in plan.taken] == ["d3", "c3", "pass", "e6"]
    assert plan.describe(0) == "takes back your move d3, their reply c3 and their reply e6"


def test_takeback_on_own_turn_is_two_plies_and_on_their_turn_one() -> None:
    session, _ = _session()
    table = _resume(session, 0, "d3", "c3")  # our turn
    plan = table.takeback_plan()
    assert plan.plies == 2 and plan.describe(0) == "takes back your move d3 and their reply c3"
    assert plan.describe(1) == "takes back their move d3 and your reply c3"
    session.apply(_moved(0, "d3", "c3", "c4"))  # their turn now
    plan = table.takeback_plan()
    assert plan.plies == 1 and plan.describe(0) == "takes back your move c4"
    assert table.takeback_of(2).describe(None, ("Black", "White")) == "takes back White's move c3 and Black's reply c4"


def test_takeback_with_no_own_move_is_refused_in_the_model() -> None:
    session, _ = _session()
    table = _resume(session, 1, "d3")
    with pytest.raises(SessionError, match="no move of your own"):
        table.takeback_plan()
    watcher = _resume(session, None, "d3", table=2)
    with pytest.raises(SessionError, match="watching table 2"):
        watcher.takeback_plan()
    assert describe_takeback([], 0) == "takes back nothing"


def test_taken_back_restores_the_position_and_the_turn() -> None:
    session, seen = _session()
    table = _resume(session, 0, "d3", "c3")
    table.moved_at_ply = 2
    session.apply(m.Offered(table=1, seat=0, kind="takeback", plies=2))
    session.apply(m.TakenBack(table=1, plies=2, view=_state().view(0), moves=[]))
    assert table.moves == [] and table.offers == {} and table.my_turn and seen[-1].kind == "taken_back"


def test_rematch_adds_the_new_table_and_moves_the_focus() -> None:
    session, _ = _session()
    _resume(session, 0, "d3")
    session.apply(m.RematchStarted(previous=1, table=_info(2), seat=1, view=_state().view(1)))
    assert session.focus == 2 and session.tables[2].seat == 1 and set(session.tables) == {1, 2}


async def test_actions_name_their_table_and_join_of_a_seated_table_only_focuses(connect: Connect) -> None:
    ann = ClientSession(await connect("ann"))
    bob_client = await connect("bob")
    runner = asyncio.create_task(ann.run())
    first = await ann.create("othello", {"size": 8})
    await bob_client.join_table(first.id)
    second = await ann.create("hexapawn")
    assert ann.focus == second.id and set(ann.tables) == {first.id, second.id}
    assert (await ann.join(first.id)) is first and ann.focus == first.id  # no table_full: just the focus
    await asyncio.wait_for(_until(lambda: first.running), 5)
    await ann.move(first.id, "d3")  # to the named table, whatever is focused
    ann.set_focus(second.id)
    await asyncio.wait_for(_until(lambda: first.moves == ["d3"]), 5)
    assert second.moves == [] and not first.my_turn
    with pytest.raises(SessionError, match="not at table 99"):
        await ann.move(99, "d3")
    await ann.leave(second.id)
    assert set(ann.tables) == {first.id} and ann.focus == first.id
    runner.cancel()


async def test_takeback_asks_the_server_for_the_lichess_plies(connect: Connect) -> None:
    ann, bob = ClientSession(await connect("ann")), ClientSession(await connect("bob"))
    runners = [asyncio.create_task(session.run()) for session in (ann, bob)]
    table = await ann.create("othello", {"size": 8})
    theirs = await bob.join(table.id)
    await asyncio.wait_for(_until(lambda: table.my_turn), 5)
    await ann.move(table.id, "d3")
    await asyncio.wait_for(_until(lambda: theirs.my_turn), 5)
    await bob.move(table.id, "c3")
    await asyncio.wait_for(_until(lambda: table.my_turn), 5)
    plan = await ann.takeback(table.id)
    assert plan.plies == 2
    await asyncio.wait_for(_until(lambda: theirs.opponent_offer("takeback") is not None), 5)
    offer = theirs.opponent_offer("takeback")
    assert theirs.takeback_of(offer.plies).describe(theirs.seat) == "takes back their move d3 and your reply c3"
    await bob.answer(table.id, "takeback", True)
    await asyncio.wait_for(_until(lambda: table.moves == [] and theirs.moves == []), 5)
    assert table.my_turn and table.to_move == 0
    for runner in runners:
        runner.cancel()


async def test_watch_of_a_table_we_sit_at_only_focuses_and_leave_moves_focus(connect: Connect) -> None:
    ann = ClientSession(await connect("ann"))
    table = await ann.create("othello", {"size": 8})
    other = await ann.create("othello", {"size": 8}, seat=None)
    assert other.seat is None and ann.focus == other.id
    assert (await ann.watch(table.id)) is table and table.seat == 0 and ann.focus == table.id
    await ann.leave(table.id)
    assert ann.focus == other.id


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_run_reports_every_change_until_the_connection_closes_and_observers_can_leave(connect: Connect) -> None:
    client = await connect("ann")
    ann = ClientSession(client)
    seen: list[Change] = []
    left: list[Change] = []
    ann.subscribe(seen.append)
    ann.subscribe(left.append)()  # subscribed and at once unsubscribed
    runner = asyncio.create_task(ann.run())
    table = await ann.create("othello", {"size": 8})
    await (await connect("bob")).join_table(table.id)
    await asyncio.wait_for(_until(lambda: table.running), 5)
    await client.close()
    await asyncio.wait_for(runner, 5)
    kinds = [change.kind for change in seen]
    assert kinds[:2] == ["table_added", "focus"] and "game_started" in kinds and kinds[-1] == "disconnected"
    assert left == []


async def test_reattach_watches_again_after_a_reconnect(server: Any, connect: Connect) -> None:
    client = await connect("ann")
    ann = ClientSession(client)
    carl = ClientSession(await connect("carl"))
    watched = await carl.create("othello", {"size": 8})
    await ann.create("hexapawn")  # a seat keeps the session for a resume
    await ann.watch(watched.id)
    token = client.token
    await client.close()
    again = await Client.connect("127.0.0.1", server.port, name="ann", token=token)
    try:
        assert await ann.reattach(again) == []
        assert ann.client is again and ann.tables[watched.id].seat is None and ann.focus == watched.id
        await carl.say("still there?", table=watched.id)
        said = await again.next_event(m.Chat, timeout_s=5)
        assert said.text == "still there?"
    finally:
        await again.close()


def _challenge(challenge: int, challenger: str = "bob") -> m.ChallengeReceived:
    return m.ChallengeReceived(challenge=m.ChallengeInfo(id=challenge, challenger=challenger, challenged="ann", game="othello", options={}))


def test_challenges_to_us_are_kept_until_they_end_and_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    import client.session as model

    monkeypatch.setattr(model, "CHALLENGES_MOST", 2)
    session, seen = _session()
    for challenge in (1, 2, 3):
        session.apply(_challenge(challenge))
    assert list(session.challenges) == [1, 2]  # the third waits unseen: the model holds a bounded number
    assert [change.kind for change in seen] == ["challenge", "challenge"]
    assert session.apply(m.ChallengeEnded(challenge=1, reason="withdrawn"))[0].kind == "challenge"
    assert list(session.challenges) == [2]
    assert session.apply(m.ChallengeEnded(challenge=9, reason="expired")) == []  # not ours: nothing changes


def test_seeks_follow_the_lobby_pushes_and_tells_are_kept_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    import client.session as model

    monkeypatch.setattr(model, "SEEKS_MOST", 2)
    session, seen = _session()
    for seek in (1, 2, 3):
        session.apply(m.SeekAdded(seek=m.SeekInfo(id=seek, name="bob", game="nimble", options={})))
    assert list(session.seeks) == [1, 2]
    session.apply(m.SeekRemoved(seek=1))
    assert list(session.seeks) == [2] and session.apply(m.SeekRemoved(seek=1)) == []
    session.apply(m.Told(name="bob", text="hi"))
    session.apply(m.Told(name="cat", text="yo"))
    assert [(line.name, line.text) for line in session.tells] == [("bob", "hi"), ("cat", "yo")]
    assert [change.kind for change in seen][-2:] == ["told", "told"]


def test_a_rated_game_over_keeps_the_rating_changes() -> None:
    session, _ = _session()
    state = _resume(session, 0, "d3")
    changes = [m.RatingChange(before=1500, after=1662, deviation=290), m.RatingChange(before=1500, after=1338, deviation=290)]
    session.apply(m.GameOver(table=1, outcome={"winner": 0, "reason": "resignation"}, ratings=changes))
    assert state.rating_changes == changes


async def test_answer_seek_posts_a_matching_seek_and_the_server_pairs_us(connect: Connect) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    session = ClientSession(ann)
    posted = await bob.seek("nimble", {"board": [1, 2, 3]}, time_control="2+1")
    await session.refresh_seeks()
    assert list(session.seeks) == [posted.seek.id]
    with pytest.raises(SessionError):
        await session.answer_seek(posted.seek.id + 1)
    assert (await session.answer_seek(posted.seek.id)).paired
    paired = await ann.next_event(m.Paired)
    session.apply(paired)
    assert session.focus == paired.table.id and session.tables[paired.table.id].running


def test_a_game_over_with_the_whole_setup_replaces_the_hidden_board() -> None:
    session, _seen = _session()
    tactego = games.get("tactego").new_state({"rows": 6, "cols": 4, "pieces": "3 2\n2 2\n1 2\nF 1\n"}, "setup")
    info = m.TableInfo(id=1, game="tactego", options={}, seats=["ann", "bob"], status="playing", spectators=0, ply=0)
    session.apply(m.Resumed(table=info, seat=None, view=tactego.view(None), moves=[]))
    assert any(cell[1] == "?" for row in session.tables[1].view["board"] for cell in row if cell)
    outcome = {"winner": 0, "reason": "Blue resigned", "score": None}
    session.apply(m.GameOver(table=1, outcome=outcome, view=dict(tactego.revealed().view(None), outcome=outcome, to_move=None)))
    table = session.tables[1]
    assert table.view["board"] == tactego.revealed().view(None)["board"]
    assert table.outcome == outcome and table.to_move is None and table.status == "over"
