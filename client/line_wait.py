"""``wait turn|start|end``: when what a script waits for has come, and when it never can.

A wait is tied to the table focused when it was typed. It ends successfully
when what it waits for has happened, and with :class:`WaitFailed` as soon as
it cannot happen any more: no table, a spectator waiting for a turn, a game
over before the turn came, the table left or gone, the connection lost for good.
"""

from __future__ import annotations

from .session import ClientSession

__all__ = ["WAIT_KINDS", "WaitFailed", "wait_done"]

WAIT_KINDS = ("turn", "start", "end")
"""What ``wait`` can wait for: your turn, the start of the game, its end."""


class WaitFailed(Exception):
    """What a ``wait`` waits for cannot happen any more; the message says why (``wait turn: the game at table 3 is over``)."""


def wait_done(what: str, table: int | None, session: ClientSession, gone: bool) -> bool:
    """Whether ``wait what`` at ``table`` is over: ``True`` once it has happened, ``False`` while it still may.

    Args:
        what: one of :data:`WAIT_KINDS`.
        table: the id of the table the wait is about (``None``: the user was at no table).
        session: the session model, as it stands now.
        gone: the connection to the server is lost for good.

    Raises:
        WaitFailed: it cannot happen any more.
        ValueError: ``what`` is not one of :data:`WAIT_KINDS`.
    """
    if what not in WAIT_KINDS:
        raise ValueError(f"wait {what!r}: not one of {', '.join(WAIT_KINDS)}")
    if table is None:
        raise WaitFailed(f"wait {what}: you are at no table (new, join or watch one first)")
    state = session.tables.get(table)
    if state is None:
        raise WaitFailed(f"wait {what}: you are no longer at table {table}")
    if what == "turn" and state.seat is None:
        raise WaitFailed(f"wait turn: you are watching table {table}; only its players have turns")
    if what == "turn" and state.my_turn:
        return True
    if what == "turn" and state.outcome is not None:
        raise WaitFailed(f"wait turn: the game at table {table} is over")
    if what == "start" and state.status != "waiting" or what == "end" and state.outcome is not None:
        return True
    if gone:
        raise WaitFailed(f"wait {what}: the connection to the server is lost")
    return False
