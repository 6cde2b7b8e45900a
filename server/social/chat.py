"""Table chat: the lines said at a table, kept (the last :data:`CHAT_HISTORY`) for whoever comes later.

A line said at a table goes to everyone there but those who mute its sender,
and joins the table's history; ``table_joined`` and ``resumed`` carry the
history to a player who sits down, a spectator who starts watching and a
player or spectator who resumes, without the lines of senders the receiver
mutes. With a database a line is committed (table ``chat``, at most
:data:`CHAT_HISTORY` rows per table) before anyone hears it, so the history
of an unfinished table comes back after a restart; a table's lines go with
its row (a waiting table deleted), and those of finished tables at the next
start (a finished table does not come back).
"""

from __future__ import annotations

import sqlite3
import time
import weakref
from collections import deque
from typing import Awaitable, Callable

from protocol import Code, Message
from protocol.messages import Chat, ChatEntry, Ok, Say

from ..tables.fanout import send_to_table
from ..players.mutes import Mutes
from ..core.names import name_key
from ..core.session import Session
from ..storage.store import Statement
from ..core.errors import RequestError
from ..tables.table import Table

__all__ = ["CHAT_HISTORY", "TableChat", "History", "stored_chat", "forget_finished_chat_sql"]

CHAT_HISTORY = 100
"""The most lines a table's history keeps (older ones are dropped)."""

Persist = Callable[..., Awaitable[None]]


class History:
    """One table's last :data:`CHAT_HISTORY` lines, each with its sender's name key, and the number of the last."""

    __slots__ = ("lines", "last")

    def __init__(self) -> None:
        self.lines: deque[tuple[str, ChatEntry]] = deque(maxlen=CHAT_HISTORY)
        self.last = 0  # the sequence number of the latest line (1 for the first ever said at the table)

    def add(self, seq: int, name: str, text: str) -> None:
        """Keep line number ``seq``, said by ``name``."""
        self.lines.append((name_key(name), ChatEntry(name=name, text=text)))
        self.last = seq


class TableChat:
    """Chat at tables: ``say`` with a table, and each table's history as a receiver may see it.

    A history lives as long as its table object (a table that closes takes
    its history along).

    Args:
        mutes: who mutes whom.
        persist: ``await persist(*statements)`` commits (no-op without a database).
    """

    def __init__(self, mutes: Mutes, persist: Persist) -> None:
        self._mutes = mutes
        self._persist = persist
        self._histories: weakref.WeakKeyDictionary[Table, History] = weakref.WeakKeyDictionary()

    async def say(self, session: Session, table: Table, request: Say, then: list[Callable[[], None]]) -> Message:
        """Commit ``request.text`` to ``table``'s history, keep it, and leave its sending to everyone there in ``then``.

        Lines are committed one at a time per table (under the table's lock), so they keep their order.

        Raises:
            RequestError: ``not_at_table`` when ``session`` neither sits at nor watches the table.
        """
        if table.id not in session.seats and table.id not in session.watching:
            raise RequestError(Code.NOT_AT_TABLE, f"you are not at table {table.id}")
        async with table.lock:
            history = self._histories.get(table)
            seq = history.last + 1 if history is not None else 1
            await self._persist(*_said_sql(table.id, seq, session.name, request.text))
            if history is None:
                history = self._histories[table] = History()
            history.add(seq, session.name, request.text)
        message = Chat(name=session.name, text=request.text, table=table.id)
        then.append(lambda: self._send(table, session, message))
        return Ok(id=request.id)

    def _send(self, table: Table, sender: Session, message: Chat) -> None:
        """Send ``message`` to everyone at ``table`` but those who mute ``sender`` (encoded once when nobody does)."""
        members = [*(holder for holder in table.seats if holder is not None), *table.spectators]
        deaf = [member for member in members if self._mutes.mutes(member, sender)]
        if not deaf:
            send_to_table(table, message)
            return
        for member in members:
            if member not in deaf and member.peer is not None:
                member.peer.send(message)

    def history_for(self, session: Session, table: Table) -> list[ChatEntry]:
        """``table``'s kept lines, oldest first, without those of senders ``session`` mutes."""
        history = self._histories.get(table)
        if history is None:
            return []
        return [entry for key, entry in history.lines if not self._mutes.mutes_key(session, key)]

    def history(self, table: Table) -> list[ChatEntry]:
        """``table``'s kept lines, oldest first, everyone's (what a watcher who mutes nobody sees: the web face's)."""
        history = self._histories.get(table)
        return [] if history is None else [entry for _, entry in history.lines]

    def restore(self, tables: dict[int, Table], rows: list[tuple[int, int, str, str]]) -> None:
        """Bring back stored lines ``(table id, seq, name, text)`` of the live ``tables``, in order."""
        for table_id, seq, name, text in rows:
            table = tables.get(table_id)
            if table is not None:
                history = self._histories.get(table)
                if history is None:
                    history = self._histories[table] = History()
                history.add(seq, name, text)


def _said_sql(table_id: int, seq: int, name: str, text: str) -> list[Statement]:
    """Store line ``seq`` and drop the table's lines that fall out of its history."""
    return [
        ("INSERT INTO chat (table_id, seq, name, text, at) VALUES (?, ?, ?, ?, ?)", (table_id, seq, name, text, time.time())),
        ("DELETE FROM chat WHERE table_id = ? AND seq <= ?", (table_id, seq - CHAT_HISTORY)),
    ]


def forget_finished_chat_sql() -> Statement:
    """The statement that deletes the stored lines of finished tables (which never come back)."""
    return "DELETE FROM chat WHERE table_id IN (SELECT id FROM tables WHERE status = 'over')", ()


def stored_chat(db: sqlite3.Connection) -> list[tuple[int, int, str, str]]:
    """The stored lines of unfinished tables, ``(table id, seq, name, text)``, in order (for :meth:`server.storage.store.Store.read`)."""
    return list(
        db.execute(
            "SELECT chat.table_id, seq, name, text FROM chat JOIN tables ON tables.id = chat.table_id "
            "WHERE tables.status != 'over' ORDER BY chat.table_id, seq"
        )
    )
