"""Private messages: ``tell NAME TEXT``.

A tell has chat's limits (``max_chat_chars``) and is counted against the
sender's, its address's and (from a guest) the recipient's budgets
(:mod:`server.social.spam`). It reaches the named player's connection as a
``told`` push; a player who mutes the sender never sees it, and the sender
is not told so (the reply is ``ok`` either way, as on FICS).
"""

from __future__ import annotations

from typing import Callable, Mapping

from protocol import Code
from protocol.messages import Ok, Tell, Told

from ..net.limits import Limits
from ..players.mutes import Mutes
from ..core.names import name_key
from .pairing import send_to
from ..core.session import Session
from .spam import SpamLimits
from ..core.errors import RequestError

__all__ = ["Tells", "online_player"]


def online_player(by_name: Mapping[str, Session], name: str, sender: Session, doing: str) -> Session:
    """The connected player called ``name`` (any case or width), who is not ``sender``.

    Raises:
        RequestError: ``no_such_player`` (nobody connected by that name), ``bad_request`` (``sender`` themselves).
    """
    player = by_name.get(name_key(name))
    if player is None or not player.connected:
        raise RequestError(Code.NO_SUCH_PLAYER, f"no player called {name!r} is connected", "name")
    if player is sender:
        raise RequestError(Code.BAD_REQUEST, f"you cannot {doing} yourself", "name")
    return player


class Tells:
    """Delivers tells.

    Args:
        by_name: name key -> the session holding the name.
        mutes: who mutes whom.
        spam: the per-minute limits.
        limits: returns the server's current limits (``max_chat_chars``).
    """

    def __init__(self, by_name: Mapping[str, Session], mutes: Mutes, spam: SpamLimits, limits: Callable[[], Limits]) -> None:
        self._by_name = by_name
        self._mutes = mutes
        self._spam = spam
        self._limits = limits

    async def tell(self, session: Session, request: Tell, then: list[Callable[[], None]]) -> Ok:
        """Send ``request.text`` to ``request.name``'s connection, after the reply (dropped if they mute the sender).

        Raises:
            RequestError: ``bad_message`` (text too long), ``no_such_player``, ``bad_request``, ``rate_limited``.
        """
        most = self._limits().max_chat_chars
        if len(request.text) > most:
            raise RequestError(Code.BAD_MESSAGE, f"a tell has at most {most} characters, not {len(request.text)}", "text")
        player = online_player(self._by_name, request.name, session, "tell")
        self._spam.charge("tells", session, player)
        if not self._mutes.mutes(player, session):
            told = Told(name=session.name, text=request.text)
            then.append(lambda: send_to(player, told))
        return Ok(id=request.id)
