"""A player's session: the identity that outlives any one connection.

A session has a name, a secret resume token, the seats it holds and the
tables it watches. Its connection (:class:`Peer`) may drop and be replaced by
a new one that says ``hello`` with the token; the seats stay held meanwhile.

The token is issued once, when the session is created, and stays the same
for the session's whole life: resuming does not replace it. So a resume whose
``welcome`` is lost (the connection drops, the server dies) leaves the client
holding a token that still works. The token dies only when the session is
forgotten (disconnected and holding no seat).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from .peer import Peer

__all__ = ["Session", "new_token"]

TOKEN_BYTES = 24
"""Entropy of a resume token, in bytes (192 bits)."""


def new_token() -> str:
    """A fresh unguessable resume token (URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


@dataclass(eq=False)
class Session:
    """One player's identity on this server.

    Attributes:
        name: the player name.
        token: the resume token, fixed for the session's life (never replaced).
        peer: the live connection, or ``None`` while disconnected.
        seats: table id to the seat held there.
        watching: ids of the tables this session spectates.
        bot: whether the client said ``hello`` as a program (``hello.bot``).
    """

    name: str
    token: str
    peer: Peer | None = None
    seats: dict[int, int] = field(default_factory=dict)
    watching: set[int] = field(default_factory=set)
    bot: bool = False

    @property
    def connected(self) -> bool:
        """Whether a live connection speaks for this session."""
        return self.peer is not None and not self.peer.closed

    def __repr__(self) -> str:
        return f"<Session {self.name!r} {'online' if self.connected else 'offline'}>"
