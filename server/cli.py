"""``parlour serve``: run a server until Ctrl-C or SIGTERM.

Also the server options ``parlour host`` shares: ``--no-advertise`` (LAN
discovery, :mod:`server.net.advertise`), TLS (``--tls-cert``, ``--tls-key``), the
password (``--password``, ``--password-file``, ``PARLOUR_PASSWORD``, from
:mod:`protocol.cli_options`, which ``parlour play`` uses too) and one flag per
:class:`server.net.limits.Limits` field.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import ipaddress
import logging
import re
import signal
import socket
import ssl
from dataclasses import fields
from typing import Mapping

from protocol.cli_options import PASSWORD_ENV, UsageError, add_password_arguments, describe_range, number_in, read_password
from protocol.lan import ServiceRecord
from protocol.messages import PROTOCOL_VERSION

from . import __version__
from .net.addresses import listen_families, reachable_addresses, url_host
from .net.advertise import Advertiser
from .players.accounts import ACCOUNT_MODES
from .app import Server
from .config import (
    CLUSTER_NEEDS_POSTGRES, DEFAULT_LEASE_S, LEAST_LEASE_S, MOST_ABORT_AFTER_S, MOST_BOT_WORKERS, MOST_LEASE_S, MOST_THINKING_S, ServerConfig,
)  # fmt: skip
from .play.authority import DEFAULT_ABORT_AFTER_S
from .net.limits import LimitError, Limits, limit_range, limit_unit
from .net.loops import add_loop_argument, loop_factory, loop_name, run_on
from .storage.opening import describe_db, is_postgres_url
from .storage.sqlite import default_db_path
from .storage.store import StoreError
from .net.tls import TLSFileError, certificate_fingerprint, server_context
from .play.workers import default_workers

log = logging.getLogger("parlour.serve")

DEFAULT_PORT = 7420

PORT = number_in(0, 65535, whole=True)
"""The argparse type of a listening port: 0 (any free port) to 65535."""
MOST_GRACE_S = 7 * 86_400.0
"""The longest ``--grace``: a week."""
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
"""The choices of ``--log-level``."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``serve`` subcommand to the ``parlour`` command."""
    parser = subparsers.add_parser(
        "serve",
        help="host a Parlour server",
        description="Host a Parlour server. By default it listens on every interface so LAN players can connect.",
        epilog="One server per SQLite database: a second one on the same --db is refused (the lock is PATH.lock, beside it). "
        "If the server cannot start it prints one line saying why and exits with status 1. At start it raises its "
        "descriptor limit as far as the hard limit allows and lowers --max-connections to fit, with a warning. "
        "Moves that cannot be saved because the disk is full are refused with storage_full; on PostgreSQL, while the "
        "database cannot be reached, with storage_unavailable. See docs/OPERATIONS.md.",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: 0.0.0.0, every IPv4 interface)")
    parser.add_argument("--port", type=PORT, default=DEFAULT_PORT, help=f"TCP port, 0 to 65535 (default: {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--name", default=socket.gethostname(), help="server name shown to players (default: this host's name)")
    add_hosting_arguments(parser, log_level="INFO")
    add_advertise_argument(parser)
    add_cluster_arguments(parser)
    parser.set_defaults(run=run, finish=finish_server_arguments, command_parser=parser)


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--bus`` and ``--node``: join other nodes sharing one Redis (see README "Several machines")."""
    group = parser.add_argument_group("cluster", "Several nodes sharing one Redis show one lobby, one set of names and players.")
    group.add_argument("--bus", metavar="redis://HOST:PORT", help="share lobby, names, who and tells with the other nodes on this Redis")
    group.add_argument("--node", metavar="NAME", help="this node's name, unique among the nodes (default: HOST:PORT of this node); needs --bus")
    group.add_argument(
        "--lease-s", type=float, default=DEFAULT_LEASE_S, metavar="SECONDS",
        help=f"how long this node holds its tables without renewing them: when a node dies, the others take its tables "
        f"over within this time (default: {DEFAULT_LEASE_S:g}; {LEAST_LEASE_S:g} to {MOST_LEASE_S:g}); needs --bus",
    )  # fmt: skip


def add_hosting_arguments(parser: argparse.ArgumentParser, log_level: str) -> None:
    """Add the options of a server that ``serve`` and ``host`` share, but ``--host``, ``--port`` and ``--no-advertise``.

    They are the storage (``--db``, ``--no-db``), ``--grace``, the computer players,
    ``--log-level`` (default ``log_level``), the event loop, TLS, the password,
    ``--accounts``, ``--rated`` and the limits; :func:`finish_server_arguments` checks
    them and :func:`server_config` reads them.
    """
    storage = parser.add_mutually_exclusive_group()
    storage.add_argument(
        "--db", metavar="PATH|URL",
        help=f"where tables, sessions and the archive are kept: an SQLite file (default: {default_db_path()}), "
        "or a PostgreSQL database as a libpq URL, postgresql://USER@HOST:PORT/DB",
    )
    storage.add_argument("--no-db", action="store_true", help="keep nothing on disk (games are lost when the server stops)")
    parser.add_argument(
        "--grace",
        type=number_in(0, MOST_GRACE_S, unit="seconds"),
        default=60.0,
        metavar="SECONDS",
        help=f"how long a disconnected player's seat is held, 0 to {MOST_GRACE_S:.0f} (default: 60)",
    )
    parser.add_argument(
        "--abort-after",
        type=number_in(0, MOST_ABORT_AFTER_S, unit="seconds"),
        default=DEFAULT_ABORT_AFTER_S,
        metavar="SECONDS",
        help="at a timed table, how long the side to move may take over its own first move before the game is aborted "
        f"(no result, not rated), 0 to {MOST_ABORT_AFTER_S:.0f}; 0 never aborts (default: {DEFAULT_ABORT_AFTER_S:g}). "
        "Clocks start only after each side's first move",
    )
    add_computer_arguments(parser)
    parser.add_argument(
        "--log-level", default=log_level, choices=LOG_LEVELS, help=f"the server's logging level, on stderr (default: {log_level})"
    )
    add_loop_argument(parser)
    add_tls_server_arguments(parser)
    add_password_arguments(parser, server=True)
    add_accounts_argument(parser)
    add_rated_argument(parser)
    add_limit_arguments(parser)
    parser.add_argument(
        "--http",
        type=http_address,
        metavar="[HOST:]PORT",
        help="also serve a read-only web face on this port (HOST: default --host): the lobby, every table live, "
        "a TV page and the archive, for browsers (default: off)",
    )


def http_address(text: str) -> tuple[str | None, int]:
    """The argparse type of ``--http``: ``PORT``, ``HOST:PORT`` or ``[V6]:PORT`` as ``(host or None, port)``.

    Raises:
        argparse.ArgumentTypeError: not of that shape, or the port is not 0 to 65535.
    """
    host: str | None = None
    port_text = text.strip()
    if port_text.startswith("["):
        host, _, rest = port_text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif ":" in port_text:
        host, _, port_text = port_text.rpartition(":")
    if not (port_text.isascii() and port_text.isdigit()) or len(port_text) > 5 or int(port_text) > 65535 or host == "":
        raise argparse.ArgumentTypeError(f"--http takes [HOST:]PORT with a port from 0 to 65535 (8080, 0.0.0.0:8080), not {text!r}")
    return host, int(port_text)


def web_instructions(hosts: list[str], bound: tuple[str, int] | None, guarded: bool = False) -> list[str]:
    """The lines giving the web face's address(es) (``bound``: where it listens), or none without one.

    ``hosts`` are the game port's reachable addresses, used when the web face listens on every interface.
    ``guarded``: the game port asks a password or speaks TLS, which the web face does not: a line says so.
    """
    if bound is None:
        return []
    host, port = bound
    shown = hosts if host in ("0.0.0.0", "::", "") else [host]
    lines = ["Watch in a browser (read-only):" if len(shown) == 1 else "Watch in a browser (read-only) at one of:"]
    lines += [f"    http://{url_host(each)}:{port}/" for each in shown]
    if guarded:
        lines.append("    Note: the web face is plain HTTP and asks no password: anyone who reaches it can watch every game.")
    return lines


def server_config(args: argparse.Namespace, server_name: str) -> ServerConfig:
    """The :class:`ServerConfig` of the options :func:`add_hosting_arguments` added (checked by
    :func:`finish_server_arguments`), with ``args.host`` and ``args.port``, for a server called ``server_name``."""
    return ServerConfig(
        host=args.host,
        port=args.port,
        server_name=server_name,
        db_path=None if args.no_db else (args.db or str(default_db_path())),
        grace_s=args.grace,
        limits=args.limits,
        password=args.password,
        ssl=args.ssl_context,
        bot_seconds=args.bot_seconds,
        bot_workers=args.bot_workers,
        accounts=args.accounts,
        rated=args.rated == "on",
        abort_after_s=args.abort_after or None,
        http=None if getattr(args, "http", None) is None else (args.http[0] or args.host, args.http[1]),
        bus=getattr(args, "bus", None),
        node=getattr(args, "node", None) or f"{socket.gethostname()}:{args.port}",
        lease_s=getattr(args, "lease_s", DEFAULT_LEASE_S),
    )


def configure_logging(level: str) -> None:
    """Log at ``level`` (one of :data:`LOG_LEVELS`) and above on stderr, one line each, timestamped."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def add_computer_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--bot-seconds`` and ``--bot-workers``: how the computer players think (``--max-bots`` is a limit)."""
    group = parser.add_argument_group("computer players", "Computer seats think in worker processes at a lower priority.")
    group.add_argument(
        "--bot-seconds",
        type=number_in(0, MOST_THINKING_S, low_open=True, unit="seconds"),
        metavar="SECONDS",
        help=f"how long the strongest level (5) thinks per move, more than 0 to {MOST_THINKING_S:g}; "
        "lower levels think proportionally less (default: 1, level 1: 0.05)",
    )
    group.add_argument(
        "--bot-workers",
        type=number_in(1, MOST_BOT_WORKERS, whole=True),
        metavar="N",
        help=f"worker processes for the computer players, 1 to {MOST_BOT_WORKERS} (default: one per core but one, at least one: {default_workers()} here)",
    )


def add_advertise_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--no-advertise``: do not announce the server on the LAN (mDNS); ``parlour host`` takes it too."""
    parser.add_argument(
        "--no-advertise",
        action="store_true",
        help="do not announce the server on the LAN with mDNS (parlour servers will not find it; "
        "players connect by address)",
    )


def advertise(server: Server, fingerprint: str | None) -> Advertiser:
    """Start advertising ``server`` on the LAN on the addresses it listens on (see :mod:`server.net.advertise`)."""
    config = server.config
    record = ServiceRecord(
        name=config.server_name,
        version=__version__,
        protocol=PROTOCOL_VERSION,
        password=config.password is not None,
        tls=fingerprint is not None,
        server_id=server.server_id,
        http=server.http_address[1] if server.http_address is not None else None,
    )
    advertiser = Advertiser(record, server.port, [host for host, _ in server.sockets])
    advertiser.start()
    return advertiser


# --- options shared with ``parlour host`` (the password's are protocol.cli_options') -------

def add_tls_server_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--tls-cert FILE`` and ``--tls-key FILE`` (checked by :func:`read_server_tls`)."""
    group = parser.add_argument_group("TLS", "Encrypt connections; players then connect with --tls-fingerprint (or --tls).")
    group.add_argument("--tls-cert", metavar="FILE", help="PEM certificate (chain) to present; needs --tls-key")
    group.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert, unencrypted; needs --tls-cert")


def add_accounts_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--accounts off|optional|required``: whether player names may (or must) be claimed."""
    parser.add_argument(
        "--accounts",
        choices=ACCOUNT_MODES,
        default="optional",
        help="claimed names: optional (the default) lets a player claim a free name, bound to a secret the client keeps; "
        "required refuses players whose name is not claimed; off lets no new name be claimed (claimed ones stay protected)",
    )


def add_rated_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--rated on|off`` (and ``--no-rated``, the same as ``--rated off``): whether players may create rated tables."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--rated",
        choices=("on", "off"),
        default="on",
        help="rated games (Glicko-2, between claimed names): on (the default) lets players create rated tables; "
        "off refuses them with rated_off (ratings already earned stay and are shown)",
    )
    group.add_argument("--no-rated", dest="rated", action="store_const", const="off", help="the same as --rated off")


def read_server_tls(args: argparse.Namespace) -> tuple[ssl.SSLContext | None, str | None]:
    """The server TLS context and its certificate's fingerprint from ``--tls-cert``/``--tls-key``; ``(None, None)`` without them.

    Raises:
        UsageError: only one of the two was given, or the files cannot be used.
    """
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together: give both, or neither for plain TCP")
    if args.tls_cert is None:
        return None, None
    try:
        return server_context(args.tls_cert, args.tls_key), certificate_fingerprint(args.tls_cert)
    except TLSFileError as exc:
        raise UsageError(str(exc)) from None


def limit_flag(field_name: str) -> str:
    """The ``parlour serve`` flag of a :class:`Limits` field: ``idle_timeout_s`` is ``--idle-timeout``.

    A trailing ``_s`` (seconds) is dropped, but not from a rate: ``requests_per_s`` is ``--requests-per-s``.
    """
    name = field_name if field_name.endswith("_per_s") else field_name.removesuffix("_s")
    return "--" + name.replace("_", "-")


def _limit_descriptions() -> dict[str, str]:
    """Each field's description from the ``Attributes:`` section of the :class:`Limits` docstring."""
    names = {spec.name for spec in fields(Limits)}
    found: dict[str, str] = {}
    current = None
    _, _, section = (inspect.getdoc(Limits) or "").partition("Attributes:")
    for line in section.splitlines():
        match = re.match(r"\s+(\w+): (.*)", line)
        if match and match[1] in names:
            current = match[1]
            found[current] = match[2]
        elif current is not None and line.strip():
            found[current] += " " + line.strip()
        else:
            current = None
    return {name: text.replace("``", "").rstrip(".") for name, text in found.items()}


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one option per :class:`Limits` field, in a group "limits" (read by :func:`read_limits`)."""
    group = parser.add_argument_group(
        "limits", "What one client may cost the server. Every limit must be more than 0; its range is in its help."
    )
    descriptions = _limit_descriptions()
    for spec in fields(Limits):
        default = spec.default
        unit = limit_unit(spec.name)
        low, high = limit_range(spec.name)
        whole = isinstance(default, int)
        metavar = {"seconds": "SECONDS", "per second": "RATE", "bytes": "BYTES", "characters": "CHARS"}.get(unit, "N")
        description = descriptions.get(spec.name, spec.name.replace("_", " "))
        allowed = describe_range(low, high, whole=whole, low_open=True)
        if unit == "a count":
            help_text = f"{description}. Default {default:g}; {allowed}"
        else:
            help_text = f"{description}. {'Per second' if unit == 'per second' else f'In {unit}'}; default {default:g}; {allowed}"
        group.add_argument(
            limit_flag(spec.name),
            dest=f"limit_{spec.name}",
            type=number_in(low, high, whole=whole, low_open=True, unit="" if unit == "a count" else unit),
            metavar=metavar,
            help=help_text.replace("%", "%%"),
        )


def read_limits(args: argparse.Namespace) -> Limits:
    """The :class:`Limits` the limit options describe (defaults for those not given).

    Raises:
        UsageError: a value cannot work; the :class:`LimitError` message, with the flags to change.
    """
    given = {spec.name: getattr(args, f"limit_{spec.name}") for spec in fields(Limits)}
    try:
        return Limits(**{name: value for name, value in given.items() if value is not None})
    except LimitError as exc:
        flags = [limit_flag(spec.name) for spec in fields(Limits) if re.search(rf"\b{spec.name}\b", str(exc))]
        raise UsageError(f"{exc} (set with {', '.join(flags)})" if flags else str(exc)) from None


def finish_server_arguments(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """Check and read what the loop, TLS, password and limit options name; store ``loop_factory``,
    ``ssl_context``, ``fingerprint``, ``password`` and ``limits`` on ``args``.

    Raises:
        UsageError: an option's value cannot be used (uvloop asked for but not installed, say).
    """
    args.loop_factory = loop_factory(args.loop)
    args.ssl_context, args.fingerprint = read_server_tls(args)
    args.password = read_password(args, environ)
    if hasattr(args, "limit_max_frame_bytes"):
        args.limits = read_limits(args)
    if getattr(args, "node", None) is not None and getattr(args, "bus", None) is None:
        raise UsageError("--node names this node in a cluster: it needs --bus redis://HOST:PORT")
    if getattr(args, "bus", None) is not None and not args.bus.startswith(("redis://", "rediss://", "unix://")):
        raise UsageError(f"--bus takes a Redis URL (redis://HOST:PORT), not {args.bus!r}")
    if getattr(args, "bus", None) is not None and (args.no_db or not is_postgres_url(args.db or "")):
        raise UsageError(CLUSTER_NEEDS_POSTGRES)
    lease_s = getattr(args, "lease_s", DEFAULT_LEASE_S)
    if not LEAST_LEASE_S <= lease_s <= MOST_LEASE_S:
        raise UsageError(f"--lease-s must be {LEAST_LEASE_S:g} to {MOST_LEASE_S:g} seconds, not {lease_s:g}")


def run(args: argparse.Namespace) -> int:
    """Run the server described by ``args``; return the exit status."""
    configure_logging(args.log_level)
    config = server_config(args, args.name)
    db_path = config.db_path
    try:
        run_on(_serve(config, args.fingerprint, advertised=not args.no_advertise), args.loop_factory)
    except StoreError as exc:
        log.error("cannot use the database %s: %s", describe_db(db_path) if db_path else db_path, exc)
        return 1
    except (OSError, OverflowError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        log.error("cannot listen on %s:%s: %s", args.host, args.port, reason)
        return 1
    except Exception as exc:
        if config.bus is None:
            raise
        from .bus.redis import BusUnavailable  # only a node of a cluster loads Redis

        if not isinstance(exc, BusUnavailable):
            raise
        log.error("cannot join the cluster: %s", exc)
        return 1
    return 0


def connect_instructions(
    hosts: list[str], port: int, name: str, fingerprint: str | None, password: bool, listen_host: str = "0.0.0.0"
) -> list[str]:
    """The lines telling players how to connect: the fingerprint, one ``parlour play`` line per address, the password.

    ``hosts`` come from :func:`server.net.addresses.reachable_addresses` of ``listen_host`` (the ``--host``): when
    they are all loopback addresses, a line says that only this machine can connect, and why.
    """
    lines = []
    if fingerprint is not None:
        lines.append(f"TLS certificate SHA-256 fingerprint: {fingerprint}")
    pin = f" --tls-fingerprint {fingerprint}" if fingerprint is not None else ""
    lines.append("Players connect with:" if len(hosts) == 1 else "Players connect with one of:")
    lines += [f"    parlour play {url_host(host)}:{port} --name {name}{pin}" for host in hosts]
    if all(_is_loopback(host) for host in hosts):
        why = "no network interface has another address" if listen_families(listen_host) else "the server listens on loopback only"
        lines.append(f"Only this machine can connect: {why}.")
    if password:
        lines.append(f"They also need the password: --password-file FILE, or the {PASSWORD_ENV} environment variable.")
    return lines


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


GC_YOUNG_THRESHOLD = 50_000
"""Allocations (less deallocations) of tracked objects between two young-generation collections; Python's default is 700.

At 700, 10 games with 10,000 idle connections set off 474 young, 43 middle and 3 full collections
(every connection's objects traversed) in 20,000 moves; at this threshold, 6 young ones
(docs/BENCHMARKS.md)."""


def tune_garbage_collector() -> None:
    """Set up the cyclic garbage collector for a long-running server, once it has started.

    What start-up made (modules, classes, restored tables) is frozen: never traversed again by a
    collection. The young generation is collected after :data:`GC_YOUNG_THRESHOLD` allocations
    instead of 700, so short-lived objects seldom set off a collection that promotes them.
    """
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


async def _serve(config: ServerConfig, fingerprint: str | None = None, advertised: bool = True) -> None:
    server = Server(config)
    await server.start()
    tune_garbage_collector()
    port = server.port
    hosts = reachable_addresses(config.host)
    where = f"games kept in {describe_db(config.db_path)}" if config.db_path else "nothing kept on disk"
    security = ("TLS" if config.ssl is not None else "plain TCP") + (", password required" if config.password else ", no password")
    loop = asyncio.get_running_loop()
    print(f"Parlour server {config.server_name!r} listening on port {port} ({where}; {security}; {loop_name(loop)} event loop).", flush=True)
    for line in connect_instructions(hosts, port, "YOURNAME", fingerprint, config.password is not None, config.host):
        print(line, flush=True)
    for line in web_instructions(hosts, server.http_address, guarded=config.password is not None or config.ssl is not None):
        print(line, flush=True)
    advertiser = advertise(server, fingerprint) if advertised else None
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    if advertiser is not None:
        await advertiser.close()
    log.info("stopping: telling %d connected clients", len(server.peers))
    await server.close()
    log.info("stopped")
