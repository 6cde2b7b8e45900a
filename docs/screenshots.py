"""Remake the README's screenshots of the full-screen client.

    python docs/screenshots.py [OUTPUT_DIRECTORY]     (default: docs/screenshots)

Starts a server in this process on 127.0.0.1 (a port the system picks, no
database), fills its lobby with a few tables from two scripted players, runs
the real app (``client.app.app.ParlourApp``) headless under Textual's Pilot,
and saves two SVGs with ``App.save_screenshot``: ``lobby.svg`` (the lobby tab)
and ``game.svg`` (an Othello game in its table tab, with a clock and chat).
Nothing is sent anywhere but 127.0.0.1, and nothing is written but the SVGs.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from client.app.app import ParlourApp  # noqa: E402
from client.app.recent import RecentServers  # noqa: E402
from client.app.server_screen import ServerStart  # noqa: E402
from client.app.table import TableView  # noqa: E402
from client.app.tabs import MainScreen  # noqa: E402
from client.connection import Client  # noqa: E402
from client.tokens import TokenStore  # noqa: E402
from server.app import Server, ServerConfig  # noqa: E402

SIZE = (100, 30)
"""The terminal the pictures show, in columns and rows."""


async def until(pilot: Any, condition: Callable[[], Any], what: str) -> Any:
    """Let the app run until ``condition()`` holds (at most 10 s)."""
    for _ in range(500):
        if result := condition():
            await pilot.pause()
            return result
        await pilot.pause(0.02)
    raise SystemExit(f"screenshots: timed out waiting for {what}")


async def fill_lobby(port: int) -> tuple[Client, Client]:
    """Two players and a few tables to show in the lobby."""
    bob = await Client.connect("127.0.0.1", port, name="bob")
    cat = await Client.connect("127.0.0.1", port, name="cat")
    await bob.create_table("tactego", {"rows": 8, "cols": 8})
    await cat.create_table("morris", {"flying": True}, time_control="10+5")
    await cat.create_table("nimble", {"n": 8}, seat=None, computer={0: 2, 1: 4})
    dora = await Client.connect("127.0.0.1", port, name="dora")
    await dora.seek("othello", time_control="5+3")  # an open seek for the lobby's seek list
    return bob, cat


async def take_pictures(output: Path) -> None:
    server = Server(ServerConfig(host="127.0.0.1", port=0, server_name="parlour-demo"))
    await server.start()
    bob, cat = await fill_lobby(server.port)
    with tempfile.TemporaryDirectory() as scratch:
        app = ParlourApp(
            ServerStart(name="ann", address=f"127.0.0.1:{server.port}", discover=False),
            tokens=TokenStore(Path(scratch) / "tokens.json"),
            recent=RecentServers(Path(scratch) / "servers.json"),
        )
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, MainScreen) and app.session and len(app.session.lobby) >= 3, "the lobby")
            await cat.tell("ann", "fancy a game of morris after this one?")
            await until(pilot, lambda: app.session.seeks and app.session.tells, "the seek and the tell")
            app.save_screenshot("lobby.svg", str(output))
            session = app.session
            table = await session.create("othello", time_control="5+3")
            await bob.join_table(table.id, 1)
            for mine, theirs in (("d3", "c5"), ("f6", "e3")):
                await until(pilot, lambda: session.table(table.id).my_turn, "ann's turn")
                await session.move(table.id, mine)
                await until(pilot, lambda: session.table(table.id).view.get("to_move") == 1, "bob's turn")
                await bob.move(table.id, theirs)
            await bob.say("good luck!", table=table.id)
            await until(pilot, lambda: session.table(table.id).chat and session.table(table.id).my_turn, "the chat line")
            await until(pilot, lambda: app.screen.query(TableView), "the table tab")
            app.save_screenshot("game.svg", str(output))
    await bob.close()
    await cat.close()
    await server.close()


def main() -> None:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    asyncio.run(take_pictures(output))
    print(f"wrote {output / 'lobby.svg'} and {output / 'game.svg'}")


if __name__ == "__main__":
    main()
