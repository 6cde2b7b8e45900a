"""Resuming a lost session: the one retry policy of every front end (the line client and the app).

After the connection drops, a :class:`Reconnector` tries to resume the
session with growing waits (:data:`RETRY_DELAYS_S`), for at least
:data:`GIVE_UP_S` seconds and at least as long as the server holds the
seats (``welcome.grace_s``), so a server that crashed and came back is found
again. :meth:`Reconnector.retry_now` cuts the current wait short (the app's
retry key). It gives up at once on what waiting cannot change: the server
refusing the session or the password, a certificate failing its check, a
secret that cannot be written down, a TLS file that cannot be read.
A connection whose session went to another connection (``Client.superseded``,
"signed in elsewhere") must not be resumed at all: front ends do not start one.

>>> reconnector = Reconnector(lambda: Client.connect(host, port, name="ann", token=token))  # doctest: +SKIP
>>> client = await reconnector.run()  # None: gave up (reconnector.failure says why)           # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from typing import Awaitable, Callable

from .connection import Client, ServerError
from .tls import FingerprintMismatch
from .tokens import SecretStoreError

__all__ = ["Attempt", "GIVE_UP_S", "RETRY_DELAYS_S", "Reconnector", "WAITED_OUT", "give_up_after_s"]

RETRY_DELAYS_S: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Waits before each attempt, in seconds; the last one repeats."""

GIVE_UP_S = 300.0
"""The least time a front end keeps trying after losing its connection, in seconds."""

WAITED_OUT = ("too_many_connections",)
"""Refusals that waiting may change: the next attempt may be let in."""


def give_up_after_s(grace_s: float | None) -> float:
    """How long to keep trying, in seconds: :data:`GIVE_UP_S`, or the server's grace period and one more wait if longer.

    >>> give_up_after_s(None), give_up_after_s(60.0), give_up_after_s(600.0)
    (300.0, 300.0, 608.0)
    """
    return max(GIVE_UP_S, (grace_s or 0.0) + RETRY_DELAYS_S[-1])


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt that failed, and when the next comes.

    Attributes:
        number: the attempt's number, from 1.
        error: what went wrong (the exception), for the front end to word.
        next_in_s: seconds until the next attempt.
    """

    number: int
    error: BaseException
    next_in_s: float


class Reconnector:
    """Tries ``connect`` until it succeeds, gives up, or the time runs out.

    Args:
        connect: opens and resumes the session (a new connection each call).
        grace_s: the server's grace period (``welcome.grace_s``), to keep trying at least that long.
        on_attempt: told of every failed attempt that will be retried.

    Attributes:
        attempts: attempts made so far.
        next_at: the event loop's time of the next attempt (``None`` while one runs, or once done).
        give_up_at: the event loop's time after which no attempt starts (set by :meth:`run`).
        failure: why :meth:`run` gave up: the refusal that waiting cannot change, or the last error when time ran out.
        running: whether :meth:`run` is under way.
    """

    def __init__(
        self, connect: Callable[[], Awaitable[Client]], *, grace_s: float | None = None, on_attempt: Callable[[Attempt], None] | None = None
    ) -> None:
        self._connect = connect
        self.give_up_s = give_up_after_s(grace_s)
        self._on_attempt = on_attempt
        self._wake = asyncio.Event()
        self.attempts = 0
        self.next_at: float | None = None
        self.give_up_at: float | None = None
        self.failure: BaseException | None = None
        self.running = False

    def retry_now(self) -> None:
        """Cut the current wait short: the next attempt starts at once."""
        self._wake.set()

    async def run(self) -> Client | None:
        """Try until connected (return the client) or giving up (return ``None``; :attr:`failure` says why)."""
        loop = asyncio.get_running_loop()
        self.give_up_at = loop.time() + self.give_up_s
        self.running = True
        try:
            while loop.time() < self.give_up_at:
                await self._wait(RETRY_DELAYS_S[min(self.attempts, len(RETRY_DELAYS_S) - 1)])
                self.attempts += 1
                try:
                    return await self._connect()
                except ServerError as exc:
                    if exc.code not in WAITED_OUT:
                        self.failure = exc
                        return None
                    self.failure = exc
                except (FingerprintMismatch, ssl.SSLCertVerificationError, SecretStoreError, ValueError) as exc:
                    self.failure = exc  # a certificate, a secret that cannot be kept, a CA file (TLSFileError): waiting changes none
                    return None
                except OSError as exc:  # TimeoutError and ConnectionLost included: the server is not (yet) there
                    self.failure = exc
                if self._on_attempt is not None:
                    self._on_attempt(Attempt(self.attempts, self.failure, RETRY_DELAYS_S[min(self.attempts, len(RETRY_DELAYS_S) - 1)]))
            return None
        finally:
            self.running = False
            self.next_at = None

    async def _wait(self, delay_s: float) -> None:
        """Sleep ``delay_s`` seconds, or less if :meth:`retry_now` is called meanwhile."""
        loop = asyncio.get_running_loop()
        self.next_at = loop.time() + delay_s
        try:
            await asyncio.wait_for(self._wake.wait(), delay_s)
        except TimeoutError:
            pass
        self._wake.clear()
        self.next_at = None
