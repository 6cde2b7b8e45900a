"""The server's modules stay small enough to read at once, and a move's pipeline stays in one place (issue 21).

A module over :data:`MAX_SERVER_MODULE_LINES` lines is split along its jobs
(the table authority, the table and the connection layer were: their parts
are mixins in modules beside them). :data:`NOT_YET_SPLIT` lists the modules
still over the limit, each with the reason; an entry that is no longer over
it fails too, so the list only shrinks.
"""

from __future__ import annotations

from pathlib import Path

from server.play.authority import Authority

ROOT = Path(__file__).resolve().parents[1]

MAX_SERVER_MODULE_LINES = 500
"""The most lines a module of ``server/`` may have."""

NOT_YET_SPLIT: dict[str, str] = {}
"""Server modules allowed over :data:`MAX_SERVER_MODULE_LINES` for now (path -> why)."""

PIPELINE = ("play_move", "play_move_now", "_moves_played", "play_computer_move", "_commit_moves", "_apply_moves", "_commit_end", "_announce_moves")
"""The steps of a move's life through the authority: defined in ``server/play/authority.py`` itself, together."""

TABLE_ACTIONS = ("create_table", "join_table", "watch_table", "leave_table", "play_move", "resign", "abort", "offer", "answer", "hint")
"""The handlers the server dispatches table requests to: every one a method of :class:`Authority`."""


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_server_module_is_over_the_limit() -> None:
    sizes = {str(path.relative_to(ROOT)): _lines(path) for path in sorted((ROOT / "server").rglob("*.py"))}
    over = {path: lines for path, lines in sizes.items() if lines > MAX_SERVER_MODULE_LINES and path not in NOT_YET_SPLIT}
    assert over == {}, f"split these along their jobs (at most {MAX_SERVER_MODULE_LINES} lines each): {over}"


def test_every_module_not_yet_split_is_still_over_the_limit() -> None:
    for path in NOT_YET_SPLIT:
        assert _lines(ROOT / path) > MAX_SERVER_MODULE_LINES, f"{path} is within the limit now: drop it from NOT_YET_SPLIT"


def test_a_moves_pipeline_is_defined_in_the_authority_module() -> None:
    for name in PIPELINE:
        assert name in Authority.__dict__, f"Authority.{name} is defined in another module, away from the pipeline"
    for name in TABLE_ACTIONS:
        assert callable(getattr(Authority, name, None)), f"the authority has no {name}"
