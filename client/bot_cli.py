"""The options of ``parlour bot`` and the :class:`client.bot.BotSettings` they make.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_bot_arguments(parser)
>>> args = parser.parse_args(["127.0.0.1", "--game", "othello", "--level", "4", "--create", "--option", "size=6"])
>>> finish_bot_arguments(args)
>>> args.bot.mode, args.bot.level, dict(args.bot.options), args.name.startswith("bot-othello-4-")
('create', 4, {'size': 6}, True)
"""

from __future__ import annotations

import argparse
import secrets

import games
from games.bots import MAX_LEVEL, MIN_LEVEL
from protocol.cli_options import UsageError, number_in

from .address import parse_address
from .bot import DRAW_POLICIES, BotSettings
from .connection import DEFAULT_PORT

__all__ = ["BOT_DESCRIPTION", "add_bot_arguments", "finish_bot_arguments"]

BOT_DESCRIPTION = """\
A computer player that plays on a Parlour server over the protocol, as people do.
It says hello as a bot (lobbies show it), and finds games by --create (create a
table, wait for an opponent, again after each game), --join (join open tables of
its game as they appear) or, by default, both: join an open table if there is
one, else create one.

Policy: draw offers --accept-draws (default never); takeback requests declined
unless --accept-takebacks; rematches accepted (it waits --rematch-wait seconds
for one after each game, then leaves the table); it never offers anything and
never resigns. A lost connection is resumed with the session's token, with
backoff. On SIGINT or SIGTERM, or after --games games, it leaves its tables (a
running game is forfeited at once, so the opponent need not wait out the grace
period), closes the connection and exits 0.

Example: two bots playing each other on a local server:
  parlour bot 127.0.0.1 --game nimble --level 5 --create &
  parlour bot 127.0.0.1 --game nimble --level 2 --join
"""


def add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``parlour bot``'s own options (the address, the game, the policy) to ``parser``."""
    parser.add_argument("address", type=parse_address, metavar="HOST[:PORT]", help=f"the server (default port {DEFAULT_PORT})")
    parser.add_argument("--game", required=True, choices=games.names(), help="the game it plays")
    parser.add_argument(
        "--level",
        type=number_in(MIN_LEVEL, MAX_LEVEL, whole=True),
        default=MAX_LEVEL,
        help=f"its strength, {MIN_LEVEL} (a beginner can win) to {MAX_LEVEL} (the strongest; default)",
    )
    parser.add_argument("--name", help="its player name (default: bot-GAME-LEVEL- and four random letters)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--create", dest="mode", action="store_const", const="create", help="create tables and wait for opponents")
    mode.add_argument("--join", dest="mode", action="store_const", const="join", help="only join open tables of its game")
    parser.set_defaults(mode="auto")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a game option of the tables it creates, e.g. --option size=6 (repeatable)")
    parser.add_argument("--tc", metavar="MINUTES+INCREMENT", help="a clock for the tables it creates, e.g. 5+3")
    parser.add_argument("--seconds", type=number_in(0, 3600, low_open=True, unit="seconds"),
                        help="thinking time per move (default: the level's, 0.05 s at level 1 to 1 s at level 5)")
    parser.add_argument("--accept-draws", choices=DRAW_POLICIES, default="never",
                        help="which draw offers it accepts: never (default), always, or when-losing (less material)")
    parser.add_argument("--accept-takebacks", action="store_true", help="grant takeback requests (declined by default)")
    parser.add_argument("--games", type=number_in(1, 10**9, whole=True), help="stop after this many finished games")
    parser.add_argument("--rematch-wait", type=number_in(0, 3600, unit="seconds"), default=10.0,
                        help="seconds it waits for a rematch offer after a game before leaving the table (default 10)")
    parser.add_argument("--give-up", type=number_in(0, 86400, unit="seconds"), default=300.0,
                        help="stop after this long without a connection to the server (default 300)")
    parser.add_argument("--pace", type=number_in(0, 3600, unit="seconds"), default=0.0,
                        help="take at least this long per move, so people can follow a game (default 0)")
    parser.add_argument("--seed", type=int, help="seed its move choices (default: random)")


def finish_bot_arguments(args: argparse.Namespace) -> None:
    """Check the options together and set ``args.bot`` (a :class:`BotSettings`) and a default ``args.name``.

    Raises:
        UsageError: a game option that the game does not have or cannot take.
    """
    game = games.get(args.game)
    options = {}
    for text in args.option:
        key, sep, value = text.partition("=")
        if not sep:
            raise UsageError(f"--option is KEY=VALUE, not {text!r}")
        try:
            option = game.option(key)
            if option.type == "str":
                raise UsageError(f"--option {key}: text options (files) are not supported by the bot")
            options[key] = option.parse_text(value)
        except games.GameError as exc:
            raise UsageError(f"--option {text}: {exc}") from None
    try:
        args.bot = BotSettings(
            game=args.game,
            level=int(args.level),
            mode=args.mode,
            options=options,
            time_control=args.tc,
            seconds=args.seconds,
            accept_draws=args.accept_draws,
            accept_takebacks=args.accept_takebacks,
            games=args.games,
            rematch_wait_s=args.rematch_wait,
            give_up_s=args.give_up,
            seed=args.seed,
            pace_s=args.pace,
        )
    except games.GameError as exc:  # the options together (e.g. Othello's even size)
        raise UsageError(f"--option: {exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.name is None:
        args.name = f"bot-{args.game}-{args.level}-" + "".join(secrets.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(4))
