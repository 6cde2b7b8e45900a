"""The Redis keys the nodes of a cluster share (all under ``parlour:``)."""

from __future__ import annotations

__all__ = ["NODES", "TABLE_IDS", "SOCIAL_IDS", "node_key", "tables_key", "players_key", "seeks_key", "name_key_of"]

NODES = "parlour:nodes"
"""A set: the names of the nodes that ever joined (a node is alive while its :func:`node_key` exists)."""
TABLE_IDS = "parlour:table_ids"
"""The counter that hands out blocks of table ids."""
SOCIAL_IDS = "parlour:social_ids"
"""The counter that hands out blocks of challenge and seek ids."""


def node_key(node: str) -> str:
    """A node's heartbeat (expires unless the node renews it)."""
    return f"parlour:node:{node}"


def tables_key(node: str) -> str:
    """A hash: a node's live tables, table id -> its ``table_updated`` frame."""
    return f"parlour:tables:{node}"


def players_key(node: str) -> str:
    """A hash: a node's players online or seated, name key -> their packed line (:mod:`server.cluster.players`)."""
    return f"parlour:players:{node}"


def seeks_key(node: str) -> str:
    """A hash: a node's open seeks, seek id -> its packed line (:mod:`server.cluster.seeks`)."""
    return f"parlour:seeks:{node}"


def name_key_of(key: str) -> str:
    """A name in use, reserved cluster-wide: its value is the node whose session holds it."""
    return f"parlour:name:{key}"
