"""A player's session: the identity that outlives any one connection.

A session has a name, a secret resume token, the seats it holds and the
tables it watches. Its connection (:class:`Peer`) may drop and be replaced by
a new one that says ``hello`` with the token; the seats stay held meanwhile.
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
        token: the current resume token; replaced at every resume.
        peer: the live connection, or ``None`` while disconnected.
        seats: table id to the seat held there.
        watching: ids of the tables this session spectates.
    """

    name: str
    token: str
    peer: Peer | None = None
    seats: dict[int, int] = field(default_factory=dict)
    watching: set[int] = field(default_factory=set)

    @property
    def connected(self) -> bool:
        """Whether a live connection speaks for this session."""
        return self.peer is not None and not self.peer.closed

    def __repr__(self) -> str:
        return f"<Session {self.name!r} {'online' if self.connected else 'offline'}>"
