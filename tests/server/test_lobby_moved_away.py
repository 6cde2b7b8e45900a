"""A table another node claimed from this one: "send it again" until the lobby lists it there, not "no such table"."""

from __future__ import annotations

import pytest

from server.bus.local import LocalBus
from server.core.errors import RequestError
from server.tables.lobby import MOVED_AWAY_KEPT, MOVED_AWAY_MESSAGE, Lobby


def _refusal(lobby: Lobby, table_id: int) -> tuple[str, str]:
    with pytest.raises(RequestError) as caught:
        lobby.get(table_id)
    return caught.value.code, caught.value.message


def test_a_table_claimed_away_is_send_it_again_until_its_new_node_lists_it() -> None:
    lobby = Lobby(LocalBus())
    assert _refusal(lobby, 7) == ("no_such_table", "there is no table 7")
    lobby.moved_away(7)
    assert _refusal(lobby, 7) == ("storage_unavailable", MOVED_AWAY_MESSAGE)
    lobby.remote = dict.fromkeys([7])  # type: ignore[assignment]  # the mirror lists it on its new node (only the id matters here)
    code, message = _refusal(lobby, 7)
    assert code == "no_such_table" and "held by another node" in message


def test_only_the_latest_tables_claimed_away_are_remembered() -> None:
    lobby = Lobby(LocalBus())
    for table_id in range(1, MOVED_AWAY_KEPT + 2):
        lobby.moved_away(table_id)
    assert _refusal(lobby, 1)[0] == "no_such_table"  # the oldest, forgotten
    assert _refusal(lobby, 2)[0] == "storage_unavailable"
    assert _refusal(lobby, MOVED_AWAY_KEPT + 1)[0] == "storage_unavailable"
