"""The archive's replay footer at 80x24: its grouped key hints are read apart, every label followed by a space."""

from __future__ import annotations

import re

from textual.widgets import DataTable, Footer

from client.app.archive import ArchiveScreen

from .conftest import SIZE, in_lobby, until
from .screen import screen_lines
from .test_archive_and_help import finished_game


async def test_the_replay_footer_keeps_a_space_after_every_label(configured_server, make_app, tmp_path):
    server = await configured_server(db_path=str(tmp_path / "parlour.sqlite"))
    await finished_game(server.port)
    app = make_app(name="carol", address=f"127.0.0.1:{server.port}")
    async with app.run_test(size=SIZE) as pilot:
        await in_lobby(app, pilot)
        await pilot.press("f3")
        archive = await until(pilot, lambda: isinstance(app.screen, ArchiveScreen) and app.screen)
        await until(pilot, lambda: archive.query_one("#games", DataTable).row_count >= 1)
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is archive.query_one("#replay-pane"))
        await pilot.pause()
        footer = archive.query_one(Footer)
        row = screen_lines(app)[footer.region.y]
        assert re.search(r"Step +home end +Jump +esc Back ", row), row
        for label in ("Step", "Jump", "Back", "Go to ply", "Export", "More", "Quit", "Help"):
            assert re.search(re.escape(label) + r"( |$)", row.rstrip()), f"{label!r} runs into the next hint: {row!r}"
        assert len(row.rstrip()) <= SIZE[0]
