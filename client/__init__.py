"""The Parlour client: one async library (:class:`Client`) and the front ends built on it."""

from .connection import DEFAULT_PORT, Client, ConnectionLost, ServerError

__all__ = ["Client", "ConnectionLost", "DEFAULT_PORT", "ServerError"]
