"""The terminal front end: a lobby and game shell built on :class:`client.Client`.

With a TTY it reads commands with prompt_toolkit, so server pushes print above
the prompt without clobbering what the user is typing, and a bottom toolbar
shows the clocks counting down. With stdin piped it reads one command per line
and prints plain text, so it can be scripted; the ``wait`` command lets a
script wait for its turn.

Everything that comes from another user (names, chat, record headers) goes
through :func:`client.sanitize.printable` before it is printed.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Awaitable, Callable, Sequence

import games
from games.record import GameRecord, RecordError, parse_record, replay
from protocol import messages as m

from .connection import Client, ConnectionLost, ServerError
from .ratings_text import FAMILIES, describe_change, describe_finger, describe_ranking, rating_text
from .render import render
from .rules import RulesNotFound, game_rules
from .sanitize import printable, printable_lines
from .social_commands import SOCIAL_HELP, SocialCommands

__all__ = [
    "TerminalClient",
    "LineInput",
    "PromptInput",
    "NewTable",
    "describe_table",
    "describe_archived",
    "format_clock",
    "player_label",
]

HELP = """Commands:
  list                      show the tables in the lobby
  games                     the games and their options
  rules [GAME]              the rules of GAME (default: the game you are at or
                            replaying); all of them are in docs/RULES.md
  new GAME [key=value ...]  create a table and sit down (games: {games})
                            text options name a file: pieces=FILE, position=FILE;
                            seed=TEXT sets the setup seed; tc=MINUTES+INCREMENT
                            adds a clock (e.g. tc=5+3; default: no clock);
                            seat=0|1 picks your seat (default 0, who moves first)
  new GAME vs=computer [level=N]
                            play the computer, level 1 (a beginner can win) to 5
                            (the strongest; default {default_level}); level=N alone
                            means vs=computer too. The game starts at once.
  new GAME computer=L0,L1   watch the computer play itself: seat 0 at level L0,
                            seat 1 at level L1 (e.g. new othello computer=3,5)
  new GAME ... hints=on     let the players ask for hints (always on against
                            the computer)
  new GAME ... rated=yes    a rated game (both players need claimed names)
  save FILE                 write the current position to FILE (Nine Men's Morris)
  join ID [SEAT]            take a free seat at table ID (SEAT 0 or 1)
  watch ID                  watch table ID as a spectator
  leave                     leave the current table (resigns a running game)
  board                     show the current position again (the replay's while replaying)
  moves                     list your legal moves
  hint                      ask the computer for a move (at tables with hints)
Game controls (players):
  resign                    resign the current game
  draw                      offer your opponent a draw (lapses when you move)
  takeback [N]              ask to take back the last N plies (default 1;
                            forced passes do not count and go too)
  rematch                   after the game, offer a rematch with seats swapped
  accept / decline [KIND]   answer your opponent's latest offer (KIND: draw,
                            takeback or rematch, if several are pending)
Chat:
  say TEXT                  chat at your table (in the lobby when at no table)
  shout TEXT                chat in the lobby
Archive:
  archive [N]               the server's last N finished games (default 20)
  replay ID | replay FILE   step through finished game ID, or a record file
                            while replaying: forward|f [N], back|b [N], first,
                            last, goto N, stop (leave the replay)
  export ID FILE            save the record of finished game ID to FILE
Ratings:
  finger NAME               NAME's ratings, record and last rated games
  top GAME [FAMILY] [RANK]  the best players of GAME (FAMILY: bullet, blitz,
                            rapid, classical, untimed or all; from RANK on)
Other:
  wait turn|start|end       (scripts) wait for your turn, the start or the end
  help                      this text
  quit                      leave the server
Anything else is a move in the game's notation, e.g. d3."""

STORAGE_FULL_TEXT = "The server cannot save moves right now (its disk is full); nothing was changed. Try again later."
"""What the player reads when the server answers ``storage_full``."""

DEFAULT_COMPUTER_LEVEL = 3
"""The computer's level when ``new GAME vs=computer`` names none: a fair game for most players."""
COMPUTER_LEVELS = range(1, 6)

OFFER_KINDS = ("draw", "takeback", "rematch")
LIST_MOST = 1000
"""The most tables ``list`` shows (ten pages of the lobby)."""
_OFFER_NOUNS = {"draw": "draw offer", "takeback": "takeback request", "rematch": "rematch offer"}
_RAW_COMMANDS = ("say", "shout", "rules", "tell")  # the rest of the line is the text, quotes and all
_REPLAY_ONLY = ("f", "b")  # short forms that are commands only while replaying


@dataclass
class Seating:
    """What the terminal knows of the table it is at.

    ``clock`` is the last clock snapshot the server sent (``None``: untimed)
    and ``clock_at`` the local monotonic time it arrived; ``offer`` is the
    opponent's latest pending offer, the one ``accept`` and ``decline`` answer.
    """

    table: m.TableInfo
    seat: int | None
    view: dict[str, Any]
    moves: list[str] = field(default_factory=list)
    clock: dict[str, Any] | None = None
    clock_at: float = 0.0
    offer: m.Offered | None = None


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


Reconnect = Callable[[str, Callable[[str], None]], Awaitable["Client | None"]]


class TerminalClient:
    """Reads commands, sends requests, and prints what the server pushes.

    Args:
        client: a connected :class:`Client`.
        write: prints one block of text (a line or a board).
        reconnect: resumes the session from its token after a lost connection
            (``None``: do not try); returns the new client, or ``None`` to give up.
            Not called when another connection resumed the session (the
            client is ``superseded``).
        now: the monotonic clock used to count the clocks down between updates.
    """

    def __init__(
        self,
        client: Client,
        write: Callable[[str], None],
        reconnect: Reconnect | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.write = write
        self.reconnect = reconnect
        self.now = now
        self.gone = False  # the connection is lost for good
        self.finished = asyncio.Event()  # set with gone
        self.at: Seating | None = None
        self.replaying: Replaying | None = None
        self._changed = asyncio.Condition()
        self._moved_at_ply = -1  # our turn is over until a view newer than this ply arrives
        self._commands: dict[str, Callable[[list[str]], Awaitable[None]]] = {
            "list": self._list,
            "new": self._new,
            "join": self._join,
            "watch": self._watch,
            "leave": self._leave,
            "board": self._board,
            "moves": self._moves,
            "hint": self._hint,
            "resign": self._resign,
            "draw": self._draw,
            "takeback": self._takeback,
            "rematch": self._rematch,
            "accept": self._accept,
            "decline": self._decline,
            "say": self._say,
            "shout": self._shout,
            "archive": self._archive,
            "replay": self._replay,
            "export": self._export,
            "forward": self._forward,
            "f": self._forward,
            "back": self._back,
            "b": self._back,
            "first": self._first,
            "last": self._last,
            "goto": self._goto,
            "stop": self._stop,
            "wait": self._wait,
            "save": self._save,
            "help": self._help,
            "games": self._list_games,
            "rules": self._rules,
            "finger": self._finger,
            "top": self._top,
        }
        self.social = SocialCommands(self)
        self._commands.update(self.social.commands())

    # --- commands --------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Run one command line; return ``False`` when the user asked to quit."""
        line = line.strip()
        if not line or line.startswith("#"):
            return True
        head, *rest = line.split(None, 1)
        if head.lower() in _RAW_COMMANDS:
            command, words = head.lower(), rest  # the text as typed: quotes and apostrophes are chat
        else:
            try:
                words = shlex.split(line)
            except ValueError as exc:
                self.write(f"cannot read that line: {exc}")
                return True
            command, words = words[0].lower(), words[1:]
        if command in ("quit", "exit"):
            return False
        action = self._commands.get(command)
        if command in _REPLAY_ONLY and self.replaying is None:
            action = None
        try:
            if action is not None:
                await action(words)
            else:
                await self._move(line)
        except ServerError as exc:
            if exc.code == "storage_full":
                self.write(STORAGE_FULL_TEXT)
            else:
                self.write(f"error ({exc.code}): {printable_lines(exc.message)}")
        except ConnectionLost:
            self.write("not connected to the server right now; try again in a moment")
        except games.GameError as exc:
            self.write(f"error: {printable_lines(str(exc))}")
        except UsageError as exc:
            self.write(str(exc))
        return True

    async def _help(self, args: list[str]) -> None:
        self.write(HELP.format(games=", ".join(game["name"] for game in self._games()), default_level=DEFAULT_COMPUTER_LEVEL))
        self.write(SOCIAL_HELP)

    async def _list_games(self, args: list[str]) -> None:
        lines = []
        for game in self._games():
            lines.append(f"{game['name']} — {game['title']} ({game['seats'][0]} vs {game['seats'][1]})")
            for option in game["options"]:
                bounds = ""
                if option["min"] is not None or option["max"] is not None:
                    bounds = f", {option['min'] if option['min'] is not None else ''}..{option['max'] if option['max'] is not None else ''}"
                lines.append(f"    {option['name']}={option['type']} (default {option['default']}{bounds}) {option['doc']}")
        lines = [printable(line) for line in lines]  # the server's text: trusted for rules, not for terminal control
        lines.append("Any game: seed=TEXT (the setup seed), tc=MINUTES+INCREMENT (a clock, e.g. tc=5+3)")
        self.write("\n".join(lines))

    async def _rules(self, args: list[str]) -> None:
        if not args and self.replaying is not None:
            args = [self.replaying.record.game]
        elif not args and self.at is not None:
            args = [self.at.table.game]
        if not args:
            names = ", ".join(game["name"] for game in self._games())
            raise UsageError(f"usage: rules GAME, e.g. rules othello (games: {names})")
        try:
            self.write(game_rules(" ".join(args)))
        except RulesNotFound as exc:
            raise UsageError(str(exc)) from None

    def _games(self) -> list[dict[str, Any]]:
        assert self.client.welcome is not None
        return self.client.welcome.games

    async def _list(self, args: list[str]) -> None:
        tables = await self.client.list_tables(most=LIST_MOST + 1)
        if not tables:
            self.write("No tables yet. Create one with: new GAME (e.g. new othello size=8)")
            return
        self.write("\n".join(describe_table(table) for table in tables[:LIST_MOST]))
        if len(tables) > LIST_MOST:
            self.write(f"(only the first {LIST_MOST} tables are shown)")

    async def _new(self, args: list[str]) -> None:
        if not args:
            raise UsageError(
                "usage: new GAME [key=value ...] [tc=MINUTES+INCREMENT] [vs=computer level=N] [computer=L0,L1] [hints=on],"
                " e.g. new othello size=8 tc=5+3"
            )
        game = games.get(args[0].lower())
        table = NewTable.parse(game, args[1:])
        joined = await self.client.create_table(
            game.name,
            table.options,
            seed=table.seed,
            seat=table.seat,
            time_control=table.time_control,
            computer=table.computer,
            hints=table.hints,
            rated=table.rated,
        )
        self.write(self._created_text(joined))
        await self._sit(joined)

    async def _finger(self, args: list[str]) -> None:
        if not args:
            raise UsageError("usage: finger NAME, e.g. finger ann")
        self.write(describe_finger(await self.client.finger(" ".join(args))))

    async def _top(self, args: list[str]) -> None:
        if not args or len(args) > 3:
            raise UsageError(f"usage: top GAME [FAMILY] [RANK], e.g. top othello blitz (families: {', '.join(FAMILIES)}, all)")
        family = args[1].lower() if len(args) > 1 else "all"
        if family not in (*FAMILIES, "all"):
            raise UsageError(f"a family is one of {', '.join(FAMILIES)} or all, not {family!r}")
        rank = args[2] if len(args) > 2 else "1"
        if not (rank.isascii() and rank.isdigit()) or not 1 <= int(rank) <= 10_001:
            raise UsageError(f"a rank is a number from 1 to 10001, not {rank!r}")
        ranking = await self.client.leaderboard(args[0].lower(), None if family == "all" else family, offset=int(rank) - 1)
        self.write(describe_ranking(ranking))

    def _created_text(self, joined: m.TableJoined) -> str:
        table_id, levels = joined.table.id, joined.table.computer or [None, None]
        if joined.seat is None:
            players = " vs ".join(_computer(level) for level in levels)
            return f"Created table {table_id}: {players}; you are watching."
        opponent = levels[1 - joined.seat]
        if opponent is not None:
            return f"Created table {table_id}: you play against {_computer(opponent)}; the game starts now."
        return f"Created table {table_id}; waiting for an opponent (they type: join {table_id})."

    async def _join(self, args: list[str]) -> None:
        table_id, seat = _table_and_seat(args)
        await self._sit(await self.client.join_table(table_id, seat))

    async def _watch(self, args: list[str]) -> None:
        table_id, _ = _table_and_seat(args[:1])
        await self._sit(await self.client.watch_table(table_id))

    async def _sit(self, joined: m.TableJoined) -> None:
        self.at = self._seating(joined.table, joined.seat, joined.view, joined.moves)
        self._moved_at_ply = -1
        role = "watching" if joined.seat is None else f"playing {joined.table.game} as {self._seat_name(joined.seat)}"
        self.write(f"At table {joined.table.id}, {role}.")
        if joined.moves:
            self.write("Moves so far: " + " ".join(printable(move) for move in joined.moves))
        self._show()
        await self.follow_lobby()
        await self._notify()

    def _seating(self, table: m.TableInfo, seat: int | None, view: dict[str, Any], moves: Sequence[str]) -> Seating:
        return Seating(table, seat, view, list(moves), clock=table.clock, clock_at=self.now())

    async def _leave(self, args: list[str]) -> None:
        at = self._require_table()
        await self.client.leave_table(at.table.id)
        self.write(f"Left table {at.table.id}.")
        self.at = None
        await self.follow_lobby()

    async def follow_lobby(self) -> None:
        """Watch the lobby's changes and chat while at no table, and only then (a table's own pushes are enough there).

        A failure is shown, not raised: the lobby is still there with ``list``.
        """
        wanted = self.at is None
        if self.client.watching_lobby == wanted:
            return
        try:
            await self.client.watch_lobby(wanted)
        except (ServerError, ConnectionLost) as exc:
            self.write(f"Could not {'watch' if wanted else 'stop watching'} the lobby: {exc}")

    async def _board(self, args: list[str]) -> None:
        if self.replaying is not None:
            self._show_replay()
            return
        self._require_table()
        self._show()

    async def _moves(self, args: list[str]) -> None:
        at = self._require_table()
        legal = at.view.get("legal_moves")
        if legal is None and at.seat is not None and at.view.get("forced_pass") and at.view.get("to_move") == at.seat:
            self.write("You must pass; the server passes for you.")
        elif legal is None:
            self.write("It is not your turn." if at.seat is not None else "Spectators have no moves.")
        else:
            self.write("Legal moves: " + " ".join(legal))

    async def _hint(self, args: list[str]) -> None:
        at = self._require_seat("ask for a hint")
        hint = await self.client.hint(at.table.id)
        self.write(f"Hint: {printable(hint.move)} (the computer's choice for turn {hint.ply + 1}).")

    async def _save(self, args: list[str]) -> None:
        at = self._require_table()
        if len(args) != 1:
            raise UsageError("usage: save FILE")
        position = at.view.get("position")
        if not isinstance(position, str):
            raise UsageError(f"{at.table.game} positions cannot be saved to a file")
        _write_file(args[0], position)
        self.write(f"Saved the position to {args[0]}.")

    async def _resign(self, args: list[str]) -> None:
        at = self._require_table()
        await self.client.resign(at.table.id)

    async def _move(self, text: str) -> None:
        if self.replaying is not None:
            raise UsageError(
                f"You are replaying {self.replaying.label}: type stop to leave the replay before you play a move "
                "(forward, back, first, last and goto N step through the replay)."
            )
        at = self.at
        if at is None:
            raise UsageError(f"unknown command {text.split()[0]!r}; type help")
        if at.seat is None:
            raise UsageError("spectators cannot move; type help for commands")
        ply = at.view["ply"]
        await self.client.move(at.table.id, text)
        self._moved_at_ply = max(self._moved_at_ply, ply)

    async def _wait(self, args: list[str]) -> None:
        what = args[0] if args else "turn"
        tests = {
            "turn": lambda at: at is not None and (self._my_turn(at) or at.view.get("outcome") is not None),
            "start": lambda at: at is not None and at.table.status != "waiting",
            "end": lambda at: at is not None and at.view.get("outcome") is not None,
        }
        if what not in tests:
            raise UsageError("usage: wait turn|start|end")
        async with self._changed:
            await self._changed.wait_for(lambda: tests[what](self.at) or self.gone)

    def _my_turn(self, at: Seating) -> bool:
        return at.view.get("legal_moves") is not None and at.view["ply"] > self._moved_at_ply

    def _require_table(self) -> Seating:
        if self.at is None:
            raise UsageError("you are not at a table: use new, join or watch first")
        return self.at

    def _require_seat(self, what: str) -> Seating:
        at = self._require_table()
        if at.seat is None:
            raise UsageError(f"only the players can {what}; you are watching table {at.table.id}")
        return at

    # --- game controls ---------------------------------------------------------------

    async def _draw(self, args: list[str]) -> None:
        at = self._require_seat("offer a draw")
        await self.client.offer(at.table.id, "draw")
        self.write(f"You offered a draw; waiting for {self._opponent(at)} to accept or decline.")

    async def _takeback(self, args: list[str]) -> None:
        plies = _count(args, "usage: takeback [N] (the number of plies to take back, default 1)")
        at = self._require_seat("ask for a takeback")
        await self.client.offer(at.table.id, "takeback", plies=plies)
        if self._against_computer(at):
            self.write(f"You asked to take back {_plies(plies)}; the computer grants it at once, back to your move.")
            return
        self.write(
            f"You asked to take back {_plies(plies)}; waiting for {self._opponent(at)} to accept or decline."
        )

    async def _rematch(self, args: list[str]) -> None:
        at = self._require_seat("offer a rematch")
        await self.client.offer(at.table.id, "rematch")
        self.write(f"You offered a rematch with seats swapped; waiting for {self._opponent(at)} to answer.")

    async def _accept(self, args: list[str]) -> None:
        if not await self.social.answer(args, accept=True):
            await self._answer(args, accept=True)

    async def _decline(self, args: list[str]) -> None:
        if not await self.social.answer(args, accept=False):
            await self._answer(args, accept=False)

    async def _answer(self, args: list[str], accept: bool) -> None:
        verb = "accept" if accept else "decline"
        at = self._require_seat(f"{verb} an offer")
        if args:
            kind = args[0].lower()
            if kind not in OFFER_KINDS or len(args) > 1:
                raise UsageError(f"usage: {verb} [draw|takeback|rematch]")
        elif at.offer is not None:
            kind = at.offer.kind
        else:
            raise UsageError("There is no offer to answer.")
        await self.client.answer(at.table.id, kind, accept)
        if at.offer is not None and at.offer.kind == kind:
            at.offer = None

    # --- chat ------------------------------------------------------------------------

    async def _say(self, args: list[str]) -> None:
        text = _chat_text(args, "say")
        await self.client.say(text, table=self.at.table.id if self.at is not None else None)

    async def _shout(self, args: list[str]) -> None:
        await self.client.say(_chat_text(args, "shout"), table=None)

    # --- archive and replay ------------------------------------------------------------

    async def _archive(self, args: list[str]) -> None:
        limit = _count(args, "usage: archive [N] (how many of the latest finished games, default 20)", default=20)
        entries = await self.client.list_archive(min(limit, 200))
        if not entries:
            self.write("No finished games on this server yet.")
            return
        lines = ["Finished games, newest first:"]
        lines += [describe_archived(entry) for entry in entries]
        lines.append("Type replay ID to step through one, or export ID FILE to save its record.")
        self.write("\n".join(lines))

    async def _replay(self, args: list[str]) -> None:
        if len(args) != 1:
            raise UsageError("usage: replay ID (a finished game, see archive) or replay FILE (a record file)")
        target = args[0]
        game_id = _game_id(target)
        if game_id is not None and not os.path.exists(target):
            text = await self.client.get_record(game_id)
            label = f"game {game_id}"
        else:
            text = _read_file("record", target)
            label = printable(target)
        try:
            record = parse_record(text)
            states = replay(record)
        except RecordError as exc:
            raise UsageError(f"cannot replay {label}: {printable_lines(str(exc))}") from None
        self.replaying = Replaying(label, record, states)
        self._show_replay()

    async def _export(self, args: list[str]) -> None:
        game_id = _game_id(args[0]) if len(args) == 2 else None
        if game_id is None:
            raise UsageError("usage: export ID FILE, e.g. export 12 game12.txt")
        text = await self.client.get_record(game_id)
        _write_file(args[1], text)
        self.write(f"Exported the record of game {game_id} to {args[1]}.")

    def _require_replay(self) -> Replaying:
        if self.replaying is None:
            raise UsageError("You are not replaying a game: type replay ID or replay FILE first (archive lists the games).")
        return self.replaying

    async def _forward(self, args: list[str]) -> None:
        replaying = self._require_replay()
        self._replay_to(replaying.index + _count(args, "usage: forward [N]"))

    async def _back(self, args: list[str]) -> None:
        replaying = self._require_replay()
        self._replay_to(replaying.index - _count(args, "usage: back [N]"))

    async def _first(self, args: list[str]) -> None:
        self._require_replay()
        self._replay_to(0)

    async def _last(self, args: list[str]) -> None:
        self._replay_to(self._require_replay().last)

    async def _goto(self, args: list[str]) -> None:
        replaying = self._require_replay()
        try:
            ply = int(args[0]) if len(args) == 1 else -1
        except ValueError:
            ply = -1
        if not 0 <= ply <= replaying.last:
            raise UsageError(f"usage: goto N, with N from 0 to {replaying.last}")
        self._replay_to(ply)

    async def _stop(self, args: list[str]) -> None:
        replaying = self._require_replay()
        self.replaying = None
        at = self.at
        back = f" You are at table {at.table.id}; type board to see it." if at is not None else ""
        self.write(f"Stopped the replay of {replaying.label}.{back}")

    def _replay_to(self, index: int) -> None:
        replaying = self.replaying
        assert replaying is not None
        index = max(0, min(index, replaying.last))
        if index == replaying.index:
            where = "the start" if index == 0 else "the end" if index == replaying.last else f"ply {index}"
            self.write(f"Already at {where} of {replaying.label} (ply {index}/{replaying.last}).")
            return
        replaying.index = index
        self._show_replay()

    def _show_replay(self) -> None:
        replaying = self.replaying
        if replaying is None:
            return
        record, index = replaying.record, replaying.index
        state = replaying.states[index]
        seats = _game_seats(record.game)
        players = "  vs  ".join(f"{seats[i]}: {_name(record.players[i], '?')}" for i in (0, 1))
        lines = [f"Replay of {replaying.label} · {printable(record.game)} · {players}", render(state.view(None), None)]
        if index > 0:
            played = record.moves[index - 1]
            lines.append(f"Ply {index}: {seats[played.seat]} played {printable(played.move)}" + (" (forced)" if played.forced else ""))
        if index == replaying.last:
            result = record.result or (state.outcome.to_dict() if state.outcome is not None else None)
            if result is not None:
                lines.append("Recorded result: " + _outcome_text(result, seats))
            else:
                lines.append("The record ends here, with no result.")
        elif state.to_move is not None:
            lines.append(f"{seats[state.to_move]} to move.")
        lines.append(f"Replay of {replaying.label}: ply {index}/{replaying.last} — forward [N], back [N], first, last, goto N, stop")
        self.write("\n".join(lines))

    # --- status line -------------------------------------------------------------------

    def status_line(self) -> str:
        """One line for the prompt's bottom toolbar: the table, its clocks counting down, a pending offer.

        Called every half second by prompt_toolkit; never raises.
        """
        try:
            parts: list[str] = []
            at = self.at
            if at is not None:
                parts.append(f"Table {at.table.id} · {at.table.game}")
                if at.clock is not None:
                    parts.append(self._clock_text(at))
                if at.offer is not None:
                    parts.append(f"{self._player(at.offer.seat)}'s {_OFFER_NOUNS.get(at.offer.kind, at.offer.kind)}: accept or decline")
            replaying = self.replaying
            if replaying is not None:
                parts.append(f"Replay of {replaying.label}: ply {replaying.index}/{replaying.last}")
            return "  |  ".join(parts)
        except Exception:  # a toolbar that raises would take the prompt down
            return ""

    def _clock_text(self, at: Seating) -> str:
        assert at.clock is not None
        seats = (self._seat_name(0), self._seat_name(1))
        try:
            return format_clock(at.clock, seats, self.now() - at.clock_at)
        except (KeyError, TypeError, ValueError, IndexError):
            return "Clock: (unreadable snapshot from the server)"

    def _set_clock(self, at: Seating, snapshot: dict[str, Any] | None) -> None:
        if snapshot is not None:
            at.clock = snapshot
            at.clock_at = self.now()

    def _stop_clock(self, at: Seating) -> None:
        """Freeze the local countdown (the game is over)."""
        clock = at.clock
        if clock is None or clock.get("running") is None:
            return
        elapsed_ms = round((self.now() - at.clock_at) * 1000)
        try:
            remaining = [int(ms) for ms in clock["remaining_ms"]]
            seat = clock["running"]
            remaining[seat] = max(0, remaining[seat] - elapsed_ms)
        except (KeyError, TypeError, ValueError, IndexError):
            return
        self._set_clock(at, dict(clock, remaining_ms=remaining, running=None))

    # --- pushes ----------------------------------------------------------------------

    async def follow_events(self) -> None:
        """Print every server push; after a lost connection, resume the session with backoff."""
        while True:
            async for event in self.client.events():
                self.on_event(event)
                await self._notify()
            if self.client.closed_by_us or self.client.superseded or self.reconnect is None:
                break  # superseded: the session lives on in another connection; taking it back would never end
            self.write(f"Connection lost ({self.client.close_reason}); reconnecting...")
            client = await self.reconnect(self.client.token, self.write)
            if client is None:
                break
            self.client = client
            self.write("Reconnected; your seats and tables are back.")
            await self._rewatch()
            await self.follow_lobby()
        if not self.client.closed_by_us:
            self.write(f"Disconnected: {self.client.close_reason}")
        self.gone = True
        self.finished.set()
        await self._notify()

    async def _rewatch(self) -> None:
        """Watch again after a reconnect (a restarted server does not remember spectators)."""
        at = self.at
        if at is None or at.seat is not None:
            return
        try:
            joined = await self.client.watch_table(at.table.id)
        except (ServerError, ConnectionLost) as exc:
            self.write(f"Could not watch table {at.table.id} again: {exc}")
            return
        self.at = self._seating(joined.table, None, joined.view, joined.moves)
        self._show()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def on_event(self, event: m.Message) -> None:
        """Update what the terminal knows from one push, and show it."""
        if self.social.on_event(event):
            return
        at = self.at
        here = at is not None and getattr(event, "table", None) == at.table.id
        if isinstance(event, m.TableUpdated):
            if at is not None and event.table.id == at.table.id:
                at.table = _with(event.table, options=at.table.options)  # the lobby's summary of long options would lose texts
                self._set_clock(at, event.table.clock)
            elif at is None:
                self.write("lobby: " + describe_table(event.table))
        elif isinstance(event, m.TableClosed):
            if at is None:
                self.write(f"lobby: table {event.table} closed")
        elif isinstance(event, m.GameStarted) and here:
            assert at is not None
            already_shown = at.table.status == "playing"  # the joiner's own reply showed it
            at.view = event.view
            at.table = _with(at.table, seats=event.seats, status="playing")
            self.write("The game starts: " + " vs ".join(f"{self._seat_name(i)} {self._player(i)}" for i in range(len(event.seats))))
            if not already_shown:
                self._show()
        elif isinstance(event, m.Moved) and here:
            assert at is not None
            at.view = event.view
            at.moves.append(event.move)
            self._set_clock(at, event.clock)
            if at.offer is not None and at.offer.seat == event.seat:
                at.offer = None  # an offer lapses when its maker moves
            who = self._seat_name(event.seat)
            self.write(f"{who} must pass." if event.forced else f"{who} played {printable(event.move)}.")
            self._show()
        elif isinstance(event, m.GameOver) and here:
            assert at is not None
            at.view = dict(at.view, outcome=event.outcome, to_move=None)
            at.view.pop("legal_moves", None)
            at.table = _with(at.table, status="over", outcome=event.outcome)
            self._stop_clock(at)
            if at.offer is not None and at.offer.kind != "rematch":
                at.offer = None
            self.write(self._result_line(event.outcome))
            if event.ratings:
                self.write(describe_change((at.table.seats[0] or self._seat_name(0), at.table.seats[1] or self._seat_name(1)), event.ratings))
            if at.seat is not None:
                self.write("Type rematch to offer a rematch with seats swapped, or leave.")
        elif isinstance(event, m.Offered) and here:
            assert at is not None
            self._on_offered(at, event)
        elif isinstance(event, m.Answered) and here:
            assert at is not None
            if at.offer is not None and at.offer.kind == event.kind:
                at.offer = None
            noun = _OFFER_NOUNS.get(event.kind, f"{printable(event.kind)} offer")
            verdict = "lapsed" if event.lapsed else "was accepted" if event.accepted else "was declined"
            self.write(f"The {noun} {verdict}.")
        elif isinstance(event, m.TakenBack) and here:
            assert at is not None
            at.view = event.view
            at.moves = list(event.moves)
            at.table = _with(at.table, ply=event.view.get("ply", at.table.ply))
            at.offer = None
            self._set_clock(at, event.clock)
            self._moved_at_ply = -1  # the ply went back: the turn is ours again if the view says so
            self.write(f"{_plies(event.plies).capitalize()} taken back.")
            self._show()
        elif isinstance(event, m.RematchStarted):
            if at is None or at.table.id == event.previous:
                self.at = self._seating(event.table, event.seat, event.view, [])
                self._moved_at_ply = -1
                self.write(f"Rematch at table {event.table.id}: you play {self._seat_name(event.seat)} this time.")
                self._show()
            else:
                self.write(f"The rematch of table {event.previous} is ready at table {event.table.id}; type join {event.table.id} to go there.")
        elif isinstance(event, m.Chat):
            where = "[lobby]" if event.table is None else f"[table {event.table}]"
            self.write(f"{where} {printable(event.name)}: {printable(event.text)}")
        elif isinstance(event, m.Resumed):
            if event.seat is not None or at is None or at.table.id == event.table.id:
                self.at = self._seating(event.table, event.seat, event.view, event.moves)
                self._moved_at_ply = -1
                self._show()
        elif isinstance(event, m.PlayerAway) and here:
            self.write(
                f"{printable(event.name)} lost their connection; their seat is forfeited in {event.forfeit_in_s:.0f} s unless they return."
            )
        elif isinstance(event, m.PlayerBack) and here:
            self.write(f"{printable(event.name)} is back.")
        elif isinstance(event, m.Error):
            self.write(f"error ({printable(event.code)}): {printable_lines(event.message)}")
        elif isinstance(event, m.Shutdown):
            self.write(f"The server is shutting down: {printable_lines(event.message)}")

    def _on_offered(self, at: Seating, event: m.Offered) -> None:
        if event.seat == at.seat:
            return  # our own offer: the command already said so
        who = self._player(event.seat)
        what = {
            "draw": "offers a draw",
            "takeback": f"asks to take back {_plies(event.plies)}",
            "rematch": "offers a rematch with seats swapped",
        }.get(event.kind, f"offers {printable(event.kind)}")
        if at.seat is None:
            self.write(f"{who} {what}.")
            return
        at.offer = event
        self.write(f"{who} {what} — type accept or decline")

    # --- drawing ---------------------------------------------------------------------

    def _seat_name(self, seat: int) -> str:
        at = self.at
        if at is None:
            return f"seat {seat}"
        for game in self._games():
            if game["name"] == at.table.game:
                return str(game["seats"][seat])
        return f"seat {seat}"

    def _player(self, seat: int) -> str:
        """The (sanitised) name of the player in ``seat`` at the current table, or the seat's colour.

        A computer seat reads ``computer (level 4)``; a program that said hello as a bot gets `` (bot)``.
        """
        at = self.at
        if at is None or not 0 <= seat < len(at.table.seats) or not at.table.seats[seat]:
            return self._seat_name(seat)
        return player_label(at.table, seat)

    def _against_computer(self, at: Seating) -> bool:
        computer = at.table.computer
        return computer is not None and at.seat is not None and computer[1 - at.seat] is not None

    def _opponent(self, at: Seating) -> str:
        return self._player(1 - at.seat) if at.seat is not None else "your opponent"

    def _show(self) -> None:
        at = self.at
        if at is None:
            return
        view = at.view
        names = [player_label(at.table, seat) for seat in (0, 1)]
        lines = [
            f"Table {at.table.id} · {at.table.game} · "
            + "  vs  ".join(f"{self._seat_name(i)}: {names[i]}" for i in (0, 1)),
            render(view, at.seat),
        ]
        if at.clock is not None:
            lines.append(self._clock_text(at))
        lines.append(f"Turn {view['ply'] + 1}")
        outcome = view.get("outcome")
        if outcome is not None:
            lines.append(self._result_line(outcome))
        elif at.table.status == "waiting":
            lines.append("Waiting for a second player.")
        else:
            mover = view["to_move"]
            if view.get("forced_pass"):
                lines.append(f"{self._seat_name(mover)} ({names[mover]}) must pass; the server passes for them.")
                self.write("\n".join(lines))
                return
            lines.append(f"It is the turn of {self._seat_name(mover)} ({names[mover]})" + (" — your turn" if mover == at.seat else ""))
            if mover == at.seat:
                lines.append("Commands: type a move (e.g. " + _example(view) + "), moves, draw, takeback, resign, say, leave, help, quit")
        self.write("\n".join(lines))

    def _result_line(self, outcome: dict[str, Any]) -> str:
        return "Result: " + _outcome_text(outcome, (self._seat_name(0), self._seat_name(1)))


class UsageError(Exception):
    """A command typed wrongly; the message says how to type it."""


def describe_table(table: m.TableInfo) -> str:
    """One lobby line: id, game, options, clock, seats, status, spectators (sanitised: names come from users)."""
    words = [f"{printable(str(k))}={_option_text(v)}" for k, v in table.options.items() if v is not None]
    if table.time_control:
        words.append(f"tc={printable(table.time_control)}")
    if table.seed is not None and table.status == "waiting":
        words.append(f"seed={printable(str(table.seed))}")  # a chosen seed: the setup is no secret at this table
    if table.hints and table.computer is None:
        words.append("hints")
    if table.ratings is not None:
        words.append("rated")
    seats = " vs ".join(player_label(table, seat) for seat in range(len(table.seats)))
    return (
        f"#{table.id} {printable(table.game)} {' '.join(words)} — {seats} — "
        f"{printable(table.status)}, ply {table.ply}, {table.spectators} watching"
    )


def player_label(table: m.TableInfo, seat: int) -> str:
    """How a seat's player reads (sanitised): ``ann``, ``(free)``, ``computer (level 4)``, ``bot-1 (bot)``."""
    level = table.computer[seat] if table.computer is not None and seat < len(table.computer) else None
    if level is not None:
        return _computer(level)
    label = _name(table.seats[seat])
    if table.bots is not None and seat < len(table.bots) and table.bots[seat] and table.seats[seat]:
        label += " (bot)"
    rating = table.ratings[seat] if table.ratings is not None and seat < len(table.ratings) else None
    if rating is not None and table.seats[seat]:
        label += f" ({rating_text(rating.rating, rating.provisional)})"
    return label


def _computer(level: int | None) -> str:
    return f"computer (level {level})" if level is not None else "(free)"


@dataclass
class NewTable:
    """What ``new GAME key=value ...`` asks for: the request's fields, read and checked.

    Keys of the command itself (``seed``, ``tc``, ``seat``, ``vs``, ``level``,
    ``computer``, ``hints``, ``rated``) come before the game's options of the same name.
    """

    options: dict[str, Any] = field(default_factory=dict)
    seed: str | None = None
    time_control: str | None = None
    seat: int | None = 0
    computer: dict[int, int] = field(default_factory=dict)
    hints: bool = False
    rated: bool = False

    @classmethod
    def parse(cls, game: games.Game, words: Sequence[str]) -> "NewTable":
        """Read ``words`` (``key=value``) for ``game``.

        Raises:
            UsageError: a word that is not key=value, a bad seat, level or
                ``computer`` list, a text option's file that cannot be read.
            games.GameError: an option the game does not have, or a bad value.
        """
        table = cls()
        seen: dict[str, str] = {}
        for word in words:
            key, sep, text = word.partition("=")
            if not sep:
                raise UsageError(f"options are key=value, not {word!r}")
            if key in ("seed", "tc", "seat", "vs", "level", "computer", "hints", "rated"):
                seen[key] = text
                continue
            option = game.option(key)
            table.options[key] = _read_file(key, text) if option.type == "str" else option.parse_text(text)
        table.seed = seen.get("seed")
        tc = seen.get("tc")
        table.time_control = None if tc is None or tc.lower() in ("", "none", "-") else tc
        table.hints = _switch("hints", seen.get("hints", "off"))
        table.rated = _switch("rated", seen.get("rated", "no"))
        if "seat" in seen:
            table.seat = _seat_word(seen["seat"])
        table._read_computer(seen)
        return table

    def _read_computer(self, seen: dict[str, str]) -> None:
        if "computer" in seen:
            if "vs" in seen or "level" in seen or "seat" in seen:
                raise UsageError("computer=L0,L1 seats the computer in both seats (you watch): leave out vs, level and seat")
            levels = seen["computer"].split(",")
            if len(levels) != 2:
                raise UsageError("usage: computer=L0,L1, the levels of seat 0 and seat 1, e.g. computer=3,5")
            self.computer = {0: _level(levels[0]), 1: _level(levels[1])}
            self.seat = None
            return
        vs = seen.get("vs")
        if vs is not None and vs.lower() not in ("computer", "cpu", "bot"):
            raise UsageError(f"vs=computer is the one opponent new can seat, not vs={vs}")
        if vs is None and "level" not in seen:
            return
        level = _level(seen["level"]) if "level" in seen else DEFAULT_COMPUTER_LEVEL
        assert self.seat is not None
        self.computer = {1 - self.seat: level}


def _level(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) not in COMPUTER_LEVELS:
        raise UsageError(f"a computer level is 1 (a beginner can win) to 5 (the strongest), not {text!r}")
    return int(text)


def _seat_word(text: str) -> int:
    if text not in ("0", "1"):
        raise UsageError(f"seat=0 (moves first) or seat=1, not seat={text}")
    return int(text)


def _switch(key: str, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("on", "yes", "true", "1"):
        return True
    if lowered in ("off", "no", "false", "0"):
        return False
    raise UsageError(f"{key}=on or {key}=off, not {key}={text}")


def describe_archived(entry: dict[str, Any]) -> str:
    """One line of the archive: id, game, players, result, plies, when it finished (sanitised)."""
    game = printable(str(entry.get("game", "?")))
    seats = _game_seats(game)
    players = list(entry.get("players") or [])[:2]
    players += [None] * (2 - len(players))
    names = " vs ".join(f"{seats[i]} {_name(players[i], '?')}" for i in (0, 1))
    result = entry.get("result")
    result_text = _outcome_text(result, seats) if isinstance(result, dict) else "no result"
    options = entry.get("options") or {}
    words = "".join(f" {printable(str(k))}={_option_text(v)}" for k, v in options.items() if v is not None)
    plies = entry.get("plies")
    return (
        f"#{entry.get('id', '?')} {game}{words} — {names} — {result_text} — "
        f"{plies if plies is not None else '?'} plies — finished {_when(entry.get('finished'))}"
    )


def format_clock(snapshot: dict[str, Any], seat_names: Sequence[str], elapsed_s: float) -> str:
    """The clock line for a snapshot, counted down locally.

    Args:
        snapshot: ``{"remaining_ms": [int, int], "running": 0 | 1 | None, "control": "5+3"}``
            as the server sent it.
        seat_names: the two seats' names (``("Black", "White")``).
        elapsed_s: seconds since the snapshot arrived; taken off the running seat.

    >>> format_clock({"remaining_ms": [272_000, 300_000], "running": 0, "control": "5+3"}, ("Black", "White"), 0.4)
    'Clock: Black 4:31 · White 5:00 (running: Black)'
    """
    remaining = [int(ms) for ms in snapshot["remaining_ms"]]
    running = snapshot.get("running")
    if running in (0, 1):
        remaining[running] -= max(0, round(elapsed_s * 1000))
    text = f"Clock: {seat_names[0]} {_clock_time(remaining[0])} · {seat_names[1]} {_clock_time(remaining[1])}"
    if running in (0, 1):
        text += f" (running: {seat_names[running]})"
    return text


def _clock_time(ms: int) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour; ``0:ss.t`` under ten seconds), rounded down."""
    ms = max(0, ms)
    if ms < 10_000:
        return f"0:{ms // 1000:02d}.{ms % 1000 // 100}"
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def _outcome_text(outcome: dict[str, Any], seats: Sequence[str]) -> str:
    score = outcome.get("score")
    tail = f" ({score[0]}–{score[1]})" if score else ""
    reason = printable(str(outcome.get("reason", "")))
    winner = outcome.get("winner")
    if winner is None:
        return f"draw — {reason}{tail}"
    who = seats[winner] if winner in (0, 1) else f"seat {winner}"
    return f"{who} wins — {reason}{tail}"


def _game_seats(name: str) -> tuple[str, str]:
    try:
        seats = games.get(name).seats
    except games.GameError:
        return ("seat 0", "seat 1")
    return (seats[0], seats[1])


def _name(name: str | None, missing: str = "(free)") -> str:
    return printable(name) if name else missing


def _when(text: Any) -> str:
    if not isinstance(text, str):
        return "?"
    try:
        return datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return printable(text)


def _plies(count: int) -> str:
    return f"{count} ply" if count == 1 else f"{count} plies"


def _option_text(value: Any) -> str:
    """An option's value for one lobby line (sanitised): a long text the server summarized shows as ``<10000 chars>``."""
    if isinstance(value, dict) and isinstance(value.get("length"), int):
        return f"<{value['length']} chars>"
    return printable(_short(value))


def _short(value: Any) -> str:
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= 20 else text[:17] + "..."


def _example(view: dict[str, Any]) -> str:
    legal = view.get("legal_moves") or []
    return legal[0] if legal else "d3"


def _with(table: m.TableInfo, **changes: Any) -> m.TableInfo:
    import msgspec

    return msgspec.structs.replace(table, **changes)


def _read_file(key: str, path: str) -> str:
    """The text of the file named by a ``key=FILE`` option (pieces, position) or command."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the {key} file {path!r}: {exc}") from None


def _write_file(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc}") from None


def _table_and_seat(args: list[str]) -> tuple[int, int | None]:
    try:
        table_id = int(args[0].lstrip("#"))
        seat = int(args[1]) if len(args) > 1 else None
    except (IndexError, ValueError):
        raise UsageError("usage: join ID [SEAT] / watch ID, e.g. join 3") from None
    return table_id, seat


def _game_id(text: str) -> int | None:
    """The game id in ``12`` or ``#12``, or ``None`` when ``text`` is not one."""
    digits = text[1:] if text.startswith("#") else text
    return int(digits) if digits.isascii() and digits.isdigit() and int(digits) >= 1 else None


def _count(args: list[str], usage: str, default: int = 1) -> int:
    """The optional positive count in ``args`` (``default`` when absent)."""
    if not args:
        return default
    if len(args) > 1 or not (args[0].isascii() and args[0].isdigit()) or int(args[0]) < 1:
        raise UsageError(usage)
    return int(args[0])


def _chat_text(args: list[str], command: str) -> str:
    text = args[0].strip() if args else ""
    if not text:
        raise UsageError(f"usage: {command} TEXT")
    if len(text) > m.MAX_CHAT_CHARS:
        raise UsageError(f"a chat line holds at most {m.MAX_CHAT_CHARS} characters, not {len(text)}")
    return text


# --- input sources -------------------------------------------------------------------


class LineInput:
    """Reads stdin line by line in a daemon thread (works for pipes and files)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(self._queue.put_nowait, line)
            loop.call_soon_threadsafe(self._queue.put_nowait, None)

        threading.Thread(target=pump, daemon=True, name="stdin").start()

    async def read(self) -> str | None:
        """The next line, or ``None`` at end of input."""
        return await self._queue.get()


class PromptInput:
    """Reads lines with prompt_toolkit, keeping the prompt below printed output.

    Args:
        prompt: the prompt text.
        toolbar: returns the text of a bottom toolbar (e.g.
            :meth:`TerminalClient.status_line`), redrawn every half second so
            the clocks count down; ``None``: no toolbar.
    """

    def __init__(self, prompt: str = "> ", toolbar: Callable[[], str] | None = None) -> None:
        from prompt_toolkit import PromptSession

        extra: dict[str, Any] = {}
        if toolbar is not None:
            extra = {"bottom_toolbar": toolbar, "refresh_interval": 0.5}
        self._session: Any = PromptSession(prompt, **extra)

    async def read(self) -> str | None:
        """The next line, or ``None`` when the user pressed Ctrl-D."""
        try:
            return await self._session.prompt_async()
        except EOFError:
            return None
        except KeyboardInterrupt:
            return None
