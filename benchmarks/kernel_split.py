"""Where a server's CPU goes between user space and the kernel, and what it asks the kernel for.

``benchmarks/loadgen.py --split`` reads these counters of the server process
at the start and at the end of its measured window, so that
``benchmarks/compare.py --split`` can print, per move (per request for the
floor), beside the total CPU:

- **user and system CPU**: ``utime`` and ``stime`` of ``/proc/PID/stat``
  (every thread; clock ticks of ``os.sysconf("SC_CLK_TCK")``, sampled by the
  scheduler tick, so a window needs a few hundred ticks to be worth reading).
  On loopback TCP a ``send`` also runs the receiving socket's TCP processing
  (and the wake-up of its reader) in the sender's context, so it is in the
  sender's system time;
- **context switches**: ``voluntary_ctxt_switches`` (the loop went to sleep in
  ``epoll_wait``) and ``nonvoluntary_ctxt_switches`` of every thread's
  ``/proc/PID/task/*/status``;
- **system calls by kind** (with ``perf``, when the kernel lets this user
  count tracepoints): ``perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_*``
  on the server's threads over the window, ``net:net_dev_queue`` (TCP
  segments put on the loopback device in the server's context) and, of
  those, the ones under :data:`ACK_BELOW_BYTES` bytes: bare acknowledgements
  (on loopback a receiving socket that acknowledges at once does it inside
  the sender's ``write``; the smallest frame a server sends makes a longer
  segment). Counting adds a little
  CPU per system call to the measured server; the counts themselves do not
  depend on the machine's load.

Everything here reads ``/proc`` or runs ``perf``; nothing touches the server's
code. Linux only.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

SYSCALLS = (
    "epoll_wait", "epoll_pwait", "epoll_ctl", "read", "recvfrom", "recvmsg", "write", "writev", "sendto",
    "sendmsg", "futex", "getpid", "accept4", "close", "setsockopt", "getsockname", "getpeername", "ioctl",
)  # fmt: skip
"""The system calls counted one by one (every other one is in the total only)."""

TOTAL_EVENT = "raw_syscalls:sys_enter"
SEGMENTS_EVENT = "net:net_dev_queue"
SWITCH_EVENT = "sched:sched_switch"

ACK_BELOW_BYTES = 80
"""A segment on the loopback device shorter than this carries no frame: Ethernet, IP and TCP headers with
timestamps (and any SACK blocks) are 66 to 78 bytes, and the shortest frame (an ``ok``) is 17 bytes more."""
ACK_FILTER = f"len < {ACK_BELOW_BYTES}"


@dataclass(frozen=True)
class ProcessCounters:
    """A process's CPU split and context switches at one moment (every thread it has then).

    Attributes:
        user_ticks, system_ticks: ``utime`` and ``stime`` of ``/proc/PID/stat``, in clock ticks.
        voluntary, involuntary: context switches, summed over the threads' ``status``.
    """

    user_ticks: int
    system_ticks: int
    voluntary: int
    involuntary: int

    @classmethod
    def read(cls, pid: int) -> "ProcessCounters":
        """Read process ``pid``'s counters now.

        Raises:
            OSError: there is no such process (or ``/proc`` is not Linux's).
        """
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        voluntary = involuntary = 0
        for status in Path(f"/proc/{pid}/task").glob("*/status"):
            try:
                text = status.read_text()
            except OSError:  # a thread that ended between the listing and the read
                continue
            for line in text.splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    voluntary += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    involuntary += int(line.split()[1])
        # fields[0] is the state (field 3 of stat); utime and stime are fields 14 and 15
        return cls(int(fields[11]), int(fields[12]), voluntary, involuntary)

    def since(self, start: "ProcessCounters") -> dict[str, float]:
        """What changed from ``start`` to these counters: user and system CPU in ns, switches as counts."""
        tick_ns = 1e9 / os.sysconf("SC_CLK_TCK")
        return {
            "user_ns": (self.user_ticks - start.user_ticks) * tick_ns,
            "system_ns": (self.system_ticks - start.system_ticks) * tick_ns,
            "voluntary_switches": self.voluntary - start.voluntary,
            "involuntary_switches": self.involuntary - start.involuntary,
        }


def perf_events() -> list[str]:
    """The tracepoints :class:`SyscallCount` counts: the total, each of :data:`SYSCALLS`, segments, switches
    (the segments again, filtered to bare acknowledgements, are counted after them: :func:`perf_command`)."""
    return [TOTAL_EVENT, *(f"syscalls:sys_enter_{name}" for name in SYSCALLS), SEGMENTS_EVENT, SWITCH_EVENT]


def perf_command(pid: int) -> list[str]:
    """``perf stat`` counting :func:`perf_events` and the bare acknowledgements of process ``pid``'s threads, CSV on stderr."""
    return ["perf", "stat", "-x,", "-e", ",".join(perf_events()), "-e", SEGMENTS_EVENT, "--filter", ACK_FILTER, "-p", str(pid)]


def event_key(event: str, again: bool = False) -> str:
    """The result key of a perf event: ``"syscalls"`` (the total), the system call's name, ``"segments"``, ``"switches"``;
    ``"acks"`` for the segments counted ``again`` (the filtered count)."""
    if event == TOTAL_EVENT:
        return "syscalls"
    if event == SEGMENTS_EVENT:
        return "acks" if again else "segments"
    if event == SWITCH_EVENT:
        return "switches"
    return event.removeprefix("syscalls:sys_enter_")


class SyscallCount:
    """``perf stat`` counting the server's system calls by kind while it runs (:meth:`start` ... :meth:`stop`).

    Args:
        pid: the process whose threads are counted.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._proc: subprocess.Popen[str] | None = None

    @staticmethod
    def available() -> bool:
        """Whether ``perf`` is installed and may count a tracepoint here (it counts one for ``true``)."""
        if shutil.which("perf") is None:
            return False
        done = subprocess.run(["perf", "stat", "-x,", "-e", TOTAL_EVENT, "true"], capture_output=True, text=True, timeout=30)
        return done.returncode == 0 and "<not supported>" not in done.stderr and "not counted" not in done.stderr

    def start(self) -> None:
        """Start counting (``perf stat -p``); returns once perf has attached."""
        self._proc = subprocess.Popen(perf_command(self.pid), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # perf prints nothing until it stops; give it the moment it needs to open its counters
        try:
            self._proc.wait(timeout=0.3)
        except subprocess.TimeoutExpired:
            return
        raise RuntimeError(f"perf stat exited at once: {self._proc.stderr.read().strip() if self._proc.stderr else ''}")

    def stop(self) -> dict[str, int]:
        """Stop counting; the counts by :func:`event_key`.

        Raises:
            RuntimeError: perf was not started, or printed no counts.
        """
        proc = self._proc
        if proc is None:
            raise RuntimeError("SyscallCount.stop() before start()")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        self._proc = None
        counts = parse_perf_csv(err)
        if not any(event == TOTAL_EVENT for event, _ in counts):
            raise RuntimeError(f"perf stat printed no counts: {err.strip()[:300]}")
        keyed: dict[str, int] = {}
        for event, value in counts:
            key = event_key(event, again=event_key(event) in keyed)
            keyed[key] = value
        return keyed


def parse_perf_csv(text: str) -> list[tuple[str, int]]:
    """The counts of ``perf stat -x,`` output, ``(event, count)`` in the order printed (an event counted twice,
    as the segments are, appears twice); a line not counted, or not a count, is left out."""
    counts = []
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and fields[0].strip().isdigit():
            counts.append((fields[2].strip(), int(fields[0])))
    return counts
