"""The app shows a table's chat history in the table's chat when it starts watching (real server on 127.0.0.1)."""

from __future__ import annotations

from textual.widgets import RichLog, TabbedContent

from .conftest import SIZE, in_lobby, until


async def test_watching_a_table_shows_what_was_said_before(server, connect, make_app) -> None:
    ann, bob = await connect("ann"), await connect("bob")
    table = (await ann.create_table("othello", {"size": 6})).table.id
    await bob.join_table(table)
    await ann.say("good luck", table=table)
    await bob.say("you too \x1b[31m!", table=table)
    app = make_app(name="cat", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        main = await in_lobby(app, pilot)
        await app.session.watch(table)
        tabs = main.query_one(TabbedContent)
        await until(pilot, lambda: tabs.active == f"table-{table}")
        log = main.query_one(f"#table-{table} #chat-log", RichLog)
        await until(pilot, lambda: len(log.lines) >= 2)
        texts = [line.text for line in log.lines]
        assert texts[0].startswith("ann: good luck") and texts[1].startswith("bob: you too")
        assert not any("\x1b" in text for text in texts)
        await ann.say("welcome, cat", table=table)
        await until(pilot, lambda: any("ann: welcome, cat" in line.text for line in log.lines))
        assert sum("good luck" in line.text for line in log.lines) == 1, "the history is shown once"
