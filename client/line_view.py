"""What the line client prints about tables: boards, status lines, the prompt, and the pushes that changed them."""

from __future__ import annotations

import time
from typing import Any, Callable

from protocol import messages as m

from .line_replay import Replaying
from .ratings_text import describe_change
from .line_text import describe_table, example_move, format_clock, mill_line, options_words, outcome_text, player_label, plies_text, shutdown_text
from .render import render
from .sanitize import printable, printable_lines
from .session import Change, ClientSession, TableState

__all__ = ["LineView", "NARROW"]

NARROW = (80, 24)
"""Below this many columns or lines, boards are drawn compact (see :mod:`client.render`)."""
_OFFER_NOUNS = {"draw": "draw offer", "takeback": "takeback request", "rematch": "rematch offer"}


class LineView:
    """Prints the session's tables as text.

    Args:
        session: the session model it reads.
        write: prints one block of text.
        terminal_size: returns ``(columns, lines)``; boards are compact below :data:`NARROW`.
        replaying: returns the replay going on, or ``None`` (for the prompt and toolbar).
        now: the monotonic clock the clocks count down with.
    """

    def __init__(
        self,
        session: ClientSession,
        write: Callable[[str], None],
        terminal_size: Callable[[], tuple[int, int]],
        replaying: Callable[[], Replaying | None],
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.write = write
        self.terminal_size = terminal_size
        self.replaying = replaying
        self.now = now
        self._told_how_to_move: set[int] = set()  # tables where the one-line "how to move" was shown

    @property
    def at(self) -> TableState | None:
        """The focused table, or ``None``."""
        return self.session.focused

    def table_line(self, state: TableState) -> str:
        """One line of ``tables``: ``* t3 othello (Size: 6) — ann vs bob — you are Black, your move`` (``*``: focused)."""
        focus = "*" if state.id == self.session.focus else " "
        role = "watching" if state.seat is None else f"you are {self.seat_name(state.seat, state)}"
        players = " vs ".join(player_label(state.info, seat) for seat in (0, 1))
        options = options_words(state.game, state.info.options, self._described_games())
        game = printable(state.game) + (f" {options}" if options else "")
        return f"{focus} t{state.id} {game} — {players} — {role}, {self._progress(state)}"

    def _described_games(self) -> list[Any] | None:
        """The server's ``welcome.games`` (the games' option schemas), when known."""
        welcome = self.session.client.welcome
        return welcome.games if welcome is not None else None

    def _progress(self, state: TableState) -> str:
        if state.outcome is not None:
            return "over: " + outcome_text(state.outcome, self.seat_names(state))
        if state.status == "waiting":
            return "waiting for a player"
        turn = "your move" if state.my_turn else f"ply {state.ply}"
        return turn + (f", {self.player(state.opponent_offer().seat, state)} made an offer" if state.opponent_offer() else "")

    def prompt_text(self) -> str:
        """The prompt: the focused table and what it waits for, e.g. ``[t3 othello, your move] ``; ``> `` in the lobby."""
        try:
            at, replaying = self.at, self.replaying()
            if replaying is not None:
                return f"[replay {replaying.index}/{replaying.last}] "
            if at is None:
                return "> "
            return f"[t{at.id} {printable(at.game)}, {self._short_status(at)}] "
        except Exception:  # a prompt that raises would take the input down
            return "> "

    def _short_status(self, at: TableState) -> str:
        if at.outcome is not None:
            return "over"
        if at.status == "waiting":
            return "waiting"
        if at.seat is None:
            return "watching"
        return "your move" if at.my_turn else "their move"

    def status_line(self) -> str:
        """One line for the prompt's bottom toolbar: the table, its clocks counting down, a pending offer.

        Called every half second by prompt_toolkit; never raises.
        """
        try:
            parts: list[str] = []
            at = self.at
            if at is not None:
                parts.append(f"Table {at.id} · {at.game}")
                if at.clock is not None:
                    parts.append(self.clock_text(at))
                offer = at.opponent_offer()
                if offer is not None:
                    parts.append(f"{self.player(offer.seat)}'s {_OFFER_NOUNS.get(offer.kind, offer.kind)}: accept or decline")
                waiting = [state.id for state in self.session.tables.values() if state is not at and state.my_turn]
                if waiting:
                    parts.append("your move at " + ", ".join(f"t{table}" for table in waiting))
            replaying = self.replaying()
            if replaying is not None:
                parts.append(f"Replay of {replaying.label}: ply {replaying.index}/{replaying.last}")
            return "  |  ".join(parts)
        except Exception:  # a toolbar that raises would take the prompt down
            return ""

    def clock_text(self, at: TableState) -> str:
        """The clock line of ``at``, counted down to now (to the moment the connection was lost while it is: paused)."""
        assert at.clock is not None
        paused_at = self.session.offline_since
        try:
            line = format_clock(at.clock, self.seat_names(at), (self.now() if paused_at is None else paused_at) - at.clock_at)
        except (KeyError, TypeError, ValueError, IndexError):
            return "Clock: (unreadable snapshot from the server)"
        return line if paused_at is None or at.clock.get("running") is None else f"{line} (paused: connection lost)"

    def report(self, change: Change, was_playing: bool) -> None:
        """Print what ``change`` means to the player; ``was_playing``: the table's game ran before the push."""
        event = change.event
        if change.kind == "focus":
            return  # the table_added before it said it all
        if change.kind == "lobby":
            if not self.session.tables and isinstance(event, m.TableUpdated):
                self.write("lobby: " + describe_table(event.table, self._described_games()))
            elif not self.session.tables and isinstance(event, m.TableClosed):
                self.write(f"lobby: table {event.table} closed")
            return
        if change.kind == "chat" and isinstance(event, m.Chat):
            where = "[lobby]" if event.table is None else f"[table {event.table}]"
            self.write(f"{where} {printable(event.name)}: {printable(event.text)}")
        elif change.kind == "error" and isinstance(event, m.Error):
            self.write(f"error ({printable(event.code)}): {printable_lines(event.message)}")
        elif change.kind == "shutdown" and isinstance(event, m.Shutdown):
            self.write(shutdown_text(event.message))
        elif change.table is not None and change.table in self.session.tables:
            state = self.session.tables[change.table]
            if change.table == self.session.focus:
                self._report_focused(state, change, was_playing)
            else:
                self._report_elsewhere(state, change)

    def _report_focused(self, at: TableState, change: Change, was_playing: bool) -> None:
        event = change.event
        if isinstance(event, m.GameStarted):
            self.write("The game starts: " + " vs ".join(f"{self.seat_name(i)} {self.player(i)}" for i in range(len(event.seats))))
            if not was_playing:  # the joiner's own reply showed it
                self.show()
        elif isinstance(event, m.Moved):
            who = self.seat_name(event.seat)
            self.write(f"{who} must pass." if event.forced else f"{who} played {printable(event.move)}.")
            self.show(result=False)  # a move that ends the game: the game_over push after it says the result
        elif isinstance(event, m.GameOver):
            self.write(self.result_line(event.outcome))
            if event.view is not None:
                self.write("The game is over: every piece is shown now.")
                self.show()
            if event.ratings:
                self.write(describe_change((at.info.seats[0] or self.seat_name(0), at.info.seats[1] or self.seat_name(1)), event.ratings))
            if at.seat is not None:
                self.write("Type rematch to offer a rematch with seats swapped, or leave.")
        elif isinstance(event, m.Offered):
            self._on_offered(at, event)
        elif isinstance(event, m.Answered):
            noun = _OFFER_NOUNS.get(event.kind, f"{printable(event.kind)} offer")
            verdict = "lapsed" if event.lapsed else "was accepted" if event.accepted else "was declined"
            self.write(f"The {noun} {verdict}.")
        elif isinstance(event, m.TakenBack):
            self.write(f"{plies_text(event.plies).capitalize()} taken back.")
            self.show()
        elif isinstance(event, m.RematchStarted) and event.seat is None:
            self.write(f"The players of table {event.previous} started a rematch: you now watch it at table {event.table.id}.")
            self.show()
        elif isinstance(event, m.RematchStarted):
            self.write(f"Rematch at table {event.table.id}: you play {self.seat_name(event.seat)} this time.")
            self.show()
        elif isinstance(event, m.Resumed):
            self.show()
            self.chat_so_far(at)
        elif isinstance(event, m.PlayerAway):
            self.write(
                f"{printable(event.name)} lost their connection; their seat is forfeited in {event.forfeit_in_s:.0f} s unless they return."
            )
        elif isinstance(event, m.PlayerBack):
            self.write(f"{printable(event.name)} is back.")

    def chat_so_far(self, state: TableState) -> None:
        """Print the chat lines said at ``state``'s table before we came (or while we were away), if any."""
        if state.earlier:
            lines = [f"Chat at table {state.id} so far:"]
            lines += [f"  {printable(line.name)}: {printable(line.text)}" for line in state.earlier]
            self.write("\n".join(lines))

    def _report_elsewhere(self, state: TableState, change: Change) -> None:
        """A short line about a table that is not focused (only what needs the player)."""
        event = change.event
        tag = f"[t{state.id} {printable(state.game)}]"
        if isinstance(event, m.Moved) and state.my_turn:
            self.write(f"{tag} {self.player(event.seat, state)} played {printable(event.move)}; your move there (t {state.id}).")
        elif isinstance(event, m.GameStarted) and state.is_player:
            self.write(f"{tag} The game starts (t {state.id} to go there).")
        elif isinstance(event, m.GameOver):
            self.write(f"{tag} {self.result_line(event.outcome, state)}")
        elif isinstance(event, m.Offered) and state.is_player and event.seat != state.seat:
            self.write(f"{tag} {self.player(event.seat, state)} {self._offer_words(state, event)} (t {state.id} to answer).")
        elif isinstance(event, m.Resumed):
            self.chat_so_far(state)
        elif isinstance(event, m.RematchStarted) and event.seat is None:
            self.write(f"The players of table {event.previous} started a rematch: you now watch it at table {event.table.id} (t {event.table.id} to go there).")
        elif isinstance(event, m.RematchStarted):
            self.write(f"The rematch of table {event.previous} is ready at table {event.table.id} (t {event.table.id} to go there).")
        elif isinstance(event, m.PlayerAway) and state.is_player:
            self.write(f"{tag} {printable(event.name)} lost their connection; their seat is forfeited in {event.forfeit_in_s:.0f} s.")

    def _on_offered(self, at: TableState, event: m.Offered) -> None:
        if event.seat == at.seat:
            return  # our own offer: the command already said so
        what = self._offer_words(at, event)
        who = self.player(event.seat)
        if at.seat is None:
            self.write(f"{who} {what}.")
            return
        self.write(f"{who} {what} — type accept or decline")

    def _offer_words(self, at: TableState, event: m.Offered) -> str:
        if event.kind == "takeback":
            return f"asks for a takeback, which {at.takeback_of(event.plies).describe(at.seat, self.seat_names(at))}"
        return {"draw": "offers a draw", "rematch": "offers a rematch with seats swapped"}.get(event.kind, f"offers {printable(event.kind)}")

    # --- drawing ---------------------------------------------------------------------

    def seat_names(self, state: TableState | None = None) -> tuple[str, str]:
        """The seat names of the table's game (default: the focused table)."""
        state = state or self.at
        return self.session.seat_names(state.game) if state is not None else ("seat 0", "seat 1")

    def seat_name(self, seat: int, state: TableState | None = None) -> str:
        """The name of ``seat`` in the table's game (``Black``)."""
        return self.seat_names(state)[seat] if seat in (0, 1) else f"seat {seat}"

    def player(self, seat: int, state: TableState | None = None) -> str:
        """The (sanitised) name of the player in ``seat`` at the table (default: the focused one), or the seat's colour.

        A computer seat reads ``computer (level 4)``; a program that said hello as a bot gets `` (bot)``.
        """
        state = state or self.at
        if state is None or not 0 <= seat < len(state.info.seats) or not state.info.seats[seat]:
            return self.seat_name(seat, state)
        return player_label(state.info, seat)

    def against_computer(self, at: TableState) -> bool:
        """Whether our opponent at ``at`` is the server's computer."""
        computer = at.info.computer
        return computer is not None and at.seat is not None and computer[1 - at.seat] is not None

    def opponent(self, at: TableState) -> str:
        """Our opponent's name at ``at`` (sanitised)."""
        return self.player(1 - at.seat, at) if at.seat is not None else "your opponent"

    def _compact(self) -> bool:
        columns, lines = self.terminal_size()
        return columns < NARROW[0] or lines < NARROW[1]

    def show(self, result: bool = True) -> None:
        """Draw the focused table: header, board (last move marked), clock, whose turn or (with ``result``) the result."""
        at = self.at
        if at is None:
            return
        view, compact = at.view, self._compact()
        names = [player_label(at.info, seat) for seat in (0, 1)]
        lines = [self._header(at, names), render(view, at.seat, last_move=at.last_move, compact=compact)]
        if at.clock is not None:
            lines.append(self.clock_text(at))
        outcome = at.outcome
        if outcome is not None:
            lines += [self.result_line(outcome)] if result else []
        elif at.status == "waiting":
            lines += [f"Turn {at.ply + 1}", "Waiting for a second player."]
        else:
            mover = view["to_move"]
            if at.forced_pass:
                lines.append(f"Turn {at.ply + 1}: {self.seat_name(mover)} ({names[mover]}) must pass; the server passes for them.")
            else:
                mine = " — your turn" if mover == at.seat else ""
                lines.append(f"Turn {at.ply + 1}: {self.seat_name(mover)} ({names[mover]}) to move{mine}")
                mill = mill_line(view) if mover == at.seat else None
                if mill:
                    lines.append(mill)
                if mover == at.seat and at.id not in self._told_how_to_move:
                    self._told_how_to_move.add(at.id)
                    lines.append(f"Type a move (e.g. {example_move(view)}); moves lists them, help the rest.")
        self.write("\n".join(lines))

    def _header(self, at: TableState, names: list[str]) -> str:
        seats = self.seat_names(at)
        header = f"Table {at.id} · {at.game} · " + "  vs  ".join(f"{seats[i]}: {names[i]}" for i in (0, 1))
        if len(header) >= self.terminal_size()[0]:
            header = f"t{at.id} {at.game}: {names[0]} vs {names[1]}"
        return header

    def result_line(self, outcome: dict[str, Any], state: TableState | None = None) -> str:
        """``Result: Black wins — resignation``."""
        return "Result: " + outcome_text(outcome, self.seat_names(state))
