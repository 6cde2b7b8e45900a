"""A spectator in the app follows a rematch: the new table's tab opens and the old one closes (real server on 127.0.0.1)."""

from __future__ import annotations

from textual.widgets import TabbedContent

from client.app.app import ParlourApp
from protocol import messages as m

from .conftest import SIZE, in_lobby, until


async def test_the_app_opens_the_rematch_tab_for_a_spectator_and_closes_the_old(server, connect, make_app) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello", {"size": 6})).table.id
    await bob.join_table(table)
    app: ParlourApp = make_app(name="cat", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await in_lobby(app, pilot)
        await app.session.watch(table)
        tabs = main.query_one(TabbedContent)
        await until(pilot, lambda: tabs.active == f"table-{table}")
        await ann.resign(table)
        await ann.offer(table, "rematch")
        await bob.answer(table, "rematch", True)
        rematch = (await ann.next_event(m.RematchStarted, timeout_s=5.0)).table.id
        await until(pilot, lambda: tabs.active == f"table-{rematch}")
        await until(pilot, lambda: not tabs.query(f"#table-{table}"))
        assert app.session.focus == rematch and list(app.session.tables) == [rematch]
