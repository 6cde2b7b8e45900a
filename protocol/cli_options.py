"""Command-line pieces both ends of ``parlour`` share: numeric flags, the password, the usage error.

``parlour serve`` and ``parlour host`` (the server's options) and ``parlour
play`` (the client's) take the same password options and check numbers the
same way, so the client never needs the server's modules to parse its command
line (nor the server the client's). No sockets here; :func:`read_password`
reads the one small file ``--password-file`` names.

Every numeric flag's value must be a finite number within a documented range;
anything else is refused by argparse with a message naming the flag, the range
and the value given, e.g. ``argument --grace: expected a number from 0 to 604800
(seconds), not 'nan'``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Callable, Mapping

__all__ = [
    "MAX_PASSWORD_CHARS",
    "PASSWORD_ENV",
    "UsageError",
    "add_password_arguments",
    "describe_range",
    "number_in",
    "read_password",
]


def describe_range(low: float, high: float, *, whole: bool, low_open: bool = False, unit: str = "") -> str:
    """The range in words, as the help and the errors give it: ``"a whole number from 1 to 65535"``."""
    kind = "a whole number" if whole else "a number"
    start = f"more than {low:.15g} and at most {high:.15g}" if low_open else f"from {low:.15g} to {high:.15g}"
    return f"{kind} {start}" + (f" ({unit})" if unit else "")


def number_in(
    low: float, high: float, *, whole: bool = False, low_open: bool = False, unit: str = ""
) -> Callable[[str], float | int]:
    """An argparse ``type`` accepting a finite number in ``[low, high]`` (``(low, high]`` if ``low_open``).

    Args:
        low, high: the range, both finite.
        whole: accept only whole numbers (written without a fraction or exponent); return an ``int``.
        low_open: refuse ``low`` itself ("more than 0").
        unit: shown in the error, e.g. ``"seconds"``.

    Returns:
        A function from the flag's text to its value, raising
        :class:`argparse.ArgumentTypeError` (argparse adds the flag's name) for
        text that is not such a number.
    """
    wanted = describe_range(low, high, whole=whole, low_open=low_open, unit=unit)

    def parse(text: str) -> float | int:
        try:
            value: float | int = int(text.strip(), 10) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, not {text!r}") from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or value > high:
            raise argparse.ArgumentTypeError(f"expected {wanted}, not {text!r}")
        return value

    parse.__name__ = "number"
    return parse


# --- the password ------------------------------------------------------------------------

PASSWORD_ENV = "PARLOUR_PASSWORD"
"""The environment variable a password may come from (a flag wins over it)."""

MAX_PASSWORD_CHARS = 256
"""The longest password ``hello`` can carry (``protocol.messages.Hello.password``)."""


class UsageError(ValueError):
    """The command line parsed but cannot work (``parlour`` exits with status 2 and the message)."""


def add_password_arguments(parser: argparse.ArgumentParser, *, server: bool) -> None:
    """Add ``--password TEXT`` and ``--password-file FILE`` (read by :func:`read_password`).

    Args:
        server: word the help for a server that demands the password (else for a client giving it).
    """
    what = "players must give this password" if server else "the server's password"
    group = parser.add_argument_group("password", f"Without these, the {PASSWORD_ENV} environment variable is used if set.")
    exclusive = group.add_mutually_exclusive_group()
    exclusive.add_argument(
        "--password",
        metavar="TEXT",
        help=f"{what} (other users of this machine can see it in ps: prefer --password-file or {PASSWORD_ENV})",
    )
    exclusive.add_argument("--password-file", metavar="FILE", help=f"{what}, read from FILE (one trailing newline is dropped)")


def read_password(args: argparse.Namespace, environ: Mapping[str, str]) -> str | None:
    """The password from ``--password``, else ``--password-file``, else ``$PARLOUR_PASSWORD``; ``None`` if none is given.

    Raises:
        UsageError: the file cannot be read, or the password is empty or too long.
    """
    if args.password is not None:
        password, source = args.password, "--password"
    elif args.password_file is not None:
        try:
            text = Path(args.password_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            raise UsageError(f"cannot read the password file {args.password_file}: {reason}") from None
        password, source = text.removesuffix("\n").removesuffix("\r"), f"the password file {args.password_file}"
    elif PASSWORD_ENV in environ:
        password, source = environ[PASSWORD_ENV], f"the {PASSWORD_ENV} environment variable"
    else:
        return None
    if not password:
        raise UsageError(f"the password from {source} is empty; give a non-empty password, or none")
    if len(password) > MAX_PASSWORD_CHARS:
        raise UsageError(f"the password from {source} is longer than {MAX_PASSWORD_CHARS} characters")
    return password
