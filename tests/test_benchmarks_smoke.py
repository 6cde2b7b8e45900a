"""Smoke test of the benchmark tools: the echo server and the load generator, against both servers.

Each server runs in its own process on 127.0.0.1 (an ephemeral port), as
``benchmarks/compare.py`` starts it; ``benchmarks/loadgen.py`` runs as its own
process too and reports JSON, whose counts are checked. Small counts keep it
to a few seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import compare  # noqa: E402
from roundtrip import ServerProcess  # noqa: E402


@pytest.fixture(params=["echo", "floor-asyncio", "floor-uvloop", "parlour"])
def bench_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, ServerProcess]]:
    """The first echo, the floor echo on either loop, or a Parlour server (no database, limits lifted
    as in compare.py), in a child process; with the load generator's ``--target`` for it."""
    if request.param == "echo":
        server = ServerProcess(launcher=compare.ECHO_LAUNCHER)
    elif request.param.startswith("floor-"):
        server = ServerProcess(launcher=compare.Servers("floor", request.param.removeprefix("floor-")).floor_launcher())
    else:
        server = ServerProcess(launcher=["-c", compare.PARLOUR_BOOT], options=compare.PARLOUR_OPTIONS)
    server.start()
    try:
        yield ("parlour" if request.param == "parlour" else "echo"), server
    finally:
        server.stop()


def loadgen(kind: str, server: ServerProcess, *options: str) -> dict[str, Any]:
    assert server.proc is not None
    command = [sys.executable, str(compare.LOADGEN), "--port", str(server.port), "--target", kind,
               "--server-pid", str(server.proc.pid), "--quiet", "0.05", *options]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_loadgen_counts_what_it_did(bench_server: tuple[str, ServerProcess]) -> None:
    kind, server = bench_server
    play = loadgen(kind, server, "--scenario", "play", "--games", "2", "--idle", "2", "--warmup", "0",
                   "--seconds", "10", "--max-moves", "25")  # fmt: skip
    assert play["moves"] == 25
    assert play["server_cpu_ns"] > 0 and play["cpu_us_per_move"] > 0
    assert 0 < play["p50_ms"] <= play["p99_ms"]
    assert play["idle"] == 2 and play["idle_frames"] >= 0

    fanout = loadgen(kind, server, "--scenario", "fanout", "--spectators", "3", "--moves", "4")
    assert fanout["moves"] == 4
    assert fanout["deliveries"] >= 3 * 4, "every spectator received every move (forced passes add more)"
    assert fanout["cpu_us_per_receiver"] > 0

    join = loadgen(kind, server, "--scenario", "join", "--spectators", "3")
    assert join["spectators"] == 3 and join["drained"]
    assert join["frames"] >= 3, "at least each watcher's reply"

    memory = loadgen(kind, server, "--scenario", "memory", "--connections", "5", "--warmup", "0")
    assert memory["connections"] == 5 and memory["rss_after"] > 0


@pytest.mark.parametrize("target", ["floor-uvloop", "parlour"])
def test_loadgen_split_counts_the_windows_cpu_writes_and_bytes(target: str) -> None:
    """``--split``: user and system CPU, switches and (with perf) system calls over the window; a move's
    frames to one connection leave in one write: Parlour writes twice a move (the mover's ``ok`` and ``moved``
    together, the opponent's ``moved``), the floor once a request."""
    kind = "parlour" if target == "parlour" else "echo"
    if kind == "parlour":
        server = ServerProcess(launcher=["-c", compare.PARLOUR_BOOT], options=compare.Servers("floor", "uvloop").parlour_options())
    else:
        server = ServerProcess(launcher=compare.Servers("floor", "uvloop").floor_launcher())
    server.start()
    try:
        play = loadgen(kind, server, "--scenario", "play", "--games", "2", "--warmup", "0", "--seconds", "10",
                       "--max-moves", "300", "--split")  # fmt: skip
    finally:
        server.stop()
    split, moves = play["split"], play["moves"]
    assert moves == 300
    assert split["user_ns"] >= 0 and split["system_ns"] >= 0 and split["user_ns"] + split["system_ns"] <= 2 * play["server_cpu_ns"] + 2e7
    assert split["voluntary_switches"] >= 0 and split["involuntary_switches"] >= 0
    assert split["client_bytes"] >= 5 * moves, "at least an ok frame a move"
    assert 1 <= split["client_reads"] <= split["client_bytes"]
    if split["syscalls"] is None:
        pytest.skip("perf cannot count tracepoints here: CPU and bytes checked, system calls not")
    calls = split["syscalls"]
    reads = calls["read"] + calls["recvfrom"] + calls["recvmsg"]
    writes = calls["write"] + calls["writev"] + calls["sendto"] + calls["sendmsg"]
    per_move = 2 if kind == "parlour" else 1
    assert per_move * moves <= writes <= (per_move + 0.25) * moves, calls
    assert moves <= reads <= 1.25 * moves, calls  # one read a request: each arrives alone
    assert calls["syscalls"] >= reads + writes
    assert writes <= calls["segments"] and 0 <= calls["acks"] <= calls["segments"] - writes, calls  # each write makes a segment


def test_report_prints_the_split_and_a_tree_beside(tmp_path: Path) -> None:
    """``--split`` and ``--against``: the per-move split of every server, and Parlour beside another tree's (here its own)."""
    plan = compare.plan_for(quick=True, rounds=1)
    plan.games, plan.warmup, plan.seconds, plan.split, plan.against = [2], 0.0, 0.2, True, compare.ROOT
    results = compare.measure(plan, {"play"}, tmp_path)
    assert [len(results[f"play/2/{kind}"]) for kind in ("echo", "parlour", "against")] == [1, 1, 1]
    table = compare.report(results, plan, "0.00 0.00 0.00 1/1 1")
    assert "| games | server | CPU µs | user µs | sys µs |" in table
    for name in ("floor", "parlour", "against"):
        assert re.search(rf"^\| 2 \| {name} \| [0-9.,]+ \| [0-9.,]+ \| [0-9.,]+ \|", table, re.MULTILINE), (name, table)
    assert re.search(r"^\| 2 \| [0-9.,]+ \| [0-9.,]+ \| \*\*[0-9.]+\*\*", table.split("Beside")[1], re.MULTILINE), table


def test_report_and_plot_from_runs(tmp_path: Path) -> None:
    plan = compare.plan_for(quick=True, rounds=1)
    plan.games, plan.warmup, plan.seconds = [2], 0.0, 0.2
    results = compare.measure(plan, {"play"}, tmp_path)
    assert [len(results[f"play/2/{kind}"]) for kind in ("echo", "parlour")] == [1, 1]
    table = compare.report(results, plan, "0.00 0.00 0.00 1/1 1")
    assert "| 2 |" in table and "Flatness" in table
    svg_path = tmp_path / "plot.svg"
    compare.write_svg(svg_path, results, plan)
    svg = svg_path.read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 4


def _benchmark_lines(script: str, *options: str) -> list[str]:
    """Run ``benchmarks/SCRIPT`` with ``options`` (2 minutes at most); it must succeed. Returns its output's lines."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *options], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _strength(*options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(BENCHMARKS / "strength.py"), "--game", "nimble", "--quick", "--seconds", "0", "--nodes", "500", *options]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_strength_plays_every_match_and_counts_each_game() -> None:
    done = _strength("--games", "3", "--markdown", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if line.startswith("| nimble")]
    matchups = [(cells[1].strip(), cells[2].strip()) for cells in rows]
    levels = [f"level {level}" for level in range(1, 6)]
    expected = [(level, opponent) for level in levels for opponent in ("random", "greedy")]
    expected += list(zip(levels[1:], levels[:-1]))
    assert matchups == expected
    for cells in rows:
        games_played, wins, draws, losses = (int(cells[i]) for i in (3, 4, 5, 6))
        assert games_played == 3 and wins + draws + losses == 3
    assert {cells[3].strip() for cells in rows} == {"3"}
    # the counts are those of the games themselves, replayed here with the same seeds and budgets
    import strength

    match = strength.Match("nimble", (), strength.Player("level", 5), strength.Player("random"))
    replayed = [strength.play_game(match, index, 1, strength.Budgets(seconds=0, nodes=500)).score for index in range(3)]
    assert [int(cells[i]) for i in (4, 5, 6) for cells in rows[8:9]] == [replayed.count(1), replayed.count(None), replayed.count(0)]


def test_strength_first_game_plays_the_later_games_of_a_match_as_a_whole_run_would() -> None:
    import strength

    match = strength.Match("nimble", (), strength.Player("level", 2), strength.Player("random"))
    budgets = strength.Budgets(seconds=0, nodes=200)
    whole = [strength.play_game(match, index, 7, budgets).score for index in range(6)]
    tail = strength.run([match], 3, 7, budgets, jobs=1, first_game=3)[match]
    assert tail.games == 3
    assert (tail.wins, tail.draws, tail.losses) == (whole[3:].count(1), whole[3:].count(None), whole[3:].count(0))


def test_strength_only_greedy_plays_each_level_against_the_greedy_player_alone() -> None:
    done = _strength("--games", "2", "--levels", "4,5", "--only", "greedy", "--markdown")
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if line.startswith("| nimble")]
    assert [(cells[1].strip(), cells[2].strip()) for cells in rows] == [("level 4", "greedy"), ("level 5", "greedy")]


def test_tactego_losses_classifies_the_games_strength_plays() -> None:
    # games 7 and 8 from seed 1000 at 3,000 nodes (today level 5 wins the first and loses its flag in the second)
    lines = _benchmark_lines("tactego_losses.py", "--first", "7", "--games", "2", "--nodes", "3000", "--seed", "1000")
    import strength

    match = strength.Match("tactego", (("max_plies", 400),), strength.Player("level", 5), strength.Player("greedy"))
    scores = [strength.play_game(match, index, 1000, strength.Budgets(seconds=0, nodes=3000)).score for index in (7, 8)]
    counts = dict(part.rsplit(" ", 1) for part in lines[-1].removeprefix("counts: ").split(", "))
    assert int(counts.get("won", 0)) == scores.count(1) and sum(int(n) for n in counts.values()) == 2
    not_won = [index for index, score in zip((7, 8), scores) if score != 1]
    assert not_won == [8], scores  # the game the next test goes back from
    assert [line.split(" (")[0] for line in lines[:-1]] == [f"game {index}" for index in not_won]
    assert all(re.search(r": (flag at ply \d+: by a \w+|draw at ply \d+|no-move at ply \d+)", line) for line in lines[:-1])


def test_tactego_losses_goes_back_from_a_loss_to_the_board_before_it() -> None:
    # game 8 from seed 1000 at 3,000 nodes: level 5 (Red) loses its flag at ply 34 (as the test above holds)
    lines = _benchmark_lines("tactego_losses.py", "--first", "8", "--games", "1", "--nodes", "3000", "--seed", "1000", "--before", "3")
    verdict = re.match(r"game 8 \(seed 1008, level 5 (Red|Blue)\): flag at ply (\d+)", lines[0])
    assert verdict, lines[0]
    last_ply = int(verdict.group(2))
    assert lines[1] == f"ply {last_ply - 3}, {'Blue' if (last_ply - 3) % 2 else 'Red'} to move:"
    board = lines[2:11]
    assert [line.split()[0] for line in board[:8]] == [str(row) for row in range(8, 0, -1)]
    assert board[8].split() == list("abcdefgh")
    cells = [cell for line in board[:8] for cell in line.split()[1:]]
    assert len(cells) == 64 and {"RF", "BF"} & set(cells)  # level 5's flag, in capitals, still on the board
    then = lines[11].removeprefix("then: ").split()
    assert lines[11].startswith("then: ") and len(then) == 3 and all(re.fullmatch(r"[a-h][1-8]-[a-h][1-8]", m) for m in then)
    assert lines[-1] == "counts: flag 1"


def test_strength_player_time_scale_gives_only_the_tested_player_more_time() -> None:
    import strength

    budgets = strength.Budgets(time_scale=0.1, player_scale=2)
    tested = budgets.for_player(strength.Player("level", 5), tested=True)
    opponent = budgets.for_player(strength.Player("previous", 5))
    assert (tested.seconds, opponent.seconds) == pytest.approx((0.2, 0.1))
    assert strength.Budgets(seconds=0, nodes=500, player_scale=2).for_player(strength.Player("level", 5), tested=True).nodes == 500
    done = _strength("--games", "2", "--levels", "5", "--only", "greedy", "--player-time-scale", "0")
    assert done.returncode == 2 and "--player-time-scale must be positive" in done.stderr


def test_strength_with_node_budgets_is_reproducible() -> None:
    first, second = _strength("--games", "4"), _strength("--games", "4", "--jobs", "2")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    def results(output: str) -> list[list[str]]:
        """Every row without its two time columns (and without the last line, the elapsed time)."""
        return [line.split()[:-2] for line in output.splitlines()[:-1]]

    assert results(first.stdout) == results(second.stdout)
    assert len(results(first.stdout)) == 15  # the header and 14 matches


def test_cluster_compare_measures_every_setup_and_reports_the_ratios() -> None:
    """One tiny round of ``benchmarks/cluster_compare.py``: every setup (the relayed one's tables opened on the other node) plays moves."""
    from tests.cluster.redis_server import find_redis_server

    find_redis_server()  # without redis-server: fails in CI, else skips
    _need_postgresql()
    command = [sys.executable, str(BENCHMARKS / "cluster_compare.py"), "--rounds", "1", "--games", "1", "--seconds", "0.3", "--warmup", "0"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    rows = _markdown_rows(done.stdout)
    for setup in ("floor", "sqlite", "pg", "pg, TCP", "2 nodes, local", "2 nodes, relayed"):
        moves, cpu_us = int(rows[setup][0]), float(rows[setup][1])
        assert moves > 0 and cpu_us > 0, (setup, rows[setup])
    for ratio in ("pg ÷ sqlite", "pg, TCP ÷ pg (socket)", "relayed ÷ local"):
        assert float(rows[ratio][0]) > 0, rows[ratio]


def test_cluster_compare_measures_only_the_setups_asked_beside_another_checkout() -> None:
    """``cluster_compare.py --only ... --against TREE``: the two-node setups of both checkouts (here this one twice), nothing else."""
    from tests.cluster.redis_server import find_redis_server

    find_redis_server()  # without redis-server: fails in CI, else skips
    _need_postgresql()
    command = [sys.executable, str(BENCHMARKS / "cluster_compare.py"), "--rounds", "1", "--games", "2", "--seconds", "1", "--warmup", "0",
               "--only", "2 nodes, local", "--only", "2 nodes, relayed", "--against", str(ROOT)]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    rows = _markdown_rows(done.stdout)
    setups = ["2 nodes, local", "2 nodes, local (against)", "2 nodes, relayed", "2 nodes, relayed (against)"]
    assert [row for row in rows if row in (*setups, "floor", "sqlite", "pg")] == setups, rows
    for setup in setups:
        assert int(rows[setup][0]) > 0 and float(rows[setup][1]) > 0, (setup, rows[setup])
    for ratio in ("relayed ÷ local", "relayed ÷ local (against)"):
        assert float(rows[ratio][0]) > 0, rows[ratio]


def test_pg_split_splits_a_moves_cpu_by_process_and_measures_the_floor() -> None:
    """One tiny round of ``benchmarks/pg_split.py --tcp``: both engines play, PostgreSQL's backend (over its unix socket
    and over TCP) and commits are counted."""
    _need_postgresql()
    command = [sys.executable, str(BENCHMARKS / "pg_split.py"), "--rounds", "1", "--games", "1", "--seconds", "0.3", "--warmup", "0",
               "--floor", "--commits", "20", "--tcp", "--statements"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    rows = _markdown_rows(done.stdout)
    assert float(rows["sqlite"][0]) > 0 and float(rows["sqlite"][1]) > 0, rows["sqlite"]
    for setup in ("pg", "pg, TCP"):
        assert float(rows[setup][0]) > 0 and float(rows[setup][2]) > 0, rows[setup]  # moves, PostgreSQL's backends
    for transport in ("socket", "TCP"):
        assert float(rows[f"libpq exec_prepared (pgconn), {transport}"][1]) > 0, rows
    assert float(rows["`INSERT INTO moves (any rows)`"][0]) > 0, rows  # --statements: calls a move
    assert float(rows["tables"][0]) > 0, rows["tables"]  # the load's tables, created in the measured window
    assert float(rows["moves"][1].split()[0]) == 0.0, rows["moves"]  # no move row is ever updated


def _need_postgresql() -> None:
    """Skip without PostgreSQL's binaries, or fail in CI, which installs them."""
    from tests.pgserver import missing_reason

    reason = missing_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def _need_postgresql_and_valgrind() -> None:
    """:func:`_need_postgresql`, and skip without valgrind, which CI does not install."""
    import shutil

    _need_postgresql()
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (CI installs none: callgrind's benchmarks are run by hand)")


def _markdown_rows(text: str) -> dict[str, list[str]]:
    """A printed Markdown table's rows by their first cell."""
    return {cells[0]: cells[1:] for line in text.splitlines() if line.startswith("| ") and (cells := [c.strip() for c in line.strip("|").split("|")])}


def test_pg_row_instructions_counts_a_move_rows_instructions_at_each_schema_version() -> None:
    """``benchmarks/pg_row_instructions.py`` at tiny counts: a positive count for each version asked."""
    _need_postgresql_and_valgrind()
    command = [sys.executable, str(BENCHMARKS / "pg_row_instructions.py"), "--versions", "11", "12", "--rows", "2", "--commits", "1", "3"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = _markdown_rows(done.stdout)
    for version in ("11", "12"):
        assert float(rows[version][0].replace(",", "")) > 0, rows


def test_pg_row_instructions_over_the_wire_counts_the_writers_backend() -> None:
    """``benchmarks/pg_row_instructions.py --wire`` at tiny counts: PostgreSQL under callgrind as a server, the writer's
    own path; a positive count for each version, and fewer instructions without the CHECK on seat (schema step 13)."""
    _need_postgresql_and_valgrind()
    command = [sys.executable, str(BENCHMARKS / "pg_row_instructions.py"), "--wire", "--versions", "12", "13", "--rows", "4", "--commits", "2", "6"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "the writer's MovesPath over the unix socket" in done.stdout
    rows = _markdown_rows(done.stdout)
    counts = {version: float(rows[version][0].replace(",", "")) for version in ("12", "13")}
    assert 0 < counts["13"] < counts["12"], rows


def test_pg_writer_instructions_counts_the_servers_side_of_a_group_commit() -> None:
    """``benchmarks/pg_writer_instructions.py`` at tiny counts: every cycle's moves in one commit, a positive count."""
    _need_postgresql_and_valgrind()
    # 2 against 5 cycles once counted fewer instructions for the long loop: its waits for PostgreSQL spin the event
    # loop a varying number of times, a few million instructions a run, so the long loop is made long enough to show
    command = [sys.executable, str(BENCHMARKS / "pg_writer_instructions.py"), "--rows", "3", "--commits", "2", "40"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    [row] = [[c.strip() for c in line.strip("|").split("|")] for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| moves")]
    assert float(row[0]) == 3.0 and float(row[1].replace(",", "")) > 0, row


def test_move_profile_counts_the_same_bytecodes_for_the_same_moves(tmp_path: Path) -> None:
    figures = []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.json"
        done = subprocess.run(
            [sys.executable, str(BENCHMARKS / "move_profile.py"), "--moves", "20", "--top", "200", "--json", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "| `server/play/authority.py:play_move_now` |" in done.stdout
        figures.append(json.loads(out.read_text()))
    first, second = figures
    assert first["moves"] == 20 and first["project_bytecodes"] > 0 and first["c_calls"] > 0
    pipeline = ("server/play/authority.py:play_move_now", "server/tables/fanout.py:send_moved", "games/othello.py:view")
    # the same moves (each player plays its first legal move): the same work in the move's own pipeline
    assert [first["functions"][name] for name in pipeline] == [second["functions"][name] for name in pipeline]
    assert first["functions"]["server/play/authority.py:play_move_now"] > 0


def test_strength_random_openings_are_shared_by_each_pair_of_games() -> None:
    import random

    import games
    import strength

    start = games.get("mingmang").new_state({"size": 5})
    first, again = (strength.random_opening(start, 4, random.Random(7)) for _ in range(2))
    assert first.ply == 4 and first.diagram() == again.diagram() != start.diagram()
    nimble = games.get("nimble").new_state({}, 1)
    assert strength.random_opening(nimble, 10_000, random.Random(1)).outcome is not None  # stops at the end
    match = strength.Match("mingmang", (("max_plies", 6), ("size", 5)), strength.Player("level", 1),
                           strength.Player("random"), opening_plies=4)
    budgets = strength.Budgets(seconds=0, nodes=50)
    assert [strength.play_game(match, index, 1, budgets).plies for index in range(2)] == [6, 6]
    with pytest.raises(SystemExit):
        strength.parse_args(["--opening-plies", "-1"])
    done = _strength("--games", "2", "--levels", "5", "--opening-plies", "3")
    assert done.returncode == 0 and "3 random opening plies per pair of games" in done.stderr, done.stderr


def test_budget_overrun_times_moves_in_process_and_through_the_workers() -> None:
    lines = _benchmark_lines("budget_overrun.py", "--game", "mingmang", "--seconds", "0.02", "--moves", "3", "--pool")
    assert [line.split()[0] for line in lines[1:]] == ["in-process", "in-process", "pool"]
    assert all("of 3" in line for line in lines[1:])


def test_bots_latency_pings_beside_the_computers_and_times_their_moves() -> None:
    lines = _benchmark_lines("bots_latency.py", "--seconds", "1", "--rounds", "1", "--bot-tables", "2", "--bot-seconds", "0.05", "--ping-ms", "20")
    for label in ("alone: move -> ok", "bots: move -> ok", "alone: ping", "bots: ping"):
        assert any(line.startswith(label) and "count=" in line for line in lines), label
    assert any(line.startswith("bots: ping") and "max=" in line for line in lines)
    assert any("pings over 100 ms beside the computers:" in line for line in lines)
    assert any("computer move" in line for line in lines) and any("budget 0.05 s; 2 tables share the workers" in line for line in lines)


def test_a_server_process_runs_from_the_source_tree_it_is_given(tmp_path: Path) -> None:
    tree = tmp_path / "other"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    server = ServerProcess(launcher=["-c", compare.PARLOUR_BOOT], tree=tree)
    server.start()
    try:
        assert server.proc is not None
        pid = server.proc.pid
        assert Path(f"/proc/{pid}/cwd").resolve() == tree.resolve()
        environ = dict(item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item)
        assert environ["PYTHONPATH"] == str(tree)
        greeted = loadgen("parlour", server, "--scenario", "memory", "--connections", "2", "--warmup", "0")
        assert greeted["connections"] == 2  # it serves
    finally:
        server.stop()


def test_tactego_move_cost_prints_each_players_cpu_a_move_and_the_nodes_a_second_buys() -> None:
    lines = _benchmark_lines("tactego_move_cost.py", "--positions", "3", "--player", "search:400",
                             "--player", "playout:400", "--player", "hybrid:400", "--seconds", "0.05")
    search, playout, hybrid, reached = lines
    assert re.fullmatch(r"search:400: [\d.]+ ms CPU a move over 3 positions, 1\.00x the first; about [\d,]+ nodes a CPU second", search)
    assert re.fullmatch(r"playout:400: [\d.]+ ms CPU a move over 3 positions, [\d.]+x the first; about [\d,]+ nodes a CPU second", playout)
    assert re.fullmatch(r"hybrid:400: [\d.]+ ms CPU a move over 3 positions, [\d.]+x the first; about [\d,]+ nodes a CPU second", hybrid)
    assert re.fullmatch(r"playout: \d+ nodes \(median \d+\) in 0\.05 s of wall clock a move, 3 positions", reached)
    done = subprocess.run([sys.executable, str(BENCHMARKS / "tactego_move_cost.py"), "--player", "deep:5"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "a player is search:NODES, playout:NODES or hybrid:NODES, not 'deep:5'" in done.stderr
