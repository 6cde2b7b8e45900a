"""The line-mode client's commands for finding an opponent (PROTOCOL.md §17).

``who``, ``challenge``, ``accept ID``/``decline ID``, ``withdraw``, ``seek``,
``unseek``, ``seeks``, ``tell``, ``mute``, ``unmute`` and ``mutes``, and the pushes that go
with them (a challenge received or ended, a pairing, a tell, seeks in the
lobby). :class:`client.terminal.TerminalClient` hands these commands and
pushes to :class:`SocialCommands`; everything another player wrote (names,
tells) is made printable before it is shown.
"""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable, Protocol

import games
from protocol import messages as m

from .connection import Client
from .line_text import NewTable, options_words
from .line_view import LineView
from .sanitize import printable
from .session import TableState

__all__ = ["SocialCommands", "SOCIAL_HELP", "SeekWords", "Terminal", "parse_seek"]

SOCIAL_HELP = """Finding an opponent:
  who [GAME] [rating] [page=N]  the players online and their status, by name
                            (or by rating in GAME), 50 a page
  challenge NAME GAME [key=value ...] [rated]
                            challenge NAME; options as for new (tc=5+3, seat=0|1;
                            no seat: drawn at random)
  accept ID / decline ID    answer challenge ID (accept / decline alone answer
                            the one pending challenge when no offer is pending)
  withdraw ID               take back your challenge ID
  seek GAME [5+3] [rated|casual] [1400-1800] [key=value ...]
                            ask anyone for a game: paired at once with a matching
                            seek (same game, options, clock, rated; ratings in range)
  unseek [ID]               take back your seek ID (all of them without an ID)
  seeks                     the open seeks
  tell NAME TEXT            a private message to NAME
  mute NAME / unmute NAME   stop / allow tells, challenges and table chat from NAME
  muteguests / unmuteguests stop / allow tells and challenges from every name
                            that is not claimed (guests)
  mutes                     the names you mute"""

_CHALLENGE_ENDS = {
    "accepted": "was accepted",
    "declined": "was declined",
    "withdrawn": "was withdrawn",
    "expired": "expired",
    "gone": "ended: a player left",
}
_TIME_CONTROL = re.compile(r"^\d+(\.\d+)?(\+\d+(\.\d+)?)?$")
_RANGE = re.compile(r"^(\d*)-(\d*)$")
WHO_PAGE = 50


class UsageError(Exception):
    """A command line that cannot be read; the message says how to write it."""


class SeekWords:
    """What ``seek GAME ...`` asks for, read from its words (see :func:`parse_seek`)."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.options: dict[str, Any] = {}
        self.time_control: str | None = None
        self.rated = False
        self.rating_min: int | None = None
        self.rating_max: int | None = None


def parse_seek(words: list[str]) -> SeekWords:
    """Read ``GAME [MINUTES+INCREMENT] [rated|casual] [LO-HI] [key=value ...]``.

    Raises:
        UsageError: no game, or a word that is none of these.
        games.GameError: an option the game does not have, or a bad value.
    """
    if not words:
        raise UsageError("usage: seek GAME [5+3] [rated|casual] [1400-1800] [key=value ...]")
    seek = SeekWords(words[0])
    game = games.get(words[0])
    for word in words[1:]:
        lowered = word.lower()
        key, sep, text = word.partition("=")
        if lowered in ("rated", "casual"):
            seek.rated = lowered == "rated"
        elif _TIME_CONTROL.match(word):
            seek.time_control = word
        elif (bounds := _RANGE.match(word)) and word != "-":
            seek.rating_min = int(bounds[1]) if bounds[1] else None
            seek.rating_max = int(bounds[2]) if bounds[2] else None
        elif sep and key == "tc":
            seek.time_control = None if text.lower() in ("", "none", "-") else text
        elif sep:
            seek.options[key] = game.option(key).parse_text(text)
        else:
            raise UsageError(f"seek reads a clock (5+3), rated or casual, a rating range (1400-1800) and key=value options, not {word!r}")
    return seek


class Terminal(Protocol):
    """What the social commands use of the terminal that hands them over (:class:`client.terminal.TerminalClient`)."""

    write: Callable[[str], None]
    view: LineView

    @property
    def client(self) -> Client:
        """The connection to the server."""

    @property
    def at(self) -> TableState | None:
        """The table in focus, if any."""


class SocialCommands:
    """The §17 commands and pushes of one terminal.

    Args:
        terminal: the terminal client whose connection, output and table this shares.
    """

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.pending: dict[int, m.ChallengeInfo] = {}
        """Challenges made to us and not yet answered, by id."""

    def commands(self) -> dict[str, Callable[[list[str]], Awaitable[None]]]:
        """The command words this module handles (``accept``/``decline`` go through :meth:`answer`);
        a line they cannot read prints its usage."""
        return {word: self._reporting(handler) for word, handler in self._handlers().items()}

    def _reporting(self, handler: Callable[[list[str]], Awaitable[None]]) -> Callable[[list[str]], Awaitable[None]]:
        async def run(args: list[str]) -> None:
            try:
                await handler(args)
            except UsageError as exc:
                self._write(str(exc))

        return run

    def _handlers(self) -> dict[str, Callable[[list[str]], Awaitable[None]]]:
        return {
            "who": self._who,
            "challenge": self._challenge,
            "withdraw": self._withdraw,
            "seek": self._seek,
            "unseek": self._unseek,
            "seeks": self._seeks,
            "tell": self._tell,
            "mute": self._mute,
            "unmute": self._unmute,
            "muteguests": self._mute_guests,
            "unmuteguests": self._unmute_guests,
            "mutes": self._mutes,
        }

    def _write(self, text: str) -> None:
        self.terminal.write(text)

    # --- commands -------------------------------------------------------------------

    async def _who(self, args: list[str]) -> None:
        game, sort, page = None, "name", 1
        for word in args:
            key, sep, text = word.partition("=")
            if word.lower() in ("rating", "name"):
                sort = word.lower()
            elif sep and key == "page" and text.isdigit() and int(text) >= 1:
                page = int(text)
            elif not sep and game is None:
                game = word
            else:
                raise UsageError("usage: who [GAME] [rating] [page=N]")
        players = await self.terminal.client.who(game=game, sort=sort, offset=(page - 1) * WHO_PAGE, limit=WHO_PAGE)
        if not players.players:
            self._write("Nobody on that page." if page > 1 else "Nobody is online.")
            return
        self._write("\n".join(_player_line(player) for player in players.players))
        more = f"; who ... page={page + 1} for more" if players.next is not None else ""
        self._write(f"({players.total} online{more})")

    async def _challenge(self, args: list[str]) -> None:
        if len(args) < 2:
            raise UsageError("usage: challenge NAME GAME [key=value ...] [rated]")
        name, game_name, *rest = args
        rated = "rated" in [word.lower() for word in rest]
        words = [word for word in rest if word.lower() not in ("rated", "casual")]
        table = NewTable.parse(games.get(game_name), words)  # the same key=value words as new
        if table.computer or table.hints or table.seed is not None:
            raise UsageError("a challenge is between two players: leave out vs, level, computer, hints and seed")
        seat = table.seat if any(word.startswith("seat=") for word in words) else None
        rated = rated or table.rated  # "rated" alone, or rated=yes as for new
        sent = await self.terminal.client.challenge(name, game_name, table.options, seat=seat, time_control=table.time_control, rated=rated)
        self._write(f"Challenge {sent.id} sent to {printable(sent.challenged)}: {_terms(sent.game, sent.time_control, sent.rated, sent.options)}."
                    f" It lapses in {sent.expires_in_s:.0f} s; withdraw {sent.id} takes it back.")  # fmt: skip

    async def answer(self, args: list[str], accept: bool) -> bool:
        """``accept``/``decline`` for a challenge: with a challenge id, or alone when one challenge is pending
        and no table offer is; return whether it was one (else the table's offer is answered)."""
        if args and args[0].isdigit():
            challenge = int(args[0])
        elif not args and len(self.pending) == 1 and (self.terminal.at is None or self.terminal.at.opponent_offer() is None):
            challenge = next(iter(self.pending))
        else:
            return False
        if accept:
            await self.terminal.client.accept_challenge(challenge)
        else:
            await self.terminal.client.decline_challenge(challenge)
        self.pending.pop(challenge, None)
        return True

    async def _withdraw(self, args: list[str]) -> None:
        await self.terminal.client.withdraw_challenge(_one_id(args, "withdraw ID"))

    async def _seek(self, args: list[str]) -> None:
        seek = parse_seek(args)
        posted = await self.terminal.client.seek(
            seek.game, seek.options, time_control=seek.time_control, rated=seek.rated, rating_min=seek.rating_min, rating_max=seek.rating_max
        )
        if not posted.paired:
            self._write(f"Seek {posted.seek.id} posted: {_seek_text(posted.seek)}. unseek {posted.seek.id} takes it back.")

    async def _unseek(self, args: list[str]) -> None:
        await self.terminal.client.unseek(_one_id(args, "unseek [ID]") if args else None)
        self._write("Seek taken back." if args else "Your seeks are taken back.")

    async def _seeks(self, args: list[str]) -> None:
        page = await self.terminal.client.list_seeks()
        if not page.seeks:
            self._write("No open seeks. Post one with: seek GAME [5+3]")
            return
        self._write("\n".join(f"seek {s.id}: {printable(s.name)}{_rating(s.rating)} {_seek_text(s)}" for s in page.seeks))
        if page.next is not None:
            self._write(f"(only the first {len(page.seeks)} seeks are shown)")

    async def _tell(self, args: list[str]) -> None:
        name, _, text = (args[0] if args else "").strip().partition(" ")
        if not name or not text.strip():
            raise UsageError("usage: tell NAME TEXT")
        await self.terminal.client.tell(name, text.strip())

    async def _mute(self, args: list[str]) -> None:
        await self.terminal.client.mute(_one_name(args, "mute NAME"))
        self._write(f"Muted {printable(args[0])}: no tells or challenges from them.")

    async def _unmute(self, args: list[str]) -> None:
        await self.terminal.client.mute(_one_name(args, "unmute NAME"), False)
        self._write(f"{printable(args[0])} is no longer muted.")

    async def _mute_guests(self, args: list[str]) -> None:
        if args:
            raise UsageError("usage: muteguests")
        await self.terminal.client.mute_guests()
        self._write("Muted every guest: only claimed names can tell or challenge you now.")

    async def _unmute_guests(self, args: list[str]) -> None:
        if args:
            raise UsageError("usage: unmuteguests")
        await self.terminal.client.mute_guests(False)
        self._write("Guests are no longer muted.")

    async def _mutes(self, args: list[str]) -> None:
        if args:
            raise UsageError("usage: mutes (the names you mute; unmute NAME lifts one)")
        names = await self.terminal.client.list_mutes()
        if not names:
            self._write("You mute nobody.")
            return
        self._write(f"You mute {len(names)}: {', '.join(printable(name) for name in names)}. unmute NAME lifts one.")

    # --- pushes ---------------------------------------------------------------------

    def on_event(self, event: m.Message) -> bool:
        """Show a §17 push; return whether it was one."""
        if isinstance(event, m.ChallengeReceived):
            challenge = event.challenge
            self.pending[challenge.id] = challenge
            seat = "" if challenge.seat is None else f", you play {_seat(challenge.game, 1 - challenge.seat)}"
            self._write(
                f"{printable(challenge.challenger)} challenges you to {_terms(challenge.game, challenge.time_control, challenge.rated, challenge.options)}"
                f"{seat} — type accept {challenge.id} or decline {challenge.id}"
            )
        elif isinstance(event, m.ChallengeEnded):
            self.pending.pop(event.challenge, None)
            self._write(f"Challenge {event.challenge} {_CHALLENGE_ENDS.get(event.reason, printable(event.reason))}.")
        elif isinstance(event, m.Paired):
            self._sit(event)
        elif isinstance(event, m.Told):
            self._write(f"{printable(event.name)} tells you: {printable(event.text)}")
        elif isinstance(event, m.SeekAdded):
            if self.terminal.at is None:
                self._write(f"lobby: seek {event.seek.id} by {printable(event.seek.name)}{_rating(event.seek.rating)}: {_seek_text(event.seek)}")
        elif isinstance(event, m.SeekRemoved):
            if self.terminal.at is None:
                self._write(f"lobby: seek {event.seek} is gone")
        else:
            return False
        return True

    def _sit(self, paired: m.Paired) -> None:
        """Take our seat at the table a challenge or seek paired us at (as a rematch does)."""
        terminal = self.terminal  # the session model has seated us and focused the table already
        opponent = paired.table.seats[1 - paired.seat]
        self._write(f"Paired with {printable(opponent or '?')} at table {paired.table.id}: you play {_seat(paired.table.game, paired.seat)}.")
        terminal.view.show()


def _one_id(args: list[str], usage: str) -> int:
    if len(args) != 1 or not args[0].isdigit():
        raise UsageError(f"usage: {usage}")
    return int(args[0])


def _one_name(args: list[str], usage: str) -> str:
    if len(args) != 1:
        raise UsageError(f"usage: {usage}")
    return args[0]


def _seat(game: str, seat: int) -> str:
    try:
        return games.get(game).seats[seat]
    except (games.UnknownGame, IndexError):
        return f"seat {seat}"


def _terms(game: str, time_control: str | None, rated: bool, options: dict[str, Any]) -> str:
    """``othello (Size: 6), 5+3, rated``: the game with its options in words, the clock, rated or casual (sanitised)."""
    words = options_words(game, options)
    return f"{printable(game)}{' ' + words if words else ''}, {printable(time_control) if time_control else 'no clock'}, {'rated' if rated else 'casual'}"


def _rating(rating: int | None) -> str:
    return f" ({rating})" if rating is not None else ""


def _seek_text(seek: m.SeekInfo) -> str:
    bounds = "" if seek.rating_min is None and seek.rating_max is None else f", ratings {seek.rating_min or ''}-{seek.rating_max or ''}"
    return _terms(seek.game, seek.time_control, seek.rated, seek.options) + bounds


def _player_line(player: m.PlayerInfo) -> str:
    marks = (" (claimed)" if player.claimed else "") + (" [bot]" if player.bot else "")
    rating = f"  {player.rating} ±{player.deviation} {player.rating_game}" if player.rating is not None else ""
    return f"{printable(player.name):<24} {player.status:<8}{rating}{marks}"
