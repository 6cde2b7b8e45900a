"""The ``parlour`` command line: TLS, password and limit options, and how refusals read."""

from __future__ import annotations

import argparse
import ssl
from dataclasses import fields
from pathlib import Path

import pytest
import trustme

from client.cli import ConnectSettings, build_parser, describe_connect_error, parse_args
from client.connection import ConnectionLost, ServerError
from client.tls import FingerprintMismatch
from protocol import messages as m
from server.cli import limit_flag, server_config
from server.net.limits import LimitError, Limits
from server.net.tls import certificate_fingerprint

PIN = "ab" * 32
PIN_NORMAL = ":".join(["AB"] * 32)


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(certificate, key, CA certificate) PEM files."""
    directory = tmp_path_factory.mktemp("cli-tls")
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    cert, key, ca_file = directory / "cert.pem", directory / "key.pem", directory / "ca.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(ca_file))
    return cert, key, ca_file


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], environ: dict[str, str] | None = None) -> str:
    """Parse ``argv``, expecting exit status 2; return the error line."""
    with pytest.raises(SystemExit) as info:
        parse_args(argv, environ or {})
    assert info.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


# --- serve: TLS -------------------------------------------------------------------------


def test_serve_needs_both_cert_and_key_or_neither(tls_files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    cert, key, _ = tls_files
    assert "--tls-cert and --tls-key go together" in refused(["serve", "--tls-cert", str(cert)], capsys)
    assert "--tls-cert and --tls-key go together" in refused(["serve", "--tls-key", str(key)], capsys)
    plain = parse_args(["serve"], {})
    assert plain.ssl_context is None and plain.fingerprint is None
    secure = parse_args(["serve", "--tls-cert", str(cert), "--tls-key", str(key)], {})
    assert isinstance(secure.ssl_context, ssl.SSLContext)
    assert secure.fingerprint == certificate_fingerprint(cert)


def test_serve_names_the_file_it_cannot_use(tls_files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cert, key, _ = tls_files
    error = refused(["serve", "--tls-cert", str(tmp_path / "gone.pem"), "--tls-key", str(key)], capsys)
    assert "gone.pem" in error and "No such file" in error
    assert "holds no PEM certificate" in refused(["serve", "--tls-cert", str(key), "--tls-key", str(key)], capsys)


# --- passwords ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["serve", "play", "host"])
def test_password_flag_wins_over_file_env_order(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = {"serve": ["serve"], "play": ["play", "h", "--name", "ann"], "host": ["host", "--name", "ann"]}[command]

    def password(*extra: str, environ: dict[str, str] | None = None) -> str | None:
        args = parse_args([*base, *extra], environ or {})
        return args.settings.password if command == "play" else args.password

    (tmp_path / "pw").write_text("from file\n")
    (tmp_path / "two").write_text("two newlines\n\n")
    (tmp_path / "crlf").write_text("windows\r\n", newline="")
    env = {"PARLOUR_PASSWORD": "from env"}
    assert password() is None
    assert password(environ=env) == "from env"
    assert password("--password", "from flag", environ=env) == "from flag"
    assert password("--password-file", str(tmp_path / "pw"), environ=env) == "from file"
    assert password("--password-file", str(tmp_path / "two")) == "two newlines\n", "only one trailing newline is dropped"
    assert password("--password-file", str(tmp_path / "crlf")) == "windows"
    assert password("--password", "  spaces kept  ") == "  spaces kept  "

    both = refused([*base, "--password", "a", "--password-file", str(tmp_path / "pw")], capsys)
    assert "not allowed with argument" in both


@pytest.mark.parametrize("command", [["serve"], ["play", "h", "--name", "ann"]])
def test_an_empty_or_unreadable_password_is_refused(command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").write_text("\n")
    assert "the password from --password is empty" in refused([*command, "--password", ""], capsys)
    assert f"the password file {tmp_path / 'empty'} is empty" in refused([*command, "--password-file", str(tmp_path / "empty")], capsys)
    assert "PARLOUR_PASSWORD environment variable is empty" in refused(command, capsys, {"PARLOUR_PASSWORD": ""})
    missing = refused([*command, "--password-file", str(tmp_path / "missing")], capsys)
    assert "cannot read the password file" in missing and "missing" in missing
    assert "longer than 256" in refused([*command, "--password", "x" * 257], capsys)


def _help(command: list[str]) -> str:
    """The help text of a subcommand, with the line wrapping undone."""
    parser = parse_args(command, {}).command_parser
    return " ".join(parser.format_help().split())


def test_help_warns_that_a_password_flag_shows_in_ps() -> None:
    for command in (["serve"], ["play", "h", "--name", "ann"], ["host", "--name", "ann"]):
        assert "can see it in ps" in _help(command)


# --- limits ------------------------------------------------------------------------------


def test_every_limit_has_a_flag_in_the_limits_group() -> None:
    assert limit_flag("idle_timeout_s") == "--idle-timeout"
    assert limit_flag("requests_per_s") == "--requests-per-s"
    assert limit_flag("max_frame_bytes") == "--max-frame-bytes"
    _, _, group = _help(["serve"]).partition(" limits: ")
    for spec in fields(Limits):
        assert f"{limit_flag(spec.name)} " in group, spec.name
    assert "In seconds; default 45" in group and "Per second; default 50" in group
    assert "(timeout)" in group, "descriptions come from the Limits docstring"
    assert "None" not in group


def test_limits_default_and_given() -> None:
    assert parse_args(["serve"], {}).limits == Limits()
    args = parse_args(["serve", "--idle-timeout", "90", "--heartbeat", "30", "--max-connections", "5", "--requests-per-s", "2.5"], {})
    assert args.limits == Limits(idle_timeout_s=90.0, heartbeat_s=30.0, max_connections=5, requests_per_s=2.5)
    assert isinstance(args.limits.max_connections, int)


def test_impossible_limits_exit_2_with_the_limit_error(capsys: pytest.CaptureFixture[str]) -> None:
    error = refused(["serve", "--max-connections", "0"], capsys)
    assert "argument --max-connections: expected a whole number more than 0 and at most 1000000, not '0'" in error
    error = refused(["serve", "--heartbeat", "60"], capsys)
    assert "must be longer than heartbeat_s" in error and "--heartbeat" in error and "--idle-timeout" in error
    assert "--max-frame-bytes: expected a whole number" in refused(["serve", "--max-frame-bytes", "1.5"], capsys)
    assert "--idle-timeout: expected a number more than 0 and at most 86400 (seconds), not 'nan'" in refused(
        ["serve", "--idle-timeout", "nan"], capsys
    )
    assert "--idle-timeout: expected a number" in refused(["serve", "--idle-timeout", "soon"], capsys)


NUMERIC_FLAGS = [
    (["serve", "--port"], ["70000", "-5", "1.5", "nan", "http"], ["0", "65535"]),
    (["serve", "--grace"], ["nan", "inf", "-inf", "-1", "1e300", "soon"], ["0", "0.5", "604800"]),
    (["host", "--name", "ann", "--port"], ["70000", "-5", "nan"], ["0", "7420"]),
    (["games", "--limit"], ["-1", "1e3", "99999999999999999999", "nan"], ["0", "1000000"]),
    (["games", "--offset"], ["-1", "inf"], ["0", "5"]),
    (["games", "--export"], ["0", "-1", "nan", str(2**63)], ["1", str(2**63 - 1)]),
    (["serve", "--bot-seconds"], ["0", "-1", "nan", "inf", "61", "x"], ["0.02", "1", "60"]),
    (["serve", "--bot-workers"], ["0", "-1", "1.5", "257", "nan"], ["1", "256"]),
    *[(["serve", limit_flag(spec.name)], ["0", "-1", "nan", "inf", "1e300", "x"], [str(spec.default)]) for spec in fields(Limits)],
]


@pytest.mark.parametrize(("command", "bad", "good"), NUMERIC_FLAGS, ids=[" ".join(c) for c, _, _ in NUMERIC_FLAGS])
def test_every_numeric_flag_is_finite_and_in_its_range(
    command: list[str], bad: list[str], good: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    flag = command[-1]
    for text in bad:
        error = refused([*command[:-1], f"{flag}={text}"], capsys)
        assert f"argument {flag}: expected a " in error and repr(text) in error, error
        assert "Traceback" not in error
    for text in good:
        parse_args([*command, text], {})


def test_play_port_is_checked_by_the_same_validator(capsys: pytest.CaptureFixture[str]) -> None:
    for port in ("0", "70000", "-5", "1e3"):
        error = refused(["play", f"localhost:{port}", "--name", "ann"], capsys)
        assert "the port: expected a whole number from 1 to 65535" in error and repr(port) in error
    assert parse_args(["play", "localhost:65535", "--name", "ann"], {}).address == ("localhost", 65535)


def test_limits_themselves_refuse_what_is_not_finite() -> None:
    with pytest.raises(LimitError, match="heartbeat_s must be at most 86400 seconds, not inf"):
        Limits(heartbeat_s=float("inf"), idle_timeout_s=float("inf"))
    with pytest.raises(LimitError, match="must be more than 0, not nan"):
        Limits(requests_per_s=float("nan"))


# --- play: TLS ---------------------------------------------------------------------------


def test_play_tls_options_make_the_right_context(tls_files: tuple[Path, Path, Path]) -> None:
    _, _, ca_file = tls_files
    plain = parse_args(["play", "h", "--name", "ann"], {}).settings
    assert plain == ConnectSettings()
    assert plain.claims is not None and not plain.claims.guest, "play claims its name unless --guest"
    guest = parse_args(["play", "h", "--name", "ann", "--guest"], {}).settings
    assert guest.claims is not None and guest.claims.guest
    assert not parse_args(["bot", "h", "--game", "nimble"], {}).settings.claims.guest, "a bot claims its name too"
    system = parse_args(["play", "h", "--name", "ann", "--tls"], {}).settings
    assert system.ssl is not None and system.ssl.verify_mode == ssl.CERT_REQUIRED and system.ssl.check_hostname
    assert system.fingerprint is None
    own_ca = parse_args(["play", "h", "--name", "ann", "--tls-ca", str(ca_file)], {}).settings
    assert own_ca.ssl is not None and own_ca.ssl.verify_mode == ssl.CERT_REQUIRED and own_ca.fingerprint is None
    assert len(own_ca.ssl.get_ca_certs()) == 1, "only the given CA is trusted"
    pinned = parse_args(["play", "h", "--name", "ann", "--tls-fingerprint", f"SHA256:{PIN}"], {}).settings
    assert pinned.fingerprint == PIN_NORMAL
    assert pinned.ssl is not None and pinned.ssl.verify_mode == ssl.CERT_NONE and not pinned.ssl.check_hostname


def test_play_refuses_bad_tls_options(tls_files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, _, ca_file = tls_files
    base = ["play", "h", "--name", "ann"]
    assert "64 hex digits" in refused([*base, "--tls-fingerprint", "AB:CD"], capsys)
    assert "not allowed with argument" in refused([*base, "--tls-ca", str(ca_file), "--tls-fingerprint", PIN], capsys)
    error = refused([*base, "--tls-ca", str(tmp_path / "none.pem")], capsys)
    assert "none.pem" in error and "certificate authority" in error


def test_host_pins_its_own_certificate_for_its_terminal(tls_files: tuple[Path, Path, Path]) -> None:
    cert, key, _ = tls_files
    args = parse_args(["host", "--name", "ann", "--tls-cert", str(cert), "--tls-key", str(key)], {"PARLOUR_PASSWORD": "pw"})
    assert args.settings.fingerprint == certificate_fingerprint(cert)
    assert args.settings.ssl is not None and args.settings.ssl.verify_mode == ssl.CERT_NONE
    assert args.settings.password == args.password == "pw"
    plain = parse_args(["host", "--name", "ann"], {})
    assert plain.settings == ConnectSettings()
    assert plain.settings.claims is not None and not plain.settings.claims.guest and plain.accounts == "optional"
    assert parse_args(["host", "--name", "ann", "--guest", "--accounts", "required"], {}).settings.claims.guest


# --- refusals, one line each ------------------------------------------------------------------


def test_refusals_read_as_one_line_saying_what_to_do() -> None:
    bad_password = ServerError(m.Error(id=1, code="bad_password", message="wrong password"))
    assert "--password-file" in describe_connect_error(bad_password, ConnectSettings())
    assert describe_connect_error(bad_password, ConnectSettings(password="x")) == "The server refused the password (bad_password): wrong password"
    pinned = ConnectSettings(ssl=ssl.create_default_context(), fingerprint=PIN_NORMAL)
    assert describe_connect_error(FingerprintMismatch("the server's certificate fingerprint is X, not Y"), pinned).startswith(
        "TLS fingerprint mismatch: "
    )
    assert "connect with --tls-fingerprint" in describe_connect_error(ConnectionLost("the server closed the connection"), ConnectSettings())
    assert "does the server use TLS" in describe_connect_error(TimeoutError(), pinned)
    for exc in (bad_password, ConnectionLost("x"), TimeoutError()):
        assert "\n" not in describe_connect_error(exc, ConnectSettings())


# --- bot ----------------------------------------------------------------------------------


def test_bot_arguments_become_its_settings() -> None:
    args = parse_args(["bot", "h:7500", "--game", "othello", "--level", "2", "--join", "--option", "size=6",
                       "--accept-draws", "when-losing", "--games", "3", "--name", "robo"], {})  # fmt: skip
    settings = args.bot
    assert args.address == ("h", 7500) and args.name == "robo"
    assert (settings.game, settings.level, settings.mode, dict(settings.options)) == ("othello", 2, "join", {"size": 6})
    assert (settings.accept_draws, settings.accept_takebacks, settings.games) == ("when-losing", False, 3)
    assert parse_args(["bot", "h", "--game", "nimble"], {}).bot.level == 5 and parse_args(["bot", "h", "--game", "nimble"], {}).bot.mode == "auto"


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--level", "6"], "argument --level: expected a whole number from 1 to 5, not '6'"),
        (["--option", "size=7"], "--option: option 'size' must be an even integer from 6 to 16, not 7"),
        (["--option", "colour=red"], "othello has no option 'colour'"),
        (["--option", "size"], "--option is KEY=VALUE, not 'size'"),
        (["--create", "--join"], "not allowed with argument"),
    ],
)
def test_bot_arguments_that_cannot_work_are_refused_by_name(argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert complaint in refused(["bot", "h", "--game", "othello", *argv], capsys)


def test_rated_games_can_be_turned_off_for_serve_and_host() -> None:
    assert parse_args(["serve"], {}).rated == "on"
    assert parse_args(["serve", "--no-rated"], {}).rated == "off"
    assert parse_args(["serve", "--rated", "off"], {}).rated == "off"
    assert parse_args(["host", "--name", "ann", "--no-rated"], {}).rated == "off"
    with pytest.raises(SystemExit):
        parse_args(["serve", "--rated", "maybe"], {})


def _options(command: str) -> set[str]:
    """Every option string of ``parlour COMMAND``."""
    parser = build_parser()
    [subparsers] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return {option for action in subparsers.choices[command]._actions for option in action.option_strings}


def test_host_takes_every_server_option_of_serve_but_the_server_name_and_the_cluster_ones() -> None:
    # host's --name is the player's (its server takes the machine's name); joining a cluster
    # (--bus, --node) is for nodes started with serve, not for a machine hosting its own game
    assert _options("serve") - _options("host") == {"--bus", "--node", "--lease-s"}
    assert {"--db", "--no-db", "--grace", "--log-level", "--bot-seconds", "--max-connections"} <= _options("host")


def test_host_options_reach_its_server_config(tmp_path: Path) -> None:
    db = tmp_path / "host.sqlite3"
    args = parse_args(["host", "--name", "ann", "--db", str(db), "--grace", "5", "--log-level", "DEBUG", "--bot-workers", "1"], {})
    config = server_config(args, "box")
    assert (config.db_path, config.grace_s, config.bot_workers, config.server_name) == (str(db), 5.0, 1, "box")
    assert args.log_level == "DEBUG"
    assert server_config(parse_args(["host", "--name", "ann", "--no-db"], {}), "box").db_path is None
    defaults = parse_args(["host", "--name", "ann"], {})
    assert (defaults.log_level, server_config(defaults, "box").grace_s) == ("WARNING", 60.0)


def test_host_refuses_db_and_no_db_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "not allowed with argument" in refused(["host", "--name", "ann", "--db", str(tmp_path / "x"), "--no-db"], capsys)
