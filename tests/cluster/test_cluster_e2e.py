"""Three real ``parlour serve`` nodes sharing one real redis-server, with real ``parlour play`` line clients.

Players on different nodes see one lobby, find each other with ``who``,
talk with tells, cannot take a name in use on another node, and play and
watch a table held by a third node through the relay; when Redis
is SIGKILLed and restarted the game on a node goes on and the lobby heals;
when a node is SIGKILLed its tables move to another node (tests/cluster/test_failover_e2e.py plays on).
"""

from __future__ import annotations

import re
import time

import pytest

from server.cluster.node import HEARTBEAT_S, NODE_TTL_S

from ..e2e.harness import Process, start_server
from .redis_server import RedisServer

pytestmark = pytest.mark.slow


def _node(redis_server: RedisServer, db: str, name: str, *extra: str) -> tuple[Process, str]:
    server, port = start_server("--db", db, "--bus", redis_server.url, "--node", name, *extra)
    return server, f"127.0.0.1:{port}"


def _player(address: str, name: str) -> Process:
    player = Process("play", address, "--name", name, "--guest")
    player.expect(rf"(?i)connected|welcome|as {name}", timeout_s=20)
    return player


def _drain(player: Process, seconds: float) -> None:
    """Collect what ``player`` prints within ``seconds`` into its ``lines``."""
    try:
        player.expect(r"(?!)", timeout_s=seconds)  # matches nothing: reads until the time is up
    except AssertionError:
        pass


def _until_listed(player: Process, pattern: str, timeout_s: float = 20.0) -> None:
    """Send ``list`` until a line it prints matches ``pattern`` (the other nodes' tables arrive within a heartbeat)."""
    regex = re.compile(pattern)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        seen = len(player.lines)
        player.send("list\n")
        _drain(player, 0.5)
        if any(regex.search(line) for line in player.lines[seen:]):
            return
    raise AssertionError(f"never listed {pattern!r}; output:\n" + "\n".join(player.lines))


def test_players_on_three_nodes_share_one_lobby_names_who_and_tells(redis_server: RedisServer, postgres_url: str) -> None:
    processes: list[Process] = []
    try:
        for name in ("a", "b", "c"):
            server, _ = _node(redis_server, postgres_url, name)
            processes.append(server)
        addresses = [re.search(r"listening on port (\d+)", "\n".join(p.lines))[1] for p in processes]  # type: ignore[index]
        ann = _player(f"127.0.0.1:{addresses[0]}", "ann")
        bob = _player(f"127.0.0.1:{addresses[2]}", "bob")
        processes += [ann, bob]
        ann.send("new othello size=6\n")
        table = int(ann.expect(r"Created table (\d+)")[1])
        _until_listed(bob, r"othello .*ann")
        bob.send("who\n")
        bob.expect(r"^ann\s+")
        bob.send("tell ann hello across nodes\n")
        ann.expect(r"^bob tells you: hello across nodes$")
        ann.send("tell bob and back\n")
        bob.expect(r"^ann tells you: and back$")
        impostor = Process("play", f"127.0.0.1:{addresses[1]}", "--name", "ann", "--guest")
        processes.append(impostor)
        impostor.expect(r"(?i)already in use", timeout_s=20)
        carol = _player(f"127.0.0.1:{addresses[1]}", "carol")
        processes.append(carol)
        _until_listed(carol, rf"^#{table} othello")
        bob.send(f"join {table}\n")  # node a holds the table: node c relays bob's requests, node b carol's
        for player in (ann, bob):
            player.expect(r"^The game starts: Black ann vs White bob")
        carol.send(f"watch {table}\n")
        carol.expect(rf"^At table {table}, watching\.")
        ann.send("moves\n")
        black = ann.expect(r"^Legal moves: (\S+)")[1]
        ann.send(f"{black}\n")
        bob.expect(rf"^Black played {black}\.$")
        carol.expect(rf"^Black played {black}\.$")
        bob.send("moves\n")
        white = bob.expect(r"^Legal moves: (\S+)")[1]
        bob.send(f"{white}\n")
        ann.expect(rf"^White played {white}\.$")
        carol.expect(rf"^White played {white}\.$")
        assert not any(line.startswith("Legal moves") for line in carol.lines), carol.lines
    finally:
        for process in processes:
            process.kill()


def test_a_game_goes_on_while_redis_restarts_and_the_lobby_heals_then_a_killed_nodes_table_moves_to_another(
    redis_server: RedisServer, postgres_url: str
) -> None:
    processes: list[Process] = []
    try:
        node_a, address_a = _node(redis_server, postgres_url, "a", "--lease-s", "2")
        node_b, address_b = _node(redis_server, postgres_url, "b", "--lease-s", "2")
        processes += [node_a, node_b]
        ann, bob, watcher = _player(address_a, "ann"), _player(address_a, "bob"), _player(address_b, "watcher")
        processes += [ann, bob, watcher]
        ann.send("new othello size=6\n")
        table = int(ann.expect(r"Created table (\d+)")[1])
        bob.send(f"join {table}\n")
        ann.expect(r"^The game starts: Black ann vs White bob")
        _until_listed(watcher, rf"^#{table} othello .*ann vs bob")
        redis_server.kill()
        ann.send("moves\n")
        legal = ann.expect(r"^Legal moves: (\S+)")[1]
        ann.send(f"{legal}\n")
        bob.expect(rf"^Black played {legal}\.$", timeout_s=20)  # played and acknowledged on node a while Redis is away
        redis_server.start()
        _until_listed(watcher, rf"^#{table} othello .*ply 1")
        node_a.popen.kill()  # SIGKILL: node a leaves its keys, which expire, and its lease, which node b claims
        node_a.popen.wait(10)
        time.sleep(NODE_TTL_S + 2 * HEARTBEAT_S)  # long after node a's tables would have left the lobby
        _until_listed(watcher, rf"^#{table} othello .*ann vs bob.*ply 1", timeout_s=10)
    finally:
        for process in processes:
            process.kill()
