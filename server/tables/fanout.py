"""Fan-out: one table event to everyone at the table, each receiving its own view.

Every table event is one publish on the table's topic of the bus
(:mod:`server.bus.bus`). A message that depends on the seat is built and encoded
at most once per distinct view that has subscribers (seat 0, seat 1,
spectators), never once per connection; every spectator gets the very same
bytes. Views of one position are made once per seat (:class:`ViewCache`); a
move's, in a game that hides nothing, once for all (:func:`send_moved`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from msgspec import Raw

import games
from protocol import Message, encode_message
from protocol.codec import ENCODER
from protocol.framing import _HEADER
from protocol.messages import Moved

from ..bus.bus import View
from ..core.session import Session
from .table import Played, Table, view_of

__all__ = ["ViewCache", "send_moved", "send_to_table", "send_views"]

_encode = ENCODER.encode
_pack_header = _HEADER.pack


def send_to_table(table: Table, message: Message, *, skip: Session | None = None) -> None:
    """Publish ``message``, the same for every seat, to everyone at ``table`` (but ``skip``): encoded once."""
    table.bus.publish(table.topic, encode_message(message), message, skip=skip)


def send_views(table: Table, make: Callable[[View], Message]) -> None:
    """Publish to everyone at ``table`` the message ``make(view)`` builds for its view (a seat, or ``None``).

    ``make`` is called, and its message encoded, once per view that has
    subscribers: at most three (seat 0, seat 1, spectators); every
    spectator gets the very same bytes.
    """
    bus, topic = table.bus, table.topic
    frames: dict[View, tuple[bytes, Message]] = {}
    for view in bus.views(topic):
        message = make(view)
        frames[view] = (encode_message(message), message)
    bus.publish_views(topic, frames)


def send_moved(table: Table, ply: Played, forced_pass: bool, clock: dict[str, Any] | None, running: bool = False) -> None:
    """Publish the ``moved`` of ``ply`` to everyone at ``table``, each receiving the view of ``ply.state`` it may see.

    :func:`send_views` for the hot path of every move, written out (no
    callback and no :class:`ViewCache` per view: a Python call costs hundreds
    of instructions). In a game that hides nothing (:attr:`games.Game.public_views`)
    one view is made and encoded once for every receiver; the seat choosing a
    move gets that frame with its ``legal_moves`` added to the view, spliced in
    (:func:`_with_legal_moves`) where it can be, else encoded whole. At a
    table with a :attr:`Table.view_map` (Othello 8x8, :mod:`.othello_views`)
    the views of a game that goes on are written from the bitboards instead of
    built as dicts and encoded (:func:`_othello_frames`): the same bytes.
    ``forced_pass``: whether the server plays a pass next in ``ply.state`` (as
    for :func:`server.tables.table.view_of`); ``clock``: the clocks to show
    (:meth:`Table.clock_snapshot`), or ``None``; ``running``: the caller knows
    the game goes on (the table started and has not ended, and the position
    after the last ply has no outcome), so :meth:`Table.view_for` has nothing
    to fold in and is skipped.
    """
    bus, topic, state = table.bus, table.topic, ply.state
    current = state is table.state and not running  # the last ply of a game that may be over: Table.view_for folds that in
    frames: dict[View, tuple[bytes, Message]] = {}
    view_map = table.view_map
    if view_map is not None and not current and not forced_pass:  # Othello 8x8, its views written in C
        _othello_frames(view_map, bus.views(topic), frames, table, ply, state, clock)
        bus.publish_views(topic, frames)
        return
    table_id, seat, move, number, forced = table.id, ply.seat, ply.move, ply.ply, ply.forced
    if table.game.public_views:
        if current:
            public = table.view_for(None, forced_pass)
        else:  # view_of(state, None, forced_pass), written out: every move
            public = state.view(None)
            if forced_pass:
                public.pop("legal_moves", None)
                public["forced_pass"] = True
        # The seat whose view lists its legal moves, as Table.view_for and view_of decide it (None: nobody's).
        chooser = None if forced_pass or (current and (not table.started or table.ended is not None)) else public["to_move"]
        message = Moved(table=table_id, seat=seat, move=move, ply=number, forced=forced, view=public, clock=clock)
        body = _encode(message)  # encode_message(), written out: once a move
        shared = (_pack_header(len(body)) + body, message)  # the frame of every view but the chooser's
        for view in bus.views(topic):
            if view is None or view != chooser:
                frames[view] = shared
                continue
            legal = state.legal_moves()  # the only difference, by the game's word
            frame = _with_legal_moves(body, message, legal)
            if frame is not None:
                frames[view] = (frame, message)  # the shared message: an error report reads only its type and id
                continue
            seen = {**public, "legal_moves": legal}
            chosen = Moved(table=table_id, seat=seat, move=move, ply=number, forced=forced, view=seen, clock=clock)
            frames[view] = (encode_message(chosen), chosen)
    else:
        for view in bus.views(topic):
            seen = table.view_for(view, forced_pass) if current else view_of(state, view, forced_pass)
            message = Moved(table=table_id, seat=seat, move=move, ply=number, forced=forced, view=seen, clock=clock)
            frames[view] = (encode_message(message), message)
    bus.publish_views(topic, frames)


def _othello_frames(view_map: Callable[..., bytes], views: Iterable[View], frames: dict[View, tuple[bytes, Message]],
                    table: Table, ply: Played, state: games.State, clock: dict[str, Any] | None) -> None:
    """:func:`send_moved`'s frames of an 8x8 Othello game that goes on, its views written by ``view_map`` (:mod:`.othello_views`).

    The same bytes as the dicts' path: one frame for every view but the seat to
    move's, whose view lists its legal moves.
    """
    # The seat to move: the move's plan told it (Table.plan_turn), where this is the position planned.
    to_move = table._planned_to_move if table._planned is state else state.to_move
    black, white, number, last = state.black, state.white, state.ply, state.last_move  # type: ignore[attr-defined]
    public = view_map(black, white, number, to_move, last, None)
    message = Moved(table=table.id, seat=ply.seat, move=ply.move, ply=ply.ply, forced=ply.forced, view=Raw(public), clock=clock)  # type: ignore[arg-type]
    body = _encode(message)
    shared = (_pack_header(len(body)) + body, message)
    for view in views:
        if view is None or view != to_move:
            frames[view] = shared
            continue
        seen = view_map(black, white, number, to_move, last, state.legal_moves())
        if message.forced or message.clock is not None:  # the view is not the body's last entry
            chosen = Moved(table=table.id, seat=ply.seat, move=ply.move, ply=ply.ply, forced=ply.forced, view=Raw(seen), clock=clock)  # type: ignore[arg-type]
            frames[view] = (encode_message(chosen), chosen)
        else:  # the same body with the other view at its end
            size = len(body) - len(public) + len(seen)
            frames[view] = (b"".join((_pack_header(size), body[: len(body) - len(public)], seen)), message)


_VIEW_KEY = _encode("view")
_LEGAL_MOVES_KEY = _encode("legal_moves")
_ONE_MORE_ENTRY = [(_VIEW_KEY + bytes((head,)), _VIEW_KEY + bytes((head + 1,))) if 0x80 <= head < 0x8F else None for head in range(256)]
"""By the first byte of a view's map: the view's key and that byte, and the same with one entry more (a fixmap of
fewer than 15 entries); ``None`` for any other map."""
_SMALL_INT = 1 << 32
"""Integers below this take at most 5 bytes (a ``uint 32``): too few to hold the 5 bytes of the view's key."""


def _with_legal_moves(body: bytes, message: Moved, legal: list[str]) -> bytes | None:
    """The frame of ``message`` (encoded: ``body``) with ``"legal_moves": legal`` added to its view, spliced, not encoded again.

    The same bytes as ``encode_message(Moved(..., view={**message.view, "legal_moves": legal}))``:
    when ``forced`` and ``clock`` are left out (their defaults) the view is the
    body's last entry, so the new entry goes at the end and the view's map
    header counts one entry more. That header follows the first ``view`` key
    (``a4 76 69 65 77``) in the body: no field before it can hold those 5 bytes
    followed by a map's first byte (the ints are below :data:`_SMALL_INT`; in the
    move's text, which ends before ``ply``'s key, the byte after them is text
    again or that key's ``a3``). ``None`` where it does not hold (a forced ply, a
    clock, a view with ``legal_moves`` already or with 15 entries or more, a move
    named ``view``, whose text is found first): encode it whole then.
    """
    if message.forced or message.clock is not None or message.table >= _SMALL_INT or message.ply >= _SMALL_INT or "legal_moves" in message.view:
        return None
    at = body.find(_VIEW_KEY) + 5  # the view's map header
    splice = _ONE_MORE_ENTRY[body[at]] if 4 < at < len(body) else None
    if splice is None:
        return None
    tail = _encode(legal)
    size = len(body) + len(_LEGAL_MOVES_KEY) + len(tail)
    return b"".join((_pack_header(size), body.replace(splice[0], splice[1], 1), _LEGAL_MOVES_KEY, tail))


class ViewCache:
    """Views of one position, made at most once per seat (0, 1, spectator).

    Args:
        table: the table.
        state: the position (default: the table's current one).
        forced_pass: whether the server is about to play a pass for the seat to
            move in it (:func:`server.tables.table.forced_pass_due`), when the caller knows;
            ``None``: worked out once per view.
    """

    __slots__ = ("_table", "_state", "_forced_pass", "_views")

    def __init__(self, table: Table, state: games.State | None = None, forced_pass: bool | None = None) -> None:
        self._table = table
        self._state = state
        self._forced_pass = forced_pass
        self._views: dict[int | None, dict[str, Any]] = {}

    def get(self, seat: int | None) -> dict[str, Any]:
        """The view for ``seat``, made on first use."""
        view = self._views.get(seat)
        if view is None:
            table, state = self._table, self._state
            if state is None or state is table.state:
                view = table.view_for(seat, self._forced_pass)
            else:
                view = view_of(state, seat, self._forced_pass)
            self._views[seat] = view
        return view
