"""The line-mode front end: a lobby and game shell on the session model (:class:`client.session.ClientSession`).

With a TTY it reads commands with prompt_toolkit, so server pushes print above
the prompt without clobbering what the user is typing; the prompt names the
focused table (``[t3 othello, your move]``) and a bottom toolbar shows its
clocks counting down. With stdin piped it reads one command per line and
prints plain text, so it can be scripted; the ``wait`` command lets a script
wait for its turn, and nothing asks for confirmation.

A player may sit at and watch several tables at once: one of them is focused
(``switch N``), and moves, offers and ``board`` go to the focused table only.

Everything that comes from another user (names, chat, record headers) goes
through :func:`client.sanitize.printable` before it is printed.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import textwrap
import time
from typing import Any, Awaitable, Callable

import games
from protocol import messages as m

from .connection import Client, ConnectionLost, ServerError
from .line_input import INTERRUPT, LineInput, PromptInput
from .line_replay import Replayer, Replaying
from .line_script import EXIT_COMMAND, EXIT_OK, EXIT_REFUSED, EXIT_WAIT
from .line_view import LineView
from .line_wait import WAIT_KINDS, WaitFailed, wait_done
from .line_text import (
    DEFAULT_COMPUTER_LEVEL,
    NewTable,
    UsageError,
    chat_text,
    computer_label,
    describe_archived,
    describe_table,
    format_clock,
    player_label,
    table_and_seat,
    write_file,
)
from .ratings_text import FAMILIES, describe_change, describe_finger, describe_ranking
from .rules import RulesNotFound, game_rules
from .sanitize import printable, printable_lines
from .session import ClientSession, SessionError, TableState
from .social_commands import SOCIAL_HELP, SocialCommands

__all__ = [
    "TerminalClient",
    "LineInput",
    "PromptInput",
    "NewTable",
    "UsageError",
    "describe_table",
    "describe_archived",
    "format_clock",
    "player_label",
    "Replaying",
]

HELP = """Commands:
  list                      show the tables in the lobby
  games                     the games and their options
  rules [GAME]              the rules of GAME (default: the focused table's game
                            or the replay's); all of them are in docs/RULES.md
  new GAME [key=value ...]  create a table and sit down (games: {games})
                            text options name a file: pieces=FILE, position=FILE;
                            seed=TEXT seeds a random setup; tc=MINUTES+INCREMENT
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
  save FILE                 write the focused position to FILE (Nine Men's Morris)
  join ID [SEAT]            take a free seat at table ID (SEAT 0 or 1); at a
                            table where you sit already, just switch to it
  watch ID                  watch table ID; stops watching the table you were
                            watching (tables you sit at are kept)
Your tables (you may sit at and watch several; one is focused):
  tables                    list the tables you sit at or watch
  switch N, t N             focus table N: moves and offers go to it
  leave [N|all]             leave table N (default: the focused one), or all
                            of them; leaving a running game you sit in forfeits it
                            (aborts it while a side has not moved yet)
  board                     show the focused position again (the replay's while replaying)
  history                   the focused table's moves, numbered by ply
  moves                     list your legal moves
  hint                      ask the computer for a move (at tables with hints)
Game controls (players, at the focused table):
  resign                    resign the game
  abort                     call the game off before your own first move: no
                            result, not rated (timed games abort by themselves
                            when the side to move takes too long to move first)
  draw                      offer your opponent a draw (lapses when you move)
  takeback                  ask to take back your last move: on your turn your
                            move and their reply, on theirs your move alone
  rematch                   after the game, offer a rematch with seats swapped
  accept / decline [KIND]   answer your opponent's latest offer (KIND: draw,
                            takeback or rematch, if several are pending)
Chat:
  say TEXT                  chat at the focused table (in the lobby when at none)
  shout TEXT                chat in the lobby
Archive:
  archive [N]               the server's last N finished games (default 20)
  replay ID | replay FILE   step through finished game ID, or a record file
                            (Parlour's plain text or GGF)
                            while replaying: forward|f [N], back|b [N], first,
                            last, goto N, stop (leave the replay)
  export ID FILE            save the record of finished game ID to FILE
    [--format text|ggf]     (GGF, Othello only: --format ggf or a FILE.ggf)
Ratings:
  finger NAME               NAME's ratings, record and last rated games
  top GAME [FAMILY] [RANK]  the best players of GAME (FAMILY: bullet, blitz,
                            rapid, classical, untimed or all; from RANK on)
Other:
  wait turn|start|end       (scripts) wait for your turn, the start or the end
                            of the game at the focused table; an error as soon
                            as it cannot come (game over, left, watching...)
  help                      this text
  quit                      leave the server
On a terminal, resign, leaving a running game, quit and Ctrl-C during a game
ask y/N first; with piped input (scripts) they act at once.
Anything else is a move in the game's notation, e.g. d3."""

STORAGE_FULL_TEXT = "The server cannot save moves right now (its disk is full); nothing was changed. Try again later."
"""What the player reads when the server answers ``storage_full``."""

STORAGE_UNAVAILABLE_TEXT = "The server cannot save moves right now (its database cannot be reached); nothing was changed. Try again later."
"""What the player reads when the server answers ``storage_unavailable``."""

OFFER_KINDS = ("draw", "takeback", "rematch")
LIST_MOST = 1000
"""The most tables ``list`` shows (ten pages of the lobby)."""
_RAW_COMMANDS = ("say", "shout", "rules", "tell")  # the rest of the line is the text, quotes and all
_REPLAY_ONLY = ("f", "b")  # short forms that are commands only while replaying

Reconnect = Callable[[str, Callable[[str], None]], Awaitable["Client | None"]]
Confirm = Callable[[str], Awaitable[bool]]


class TerminalClient:
    """Reads commands, sends requests through the session model, and prints what changes.

    Args:
        client: a connected :class:`Client`.
        write: prints one block of text (a line or a board).
        reconnect: resumes the session from its token after a lost connection
            (``None``: do not try); returns the new client, or ``None`` to give up.
            Not called when another connection resumed the session (the
            client is ``superseded``).
        now: the monotonic clock used to count the clocks down between updates.
        confirm: asks the user a yes/no question (``None``: scripts, where
            resign, leave and quit act without asking).
        quit_warning: in ``parlour host``, returns what quitting does to the
            others (it stops the server); ``quit`` then always asks.
        terminal_size: returns the terminal's ``(columns, lines)``; boards are
            compact below 80x24.
    """

    def __init__(
        self,
        client: Client,
        write: Callable[[str], None],
        reconnect: Reconnect | None = None,
        now: Callable[[], float] = time.monotonic,
        *,
        confirm: Confirm | None = None,
        quit_warning: Callable[[], str] | None = None,
        terminal_size: Callable[[], tuple[int, int]] = lambda: tuple(shutil.get_terminal_size()),  # type: ignore[return-value]
    ) -> None:
        self.session = ClientSession(client, now)
        self.write = write
        self.reconnect = reconnect
        self.now = now
        self.confirm = confirm
        self.quit_warning = quit_warning
        self.terminal_size = terminal_size
        self.gone = False  # the connection is lost for good
        self.status = EXIT_OK  # how the last command ended (client.line_script)
        self._shut_down = False  # the server said it is shutting down (and the connection has not come back since)
        self.finished = asyncio.Event()  # set with gone
        self.replayer = Replayer(lambda: self.client, write, self._where_now)
        self._changed = asyncio.Condition()
        self.view = LineView(self.session, write, terminal_size, lambda: self.replaying, now)
        self._commands: dict[str, Callable[[list[str]], Awaitable[None]]] = {
            "list": self._list,
            "new": self._new,
            "join": self._join,
            "watch": self._watch,
            "leave": self._leave,
            "tables": self._tables,
            "switch": self._switch,
            "t": self._switch,
            "board": self._board,
            "history": self._history,
            "moves": self._moves,
            "hint": self._hint,
            "resign": self._resign,
            "abort": self._abort,
            "draw": self._draw,
            "takeback": self._takeback,
            "rematch": self._rematch,
            "accept": self._accept,
            "decline": self._decline,
            "say": self._say,
            "shout": self._shout,
            "archive": self.replayer.archive,
            "replay": self.replayer.replay,
            "export": self.replayer.export,
            "forward": self.replayer.forward,
            "f": self.replayer.forward,
            "back": self.replayer.back,
            "b": self.replayer.back,
            "first": self.replayer.first,
            "last": self.replayer.last,
            "goto": self.replayer.goto,
            "stop": self.replayer.stop,
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

    @property
    def client(self) -> Client:
        """The current connection (a new one after a reconnect)."""
        return self.session.client

    @client.setter
    def client(self, client: Client) -> None:
        self.session.client = client

    @property
    def at(self) -> TableState | None:
        """The focused table, or ``None`` in the lobby."""
        return self.session.focused

    @property
    def replaying(self) -> Replaying | None:
        """The recorded game being stepped through, or ``None``."""
        return self.replayer.replaying

    # --- commands --------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Run one command line; return ``False`` when the user asked to quit (and confirmed, on a terminal).

        Afterwards :attr:`status` says how the command ended: 0, or the exit status
        of its failure (:mod:`client.line_script`).
        """
        self.status = EXIT_OK
        line = line.strip()
        if line == INTERRUPT:
            return not await self._quit_confirmed(interrupted=True)
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
                self.status = EXIT_COMMAND
                return True
            command, words = words[0].lower(), words[1:]
        if command in ("quit", "exit"):
            return not await self._quit_confirmed()
        action = self._commands.get(command)
        if command in _REPLAY_ONLY and self.replaying is None:
            action = None
        try:
            if action is not None:
                await action(words)
            else:
                await self._move(line)
        except ServerError as exc:
            self.write(self._refusal_text(exc))
            self.status = EXIT_REFUSED
        except ConnectionLost:
            self.write("not connected to the server right now; try again in a moment")
            self.status = EXIT_REFUSED
        except games.GameError as exc:
            self.write(f"error: {printable_lines(str(exc))}")
            self.status = EXIT_COMMAND
        except (UsageError, SessionError) as exc:
            self.write(str(exc))
            self.status = EXIT_COMMAND
        except WaitFailed as exc:
            self.write(str(exc))
            self.status = EXIT_WAIT
        return True

    def _refusal_text(self, exc: ServerError) -> str:
        if exc.code == "storage_full":
            return STORAGE_FULL_TEXT
        if exc.code == "storage_unavailable":
            return STORAGE_UNAVAILABLE_TEXT
        text = f"error ({exc.code}): {printable_lines(exc.message)}"
        if exc.code == "too_many_tables":
            text += "\nYou are at as many tables as this server allows: leave one first (tables lists them)."
        return text

    async def _ask(self, question: str) -> bool:
        """True when the user agrees, or at once without a terminal to ask on."""
        return True if self.confirm is None else await self.confirm(question)

    async def _quit_confirmed(self, interrupted: bool = False) -> bool:
        if self.quit_warning is not None and self.confirm is not None:
            return await self._ask(f"{self.quit_warning()} Quit?")
        running = [state for state in self.session.tables.values() if state.is_player and state.running]
        if not running:
            return True
        how = "Ctrl-C: quit now?" if interrupted else "Quit now?"
        return await self._ask(f"{how} {_lost_games_text(running, 'is {ended} unless you return', 't')}.")

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
        chance = ", ".join(game["name"] for game in self._games() if game.get("uses_seed"))
        lines.append(f"Any game: tc=MINUTES+INCREMENT (a clock, e.g. tc=5+3); with a random setup ({chance}): seed=TEXT (the setup seed)")
        self.write("\n".join(lines))

    async def _rules(self, args: list[str]) -> None:
        if not args and self.replaying is not None:
            args = [self.replaying.record.game]
        elif not args and self.at is not None:
            args = [self.at.game]
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
        self.write("\n".join(describe_table(table, self._games()) for table in tables[:LIST_MOST]))
        if len(tables) > LIST_MOST:
            self.write(f"(only the first {LIST_MOST} tables are shown)")

    # --- coming to and leaving tables ---------------------------------------------------------

    async def _new(self, args: list[str]) -> None:
        if not args:
            raise UsageError(
                "usage: new GAME [key=value ...] [tc=MINUTES+INCREMENT] [vs=computer level=N] [computer=L0,L1] [hints=on],"
                " e.g. new othello size=8 tc=5+3"
            )
        game = games.get(args[0].lower())
        table = NewTable.parse(game, args[1:])
        state = await self.session.create(
            game.name,
            table.options,
            seed=table.seed,
            seat=table.seat,
            time_control=table.time_control,
            computer=table.computer,
            hints=table.hints,
            rated=table.rated,
        )
        self.write(self._created_text(state))
        await self._arrived(state)

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

    def _created_text(self, state: TableState) -> str:
        table_id, levels = state.id, state.info.computer or [None, None]
        if state.seat is None:
            players = " vs ".join(computer_label(level) for level in levels)
            return f"Created table {table_id}: {players}; you are watching."
        opponent = levels[1 - state.seat]
        if opponent is not None:
            return f"Created table {table_id}: you play against {computer_label(opponent)}; the game starts now."
        return f"Created table {table_id}; waiting for an opponent (they type: join {table_id})."

    async def _join(self, args: list[str]) -> None:
        table_id, seat = table_and_seat(args)
        known = self.session.tables.get(table_id)
        if known is not None and known.is_player and seat in (None, known.seat):
            await self._switch_to(table_id)
            return
        await self._arrived(await self.session.join(table_id, seat))

    async def _watch(self, args: list[str]) -> None:
        table_id, _ = table_and_seat(args[:1])
        if table_id in self.session.tables:
            await self._switch_to(table_id)
            return
        previous = self.at if self.at is not None and not self.at.is_player else None
        try:
            state = await self.session.watch(table_id)
        except ServerError as exc:
            if exc.code != "too_many_tables" or previous is None:
                raise
            await self._stop_watching(previous)  # make room: the watched table this one replaces
            previous = None
            state = await self.session.watch(table_id)
        if previous is not None and previous.id in self.session.tables:
            await self._stop_watching(previous)
        await self._arrived(state)
        address = self.client.web_address(table_id)
        if address is not None:
            self.write(f"Watch it in a browser too: {address}")

    async def _stop_watching(self, state: TableState) -> None:
        await self.session.leave(state.id)
        self.write(f"Stopped watching table {state.id}.")

    async def _arrived(self, state: TableState) -> None:
        """Say where we are now and show the table (after new, join or watch)."""
        role = "watching" if state.seat is None else f"playing {state.game} as {self.view.seat_name(state.seat)}"
        self.write(f"At table {state.id}, {role}.")
        if state.moves:
            self.write("Moves so far: " + " ".join(printable(move) for move in state.moves))
        self.view.show()
        self.view.chat_so_far(state)
        await self.follow_lobby()
        await self._notify()

    async def _switch(self, args: list[str]) -> None:
        if len(args) != 1 or not args[0].lstrip("t#").isdigit():
            raise UsageError("usage: switch N (or t N): focus table N; tables lists yours")
        await self._switch_to(int(args[0].lstrip("t#")))

    async def _switch_to(self, table_id: int) -> None:
        self.session.set_focus(table_id)
        state = self.session.table(table_id)
        role = "watching" if state.seat is None else f"playing as {self.view.seat_name(state.seat)}"
        self.write(f"Switched to table {table_id} ({state.game}, {role}).")
        self.view.show()
        await self._notify()

    async def _tables(self, args: list[str]) -> None:
        if not self.session.tables:
            self.write("You are at no table: new, join or watch one (list shows the lobby).")
            return
        lines = [self.view.table_line(state) for state in self.session.tables.values()]
        self.write("\n".join(lines) + "\nswitch N focuses a table; leave N leaves it.")

    async def _leave(self, args: list[str]) -> None:
        if args and args[0].lower() == "all":
            targets = list(self.session.tables.values())
            if not targets:
                raise UsageError("you are at no table")
        else:
            targets = [self._table_arg(args, "leave [N|all]")]
        running = [state for state in targets if state.is_player and state.running]
        if running:
            where = ", ".join(f"table {state.id}" for state in running)
            if not await self._ask(f"Leave {where}? {_lost_games_text(running, 'is {ended} if you leave', 'table ')}."):
                self.write("Not left.")
                return
        for state in targets:
            await self.session.leave(state.id)
            self.write(f"Left table {state.id}.")
        focused = self.at
        if focused is not None and len(targets) == 1:
            self.write(f"Now at table {focused.id} ({focused.game}); tables lists yours.")
        await self.follow_lobby()
        await self._notify()

    def _table_arg(self, args: list[str], usage: str) -> TableState:
        """The table named by ``args`` (``N``, ``tN`` or ``#N``), or the focused one when there is none."""
        if not args:
            return self._require_table()
        text = args[0].lstrip("t#")
        if len(args) > 1 or not text.isdigit():
            raise UsageError(f"usage: {usage}")
        return self.session.table(int(text))

    async def follow_lobby(self) -> None:
        """Watch the lobby's changes and chat while at no table, and only then (a table's own pushes are enough there).

        A refusal is shown, not raised: the lobby is still there with ``list``. A lost
        connection is left to :meth:`follow_events`, which says so and calls this again
        once reconnected.
        """
        wanted = not self.session.tables
        if self.client.watching_lobby == wanted:
            return
        try:
            await self.client.watch_lobby(wanted)
        except ConnectionLost:
            pass
        except ServerError as exc:
            self.write(f"Could not {'watch' if wanted else 'stop watching'} the lobby: {exc}")

    # --- the focused table ----------------------------------------------------------------

    async def _board(self, args: list[str]) -> None:
        if self.replaying is not None:
            self.replayer.show()
            return
        self._require_table()
        self.view.show()

    async def _history(self, args: list[str]) -> None:
        state = self._table_arg(args, "history [N]")
        if not state.moves:
            self.write(f"No moves yet at table {state.id}.")
            return
        words = [
            f"{ply}.{printable(move)}" + ("(forced)" if forced else "")
            for ply, (move, forced) in enumerate(zip(state.moves, state.forced), start=1)
        ]
        width = max(40, min(self.terminal_size()[0], 100) - 1)
        self.write(f"Moves at table {state.id} ({state.game}), by ply:\n" + textwrap.fill("  ".join(words), width))

    async def _moves(self, args: list[str]) -> None:
        at = self._require_table()
        legal = at.legal_moves
        if legal is None and at.seat is not None and at.forced_pass and at.to_move == at.seat:
            self.write("You must pass; the server passes for you.")
        elif legal is None:
            self.write("It is not your turn." if at.seat is not None else "Spectators have no moves.")
        else:
            self.write("Legal moves: " + " ".join(legal))

    async def _hint(self, args: list[str]) -> None:
        at = self._require_seat("ask for a hint")
        hint = await self.session.hint(at.id)
        self.write(f"Hint: {printable(hint.move)} (the computer's choice for turn {hint.ply + 1}).")

    async def _save(self, args: list[str]) -> None:
        at = self._require_table()
        if len(args) != 1:
            raise UsageError("usage: save FILE")
        position = at.view.get("position")
        if not isinstance(position, str):
            raise UsageError(f"{at.game} positions cannot be saved to a file")
        write_file(args[0], position)
        self.write(f"Saved the position to {args[0]}.")

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
            raise UsageError(f"spectators cannot move (you are watching table {at.id}); type help for commands")
        await self.session.move(at.id, text)

    async def _wait(self, args: list[str]) -> None:
        what = args[0].lower() if args else "turn"
        if what not in WAIT_KINDS or len(args) > 1:
            raise UsageError("usage: wait turn|start|end")
        table = self.at.id if self.at is not None else None
        async with self._changed:
            await self._changed.wait_for(lambda: wait_done(what, table, self.session, self.gone))

    def _require_table(self) -> TableState:
        if self.at is None:
            raise UsageError("you are not at a table: use new, join or watch first")
        return self.at

    def _require_seat(self, what: str) -> TableState:
        at = self._require_table()
        if at.seat is None:
            raise UsageError(f"only the players can {what}; you are watching table {at.id}")
        return at

    # --- game controls ---------------------------------------------------------------

    async def _resign(self, args: list[str]) -> None:
        at = self._require_seat("resign")
        if not await self._ask(f"Resign the game at table {at.id} ({at.game})?"):
            self.write("Not resigned.")
            return
        await self.session.resign(at.id)

    async def _abort(self, args: list[str]) -> None:
        if args:
            raise UsageError("usage: abort (it calls off the game at the focused table, before your own first move)")
        at = self._require_seat("abort the game")
        await self.session.abort(at.id)  # the server decides: it refuses once we have moved, saying so

    async def _draw(self, args: list[str]) -> None:
        at = self._require_seat("offer a draw")
        await self.session.offer_draw(at.id)
        self.write(f"You offered a draw; waiting for {self.view.opponent(at)} to accept or decline.")

    async def _takeback(self, args: list[str]) -> None:
        if args:
            raise UsageError("usage: takeback (it takes back your last move, and on your turn their reply too)")
        at = self._require_seat("ask for a takeback")
        plan = await self.session.takeback(at.id)
        what = plan.describe(at.seat)
        if self.view.against_computer(at):
            self.write(f"You asked for a takeback, which {what}; the computer grants it at once.")
            return
        self.write(f"You asked for a takeback, which {what}; waiting for {self.view.opponent(at)} to accept or decline.")

    async def _rematch(self, args: list[str]) -> None:
        at = self._require_seat("offer a rematch")
        await self.session.offer_rematch(at.id)
        self.write(f"You offered a rematch with seats swapped; waiting for {self.view.opponent(at)} to answer.")

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
        else:
            offer = at.opponent_offer()
            if offer is None:
                raise UsageError("There is no offer to answer.")
            kind = offer.kind
        await self.session.answer(at.id, kind, accept)

    # --- chat ------------------------------------------------------------------------

    async def _say(self, args: list[str]) -> None:
        text = chat_text(args, "say")
        await self.session.say(text, table=self.at.id if self.at is not None else None)

    async def _shout(self, args: list[str]) -> None:
        await self.session.say(chat_text(args, "shout"), table=None)

    def _where_now(self) -> str:
        at = self.at
        return f" You are at table {at.id}; type board to see it." if at is not None else ""

    # --- status line and prompt ---------------------------------------------------------------

    def prompt_text(self) -> str:
        """The prompt: the focused table and what it waits for, e.g. ``[t3 othello, your move] ``; ``> `` in the lobby."""
        return self.view.prompt_text()

    def status_line(self) -> str:
        """One line for the prompt's bottom toolbar (see :meth:`LineView.status_line`); never raises."""
        return self.view.status_line()

    # --- pushes ----------------------------------------------------------------------

    async def follow_events(self) -> None:
        """Print every server push; after a lost connection, resume the session with backoff."""
        while True:
            async for event in self.client.events():
                self.on_event(event)
                await self._notify()
            if not self.client.closed_by_us:
                self.session.mark_offline()  # clocks read as paused until the session is back
            if self.client.closed_by_us or self.client.superseded or self.reconnect is None:
                break  # superseded: the session lives on in another connection; taking it back would never end
            if self._shut_down:  # the notice said why already
                self.write("Reconnecting when the server is back...")
            else:
                self.write(f"Connection lost ({self.client.close_reason}); reconnecting...")
            self._shut_down = False
            client = await self.reconnect(self.client.token, self.write)
            if client is None:
                break
            for problem in await self.session.reattach(client):
                self.write(problem[0].upper() + problem[1:] + ".")
            self.write("Reconnected; your seats and tables are back.")
            if self.at is not None and not self.at.is_player:
                self.view.show()
            await self.follow_lobby()
        if not self.client.closed_by_us:
            self.write(f"Disconnected: {self.client.close_reason}")
        self.gone = True
        self.finished.set()
        await self._notify()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def on_event(self, event: m.Message) -> None:
        """Apply one push to the session model and print what it changed."""
        table = getattr(event, "table", None)
        known = self.session.tables.get(table) if isinstance(table, int) else None
        was_playing = known is not None and known.status == "playing"
        changes = self.session.apply(event)
        self._shut_down = self._shut_down or isinstance(event, m.Shutdown)
        if self.social.on_event(event):
            return
        for change in changes:
            self.view.report(change, was_playing)



def _lost_games_text(running: list[TableState], happens: str, prefix: str) -> str:
    """What becomes of the running games we sit at when we go: forfeited, or aborted while a side has not moved.

    ``happens`` holds ``{ended}`` (``is {ended} if you leave``); ``prefix`` goes before a
    table's id (``t``, ``table ``). E.g. ``Your game at t3 is aborted unless you return
    (no result: a side has not moved yet)``.
    """
    parts = []
    for ended in ("forfeited", "aborted"):
        states = [state for state in running if state.leaving_aborts == (ended == "aborted")]
        if states:
            where = ", ".join(f"{prefix}{state.id}" for state in states)
            why = " (no result: a side has not moved yet)" if ended == "aborted" else ""
            parts.append(f"at {where} {happens.format(ended=ended)}{why}")
    return "Your game " + "; your game ".join(parts)
