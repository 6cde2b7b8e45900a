"""Two real ``parlour serve`` nodes on one real PostgreSQL and one real redis-server, with real ``parlour play`` line clients.

Ann claims her name on node a (her client keeps the secret by the cluster's
server id), sits down and plays; her client is killed mid-game, and a new
``parlour play`` given node b's address proves her name there with the same
secret, takes her session over and gets her seat back at node a's table,
through the relay; the game goes on.
"""

from __future__ import annotations

import re

import pytest

from ..e2e.harness import Process, start_server
from .redis_server import RedisServer
from .test_cluster_e2e import _until_listed

pytestmark = pytest.mark.slow


def test_a_claimed_player_killed_on_one_node_proves_her_name_on_another_and_plays_on(postgres_url: str, redis_server: RedisServer) -> None:
    processes: list[Process] = []
    try:
        addresses = []
        for node in ("a", "b"):
            server, port = start_server("--db", postgres_url, "--bus", redis_server.url, "--node", node)
            processes.append(server)
            addresses.append(f"127.0.0.1:{port}")
        ann = Process("play", addresses[0], "--name", "cluster-ann")  # claims the name: the client keeps its secret
        bob = Process("play", addresses[1], "--name", "cluster-bob", "--guest")
        processes += [ann, bob]
        ann.expect(r"(?i)claimed|as cluster-ann", timeout_s=20)
        ann.send("new othello size=6\n")
        table = int(ann.expect(r"Created table (\d+)")[1])
        _until_listed(bob, rf"^#{table} othello .*cluster-ann")
        bob.send(f"join {table}\n")
        ann.expect(r"^The game starts: Black cluster-ann vs White cluster-bob")
        ann.send("moves\n")
        first = ann.expect(r"^Legal moves: (\S+)")[1]
        ann.send(f"{first}\n")
        bob.expect(rf"^Black played {first}\.$")
        ann.kill()  # SIGKILL: node a holds her seat for the grace period
        bob.expect(r"cluster-ann lost their connection")
        again = Process("play", addresses[1], "--name", "cluster-ann")  # node b: the same secret proves the name
        processes.append(again)
        again.expect(r"^Connected to .* \(Parlour [^,]+, node b\) as cluster-ann\.", timeout_s=20)
        bob.expect(r"^cluster-ann is back\.$", timeout_s=20)
        bob.send("moves\n")
        second = bob.expect(r"^Legal moves: (\S+)")[1]
        bob.send(f"{second}\n")
        again.expect(rf"^White played {second}\.$", timeout_s=20)
        again.send("moves\n")
        third = again.expect(r"^Legal moves: (\S+)")[1]
        again.send(f"{third}\n")
        bob.expect(rf"^Black played {third}\.$", timeout_s=20)
        assert not any(re.search(r"(?i)name_claimed|already in use|traceback", line) for line in again.lines), again.lines
    finally:
        for process in processes:
            process.kill()
