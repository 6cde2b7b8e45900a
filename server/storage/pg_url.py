"""A PostgreSQL URL as logs and messages show it: without its password."""

from __future__ import annotations

import psycopg

__all__ = ["redact"]


def redact(url: str) -> str:
    """``url`` without its password, for logs and messages: ``postgresql://USER@HOST:PORT/DB``, or for a unix
    socket (a ``host`` that is a directory, or none: libpq's default socket) ``postgresql://USER@/DB?host=DIR&port=PORT``."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the PostgreSQL URL given"
    user, database, host = info.get("user", ""), info.get("dbname", ""), str(info.get("host") or "")
    if not host or host.startswith("/"):
        where = "&".join(f"{key}={value}" for key, value in (("host", host), ("port", info.get("port"))) if value)
        return f"postgresql://{user + '@' if user else ''}/{database}" + (f"?{where}" if where else "")
    return f"postgresql://{user}@{host}:{info.get('port', 5432)}/{database}"
