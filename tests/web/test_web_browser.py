"""The web face in a real headless Chromium, against a real ``parlour serve --http`` process.

Real clients (the client library over TCP) play; the browser's page must
follow each move within a second, count the clocks down, show the result,
move to a rematch, keep every hidden Tactego rank out of its DOM and its
WebSocket frames while the game runs and show them all after, and step
through the archive's replay. The lobby and table pages are saved as
``docs/screenshots/web-*.png`` (shown in the README).
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from client.connection import Client
from protocol import messages as m
from tests.e2e.harness import Process, start_server

from .browser import Loop, wait_for, websocket_frames

pytestmark = pytest.mark.slow

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
FOLLOW_S = 1.0
"""How soon the page must show a move the server accepted."""


def serve_with_web(tmp_path: Path) -> tuple[Process, int, str]:
    """``parlour serve --http 127.0.0.1:0`` with a database; return it, its game port and the web address printed."""
    server, port = start_server("--http", "127.0.0.1:0", "--db", str(tmp_path / "parlour.db"))
    web = server.expect(r"^\s+(http://127\.0\.0\.1:\d+)/$")[1]
    return server, port, web


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def piece_at(driver: Any, square: str) -> str | None:
    found = css(driver, f'g[data-square="{square}"] [data-piece]')
    return found[0].get_attribute("data-piece") if found else None


def follows(driver: Any, check: Any, what: str) -> float:
    """Seconds until ``check()`` holds on the page (at most :data:`FOLLOW_S`)."""
    start = time.monotonic()
    wait_for(check, FOLLOW_S, what)
    return time.monotonic() - start


def test_a_table_page_follows_an_othello_game_live_and_its_archive_replays_it(tmp_path: Path, browser: Any, loop: Loop) -> None:
    server, port, web = serve_with_web(tmp_path)
    try:
        ann: Client = loop.run(Client.connect("127.0.0.1", port, name="ann"))
        bob: Client = loop.run(Client.connect("127.0.0.1", port, name="bob"))
        table = loop.run(ann.create_table("othello", time_control="5+0")).table.id
        loop.run(bob.join_table(table))

        browser.get(web + "/")
        wait_for(lambda: css(browser, f'tr[data-table="{table}"]'), what="the lobby's table")
        other = loop.run(bob.create_table("hexapawn", seat=0)).table.id  # the lobby is live: a new table appears
        row = wait_for(lambda: css(browser, f'tr[data-table="{other}"]'), what="a table created after the page loaded")
        assert "Hexapawn" in row[0].text and "bob" in row[0].text
        browser.save_screenshot(str(SCREENSHOTS / "web-lobby.png"))

        browser.get(f"{web}/table/{table}")
        wait_for(lambda: css(browser, 'svg[data-ply="0"]'), what="the board")
        assert "ann" in css(browser, "#name-0")[0].text and "bob" in css(browser, "#name-1")[0].text
        assert piece_at(browser, "d4") == "white" and piece_at(browser, "e4") == "black"  # a1 is top-left

        loop.run(ann.move(table, "d3"))
        seen = follows(browser, lambda: piece_at(browser, "d3") == "black" and piece_at(browser, "d4") == "black", "d3")
        assert css(browser, 'g[data-square="d3"].last'), "the last move is marked"
        loop.run(bob.move(table, "c3"))
        seen = max(seen, follows(browser, lambda: piece_at(browser, "c3") == "white", "c3"))
        assert [span.text for span in css(browser, "#moves span")] == ["1. d3", "2. c3"]
        print(f"the page followed each move within {seen * 1000:.0f} ms")

        # Both sides have moved: Black's clock runs, and the page counts it down between messages.
        wait_for(lambda: "running" in css(browser, "#clock-0")[0].get_attribute("class"), what="Black's running clock")
        before = int(css(browser, "#clock-0")[0].get_attribute("data-ms"))
        time.sleep(1.2)
        after = int(css(browser, "#clock-0")[0].get_attribute("data-ms"))
        assert 900 <= before - after <= 2000, (before, after)
        assert css(browser, "#clock-1")[0].get_attribute("data-ms") == "300000"

        loop.run(ann.say("good luck, bob", table=table))
        wait_for(lambda: "good luck, bob" in css(browser, "#chat")[0].text, FOLLOW_S, "the table chat")
        browser.save_screenshot(str(SCREENSHOTS / "web-table.png"))

        loop.run(ann.resign(table))
        follows(browser, lambda: "White wins: Black resigned" in css(browser, "#result")[0].text, "the result")
        frozen = css(browser, "#clock-0")[0].get_attribute("data-ms")
        time.sleep(0.5)
        assert css(browser, "#clock-0")[0].get_attribute("data-ms") == frozen, "the clocks stop at the end"

        loop.run(ann.offer(table, "rematch"))
        loop.run(bob.next_event(m.Offered))
        loop.run(bob.answer(table, "rematch", True))
        rematch = loop.run(bob.next_event(m.RematchStarted)).table.id
        wait_for(lambda: browser.current_url.endswith(f"/table/{rematch}"), 5, "the rematch's page")
        wait_for(lambda: css(browser, 'svg[data-ply="0"]'), what="the rematch's board")

        browser.get(f"{web}/archive")
        link = wait_for(lambda: css(browser, f'tr[data-game="{table}"] a[href="/archive/{table}"]'), what="the archive's game")
        link[0].click()
        wait_for(lambda: css(browser, 'svg[data-ply="0"]') and piece_at(browser, "d3") is None, what="the replay's start")
        css(browser, "#forward")[0].click()
        wait_for(lambda: css(browser, 'svg[data-ply="1"]') and piece_at(browser, "d3") == "black", what="ply 1")
        css(browser, "#forward")[0].click()
        wait_for(lambda: css(browser, 'svg[data-ply="2"]') and piece_at(browser, "c3") == "white", what="ply 2")
        css(browser, "#back")[0].click()
        wait_for(lambda: css(browser, 'svg[data-ply="1"]') and piece_at(browser, "c3") is None, what="back to ply 1")
        assert "White wins" in css(browser, "#result")[0].text
        href = css(browser, "#download")[0].get_attribute("href")
        with urllib.request.urlopen(href, timeout=5) as response:
            record = response.read().decode()
            assert response.headers["Content-Disposition"] == f'attachment; filename="parlour-{table}.txt"'
        assert "Game: othello" in record and "1. d3" in record and "2. c3" in record
        ggf_link = css(browser, "#download-ggf")[0]
        assert ggf_link.is_displayed()  # an Othello game also downloads as GGF
        with urllib.request.urlopen(ggf_link.get_attribute("href"), timeout=5) as response:
            ggf = response.read().decode()
        assert ggf.startswith("(;GM[Othello]") and "B[D3" in ggf and "W[C3" in ggf
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors  # no script error, no refused resource (the Content-Security-Policy)
        for client in (ann, bob):
            loop.run(client.close())
    finally:
        server.kill()


def ranks_shown(driver: Any) -> dict[str, str]:
    """Square -> ``"OWNER:RANK"`` of every Tactego piece on the page."""
    return {
        group.get_attribute("data-square"): group.find_element("css selector", "[data-piece]").get_attribute("data-piece")
        for group in css(driver, "g[data-square]")
        if group.find_elements("css selector", "[data-piece]")
    }


def hidden_ranks_in(frames: list[Any]) -> list[str]:
    """The ranks any received view shows of a piece that has not fought (empty: nothing hidden leaked)."""
    leaks = []
    for batch in frames:
        for message in batch:
            view = message.get("view")
            if not view or view.get("game") != "tactego" or view.get("outcome"):
                continue
            revealed = set(view["revealed"])
            for r, row in enumerate(view["board"]):
                for c, cell in enumerate(row):
                    square = "abcdefghijklmnopqrstuvwxyz"[c] + str(r + 1)
                    if cell is not None and cell[1] != "?" and square not in revealed:
                        leaks.append(f"{message['type']}: {square} {cell}")
    return leaks


def quiet_move(view: dict[str, Any]) -> str:
    """A legal move of ``view``'s seat to an empty square: no combat, so nothing is revealed and the game goes on."""
    for move in view["legal_moves"]:
        target = move.split("-")[1]
        if view["board"][int(target[1:]) - 1]["abcdefghijklmnopqrstuvwxyz".index(target[0])] is None:
            return move
    raise AssertionError(f"no quiet move in {view['legal_moves']}")


def test_a_tactego_page_shows_no_hidden_rank_while_the_game_runs_and_every_rank_after(tmp_path: Path, browser: Any, loop: Loop) -> None:
    server, port, web = serve_with_web(tmp_path)
    try:
        ann: Client = loop.run(Client.connect("127.0.0.1", port, name="ann"))
        bob: Client = loop.run(Client.connect("127.0.0.1", port, name="bob"))
        table = loop.run(ann.create_table("tactego", {"rows": 6, "cols": 6})).table.id
        views = {1: loop.run(bob.join_table(table)).view, 0: loop.run(ann.next_event(m.GameStarted)).view}
        browser.get(f"{web}/table/{table}")
        wait_for(lambda: css(browser, 'svg[data-ply="0"]'), what="the board")
        assert set(ranks_shown(browser).values()) == {"0:?", "1:?"}
        players = {0: ann, 1: bob}
        for ply in range(1, 7):
            seat = views[0]["to_move"]
            if seat is None:
                break
            move = quiet_move(views[seat])
            loop.run(players[seat].move(table, move))
            for each in (0, 1):
                views[each] = loop.run(players[each].next_event(m.Moved)).view
            follows(browser, lambda: css(browser, f'svg[data-ply="{ply}"]'), f"ply {ply}")
            assert views[0]["outcome"] is None
            shown = ranks_shown(browser)
            assert shown and all(value.endswith(":?") for value in shown.values()), shown
        assert "?" in browser.page_source
        frames = websocket_frames(browser)
        assert len(frames) >= 2 and hidden_ranks_in(frames) == []

        loop.run(ann.resign(table))
        final = loop.run(ann.next_event(m.GameOver)).view
        assert final is not None
        follows(browser, lambda: "Blue wins" in css(browser, "#result")[0].text, "the result")
        shown = wait_for(lambda: (ranks := ranks_shown(browser)) and all(not v.endswith(":?") for v in ranks.values()) and ranks, what="every rank")
        expected = {
            "abcdefghijklmnopqrstuvwxyz"[c] + str(r + 1): f"{cell[0]}:{cell[1]}"
            for r, row in enumerate(final["board"]) for c, cell in enumerate(row) if cell is not None
        }
        assert shown == expected
        browser.get(f"{web}/archive/{table}")  # the archive replays the finished game with its setup public
        start = wait_for(lambda: css(browser, 'svg[data-ply="0"]') and ranks_shown(browser), what="the replay's start")
        assert start and not [value for value in start.values() if value.endswith(":?")], start
        for client in (ann, bob):
            loop.run(client.close())
    finally:
        server.kill()


def test_every_game_is_drawn_with_its_notation_and_the_tv_moves_on_when_its_game_ends(tmp_path: Path, browser: Any, loop: Loop) -> None:
    server, port, web = serve_with_web(tmp_path)
    try:
        ann: Client = loop.run(Client.connect("127.0.0.1", port, name="ann"))
        bob: Client = loop.run(Client.connect("127.0.0.1", port, name="bob"))
        expected = {  # per game: squares that must be drawn, and how many squares or points in all
            "othello": (["a1", "h8", "d4"], 64),
            "nimble": (["1", "6"], 6),
            "mingmang": (["a1", "h8"], 64),
            "morris": (["a7", "d2", "g1", "a4"], 24),
            "tactego": (["a1", "h8"], 64),
            "hexapawn": (["a1", "c3"], 9),
        }
        tables = {}
        for game in expected:
            tables[game] = loop.run(ann.create_table(game)).table.id
            loop.run(bob.join_table(tables[game]))
        for game, (names, count) in expected.items():
            browser.get(f"{web}/table/{tables[game]}")
            wait_for(lambda: css(browser, 'svg[data-ply="0"]'), what=f"the {game} board")
            squares = [group.get_attribute("data-square") for group in css(browser, "g[data-square]")]
            assert len(squares) == count and set(names) <= set(squares), (game, squares)
        browser.get(f"{web}/table/{tables['hexapawn']}")
        wait_for(lambda: css(browser, 'g[data-square="a1"]'), what="hexapawn")
        assert piece_at(browser, "a1") == "white" and piece_at(browser, "a3") == "black"
        a1, a3 = (css(browser, f'g[data-square="{name}"] rect')[0].location["y"] for name in ("a1", "a3"))
        assert a1 > a3  # White's home row at the bottom, for the spectator

        watcher = loop.run(Client.connect("127.0.0.1", port, name="carl"))
        loop.run(watcher.watch_table(tables["morris"]))  # the most watched running game
        browser.get(f"{web}/tv")
        wait_for(lambda: "Nine Men's Morris" in css(browser, "#title")[0].text, what="the most watched game on TV")
        loop.run(ann.resign(tables["morris"]))
        wait_for(lambda: "Player 2 wins" in css(browser, "#result")[0].text, FOLLOW_S, "the TV game's result")
        wait_for(lambda: "Nine Men's Morris" not in css(browser, "#title")[0].text, 6, "the TV moving on")
        assert css(browser, 'svg[data-ply="0"]') and css(browser, "#result")[0].text == ""
        for client in (ann, bob, watcher):
            loop.run(client.close())
    finally:
        server.kill()


def test_a_table_that_is_not_open_says_so_and_the_page_stops_asking(tmp_path: Path, browser: Any) -> None:
    server, port, web = serve_with_web(tmp_path)
    try:
        browser.get(f"{web}/table/42")
        wait_for(lambda: "table 42 is not open on this server" in css(browser, "#table-status")[0].text, what="the refusal")
        time.sleep(3.5)  # past the page's reconnection pause
        opened = [frame for frame in websocket_frames(browser)]
        assert len(opened) == 1, opened  # one answer: the page did not open the feed again
    finally:
        server.kill()
