"""A player's session: the identity that outlives any one connection.

A session has a name, a secret resume token, the seats it holds and the
tables it watches. Its connection (:class:`Peer`) may drop and be replaced by
a new one that says ``hello`` with the token; the seats stay held meanwhile.

The token is issued when the session is created, and resuming by it does
not replace it: so a resume whose ``welcome`` is lost (the connection drops,
the server dies) leaves the client holding a token that still works. It is
replaced only when the player proves the claimed name again (a ``hello`` with
its secret or password) or changes its password or secret
(:meth:`server.players.sessions.Sessions.renew_token`): then the old token is dead,
so whoever copied it is shut out. The token also dies when the session is
forgotten (disconnected and holding no seat).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

from ..net.peer import Peer

__all__ = ["Push", "Session", "new_token"]

Push = Callable[[], None]
"""A send that a request handler defers until its reply has gone: handlers append them to ``then``."""

TOKEN_BYTES = 24
"""Entropy of a resume token, in bytes (192 bits)."""


def new_token() -> str:
    """A fresh unguessable resume token (URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


@dataclass(eq=False, slots=True)
class Session:
    """One player's identity on this server.

    Slotted, and its map of seats and set of watched tables are made on
    first use: most connections are idle sessions that hold neither, and an
    empty set alone costs more than the session's other fields.

    Attributes:
        name: the player name.
        token: the resume token (replaced only by :meth:`server.players.sessions.Sessions.renew_token`).
        peer: the live connection, or ``None`` while disconnected.
        seats: table id to the seat held there.
        watching: ids of the tables this session spectates.
        bot: whether the client said ``hello`` as a program (``hello.bot``).
        claimed: whether the session proved it owns a claimed name (:mod:`server.players.accounts`).
    """

    name: str
    token: str
    peer: Peer | None = None
    bot: bool = False
    claimed: bool = False  # proved it owns a claimed name (hello.secret, or claimed it in its hello)
    _tables: tuple[dict[int, int], set[int]] | None = field(default=None, init=False, repr=False)  # seats, watching

    @property
    def seats(self) -> dict[int, int]:
        """Table id to the seat held there."""
        return self._held_tables()[0]

    @property
    def watching(self) -> set[int]:
        """Ids of the tables this session spectates."""
        return self._held_tables()[1]

    def _held_tables(self) -> tuple[dict[int, int], set[int]]:
        """The seats and watched tables, made together on first use."""
        tables = self._tables
        if tables is None:
            tables = self._tables = ({}, set())
        return tables

    def send_frame(self, frame: bytes, message: Any = None) -> None:
        """Send an encoded frame to the live connection, if there is one (the bus delivers table events so)."""
        peer = self.peer
        if peer is not None:
            peer.send_frame(frame, message)

    @property
    def connected(self) -> bool:
        """Whether a live connection speaks for this session."""
        return self.peer is not None and not self.peer.closed

    def __repr__(self) -> str:
        return f"<Session {self.name!r} {'online' if self.connected else 'offline'}>"
