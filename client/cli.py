"""The ``parlour`` command: ``serve``, ``play``, ``bot``, ``host``, ``games``, ``db`` and ``secret``.

The one module that knows both ends. ``play`` and ``bot`` use the client library
alone; ``serve``, ``games`` and ``host`` import the server inside their functions, so
importing this module loads no server module. The options both ends take (the
password, numeric ranges) come from :mod:`protocol.cli_options`. The server
never imports the client (``tests/test_import_layers.py`` checks both rules).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import ssl
import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from protocol.cli_options import PASSWORD_ENV, UsageError, add_password_arguments, read_password

from .address import parse_address
from .bot import Bot, resume_or_renew
from .claims import NAME_PASSWORD_ENV, NameClaims, ask_on_terminal
from .secret_cli import add_parser as add_secret_commands
from .bot_cli import BOT_DESCRIPTION, add_bot_arguments, finish_bot_arguments
from .connection import DEFAULT_PORT, Client, ConnectionLost, ServerError
from .lan_cli import NONE_FOUND, add_servers_parser, add_timeout_argument, choose_server, find_servers
from .line_script import EXIT_STATUS_HELP, ScriptRun
from .reconnect import WAITED_OUT, Attempt, Reconnector
from .sanitize import printable
from .terminal import LineInput, PromptInput, TerminalClient
from .tls import FingerprintMismatch, TLSFileError, client_context, normalise_fingerprint
from .tokens import SecretStoreError, TokenStore


def _fingerprint(text: str) -> str:
    try:
        return normalise_fingerprint(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``parlour`` command (see :func:`parse_args` for the checks after parsing)."""
    from server.archive_cli import add_parser as add_games
    from server.storage.copy import add_parser as add_db
    from server.cli import add_parser as add_serve
    from server.cli import PORT as SERVER_PORT
    from server.cli import add_advertise_argument, add_hosting_arguments

    parser = argparse.ArgumentParser(prog="parlour", description="Two-player board games over the network, in the terminal.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve(subparsers)
    add_games(subparsers)
    add_db(subparsers)
    add_servers_parser(subparsers)
    play = subparsers.add_parser(
        "play",
        help="connect to a server and play or watch",
        description="Connect to a Parlour server, see its lobby, and play or watch. Type help once connected.",
        epilog=EXIT_STATUS_HELP,
    )
    play.add_argument(
        "address",
        type=parse_address,
        nargs="?",
        metavar="HOST[:PORT]",
        help=f"the server (default port {DEFAULT_PORT}); without it, pick one of the servers found on the LAN",
    )
    play.add_argument(
        "--name", help="your player name (unique on the server); without it, asked for on a terminal (required with piped input)"
    )
    add_timeout_argument(play)
    _add_guest_argument(play)
    play.add_argument("--line", action="store_true", help="the line-mode client even on a terminal (piped input and TERM=dumb always get it)")
    _add_keep_going_argument(play)
    _add_connect_arguments(play)
    play.add_argument("--mono", action="store_true", help="full-screen app: boards without colour (as with NO_COLOR set)")
    play.add_argument("--bell", action="store_true", help="full-screen app: ring the terminal bell when your clock falls under 10 s")
    play.set_defaults(run=run_play, finish=_finish_play_command, command_parser=play)
    bot = subparsers.add_parser(
        "bot",
        help="a computer player that creates or joins tables on a server and plays",
        description=BOT_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_bot_arguments(bot)
    _add_guest_argument(bot, set_password=False)
    _add_connect_arguments(bot)
    bot.set_defaults(run=run_bot, finish=_finish_bot, command_parser=bot)
    host = subparsers.add_parser(
        "host",
        help="host a server on this machine and play on it from this terminal",
        description="Start a server that LAN players can join, and connect to it from this terminal.",
    )
    host.add_argument("--name", required=True, help="your player name")
    _add_guest_argument(host)
    host.add_argument("--host", default="0.0.0.0", help="address to listen on (default: every IPv4 interface)")
    host.add_argument("--port", type=SERVER_PORT, default=DEFAULT_PORT, help=f"TCP port, 0 to 65535 (default: {DEFAULT_PORT})")
    add_hosting_arguments(host, log_level="WARNING")  # the terminal is the player's: the server speaks up only when something is wrong
    add_advertise_argument(host)
    host.add_argument("--line", action="store_true", help="the line-mode client even on a terminal (piped input and TERM=dumb always get it)")
    _add_keep_going_argument(host)
    host.add_argument("--mono", action="store_true", help="full-screen app: boards without colour (as with NO_COLOR set)")
    host.add_argument("--bell", action="store_true", help="full-screen app: ring the terminal bell when your clock falls under 10 s")
    host.set_defaults(run=run_host, finish=_finish_host, command_parser=host)
    add_secret_commands(subparsers, parse_address)
    return parser


def _add_keep_going_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="with piped input, run the script to its end even after a command failed (the exit status is still the first failure's)",
    )


def _add_guest_argument(parser: argparse.ArgumentParser, set_password: bool = True) -> None:
    parser.add_argument(
        "--guest",
        action="store_true",
        help="do not claim the name (by default the first connection claims a free name, bound to a secret kept on this machine)",
    )
    if set_password:
        parser.add_argument(
            "--set-password",
            action="store_true",
            help=f"after connecting, set a password for your claimed name (asked on the terminal, or from {NAME_PASSWORD_ENV}); "
            "it proves the name on machines without its secret, where the client asks for it",
        )
        parser.add_argument(
            "--new-secret",
            action="store_true",
            help="after connecting, replace the secret of your claimed name with a new one kept on this machine "
            "(the old secret, copies of it elsewhere and every other session of the name stop working)",
        )


def _add_connect_arguments(parser: argparse.ArgumentParser) -> None:
    """The TLS and password options of a client command (``play``, ``bot``)."""
    tls = parser.add_argument_group(
        "TLS", "For a server started with --tls-cert. Pin its certificate with --tls-fingerprint, or verify it with --tls."
    )
    tls.add_argument("--tls", action="store_true", help="use TLS, verifying the server's certificate against the system's certificate authorities")
    how = tls.add_mutually_exclusive_group()
    how.add_argument("--tls-ca", metavar="FILE", help="use TLS, verifying the certificate against the authorities in this PEM file instead")
    how.add_argument(
        "--tls-fingerprint",
        metavar="HEX",
        type=_fingerprint,
        help="use TLS and accept only the certificate with this SHA-256 fingerprint (the one parlour serve printed)",
    )
    add_password_arguments(parser, server=False)


def parse_args(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> argparse.Namespace:
    """Parse and check a ``parlour`` command line; read the files it names and the password.

    Besides argparse's attributes, ``play`` gets ``settings`` (:class:`ConnectSettings`);
    ``serve`` and ``host`` get ``ssl_context``, ``fingerprint``, ``password`` (and
    ``serve`` gets ``limits``); ``host`` gets ``settings`` for its own connection.

    Args:
        environ: where ``PARLOUR_PASSWORD`` is looked up (default: ``os.environ``).

    Raises:
        SystemExit: status 2, with a usage message, for a command line that cannot work.
    """
    args = build_parser().parse_args(argv)
    finish = getattr(args, "finish", None)
    if finish is not None:
        try:
            finish(args, os.environ if environ is None else environ)
        except UsageError as exc:
            args.command_parser.error(str(exc))
    return args


@dataclass(frozen=True, slots=True)
class ConnectSettings:
    """How to reach a server, for the first connection and every reconnection.

    Attributes:
        ssl: a client TLS context (:func:`client.tls.client_context`); ``None`` for plain TCP.
        fingerprint: the pinned certificate fingerprint (needs a pinned ``ssl`` context).
        password: the server's password, if it has one.
        claims: how a new session proves or claims its name (``None``: as a guest).
    """

    ssl: ssl.SSLContext | None = None
    fingerprint: str | None = None
    password: str | None = field(default=None, repr=False)
    claims: NameClaims | None = field(default=None, compare=False)

    def connect_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :meth:`Client.connect` these settings stand for."""
        return {"ssl": self.ssl, "fingerprint": self.fingerprint, "password": self.password}

    async def open_session(self, host: str, port: int, name: str, **options: Any) -> Client:
        """Connect as ``name`` in a new session: proving or claiming the name through :attr:`claims`."""
        if self.claims is None:
            return await Client.connect(host, port, name=name, **options, **self.connect_kwargs())
        return await self.claims.connect(host, port, name, **options, **self.connect_kwargs())


def _finish_play(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    try:
        if args.tls_fingerprint is not None:
            context: ssl.SSLContext | None = client_context(pinned=True)
        elif args.tls or args.tls_ca is not None:
            context = client_context(ca_file=args.tls_ca)
        else:
            context = None
    except TLSFileError as exc:
        raise UsageError(str(exc)) from None
    claims = _name_claims(args, environ) if hasattr(args, "guest") else None
    args.settings = ConnectSettings(ssl=context, fingerprint=args.tls_fingerprint, password=read_password(args, environ), claims=claims)


def _finish_play_command(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """``parlour play``'s checks: those of every client command, and a name where nobody can be asked for one."""
    _finish_play(args, environ)
    if args.name is None and not sys.stdin.isatty():
        raise UsageError("--name NAME is required when stdin is not a terminal (on a terminal, parlour play asks for it)")


def _finish_bot(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    _finish_play(args, environ)
    finish_bot_arguments(args)


def _finish_host(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    from server.cli import finish_server_arguments

    finish_server_arguments(args, environ)
    pinned = client_context(pinned=True) if args.ssl_context is not None else None
    args.settings = ConnectSettings(ssl=pinned, fingerprint=args.fingerprint, password=args.password, claims=_name_claims(args, environ))


def _name_claims(args: argparse.Namespace, environ: Mapping[str, str]) -> NameClaims:
    """How ``play``, ``host`` and ``bot`` claim and prove their name (``--guest``; ``PARLOUR_NAME_PASSWORD``)."""
    return NameClaims(
        guest=args.guest,
        password=environ.get(NAME_PASSWORD_ENV) or None,
        ask=ask_on_terminal,
        new_password=getattr(args, "set_password", False),
        new_secret=getattr(args, "new_secret", False),
    )


def describe_connect_error(exc: BaseException, settings: ConnectSettings) -> str:
    """One line saying why connecting (or saying hello) failed, and what to try.

    Args:
        exc: what :meth:`Client.connect` raised (``ServerError``, ``OSError``, ``TimeoutError``).
        settings: the settings that were used, to point at the option to change.
    """
    if isinstance(exc, ServerError):
        if exc.code == "bad_password" and settings.password is None:
            return f"The server needs a password (bad_password): give it with --password-file FILE or {PASSWORD_ENV}"
        if exc.code == "bad_password":
            return f"The server refused the password (bad_password): {exc.message}"
        return f"The server refused us ({exc.code}): {exc.message}"
    if isinstance(exc, FingerprintMismatch):
        return f"TLS fingerprint mismatch: {exc}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"TLS certificate verify failed ({exc.verify_message}): for a server with its own certificate,"
            " use --tls-ca FILE or --tls-fingerprint HEX (the fingerprint parlour serve printed)"
        )
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc}): does the server use TLS? If it was started without --tls-cert, connect without --tls"
    if isinstance(exc, ConnectionLost) and settings.ssl is None:
        return f"{exc} before answering hello: if the server uses TLS, connect with --tls-fingerprint HEX (or --tls)"
    if isinstance(exc, TimeoutError):
        hint = "" if settings.ssl is None else " (does the server use TLS?)"
        return f"no answer in time{hint}"
    return str(exc) or type(exc).__name__


def run_play(args: argparse.Namespace) -> int:
    """Run the terminal client (first picking a server found on the LAN when no address was given); return the exit status."""
    try:
        if wants_app(args):
            return _run_app(args)  # without --name, its server screen asks for one
        if args.name is None:
            args.name = ask_name(input, lambda text: print(text, flush=True))
            if args.name is None:
                return 2
        if args.address is None and (status := _pick_address(args)) is not None:
            return status
        return asyncio.run(_play(args))
    except KeyboardInterrupt:
        return 0


def ask_name(read: Callable[[str], str], say: Callable[[str], None]) -> str | None:
    """Ask on the terminal for the player name until one is typed; ``None`` (after saying so) at end of input.

    Args:
        read: shows a prompt and returns the line typed (``input``); raises ``EOFError`` at end of input.
        say: prints one line.
    """
    while True:
        try:
            name = read("Your name (the name you play under): ").strip()
        except EOFError:
            say("No name given; parlour play --name NAME gives it on the command line.")
            return None
        if name:
            return name
        say("Type a name, or Ctrl-D to give up.")


def wants_app(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``parlour play`` opens the full-screen app: on a real terminal, without ``--line``, unless ``TERM`` is dumb."""
    term = (os.environ if environ is None else environ).get("TERM", "")
    return not args.line and term not in ("", "dumb") and sys.stdin.isatty() and sys.stdout.isatty()


def _run_app(args: argparse.Namespace) -> int:
    """Run the full-screen app (:mod:`client.app`), starting from the command line's server and settings."""
    from .app.app import ParlourApp
    from .app.server_screen import ServerStart

    address = None
    if args.address is not None:
        host, port = args.address
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    settings: ConnectSettings = args.settings
    start = ServerStart(
        name=args.name, address=address, password=settings.password, fingerprint=settings.fingerprint,
        tls=settings.ssl is not None, ca_file=args.tls_ca,
    )
    app = ParlourApp(start, mono=args.mono, low_time_bell=args.bell, claims=settings.claims)
    return app.run() or 0


def _pick_address(args: argparse.Namespace) -> int | None:
    """Set ``args.address`` to the server the user picks from those on the LAN; else return the exit status."""
    say = lambda text: print(text, flush=True)  # noqa: E731
    servers = find_servers(args.timeout, say)
    if not servers:
        if servers is not None:
            say(NONE_FOUND)
        return 1
    chosen = choose_server(servers, sys.stdin.readline, say)
    if chosen is None:
        return 1
    if chosen.tls and args.settings.ssl is None:
        say(f"{printable(chosen.name)} uses TLS: connect with parlour play {chosen.address} --tls-fingerprint HEX "
            "(the fingerprint its host printed)")
        return 2
    args.address = (chosen.addresses[0], chosen.port)
    return None


def run_host(args: argparse.Namespace) -> int:
    """Run a server and the terminal client in one process, on the ``--loop`` event loop; return the exit status."""
    from server.net.loops import run_on

    try:
        return run_on(_host(args), args.loop_factory)
    except KeyboardInterrupt:
        return 0


async def _host(args: argparse.Namespace) -> int:
    from server.app import Server
    from server.net.addresses import reachable_addresses
    from server.cli import advertise, configure_logging, connect_instructions, server_config, web_instructions
    from server.net.loops import loop_name
    from server.storage.opening import describe_db
    from server.storage.store import StoreError

    configure_logging(args.log_level)
    config = server_config(args, socket.gethostname())
    server = Server(config)
    try:
        await server.start()
    except StoreError as exc:
        print(f"Cannot use the database {describe_db(config.db_path) if config.db_path else config.db_path}: {exc}", flush=True)
        return 1
    except OSError as exc:
        print(f"Cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", flush=True)
        return 1
    others = reachable_addresses(args.host)
    kept = f"games kept in {describe_db(config.db_path)}" if config.db_path else "nothing kept on disk"
    print(f"Hosting ({kept}; {loop_name(asyncio.get_running_loop())} event loop).", flush=True)
    instructions = list(connect_instructions(others, server.port, "THEIRNAME", args.fingerprint, args.password is not None, args.host))
    for line in instructions + web_instructions(others, server.http_address, guarded=config.password is not None or config.ssl is not None):
        print(line, flush=True)
    advertiser = None if args.no_advertise else advertise(server, args.fingerprint)
    session = asyncio.current_task()
    assert session is not None
    terminated = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, lambda: (terminated.set(), session.cancel()))
    try:
        local = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
        claims = args.settings.claims
        if claims is not None:  # a secret kept for this name by address (or for another database) still works here
            await asyncio.to_thread(claims.adopt, server.server_id, args.name, lambda secret: server.accounts.proves(args.name, secret))
        if wants_app(args):
            return await _host_app(args, local, server.port, quit_warning=lambda: _host_quit_warning(server), greeting="\n".join(instructions))
        return await _session(
            local, server.port, args.name, args.settings, quit_warning=lambda: _host_quit_warning(server), keep_going=args.keep_going
        )
    except asyncio.CancelledError:
        if not terminated.is_set():
            raise
        session.uncancel()
        print("Stopping (SIGTERM): telling the players, withdrawing the LAN advertisement.", flush=True)
        return 0
    finally:
        if advertiser is not None:
            await advertiser.close()
        await server.close()


async def _host_app(args: argparse.Namespace, host: str, port: int, **kwargs: Any) -> int:
    """Run the full-screen app on this process's event loop, beside the server, connected to it as ``args.name``.

    The server's computer players run in worker processes started with
    ``spawn``; the first start also starts multiprocessing's resource
    tracker, which hands the child ``sys.stderr``'s file descriptor. Under a
    running Textual app that is a capture without one (``ValueError: bad
    value(s) in fds_to_keep``), so the tracker is started before the app
    takes the terminal; worker processes started later reuse it.
    """
    from multiprocessing import resource_tracker

    from .app.app import ParlourApp
    from .app.server_screen import ServerStart

    resource_tracker.ensure_running()
    settings: ConnectSettings = args.settings
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    start = ServerStart(
        name=args.name, address=address, password=settings.password, fingerprint=settings.fingerprint,
        tls=settings.ssl is not None, discover=False,
    )
    app = ParlourApp(start, mono=args.mono, low_time_bell=args.bell, claims=settings.claims, **kwargs)
    return await app.run_async() or 0


def _host_quit_warning(server: Any) -> str:
    """What quitting ``parlour host`` does to the others: it stops the server for everyone connected."""
    others = sum(1 for session in server.sessions.values() if session.peer is not None) - 1
    people = "nobody else is" if others <= 0 else "1 other player is" if others == 1 else f"{others} other players are"
    return f"Quitting stops this server for everyone connected ({people} connected now)."


def run_bot(args: argparse.Namespace) -> int:
    """Run ``parlour bot``: play until the game count is reached or SIGINT/SIGTERM; return the exit status."""
    try:
        return asyncio.run(_bot(args))
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        return 0


async def _bot(args: argparse.Namespace) -> int:
    host, port = args.address
    settings: ConnectSettings = args.settings
    connect = resume_or_renew(host, port, args.name, settings.claims, **settings.connect_kwargs())
    try:
        client = await connect(None)
    except ServerError as exc:
        print(describe_connect_error(exc, settings), flush=True)
        return 2
    except OSError as exc:
        print(f"Cannot connect to {host}:{port}: {describe_connect_error(exc, settings)}", flush=True)
        return 1
    assert client.welcome is not None
    say = lambda text: print(text, flush=True)  # noqa: E731
    say(f"Connected to {printable(client.welcome.server)} as {printable(client.name)}: "
        f"a level {args.bot.level} {args.bot.game} bot ({args.bot.mode}).")
    bot = Bot(args.bot, client, connect, say)
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, bot.stop, f"signal {signal.Signals(signal_number).name}")
    return await bot.run()


async def _connect(host: str, port: int, name: str, tokens: TokenStore, settings: ConnectSettings) -> Client:
    """Connect as ``name``, resuming the session this machine last had there if it is still alive."""
    token = tokens.get(host, port, name)
    if token is None:
        client = await settings.open_session(host, port, name)
    else:
        client = await _resume_or_renew(host, port, name, token, settings)
    if client.token != token:  # a new session (a resumed one keeps its token)
        tokens.put(host, port, name, client.token)
    return client


async def _play(args: argparse.Namespace) -> int:
    host, port = args.address
    return await _session(host, port, args.name, args.settings, keep_going=args.keep_going)


async def _session(
    host: str, port: int, name: str, settings: ConnectSettings, quit_warning: Any = None, keep_going: bool = False
) -> int:
    """Connect as ``name`` and run the line client until quit or end of input; return the exit status.

    With stdin not a terminal the first failing command stops the script (unless
    ``keep_going``) and its exit status is the script's (:mod:`client.line_script`).
    """
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    scripted = not sys.stdin.isatty()
    tokens = TokenStore()
    try:
        client = await _connect(host, port, name, tokens, settings)
    except ServerError as exc:
        print(describe_connect_error(exc, settings), flush=True)
        return 2
    except SecretStoreError as exc:
        print(f"Cannot keep the secret of the name {name}, so it was not claimed: {exc}; use --guest to play without claiming it", flush=True)
        return 1
    except OSError as exc:  # TimeoutError and ssl.SSLError included
        print(f"Cannot connect to {host}:{port}: {describe_connect_error(exc, settings)}", flush=True)
        return 1
    assert client.welcome is not None
    if settings.claims is not None and (settings.claims.new_password or settings.claims.new_secret):
        print(await _change_credentials(client, settings.claims, host, port), flush=True)
        tokens.put(host, port, name, client.token)  # a change renews the session's token
    reconnect = _reconnector(host, port, name, tokens, settings, client.welcome.grace_s)
    shell = TerminalClient(client, lambda text: print(text, flush=True), reconnect=reconnect, quit_warning=quit_warning)
    if interactive:
        from prompt_toolkit.patch_stdout import patch_stdout

        source: LineInput | PromptInput = PromptInput(prompt=shell.prompt_text, toolbar=shell.status_line)
        shell.confirm = source.ask  # on a terminal, resign, leave and quit during a game ask first
        output_guard = patch_stdout()
    else:
        source = LineInput()
        output_guard = nullcontext()
    with output_guard:
        server, version = printable(client.welcome.server), printable(client.welcome.version)
        node = f", node {printable(client.welcome.node)}" if client.welcome.node else ""  # a cluster's node that answered
        print(f"Connected to {server} (Parlour {version}{node}) as {printable(client.name)}. Type help.", flush=True)
        followers = asyncio.create_task(shell.follow_events())
        await shell.follow_lobby()  # the user starts in the lobby: its changes and chat show as they happen
        await shell.handle("list")
        script = ScriptRun(keep_going, lambda text: print(text, flush=True))
        try:
            while (line := await _next_line(source, shell.finished)) is not None:
                if isinstance(line, _Lost):
                    if scripted:
                        script.lost()
                    break
                if not await shell.handle(line):
                    break
                if scripted and not script.after(line, shell.status):
                    break
        finally:
            await shell.client.close()
            followers.cancel()  # it may be waiting to reconnect
            await asyncio.gather(followers, return_exceptions=True)
    return script.status


async def _change_credentials(client: Client, claims: NameClaims, host: str, port: int) -> str:
    """Set a password (``--set-password``) and/or a new secret (``--new-secret``); return what to tell the player."""
    said = []
    if claims.new_password:
        said.append(await claims.set_password(client, claims.password, host, port))
    if claims.new_secret:
        try:
            said.append(await claims.change_secret(client, host, port))
        except ServerError as exc:
            said.append(f"No secret changed ({exc.code}): {exc.message}")
        except SecretStoreError as exc:
            said.append(f"The server took a new secret for {client.name} but this machine could not keep it ({exc}): prove the name with its password")
    return "\n".join(said)


def _reconnector(host: str, port: int, name: str, tokens: TokenStore, settings: ConnectSettings, grace_s: float | None = None) -> Any:
    """A function that resumes a session by its token under the shared retry policy (:mod:`client.reconnect`).

    It gives up (returning ``None``) at once when the server refuses the
    session or the password, or the certificate fails its check: waiting
    would not change those. A refusal for too many connections is waited out.
    It keeps trying for :func:`client.reconnect.give_up_after_s` of the server's ``grace_s``.
    """

    async def reconnect(token: str, say: Any) -> Client | None:
        def attempted(attempt: Attempt) -> None:
            if isinstance(attempt.error, ServerError):
                say(f"Reconnect attempt {attempt.number} refused ({attempt.error.message}); next try in {attempt.next_in_s:.1f} s")
            else:
                say(f"Reconnect attempt {attempt.number} failed; next try in {attempt.next_in_s:.1f} s")

        reconnector = Reconnector(lambda: _resume_or_renew(host, port, name, token, settings), grace_s=grace_s, on_attempt=attempted)
        client = await reconnector.run()
        if client is None:
            failure = reconnector.failure
            if isinstance(failure, (FingerprintMismatch, ssl.SSLCertVerificationError)):
                say(f"Cannot reconnect to {host}:{port}: {describe_connect_error(failure, settings)}")
            elif isinstance(failure, ServerError) and failure.code not in WAITED_OUT:
                say(describe_connect_error(failure, settings))
            else:
                say(f"Gave up reconnecting to {host}:{port} after {reconnector.give_up_s:g} s.")
            return None
        if client.token != token:  # the session had expired: a new one, with a new token
            tokens.put(host, port, name, client.token)
        return client

    return reconnect


async def _resume_or_renew(host: str, port: int, name: str, token: str, settings: ConnectSettings) -> Client:
    """Resume the session; if the server no longer knows it (it held no seat), start a new one as ``name``."""
    try:
        return await Client.connect(host, port, name=name, token=token, timeout_s=5.0, **settings.connect_kwargs())
    except ServerError as exc:
        if exc.code != "bad_token":
            raise
    return await settings.open_session(host, port, name, timeout_s=5.0)


class _Lost:
    """The type of :data:`LOST`."""


LOST = _Lost()
"""What :func:`_next_line` returns once the connection is gone for good (no more lines are read)."""


async def _next_line(source: LineInput | PromptInput, finished: asyncio.Event) -> str | _Lost | None:
    """The next command; ``None`` at end of input, :data:`LOST` once the connection is gone for good."""
    read = asyncio.ensure_future(source.read())
    closed = asyncio.ensure_future(finished.wait())
    done, _ = await asyncio.wait({read, closed}, return_when=asyncio.FIRST_COMPLETED)
    closed.cancel()
    if read in done:
        return read.result()
    read.cancel()
    return LOST


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``parlour`` console command."""
    args = parse_args(argv)
    sys.exit(args.run(args))


if __name__ == "__main__":
    main()
