"""The one error a refused request raises, whatever group refuses it: :class:`RequestError`.

Every handler raises it with a stable :class:`protocol.Code`; the server turns
it into the ``error`` reply (PROTOCOL.md §11). It lives here, at the base,
so that names, accounts, mutes and tables raise the same error without
importing one another.
"""

from __future__ import annotations

from protocol import Code

__all__ = ["RequestError", "Relayed"]


class RequestError(Exception):
    """A request that is refused; becomes an ``error`` reply.

    Attributes:
        code: the stable error code.
        message: a human explanation.
        field: the request field at fault (``"options.size"``), if one is.
    """

    def __init__(self, code: Code, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


class Relayed(Exception):
    """Raised by a handler that handed its request to another node of a cluster, which answers it.

    The server sends no reply of its own (:meth:`server.dispatch.Requests._failed`): the other
    node's reply reaches the connection through the relay (:mod:`server.cluster.relay`).
    """
