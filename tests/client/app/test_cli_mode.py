"""When ``parlour play`` opens the full-screen app and when it keeps the line mode."""

from __future__ import annotations

import io

from client.cli import parse_args, wants_app


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_app_on_a_terminal_the_line_mode_with_line_a_dumb_terminal_or_piped_input(monkeypatch):
    args = parse_args(["play", "127.0.0.1:7420", "--name", "ann"], environ={})
    line = parse_args(["play", "127.0.0.1:7420", "--name", "ann", "--line"], environ={})
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("sys.stdout", Terminal())
    assert wants_app(args, {"TERM": "xterm-256color"})
    assert not wants_app(line, {"TERM": "xterm-256color"})
    assert not wants_app(args, {"TERM": "dumb"})
    assert not wants_app(args, {})
    monkeypatch.setattr("sys.stdin", io.StringIO("list\n"))  # piped commands: a script
    assert not wants_app(args, {"TERM": "xterm-256color"})
