"""``parlour games``: list the finished games in a server's database, or export one.

``parlour games [--db PATH] [--limit N] [--offset N]`` prints one line per
finished game, the most recent first; ``parlour games --export ID`` prints
that game (finished or not) as a plain-text record (:mod:`games.record`), and
``parlour games --export ID --format ggf`` an Othello game as a GGF record
(:mod:`games.ggf`, built by :mod:`server.tables.exports`).

``--db`` is a file or, for a server on PostgreSQL, its ``postgresql://`` URL.
It reads the database a running server is writing (WAL lets both work at
once), and never writes to it: it opens the file read-only, so a database on
read-only storage can be listed too. Only a database from an older Parlour is
written, to upgrade it (as the server would); one from a newer Parlour is
refused.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import games
from games.record import RecordError
from protocol.cli_options import number_in

from .tables.exports import FORMATS, ExportError, export_record
from .storage.opening import describe_db, is_postgres_url, open_for_reading
from .storage.rows import ArchiveEntry
from .storage.sqlite import default_db_path
from .storage.store import StoreError

__all__ = ["add_parser", "run", "describe_result"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``games`` subcommand to the ``parlour`` command."""
    parser = subparsers.add_parser(
        "games",
        help="list the finished games in a server's archive, or export one",
        description="List the finished games stored by 'parlour serve', most recent first, "
        "or print one game as a record (plain text, or GGF for an Othello game).",
    )
    parser.add_argument(
        "--db", default=None, metavar="PATH|URL",
        help=f"the server's database: an SQLite file, or a postgresql:// URL (default: {default_db_path()})",
    )
    parser.add_argument(
        "--export", type=number_in(1, 2**63 - 1, whole=True), default=None, metavar="ID", help="print game ID as a record"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="the record --export prints: text (Parlour's plain-text record, the default) or ggf (GGF, Othello games only)",
    )
    parser.add_argument("--limit", type=_count, default=50, metavar="N", help="list at most N games, 0 to 1000000 (default: 50)")
    parser.add_argument("--offset", type=_count, default=0, metavar="N", help="skip the N most recent games, 0 to 1000000 (default: 0)")
    parser.set_defaults(run=run)


MOST_LISTED = 1_000_000
"""The largest ``--limit`` and ``--offset`` (SQLite cannot take arbitrarily large numbers)."""

_count = number_in(0, MOST_LISTED, whole=True)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """List the archive or export one game, as ``args`` asks; return the exit status.

    Args:
        args: ``db`` (path or ``None`` for the default), ``export`` (id or
            ``None``), ``format`` (``"text"`` or ``"ggf"``; absent: text),
            ``limit`` and ``offset``.
        out, err: where to write (default: ``sys.stdout`` and ``sys.stderr``).

    Returns:
        0 on success (an empty archive included); 1 if the database cannot be
        opened, the game to export does not exist, or cannot be written in
        the format asked for (GGF of a game other than Othello); 2 for
        ``--format`` without ``--export``.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    fmt = getattr(args, "format", "text")
    if fmt != "text" and args.export is None:
        print(f"--format {fmt} goes with --export ID: it says how to print that game.", file=err)
        return 2
    db = str(args.db) if args.db is not None else str(default_db_path())
    path = describe_db(db)
    if not is_postgres_url(db) and not Path(db).exists():
        print(f"No games yet: {path} does not exist ('parlour serve --db {path}' creates it).", file=err)
        return 1 if args.export is not None else 0
    try:
        store = open_for_reading(db)
    except StoreError as exc:
        print(f"Cannot read the archive: {exc}", file=err)
        return 1
    try:
        if args.export is not None:
            table = store.load(args.export)
            if table is None:
                print(f"There is no game {args.export} in {path}.", file=err)
                return 1
            out.write(export_record(store, table, fmt))
            return 0
        entries = store.archive(limit=args.limit, offset=args.offset)
    except ExportError as exc:
        print(f"Cannot export game {args.export}: {exc}", file=err)
        return 1
    except (StoreError, RecordError) as exc:
        print(f"Cannot read the archive: {exc}", file=err)
        return 1
    finally:
        store.close_sync()
    _print_archive(entries, path, args.limit, args.offset, out)
    return 0


def _print_archive(entries: list[ArchiveEntry], path: str, limit: int, offset: int, out: TextIO) -> None:
    if not entries:
        print(f"No finished games in {path}" + (f" after the first {offset}." if offset else "."), file=out)
        return
    header = ("ID", "GAME", "PLAYERS", "RESULT", "PLIES", "FINISHED (UTC)")
    rows = [
        (
            str(entry.id),
            entry.game,
            " vs ".join(name or "?" for name in entry.players),
            describe_result(entry.game, entry.players, entry.result),
            str(entry.plies),
            _when(entry.finished),
        )
        for entry in entries
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    right = {0, 4}
    for row in [header, *rows]:
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        print("  ".join(cells).rstrip(), file=out)
    if len(entries) == limit:
        print(f"(more may follow: --offset {offset + limit})", file=out)


def describe_result(game: str, players: tuple[str | None, str | None], result: dict[str, Any] | None) -> str:
    """Say how a game ended, e.g. ``"bob (White) won: more discs, 22-42"``, ``"draw: no legal move"``
    or ``"aborted: White aborted the game"``."""
    if not result:
        return "-"
    winner = result.get("winner")
    reason = result.get("reason") or ""
    score = result.get("score")
    if result.get("aborted") is True:
        text = "aborted"
    elif winner in (0, 1):
        colour = _seat_name(game, winner)
        name = players[winner]
        who = f"{name} ({colour})" if name else colour
        text = f"{who} won"
    else:
        text = "draw"
    if reason:
        text += f": {reason}"
    if isinstance(score, list) and len(score) == 2:
        text += f"{',' if reason else ':'} {score[0]}-{score[1]}"
    return text


def _seat_name(game: str, seat: int) -> str:
    try:
        return games.get(game).seats[seat]
    except games.UnknownGame:
        return f"seat {seat}"


def _when(unix_time: float | None) -> str:
    if unix_time is None:
        return "-"
    return datetime.fromtimestamp(unix_time, timezone.utc).strftime("%Y-%m-%d %H:%M")
