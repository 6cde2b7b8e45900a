"""One ply applied at a table: the value a move's plan hands from the rules to the commit, the clock and the fan-out."""

from __future__ import annotations

import msgspec

from games import State

__all__ = ["Played"]


class Played(msgspec.Struct, frozen=True):
    """One ply applied at a table: who played what, whether the server forced it, and the position after.

    A frozen struct: immutable, and built in C (a named tuple's ``__new__`` is Python code, a frozen
    dataclass's ``__init__`` more): one per ply on the hot path. Never encoded.
    """

    seat: int
    move: str
    ply: int
    forced: bool
    state: State
