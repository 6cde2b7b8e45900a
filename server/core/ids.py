"""Ids the server hands out (tables, challenges, seeks) stay within what every client can read.

A JavaScript client reads MessagePack integers as doubles, exact only up to
:data:`protocol.messages.MAX_ID` (2^53 - 1), so the server never issues a
larger id: past it, the request that would need a new id is refused.
"""

from __future__ import annotations

from protocol import Code
from protocol.messages import MAX_ID

from .errors import RequestError

__all__ = ["issuable"]


def issuable(next_id: int, what: str) -> int:
    """Return ``next_id`` if a client can use it as the id of a new ``what`` (``"table"``, ``"challenge"``, ``"seek"``).

    Raises:
        RequestError: ``internal_error`` when ``next_id`` is above :data:`MAX_ID`;
            nothing is created and the server goes on.
    """
    if next_id > MAX_ID:
        raise RequestError(Code.INTERNAL_ERROR, f"this server has used up its {what} ids (the largest a client can read is 2^53-1)")
    return next_id
