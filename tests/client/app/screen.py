"""Reading what a running app shows: the screen's text, row by row, as the terminal would get it."""

from __future__ import annotations

from textual.app import App


def screen_lines(app: App) -> list[str]:
    """The text of every row of ``app``'s screen as drawn now (the compositor's own strips, widgets clipped as shown)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: App) -> str:
    """The screen's rows joined by newlines."""
    return "\n".join(screen_lines(app))
