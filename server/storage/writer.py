"""The writer thread of the SQLite store, and its group commit.

Writes go through a single writer thread that commits in groups: every write
handed over while the previous commit was on its way to disk goes into the
next transaction, and each caller's ``await`` returns only after that
transaction's ``COMMIT`` has returned. While recent commits carried several
writes each (many tables moving at once), the writes of one turn of the event
loop are handed over together, and the writer waits up to
:data:`COMMIT_DELAY_S` for as many writes as those commits carried before it
commits, so that one fsync serves more moves; a lone writer (one game) never
waits. One bad write fails only its own caller (:meth:`GroupCommitWriter.write`).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol, Sequence, TypeVar

from .common import FENCE_ALL_SQL, FENCE_SQL
from .statements import APPEND_MOVES, MERGED_ROWS
from .store import Statement, StoreError, settled_at_once

__all__ = ["COMMIT_DELAY_S", "GROUP_WEIGHT", "WAIT_FROM_MEAN", "GroupCommitWriter", "merged_statements", "own_copy"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Job:
    statements: tuple[Statement, ...]
    future: asyncio.Future[None]
    loop: asyncio.AbstractEventLoop


_STOP = object()

COMMIT_DELAY_S = 0.0005
"""Longest time (seconds) the writer waits for more writes before a commit, and only while
recent commits carried several writes each; like PostgreSQL's ``commit_delay``. Each fsync
costs far more CPU than the writes it carries, so gathering the moves of several tables
into one commit lowers the cost of every move, for at most this much more latency."""

GROUP_WEIGHT = 0.25
"""How much the latest commit counts in the running mean of writes per commit (the rest: the mean so far)."""

WAIT_FROM_MEAN = 1.5
"""The writer waits for company only while the running mean of writes per commit is at least this:
at least every other commit carried more than one write. One game's commits carry one write each."""


class GroupCommitWriter:
    """The writing half of :class:`server.storage.sqlite.SQLiteStore`: one thread that commits every write, in groups.

    Why a writer thread rather than commits on the event loop's own thread
    (Redis's ``appendfsync always``), measured twice (``docs/BENCHMARKS.md``,
    the durable path): committing on the loop saves the hand-overs (every
    ``futex`` call, the self-pipe wake-up; about 45,000 instructions a move
    with one game, 6,000 at ten writes a commit), but the loop then waits
    for each fsync instead of reading, checking and planning the moves that
    arrive meanwhile. On the shared 2-core machine, the server pinned to one
    core as ``benchmarks/compare.py`` runs it, that halved the moves played
    at 10 games, raised their p50 two- to fourfold and one game's p50 from
    about 1 ms to 4-8 ms. So the thread stays, and the hand-overs are kept
    few: one queue hand-over and one loop wake-up per commit.

    The store starts the thread (``threading.Thread(target=self._run)``) and
    stops it with :meth:`_stop_writing`. Writes are made from one
    asyncio event loop.

    Attributes:
        commit_delay_s: the longest wait for more writes before a commit
            (:data:`COMMIT_DELAY_S`).
        commits: transactions committed so far (each holds one or more writes).
        writes: writes (calls to :meth:`write`) committed so far.
    """

    def __init__(self, writer: sqlite3.Connection | None, commit_delay_s: float = COMMIT_DELAY_S) -> None:
        """Commit through ``writer`` (``None``: a read-only store, which refuses to start)."""
        self.commit_delay_s = commit_delay_s
        self._group_mean = 1.0  # running mean of writes per commit (GROUP_WEIGHT)
        self.commits = 0
        self.writes = 0
        self._writer = writer
        self._cursor = writer.cursor() if writer is not None else None  # the writer thread's, reused for every statement
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()  # lists of jobs (one write, or a loop turn's), or _STOP
        self._turn: list[_Job] = []  # the writes made during this turn of the event loop
        self._hand_over_handle: asyncio.Handle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop writes come from (see write())
        self._thread: threading.Thread | None = None
        self._closed = False
        # Held by the writer thread while it gathers and commits a batch. Tests hold it
        # to make writes pile up, so that they land in one batch deterministically.
        self._writer_gate = threading.Lock()

    # --- writing -------------------------------------------------------------------------------

    def write(self, *statements: Statement) -> asyncio.Future[None]:
        """Run ``statements`` in the writer thread; the future returned is done once they are committed.

        A future, not a coroutine: the durable move awaits it with one frame
        fewer. Every error below is set on the future, so it is raised where
        the future is awaited, as it would be from a coroutine.

        The statements of one call are atomic: all committed or none. They share
        a transaction with whatever else was handed over while the previous
        commit was in progress (group commit); this call returns only after that
        ``COMMIT`` returned. While tables commit together, the writes made
        during one turn of the event loop are handed to the writer thread
        together at the end of the turn; otherwise each write at once.

        One bad write (a duplicate ply, say) fails only its own caller: when a
        statement fails, the shared transaction is rolled back, that write
        fails, and the other writes of the group are retried together, in the
        order they were made. The effect is that of running each write alone,
        in order, with fewer transactions. If ``BEGIN`` or ``COMMIT`` itself
        fails (the file is locked by another process beyond the busy timeout,
        the disk is full), every write of the group fails with that error.

        Cancelling the caller does not withdraw the write: it is committed anyway.

        Raises (when the future is awaited):
            StoreError: if the write failed (the SQLite error is the cause), or
                the store is not started or is closed.
            TypeError: if a statement is not a ``(sql, params)`` pair.
        """
        loop = self._loop
        if loop is None or not loop.is_running():  # the first write, or a new loop since: look it up
            loop = self._loop = asyncio.get_running_loop()  # a getpid() system call each time on Python 3.11
        future: asyncio.Future[None] = loop.create_future()
        if settled_at_once(future, statements, self._closed, self._thread is not None):
            return future
        job = _Job(statements, future, loop)
        if not self._turn and self._group_mean < WAIT_FROM_MEAN:
            self._queue.put([job])  # tables seldom commit together (one game): no turn to wait for
        else:
            self._turn.append(job)
            if self._hand_over_handle is None:
                self._hand_over_handle = loop.call_soon(self._hand_over)
        return future

    def _stop_writing(self) -> None:
        """Hand over this loop turn's writes, then have the writer thread stop once it has committed them."""
        self._hand_over()
        self._queue.put(_STOP)

    def _hand_over(self) -> None:
        """Give the writes of the loop turn that just ended to the writer thread: one batch, one wake-up at most."""
        self._hand_over_handle = None
        if self._turn:
            batch, self._turn = self._turn, []
            self._queue.put(batch)

    # --- the writer thread ----------------------------------------------------------------------

    def _run(self) -> None:
        """The writer thread: commit what :meth:`_gather` gathers in one transaction, until ``_STOP``."""
        while True:
            first = self._queue.get()
            with self._writer_gate:
                jobs, stopping = self._gather(first)
                if jobs:
                    self._commit_batch(jobs)
                    self._group_mean += (len(jobs) - self._group_mean) * GROUP_WEIGHT
            if stopping:
                return

    def _gather(self, first: Any) -> tuple[list[_Job], bool]:
        """The writes of the next commit, from the batch ``first`` on, and whether ``_STOP`` came.

        Every batch handed over already is taken. Then, while recent commits
        carried several writes each (their running mean is at least
        :data:`WAIT_FROM_MEAN`), the writer waits, at most
        :attr:`commit_delay_s` in all, until it holds as many writes as that
        mean: the other tables' moves are probably on their way.
        """
        jobs: list[_Job] = []
        batch = first
        deadline = None
        while True:
            if batch is _STOP:
                return jobs, True
            jobs += batch
            if not self._queue.empty():  # this thread alone takes from it; get_nowait() would raise Empty once a commit
                batch = self._queue.get_nowait()
                continue
            wanted = self._group_mean
            if wanted < WAIT_FROM_MEAN or len(jobs) >= wanted or not self.commit_delay_s:
                return jobs, False
            if deadline is None:
                deadline = time.monotonic() + self.commit_delay_s
            left = deadline - time.monotonic()
            if left <= 0:
                return jobs, False
            try:
                batch = self._queue.get(timeout=left)
            except queue.Empty:
                return jobs, False

    def _commit_batch(self, jobs: list[_Job]) -> None:
        """Commit ``jobs`` together; a job whose statement fails is dropped and the rest retried together.

        The waiters hear of the outcome together: one wake-up of each event
        loop per batch, however many writes it held.
        """
        settled: list[tuple[_Job, StoreError | None]] = []
        pending = list(jobs)
        merge = True
        while pending:
            culprit, error = self._transaction(pending, merge)
            if error is None:
                settled += [(job, None) for job in pending]
                break
            if culprit is _MERGED:  # a statement of several writes failed: find the one that fails alone
                merge = False
                continue
            if culprit is None:  # BEGIN or COMMIT failed (a full disk, say): nothing to single out, the whole group fails
                log.error("a group commit of %d writes failed: %s", len(pending), error)
                settled += [(job, own_copy(error)) for job in pending]  # each waiter raises its own exception, with the same cause
                break
            assert isinstance(culprit, _Job)
            settled.append((culprit, error))
            pending.remove(culprit)
            if pending:
                log.warning("a write failed (%s); retrying the %d other writes of its group", error, len(pending))
        _settle(settled)

    def _transaction(self, jobs: list[_Job], merge: bool) -> tuple[_Job | object | None, StoreError | None]:
        """Run ``jobs`` in one transaction; with ``merge``, their move rows in multi-row INSERTs.

        A group that comes down to one statement (the moves of several tables,
        say) runs it alone, which SQLite commits as its own transaction: one
        call into SQLite instead of three.

        Returns:
            ``(None, None)`` once committed; else the error that rolled it back,
            with the job whose statement failed (:data:`_MERGED` if that statement
            held several writes; ``None`` if BEGIN or COMMIT failed).
        """
        connection = self._writer
        cursor = self._cursor
        assert connection is not None and cursor is not None, "start() refuses a read-only store"
        plan = merged_statements(jobs) if merge else [(sql, params, job) for job in jobs for sql, params in job.statements]
        culprit: _Job | object | None = None
        try:
            if len(plan) == 1:
                sql, params, culprit = plan[0]
                cursor.execute(sql, params)
            else:
                cursor.execute("BEGIN IMMEDIATE")
                for sql, params, culprit in plan:
                    cursor.execute(sql, params)
                culprit = None
                cursor.execute("COMMIT")
        except Exception as exc:  # sqlite3.Error, or a parameter SQLite cannot bind
            if connection.in_transaction:
                try:
                    connection.execute("ROLLBACK")
                except sqlite3.Error:
                    log.exception("ROLLBACK failed")
            error = StoreError(f"the write failed: {exc}")
            error.__cause__ = exc
            return culprit, error
        self.commits += 1
        self.writes += len(jobs)
        return None, None


_MERGED = object()
"""The culprit of a failed statement that held the rows of several writes."""


class _Write(Protocol):
    statements: tuple[Statement, ...]


W = TypeVar("W", bound=_Write)


def merged_statements(jobs: Sequence[W]) -> list[tuple[str, Sequence[Any], W | object]]:
    """The statements of ``jobs`` in order, each run of move INSERTs of one shape as multi-row INSERTs.

    Each statement comes with the job it belongs to, or :data:`_MERGED` if it
    holds rows of several jobs. Rows keep their order, so the effect is that of
    the statements one by one. A job is anything with ``statements``: this
    writer's, or the PostgreSQL store's (:mod:`server.storage.postgres`).

    The lease fences of a node of a cluster (:data:`server.storage.common.FENCE_SQL`,
    PostgreSQL only) become one statement at the head of the transaction
    (:data:`server.storage.common.FENCE_ALL_SQL`): a fence holds its table's lease row
    until the commit wherever it runs, and the moves between them merge again.
    """
    if len(jobs) == 1 and (len(jobs[0].statements) == 1 or (len(jobs[0].statements) == 2 and jobs[0].statements[0][0] is FENCE_SQL)):
        job = jobs[0]  # one game's move, say, fenced or not: nothing to merge (PostgreSQL runs a fenced move as one statement)
        return [(sql, params, job) for sql, params in job.statements]
    plan: list[tuple[str, Sequence[Any], W | object]] = []
    rows: list[Any] = []
    owners: list[W] = []
    shapes: tuple[str, ...] = ()  # the multi-row INSERTs of the run being gathered

    def flush() -> None:
        first = owners[0]
        owner = first if all(owner is first for owner in owners) else _MERGED
        plan.append((shapes[len(owners) - 1], tuple(rows), owner))
        rows.clear()
        owners.clear()

    fences: dict[Any, tuple[list[Any], list[W]]] = {}  # holder (a node's run) -> its fenced tables and their jobs
    for job in jobs:
        for sql, params in job.statements:
            if sql is FENCE_SQL:
                tables, fencing = fences.setdefault(params[1], ([], []))
                tables.append(params[0])
                fencing.append(job)
                continue
            merged = APPEND_MOVES.get(sql)
            if owners and merged is not shapes:
                flush()
            if merged is None:
                plan.append((sql, params, job))
                continue
            shapes = merged
            rows += params
            owners.append(job)
            if len(owners) == MERGED_ROWS:
                flush()
    if owners:
        flush()
    for holder, (tables, fencing) in fences.items():
        first = fencing[0]
        plan.insert(0, (FENCE_ALL_SQL, (tables, holder), first if all(job is first for job in fencing) else _MERGED))
    return plan


def own_copy(error: StoreError) -> StoreError:
    """A new exception like ``error`` (same class, message and cause), for one more waiter to raise."""
    copy = type(error)(*error.args)
    copy.__cause__ = error.__cause__
    return copy


def _settle(settled: list[tuple[_Job, StoreError | None]]) -> None:
    """Resolve the futures of ``settled`` jobs from the writer thread: one callback per event loop, in job order."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Job, StoreError | None]]] = {}
    for job, error in settled:
        by_loop.setdefault(job.loop, []).append((job, error))

    def resolve(results: list[tuple[_Job, StoreError | None]]) -> None:
        for job, error in results:
            if job.future.done():  # the caller was cancelled; the write stands
                continue
            if error is None:
                job.future.set_result(None)
            else:
                job.future.set_exception(error)

    for loop, results in by_loop.items():
        try:
            loop.call_soon_threadsafe(resolve, results)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass
