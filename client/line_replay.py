"""The line client's archive and replay commands: list finished games, step through one, export its record."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import games
from games.ggf import GgfError, ggf_to_record, parse_ggf
from games.record import GameRecord, parse_record, replay, RecordError

from .connection import Client
from .line_text import UsageError, count_arg, describe_archived, game_id, game_seats, name_text, outcome_text, read_file, write_file
from .render import render
from .sanitize import printable, printable_lines

__all__ = ["EXPORT_USAGE", "Replayer", "Replaying"]

EXPORT_USAGE = (
    "usage: export ID FILE [--format text|ggf], e.g. export 12 game12.txt; "
    "GGF (Othello games only) is chosen by --format ggf or a FILE ending in .ggf"
)
FORMATS = ("text", "ggf")


@dataclass
class Replaying:
    """A recorded game being stepped through: every position, and the one shown."""

    label: str
    record: GameRecord
    states: list[games.State]
    index: int = 0

    @property
    def last(self) -> int:
        """The number of plies (the index of the final position)."""
        return len(self.states) - 1


class Replayer:
    """The ``archive``, ``replay``, ``export`` commands and the replay's steps.

    Args:
        client: returns the current connection (it changes after a reconnect).
        write: prints one block of text.
        after_stop: the sentence said after ``stop`` (where the player is now).
    """

    def __init__(self, client: Callable[[], Client], write: Callable[[str], None], after_stop: Callable[[], str]) -> None:
        self.client = client
        self.write = write
        self.after_stop = after_stop
        self.replaying: Replaying | None = None

    async def archive(self, args: list[str]) -> None:
        """``archive [N]``: the server's last N finished games."""
        limit = count_arg(args, "usage: archive [N] (how many of the latest finished games, default 20)", default=20)
        entries = await self.client().list_archive(min(limit, 200))
        if not entries:
            self.write("No finished games on this server yet.")
            return
        lines = ["Finished games, newest first:"]
        described = self.client().welcome
        lines += [describe_archived(entry, described.games if described is not None else None) for entry in entries]
        lines.append("Type replay ID to step through one, or export ID FILE to save its record.")
        self.write("\n".join(lines))

    async def replay(self, args: list[str]) -> None:
        """``replay ID`` or ``replay FILE``: start stepping through a finished game (a FILE of Parlour's record, or of GGF)."""
        if len(args) != 1:
            raise UsageError("usage: replay ID (a finished game, see archive) or replay FILE (a record file)")
        target = args[0]
        number = game_id(target)
        if number is not None and not os.path.exists(target):
            text = await self.client().get_record(number)
            label = f"game {number}"
        else:
            text = read_file("record", target)
            label = printable(target)
        try:
            record = ggf_to_record(parse_ggf(text)) if text.lstrip().startswith("(;") else parse_record(text)
            states = replay(record)
        except (RecordError, GgfError) as exc:
            raise UsageError(f"cannot replay {label}: {printable_lines(str(exc))}") from None
        self.replaying = Replaying(label, record, states)
        self.show()

    async def export(self, args: list[str]) -> None:
        """``export ID FILE [--format text|ggf]``: save a finished game's record.

        The format is ``--format``'s, else GGF for a file named ``*.ggf``, else plain text.
        """
        words, fmt = _format_option(args)
        number = game_id(words[0]) if len(words) == 2 else None
        if number is None:
            raise UsageError(EXPORT_USAGE)
        path = words[1]
        fmt = fmt or ("ggf" if path.lower().endswith(".ggf") else "text")
        text = await self.client().get_record(number, fmt)  # type: ignore[arg-type]
        write_file(path, text)
        kind = "GGF record" if fmt == "ggf" else "record"
        self.write(f"Exported the {kind} of game {number} to {printable(path)}.")

    def require(self) -> Replaying:
        """The replay going on.

        Raises:
            UsageError: nothing is being replayed.
        """
        if self.replaying is None:
            raise UsageError("You are not replaying a game: type replay ID or replay FILE first (archive lists the games).")
        return self.replaying

    async def forward(self, args: list[str]) -> None:
        """``forward [N]``: N plies on."""
        replaying = self.require()
        self._replay_to(replaying.index + count_arg(args, "usage: forward [N]"))

    async def back(self, args: list[str]) -> None:
        """``back [N]``: N plies back."""
        replaying = self.require()
        self._replay_to(replaying.index - count_arg(args, "usage: back [N]"))

    async def first(self, args: list[str]) -> None:
        """``first``: the starting position."""
        self.require()
        self._replay_to(0)

    async def last(self, args: list[str]) -> None:
        """``last``: the final position."""
        self._replay_to(self.require().last)

    async def goto(self, args: list[str]) -> None:
        """``goto N``: the position after ply N."""
        replaying = self.require()
        try:
            ply = int(args[0]) if len(args) == 1 else -1
        except ValueError:
            ply = -1
        if not 0 <= ply <= replaying.last:
            raise UsageError(f"usage: goto N, with N from 0 to {replaying.last}")
        self._replay_to(ply)

    async def stop(self, args: list[str]) -> None:
        """``stop``: leave the replay."""
        replaying = self.require()
        self.replaying = None
        self.write(f"Stopped the replay of {replaying.label}.{self.after_stop()}")

    def _replay_to(self, index: int) -> None:
        replaying = self.replaying
        assert replaying is not None
        index = max(0, min(index, replaying.last))
        if index == replaying.index:
            where = "the start" if index == 0 else "the end" if index == replaying.last else f"ply {index}"
            self.write(f"Already at {where} of {replaying.label} (ply {index}/{replaying.last}).")
            return
        replaying.index = index
        self.show()

    def show(self) -> None:
        """Draw the replay's current position (nothing when not replaying)."""
        replaying = self.replaying
        if replaying is None:
            return
        record, index = replaying.record, replaying.index
        state = replaying.states[index]
        seats = game_seats(record.game)
        players = "  vs  ".join(f"{seats[i]}: {name_text(record.players[i], '?')}" for i in (0, 1))
        lines = [f"Replay of {replaying.label} · {printable(record.game)} · {players}", render(state.revealed().view(None), None)]
        if index > 0:
            played = record.moves[index - 1]
            lines.append(f"Ply {index}: {seats[played.seat]} played {printable(played.move)}" + (" (forced)" if played.forced else ""))
        if index == replaying.last:
            result = record.result or (state.outcome.to_dict() if state.outcome is not None else None)
            if result is not None:
                lines.append("Recorded result: " + outcome_text(result, seats))
            else:
                lines.append("The record ends here, with no result.")
        elif state.to_move is not None:
            lines.append(f"{seats[state.to_move]} to move.")
        lines.append(f"Replay of {replaying.label}: ply {index}/{replaying.last} — forward [N], back [N], first, last, goto N, stop")
        self.write("\n".join(lines))

    # --- status line -------------------------------------------------------------------


# --- export's --format ------------------------------------------------------------------


def _format_option(args: list[str]) -> tuple[list[str], str | None]:
    """``args`` without ``--format X`` (or ``--format=X``), and X (``None`` when not given).

    Raises:
        UsageError: ``--format`` without a value, twice, or with a format other than text and ggf.
    """
    words: list[str] = []
    fmt: str | None = None
    rest = iter(args)
    for word in rest:
        if word == "--format" or word.startswith("--format="):
            value = word.partition("=")[2] if "=" in word else next(rest, "")
            if fmt is not None or value.lower() not in FORMATS:
                raise UsageError(f"--format is text or ggf, given once, not {printable(value)!r}; {EXPORT_USAGE}")
            fmt = value.lower()
        else:
            words.append(word)
    return words, fmt
