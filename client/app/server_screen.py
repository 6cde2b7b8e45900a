"""The server screen: servers found on the LAN, recently used ones, and an address to type.

Choosing a server fills the address (and, for a recent one, the name); Connect
opens the session. When servers are found on the LAN and the name is known,
the focus goes to the found list (unless the user is already typing an
address), so Enter on the highlighted server connects to it; a server that
wants a password or TLS gets that field focused instead. The password and TLS fingerprint fields appear when the
server turns out to want them (``bad_password``; a TLS server that closed a
plain hello, a certificate that fails its check), with the reason beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Sequence

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from .. import discovery
from ..address import parse_address  # the command line's own reading of HOST[:PORT]
from ..connection import Client, ConnectionLost, ServerError
from ..sanitize import printable
from ..tls import FingerprintMismatch, TLSFileError, normalise_fingerprint
from .connecting import Target, open_client
from .recent import RecentServer

__all__ = ["ServerScreen", "ServerStart", "Connected", "describe_found", "parse_target"]

class Connected:
    """What the server screen dismisses with: the open client and the target it reached."""

    def __init__(self, client: Client, target: Target) -> None:
        self.client = client
        self.target = target


def parse_target(address: str, name: str, password: str = "", fingerprint: str = "", tls: bool = False, ca_file: str | None = None) -> Target:
    """Read the screen's fields into a :class:`Target`.

    Raises:
        ValueError: naming the field at fault: ``("address", message)``, ``("name", ...)``, ``("fingerprint", ...)``.
    """
    if not name.strip():
        raise ValueError("name", "type the name you play under")
    if not address.strip():
        raise ValueError("address", "type the server's address, HOST or HOST:PORT")
    try:
        host, port = parse_address(address.strip())
    except argparse.ArgumentTypeError as exc:
        raise ValueError("address", str(exc)) from None
    pinned = None
    if fingerprint.strip():
        try:
            pinned = normalise_fingerprint(fingerprint.strip())
        except ValueError as exc:
            raise ValueError("fingerprint", str(exc)) from None
    return Target(host, port, name.strip(), password or None, tls or pinned is not None, pinned, ca_file)


@dataclass(frozen=True)
class ServerStart:
    """What the server screen starts with: the command line's fields, and how to search the LAN.

    Attributes:
        name: the player name to start with (``--name``).
        address: an address to start with (``HOST[:PORT]``); with a name too, the screen connects at once.
        password, fingerprint, tls, ca_file: the connection settings (see :class:`Target`).
        lan_interfaces: the local addresses to search the LAN from (``None``: every interface).
        discover: whether to search the LAN at all (``False``: the list says so).
    """

    name: str | None = None
    address: str | None = None
    password: str | None = None
    fingerprint: str | None = None
    tls: bool = False
    ca_file: str | None = None
    lan_interfaces: Sequence[str] | None = None
    discover: bool = True


class ServerScreen(Screen[Connected]):
    """Pick or type a server and connect; dismisses with :class:`Connected`.

    Args:
        start: what the fields start with, and how to search the LAN.
    """

    DEFAULT_CSS = """
    ServerScreen { layout: vertical; }
    ServerScreen #lists { height: 1fr; min-height: 5; }
    ServerScreen #lists > Vertical { width: 1fr; }
    ServerScreen OptionList { height: 1fr; }
    ServerScreen .field { height: auto; }
    ServerScreen .field { margin-top: 1; }
    ServerScreen .field Label { width: 12; padding-right: 1; text-align: right; }
    ServerScreen .field Input { width: 1fr; }
    ServerScreen .hint { color: $text-muted; height: auto; padding-left: 12; }
    ServerScreen .error { color: $error; height: auto; padding-left: 12; }
    ServerScreen .hidden { display: none; }
    ServerScreen #connect-row { height: auto; padding-left: 12; margin-top: 1; }
    """
    BINDINGS = [Binding("ctrl+r", "rescan", "Search the LAN again")]

    def __init__(self, start: ServerStart = ServerStart()) -> None:
        super().__init__()
        self.lan_interfaces = start.lan_interfaces
        self.discover = start.discover
        self.start_name = start.name or ""
        self.start_address = start.address or ""
        self.start_password = start.password or ""
        self.start_fingerprint = start.fingerprint or ""
        self.tls = start.tls
        self.ca_file = start.ca_file
        self.found: list[discovery.FoundServer] = []
        self.recent: list[RecentServer] = []

    def compose(self) -> ComposeResult:
        yield Static("Parlour — choose a server", id="title")
        with Horizontal(id="lists"):
            with Vertical():
                yield Label("On this network")
                yield OptionList(id="lan")
            with Vertical():
                yield Label("Recently used")
                yield OptionList(id="recent")
        with Horizontal(classes="field"):
            yield Label("Name")
            yield Input(self.start_name, id="name", placeholder="the name you play under", compact=True)
        yield Static("", id="name-error", classes="error")
        with Horizontal(classes="field"):
            yield Label("Address")
            yield Input(self.start_address, id="address", placeholder="HOST or HOST:PORT (default port 7420)", compact=True)
        yield Static("", id="address-error", classes="error")
        with Horizontal(classes="field hidden", id="password-row"):
            yield Label("Password")
            yield Input(self.start_password, id="password", password=True, compact=True)
        yield Static("", id="password-error", classes="error")
        with Horizontal(classes="field hidden", id="secret-row"):
            yield Label("Secret")
            yield Input(id="secret", password=True, compact=True, placeholder="the secret (or password) of your claimed name")
        yield Static("", id="secret-error", classes="error")
        with Horizontal(classes="field hidden", id="fingerprint-row"):
            yield Label("TLS SHA-256")
            yield Input(self.start_fingerprint, id="fingerprint", placeholder="AB:CD:... as parlour serve printed it", compact=True)
        yield Static("", id="fingerprint-error", classes="error")
        with Horizontal(id="connect-row"):
            yield Button("Connect", id="connect", variant="primary", compact=True)
        yield Static("", id="status", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self._clear_errors()
        if self.start_password:
            self._show("password")
        if self.start_fingerprint or self.tls:
            self._show("fingerprint")
        self.recent = self.app.recent.load()  # type: ignore[attr-defined]
        recent = self.query_one("#recent", OptionList)
        for server in self.recent:
            recent.add_option(Option(f"{printable(server.name)} @ {server.address}"))
        if not self.recent:
            recent.add_option(Option("(none yet)", disabled=True))
        if self.start_name and self.start_address:
            self._show_found(searching=False, problem="not searching: connecting to the address given")
            self.connect()
        else:
            self.query_one("#name" if not self.start_name else "#address", Input).focus()
            self.action_rescan()

    # --- LAN discovery ---------------------------------------------------------------

    def action_rescan(self) -> None:
        """Browse the LAN for servers again."""
        if not self.discover:
            self._show_found(searching=False, problem="not searching the LAN")
            return
        self._show_found(searching=True)
        self._discover()

    @work(exclusive=True, group="discover")
    async def _discover(self) -> None:
        """Follow the LAN's servers as they come and go, until the screen closes."""
        self.found = []
        try:
            async with aclosing(discovery.watch(interfaces=self.lan_interfaces)) as changes:
                async for change in changes:
                    self.found = [server for server in self.found if server.key != change.key]
                    if isinstance(change, discovery.FoundServer):
                        self.found.append(change)
                        self.found.sort(key=lambda server: (server.name.casefold(), server.address))
                    self._show_found(searching=False)
        except (discovery.DiscoveryError, OSError) as exc:
            self._show_found(searching=False, problem=f"cannot search the LAN: {printable(str(exc))}")

    def _show_found(self, *, searching: bool, problem: str | None = None) -> None:
        lan = self.query_one("#lan", OptionList)
        picked = lan.highlighted_option.id if lan.highlighted_option is not None else None
        lan.clear_options()
        for server in self.found:
            lan.add_option(Option(describe_found(server), id=server.key))
        if not self.found:
            lan.add_option(Option(problem or ("searching..." if searching else "no servers found yet"), disabled=True))
            return
        keys = [server.key for server in self.found]
        lan.highlighted = keys.index(picked) if picked in keys else 0
        if self._waiting_for_a_server():
            lan.focus()

    def _waiting_for_a_server(self) -> bool:
        """Whether the focus may move to the found list: the name is filled and no address is being typed."""
        if not self.query_one("#name", Input).value.strip():
            return False
        focused = self.app.focused
        address = self.query_one("#address", Input)
        return focused is None or (focused is address and not address.value.strip())

    # --- choosing ---------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#lan")
    def _chose_found(self, event: OptionList.OptionSelected) -> None:
        """Fill in the found server; connect at once unless a field is still wanted (name, password, fingerprint)."""
        server = self.found[event.option_index]
        self.query_one("#address", Input).value = server.address
        wanted = None
        if server.tls:
            self._show("fingerprint")
            wanted = wanted if self.query_one("#fingerprint", Input).value else "fingerprint"
        if server.password:
            self._show("password")
            wanted = wanted if self.query_one("#password", Input).value else "password"
        if not self.query_one("#name", Input).value.strip():
            wanted = "name"
        if wanted is not None:
            self.query_one(f"#{wanted}", Input).focus()
        else:
            self.connect()

    @on(OptionList.OptionSelected, "#recent")
    def _chose_recent(self, event: OptionList.OptionSelected) -> None:
        server = self.recent[event.option_index]
        self.query_one("#address", Input).value = server.address
        self.query_one("#name", Input).value = server.name
        self.query_one("#connect", Button).focus()

    @on(Button.Pressed, "#connect")
    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted | Button.Pressed) -> None:
        if isinstance(event, Input.Submitted) and event.input.id == "name" and not self.query_one("#address", Input).value.strip() and self.found:
            self.query_one("#lan", OptionList).focus()  # a name typed, servers found: pick one there
            return
        self.connect()

    # --- connecting --------------------------------------------------------------------

    def connect(self) -> None:
        """Check the fields and, if they read, connect in the background."""
        self._clear_errors()
        value = lambda widget_id: self.query_one(f"#{widget_id}", Input).value  # noqa: E731
        try:
            target = parse_target(value("address"), value("name"), value("password"), value("fingerprint"), self.tls, self.ca_file)
        except ValueError as exc:
            field, message = exc.args
            self._error(field, message)
            return
        if value("secret"):
            target = replace(target, secret=value("secret"))
        self.query_one("#status", Static).update(f"Connecting to {target.host}:{target.port} ...")
        self.query_one("#connect", Button).disabled = True
        self._open(target)

    @work(exclusive=True, group="connect")
    async def _open(self, target: Target) -> None:
        try:
            client = await open_client(target, self.app.tokens, claims=getattr(self.app, "claims", None))
        except (ServerError, OSError, TLSFileError) as exc:  # TimeoutError, ssl.SSLError and FingerprintMismatch included
            self._refused(exc, target)
            return
        finally:
            self.query_one("#connect", Button).disabled = False
        self.query_one("#status", Static).update("")
        self.dismiss(Connected(client, target))

    def _refused(self, exc: BaseException, target: Target) -> None:
        """Show why connecting failed on the field the user can change."""
        self.query_one("#status", Static).update("")
        if isinstance(exc, ServerError) and exc.code == "bad_password":
            self._show("password")
            self.query_one("#password", Input).focus()
            wanted = "This server needs a password." if target.password is None else f"The server refused the password: {printable(exc.message)}"
            self._error("password", wanted)
        elif isinstance(exc, ServerError) and exc.code in ("name_claimed", "claim_required"):
            self._show("secret")  # a server with claimed names (accounts): prove the name, or claim it
            self.query_one("#secret", Input).focus()
            self._error("secret", f"{printable(exc.message)} ({exc.code})")
        elif isinstance(exc, ServerError) and exc.code in ("bad_name", "name_taken", "name_reserved"):
            self._error("name", f"{printable(exc.message)} ({exc.code})")
        elif isinstance(exc, FingerprintMismatch):
            self._show("fingerprint")
            self._error("fingerprint", str(exc))
        elif isinstance(exc, ssl.SSLCertVerificationError):
            self._show("fingerprint")
            self._error("fingerprint", f"the certificate failed its check ({exc.verify_message}): give the fingerprint parlour serve printed")
        elif isinstance(exc, ssl.SSLError):
            self._error("address", f"TLS failed ({exc.reason or exc}): if the server does not use TLS, clear the fingerprint")
        elif isinstance(exc, (ConnectionLost, asyncio.TimeoutError, TimeoutError)) and not target.tls:
            self._show("fingerprint")
            self._error("fingerprint", "No answer to hello: if the server uses TLS, give its certificate fingerprint.")
        elif isinstance(exc, TLSFileError):
            self._error("address", str(exc))
        elif isinstance(exc, ConnectionRefusedError):
            self._error("address", f"nothing answers at {target.host}:{target.port}: is the server running, and is that its port?")
        elif isinstance(exc, ServerError):
            self._error("address", f"the server refused us ({exc.code}): {printable(exc.message)}")
        else:
            self._error("address", f"cannot connect to {target.host}:{target.port}: {printable(str(exc) or type(exc).__name__)}")

    def _show(self, field: str) -> None:
        self.query_one(f"#{field}-row").remove_class("hidden")

    def _error(self, field: str, message: str) -> None:
        line = self.query_one(f"#{field}-error", Static)
        line.update(message)
        line.display = True
        if field in ("name", "address"):
            self.query_one(f"#{field}", Input).focus()

    def _clear_errors(self) -> None:
        for field in ("name", "address", "password", "secret", "fingerprint"):
            line = self.query_one(f"#{field}-error", Static)
            line.update("")
            line.display = False


def describe_found(server: discovery.FoundServer) -> str:
    """One line for a server found on the LAN: name, address, version, and whether it wants a password or TLS (sanitised)."""
    extras = [word for word, flag in (("password", server.password), ("TLS", server.tls)) if flag]
    tail = f" ({', '.join(extras)})" if extras else ""
    version = f" v{printable(server.version)}" if server.version else ""
    return f"{printable(server.name)} — {server.address}{version}{tail}"
