"""``benchmarks/kernel_split.py``: a process's user and system CPU, context switches and system calls, read from a real child.

The child is a real Python process that burns user time, then system time
(``os.getppid`` in a loop), then sleeps: each counter must see its part.
System calls are counted with ``perf`` where the kernel lets this user count
tracepoints; elsewhere that test is skipped with the reason.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from kernel_split import ProcessCounters, SyscallCount, event_key, parse_perf_csv  # noqa: E402

CHILD = """\
import os, sys, time
sys.stdin.readline()
start = time.process_time()
while time.process_time() - start < 0.3:
    sum(range(1000))
while time.process_time() - start < 0.6:
    os.getppid()
for _ in range(20):
    time.sleep(0.001)
with open(os.devnull, "wb") as sink:
    for _ in range(500):
        sink.write(b"x"); sink.flush()
print("done", flush=True)
sys.stdin.readline()
"""


def _child() -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _run_child_part(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "done"


def _finish(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.write("end\n")
    child.stdin.flush()
    child.wait(timeout=30)


def test_process_counters_split_user_and_system_time_and_count_sleeps() -> None:
    child = _child()
    try:
        start = ProcessCounters.read(child.pid)
        _run_child_part(child)
        spent = ProcessCounters.read(child.pid).since(start)
    finally:
        _finish(child)
    assert spent["user_ns"] > 0.05e9, spent  # 0.3 s of CPU in a Python loop
    assert spent["system_ns"] > 0.05e9, spent  # about 0.3 s in getppid
    assert spent["voluntary_switches"] >= 20, spent  # each sleep gave the CPU up
    assert spent["involuntary_switches"] >= 0


def test_process_counters_of_a_process_that_is_gone_raise_os_error() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    with pytest.raises(OSError):
        ProcessCounters.read(child.pid)


def test_parse_perf_csv_keeps_counts_and_names_events() -> None:
    text = (
        "\n1234,,raw_syscalls:sys_enter,2000,100.00,,\n"
        "<not counted>,,syscalls:sys_enter_read,0,0.00,,\n"
        "17,,syscalls:sys_enter_write,2000,100.00,,\n"
        "5,,net:net_dev_queue,2000,100.00,,\n"
    )
    text += "2,,net:net_dev_queue,2000,100.00,,\n"  # the segments again, filtered to bare acknowledgements
    counts = parse_perf_csv(text)
    assert counts == [("raw_syscalls:sys_enter", 1234), ("syscalls:sys_enter_write", 17), ("net:net_dev_queue", 5), ("net:net_dev_queue", 2)]
    assert [event_key(event) for event, _ in counts[:3]] == ["syscalls", "write", "segments"]
    assert event_key("net:net_dev_queue", again=True) == "acks"


def test_syscall_count_counts_a_childs_writes_by_kind() -> None:
    if not SyscallCount.available():
        pytest.skip("perf is not installed here, or may not count tracepoints (kernel.perf_event_paranoid)")
    child = _child()
    try:
        count = SyscallCount(child.pid)
        count.start()
        _run_child_part(child)
        counts = count.stop()
    finally:
        _finish(child)
    assert counts["write"] >= 500, counts
    assert counts["getppid" if "getppid" in counts else "syscalls"] >= 500
    assert counts["syscalls"] >= counts["write"] + counts["read"]


def test_syscall_count_stop_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="before start"):
        SyscallCount(1).stop()
