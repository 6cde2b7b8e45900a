"""The terminal front end: a lobby and game shell built on :class:`client.Client`.

With a TTY it reads commands with prompt_toolkit, so server pushes print above
the prompt without clobbering what the user is typing. With stdin piped it
reads one command per line and prints plain text, so it can be scripted; the
``wait`` command lets a script wait for its turn.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import games
from protocol import messages as m

from .connection import Client, ConnectionLost, ServerError
from .render import render

__all__ = ["TerminalClient", "LineInput", "PromptInput"]

HELP = """Commands:
  list                      show the tables in the lobby
  games                     the games and their options
  new GAME [key=value ...]  create a table and sit down (games: {games})
                            text options name a file: pieces=FILE, position=FILE;
                            seed=TEXT sets the setup seed
  save FILE                 write the current position to FILE (Nine Men's Morris)
  join ID [SEAT]            take a free seat at table ID (SEAT 0 or 1)
  watch ID                  watch table ID as a spectator
  leave                     leave the current table (resigns a running game)
  board                     show the current position again
  moves                     list your legal moves
  resign                    resign the current game
  wait turn|start|end       (scripts) wait for your turn, the start or the end
  help                      this text
  quit                      leave the server
Anything else is a move in the game's notation, e.g. d3."""


@dataclass
class Seating:
    """What the terminal knows of the table it is at."""

    table: m.TableInfo
    seat: int | None
    view: dict[str, Any]
    moves: list[str] = field(default_factory=list)


Reconnect = Callable[[str, Callable[[str], None]], Awaitable["Client | None"]]


class TerminalClient:
    """Reads commands, sends requests, and prints what the server pushes.

    Args:
        client: a connected :class:`Client`.
        write: prints one block of text (a line or a board).
        reconnect: resumes the session from its token after a lost connection
            (``None``: do not try); returns the new client, or ``None`` to give up.
    """

    def __init__(self, client: Client, write: Callable[[str], None], reconnect: Reconnect | None = None) -> None:
        self.client = client
        self.write = write
        self.reconnect = reconnect
        self.gone = False  # the connection is lost for good
        self.finished = asyncio.Event()  # set with gone
        self.at: Seating | None = None
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
            "resign": self._resign,
            "wait": self._wait,
            "save": self._save,
            "help": self._help,
            "games": self._list_games,
        }

    # --- commands --------------------------------------------------------------------

    async def handle(self, line: str) -> bool:
        """Run one command line; return ``False`` when the user asked to quit."""
        line = line.strip()
        if not line or line.startswith("#"):
            return True
        try:
            words = shlex.split(line)
        except ValueError as exc:
            self.write(f"cannot read that line: {exc}")
            return True
        command = words[0].lower()
        if command in ("quit", "exit"):
            return False
        action = self._commands.get(command)
        try:
            if action is not None:
                await action(words[1:])
            else:
                await self._move(line)
        except ServerError as exc:
            self.write(f"error ({exc.code}): {exc.message}")
        except ConnectionLost:
            self.write("not connected to the server right now; try again in a moment")
        except games.GameError as exc:
            self.write(f"error: {exc}")
        except UsageError as exc:
            self.write(str(exc))
        return True

    async def _help(self, args: list[str]) -> None:
        self.write(HELP.format(games=", ".join(game["name"] for game in self._games())))

    async def _list_games(self, args: list[str]) -> None:
        lines = []
        for game in self._games():
            lines.append(f"{game['name']} — {game['title']} ({game['seats'][0]} vs {game['seats'][1]})")
            for option in game["options"]:
                bounds = ""
                if option["min"] is not None or option["max"] is not None:
                    bounds = f", {option['min'] if option['min'] is not None else ''}..{option['max'] if option['max'] is not None else ''}"
                lines.append(f"    {option['name']}={option['type']} (default {option['default']}{bounds}) {option['doc']}")
        self.write("\n".join(lines))

    def _games(self) -> list[dict[str, Any]]:
        assert self.client.welcome is not None
        return self.client.welcome.games

    async def _list(self, args: list[str]) -> None:
        tables = await self.client.list_tables()
        if not tables:
            self.write("No tables yet. Create one with: new GAME (e.g. new othello size=8)")
            return
        self.write("\n".join(describe_table(table) for table in tables))

    async def _new(self, args: list[str]) -> None:
        if not args:
            raise UsageError("usage: new GAME [key=value ...], e.g. new othello size=8")
        game = games.get(args[0].lower())
        options: dict[str, Any] = {}
        seed: str | None = None
        for word in args[1:]:
            key, sep, text = word.partition("=")
            if not sep:
                raise UsageError(f"options are key=value, not {word!r}")
            if key == "seed":
                seed = text
                continue
            option = game.option(key)
            options[key] = _read_file(key, text) if option.type == "str" else option.parse_text(text)
        joined = await self.client.create_table(game.name, options, seed=seed)
        self.write(f"Created table {joined.table.id}; waiting for an opponent (they type: join {joined.table.id}).")
        await self._sit(joined)

    async def _join(self, args: list[str]) -> None:
        table_id, seat = _table_and_seat(args)
        await self._sit(await self.client.join_table(table_id, seat))

    async def _watch(self, args: list[str]) -> None:
        table_id, _ = _table_and_seat(args[:1])
        await self._sit(await self.client.watch_table(table_id))

    async def _sit(self, joined: m.TableJoined) -> None:
        self.at = Seating(joined.table, joined.seat, joined.view, list(joined.moves))
        self._moved_at_ply = -1
        role = "watching" if joined.seat is None else f"playing {joined.table.game} as {self._seat_name(joined.seat)}"
        self.write(f"At table {joined.table.id}, {role}.")
        if joined.moves:
            self.write("Moves so far: " + " ".join(joined.moves))
        self._show()
        await self._notify()

    async def _leave(self, args: list[str]) -> None:
        at = self._require_table()
        await self.client.leave_table(at.table.id)
        self.write(f"Left table {at.table.id}.")
        self.at = None

    async def _board(self, args: list[str]) -> None:
        self._require_table()
        self._show()

    async def _moves(self, args: list[str]) -> None:
        at = self._require_table()
        legal = at.view.get("legal_moves")
        if legal is None:
            self.write("It is not your turn." if at.seat is not None else "Spectators have no moves.")
        else:
            self.write("Legal moves: " + " ".join(legal))

    async def _save(self, args: list[str]) -> None:
        at = self._require_table()
        if len(args) != 1:
            raise UsageError("usage: save FILE")
        position = at.view.get("position")
        if not isinstance(position, str):
            raise UsageError(f"{at.table.game} positions cannot be saved to a file")
        try:
            with open(args[0], "w", encoding="utf-8") as handle:
                handle.write(position)
        except OSError as exc:
            raise UsageError(f"cannot write {args[0]!r}: {exc}") from None
        self.write(f"Saved the position to {args[0]}.")

    async def _resign(self, args: list[str]) -> None:
        at = self._require_table()
        await self.client.resign(at.table.id)

    async def _move(self, text: str) -> None:
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

    # --- pushes ----------------------------------------------------------------------

    async def follow_events(self) -> None:
        """Print every server push; after a lost connection, resume the session with backoff."""
        while True:
            async for event in self.client.events():
                self.on_event(event)
                await self._notify()
            if self.client.closed_by_us or self.reconnect is None:
                break
            self.write(f"Connection lost ({self.client.close_reason}); reconnecting...")
            client = await self.reconnect(self.client.token, self.write)
            if client is None:
                break
            self.client = client
            self.write("Reconnected; your seats and tables are back.")
            await self._rewatch()
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
        self.at = Seating(joined.table, None, joined.view, list(joined.moves))
        self._show()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def on_event(self, event: m.Message) -> None:
        """Update what the terminal knows from one push, and show it."""
        at = self.at
        if isinstance(event, m.TableUpdated):
            if at is not None and event.table.id == at.table.id:
                at.table = event.table
            elif at is None:
                self.write("lobby: " + describe_table(event.table))
        elif isinstance(event, m.TableClosed):
            if at is None:
                self.write(f"lobby: table {event.table} closed")
        elif isinstance(event, m.GameStarted) and at is not None and event.table == at.table.id:
            already_shown = at.table.status == "playing"  # the joiner's own reply showed it
            at.view = event.view
            at.table = _with(at.table, seats=event.seats, status="playing")
            self.write("The game starts: " + " vs ".join(f"{self._seat_name(i)} {n}" for i, n in enumerate(event.seats)))
            if not already_shown:
                self._show()
        elif isinstance(event, m.Moved) and at is not None and event.table == at.table.id:
            at.view = event.view
            at.moves.append(event.move)
            who = self._seat_name(event.seat)
            self.write(f"{who} must pass." if event.forced else f"{who} played {event.move}.")
            self._show()
        elif isinstance(event, m.GameOver) and at is not None and event.table == at.table.id:
            at.view = dict(at.view, outcome=event.outcome, to_move=None)
            at.view.pop("legal_moves", None)
            at.table = _with(at.table, status="over", outcome=event.outcome)
            self.write(self._result_line(event.outcome))
        elif isinstance(event, m.Resumed):
            if event.seat is not None or at is None or at.table.id == event.table.id:
                self.at = Seating(event.table, event.seat, event.view, list(event.moves))
                self._moved_at_ply = -1
                self._show()
        elif isinstance(event, m.PlayerAway) and at is not None and event.table == at.table.id:
            self.write(f"{event.name} lost their connection; their seat is forfeited in {event.forfeit_in_s:.0f} s unless they return.")
        elif isinstance(event, m.PlayerBack) and at is not None and event.table == at.table.id:
            self.write(f"{event.name} is back.")
        elif isinstance(event, m.Error):
            self.write(f"error ({event.code}): {event.message}")
        elif isinstance(event, m.Shutdown):
            self.write(f"The server is shutting down: {event.message}")

    # --- drawing ---------------------------------------------------------------------

    def _seat_name(self, seat: int) -> str:
        at = self.at
        if at is None:
            return f"seat {seat}"
        for game in self._games():
            if game["name"] == at.table.game:
                return str(game["seats"][seat])
        return f"seat {seat}"

    def _show(self) -> None:
        at = self.at
        if at is None:
            return
        view = at.view
        names = [n or "(free)" for n in at.table.seats]
        lines = [
            f"Table {at.table.id} · {at.table.game} · "
            + "  vs  ".join(f"{self._seat_name(i)}: {names[i]}" for i in (0, 1)),
            render(view, at.seat),
            f"Turn {view['ply'] + 1}",
        ]
        outcome = view.get("outcome")
        if outcome is not None:
            lines.append(self._result_line(outcome))
        elif at.table.status == "waiting":
            lines.append("Waiting for a second player.")
        else:
            mover = view["to_move"]
            lines.append(f"It is the turn of {self._seat_name(mover)} ({names[mover]})" + (" — your turn" if mover == at.seat else ""))
            if mover == at.seat:
                lines.append("Commands: type a move (e.g. " + _example(view) + "), moves, resign, leave, help, quit")
        self.write("\n".join(lines))

    def _result_line(self, outcome: dict[str, Any]) -> str:
        score = outcome.get("score")
        tail = f" ({score[0]}–{score[1]})" if score else ""
        if outcome.get("winner") is None:
            return f"Result: draw — {outcome['reason']}{tail}"
        return f"Result: {self._seat_name(outcome['winner'])} wins — {outcome['reason']}{tail}"


class UsageError(Exception):
    """A command typed wrongly; the message says how to type it."""


def describe_table(table: m.TableInfo) -> str:
    """One lobby line: id, game, options, seats, status, spectators."""
    options = " ".join(f"{k}={_short(v)}" for k, v in table.options.items() if v is not None)
    seats = " vs ".join(name or "(free)" for name in table.seats)
    return f"#{table.id} {table.game} {options} — {seats} — {table.status}, ply {table.ply}, {table.spectators} watching"


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
    """The text of the file named by a ``key=FILE`` option (pieces, position)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the {key} file {path!r}: {exc}") from None


def _table_and_seat(args: list[str]) -> tuple[int, int | None]:
    try:
        table_id = int(args[0].lstrip("#"))
        seat = int(args[1]) if len(args) > 1 else None
    except (IndexError, ValueError):
        raise UsageError("usage: join ID [SEAT] / watch ID, e.g. join 3") from None
    return table_id, seat


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
    """Reads lines with prompt_toolkit, keeping the prompt below printed output."""

    def __init__(self, prompt: str = "> ") -> None:
        from prompt_toolkit import PromptSession

        self._session: Any = PromptSession(prompt)

    async def read(self) -> str | None:
        """The next line, or ``None`` when the user pressed Ctrl-D."""
        try:
            return await self._session.prompt_async()
        except EOFError:
            return None
        except KeyboardInterrupt:
            return None
