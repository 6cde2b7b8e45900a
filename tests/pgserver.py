"""A private PostgreSQL server for the tests, started the way a user starts one: ``initdb``, then ``pg_ctl start``.

Debian's ``postgresql`` package puts the programs in ``/usr/lib/postgresql/VERSION/bin``
(not on ``PATH``). The cluster lives in a fresh directory under the system's temporary
directory, listens on 127.0.0.1 on a free port and on a unix socket in that directory,
and trusts local connections (a test cluster: nobody else can reach it). ``initdb``
refuses to run as root, so as root the programs run as the ``postgres`` system user
(which the package creates), owner of the directory.

Where the programs cannot be found, :func:`missing_reason` says so; the fixtures fail
with that message when ``CI`` is set and skip with it otherwise.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

SUPERUSER = "parlour"
"""The cluster's superuser, the user of every test database URL."""

SETTINGS: dict[str, str] = {}
"""The PostgreSQL settings (``-c name=value``) every private server gets, the tests' and the benchmarks'; durability
(``fsync``, ``synchronous_commit``, ``full_page_writes``) stays at PostgreSQL's defaults, on."""

INSTALL_HINT = "install Debian's postgresql package (apt-get install -y postgresql; .ci/run does it as root)"


def find_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/*/bin`` that holds ``initdb`` and ``pg_ctl``, or ``None``."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb") if Path(p).with_name("pg_ctl").exists()]
    return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0) if found else None


def missing_reason() -> str | None:
    """Why no test PostgreSQL can be started here (no programs; root without a ``postgres`` user), or ``None``."""
    if find_bin() is None:
        return f"PostgreSQL's initdb and pg_ctl are not in /usr/lib/postgresql/*/bin: {INSTALL_HINT}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return f"running as root and there is no 'postgres' user to run initdb as: {INSTALL_HINT}"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One private cluster: :meth:`start`, :meth:`create_database`, :meth:`stop`, :meth:`start` again, :meth:`destroy`.

    Attributes:
        directory: the temporary directory (data in ``data/``, socket and log beside it).
        port: its TCP port on 127.0.0.1.
    """

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        """Make a new cluster with ``initdb``; it runs with ``settings`` (default :data:`SETTINGS`; ``{}``: PostgreSQL's own defaults).

        Raises:
            RuntimeError: PostgreSQL's programs are missing, or ``initdb`` failed.
        """
        self.settings = dict(SETTINGS if settings is None else settings)
        bin_dir = find_bin()
        if bin_dir is None:
            raise RuntimeError(missing_reason())
        self.bin = bin_dir
        self.directory = Path(tempfile.mkdtemp(prefix="parlour-pg-"))
        self.port = free_port()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")

    @property
    def data(self) -> Path:
        """The data directory."""
        return self.directory / "data"

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / program), *args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr or done.stdout}")
        return done

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
        options += "".join(f" -c {name}={value}" for name, value in self.settings.items())
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "log"), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are ended) and wait until it is down."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def destroy(self) -> None:
        """Stop it at once if it runs (immediate shutdown: no checkpoint, as its files go too), then delete its directory.

        A fast shutdown would first write and fsync every database the tests made (one
        checkpoint over thousands of files: a minute on a shared machine).
        """
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "60", "stop")
            except RuntimeError:
                os.kill(self.postmaster_pid(), 9)
        shutil.rmtree(self.directory, ignore_errors=True)

    def url(self, database: str = "postgres", *, unix_socket: bool = False) -> str:
        """The libpq URL of ``database`` on this server: over TCP on 127.0.0.1, or with ``unix_socket`` over its unix
        socket (``postgresql://USER@/DB?host=DIRECTORY&port=PORT``: libpq's form for a socket in ``DIRECTORY``)."""
        if unix_socket:
            return f"postgresql://{SUPERUSER}@/{database}?host={self.directory}&port={self.port}"
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, *, unix_socket: bool = False) -> str:
        """Create a fresh, empty database; return its URL (over the unix socket with ``unix_socket``, else over TCP)."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name, unix_socket=unix_socket)

    def postmaster_pid(self) -> int:
        """The process id of the running server (its postmaster)."""
        return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])


def run_sql(db: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Run one statement (SQLite's dialect, ``?`` parameters) on ``db``, a file or a PostgreSQL URL, in its own
    connection and transaction, as another program would; return its rows (``[]`` for a statement without)."""
    if not db.startswith("postgresql://"):
        import sqlite3

        connection = sqlite3.connect(db)
        try:
            with connection:
                return connection.execute(sql, params).fetchall()
        finally:
            connection.close()
    import psycopg

    with psycopg.connect(db) as connection:
        cursor = connection.execute(sql.replace("?", "%s"), params or None)
        return cursor.fetchall() if cursor.description else []


def start_for_benchmark(purpose: str) -> PostgresServer:
    """A private PostgreSQL server for a benchmark, started as the tests start theirs; ``destroy()`` it at the end.

    Raises:
        SystemExit: PostgreSQL's programs are missing (the message says how to install them, after ``purpose``).
    """
    reason = missing_reason()
    if reason is not None:
        raise SystemExit(f"{purpose}: {reason}")
    server = PostgresServer()
    try:
        server.start()
    except BaseException:
        server.destroy()
        raise
    return server


@contextlib.contextmanager
def running_cluster() -> Iterator[PostgresServer]:
    """A private cluster started for the ``with`` block, then stopped and deleted.

    Without PostgreSQL's programs: a test failure saying how to install them when ``CI``
    is set, else a skip with that message.
    """
    reason = missing_reason()
    if reason is not None:
        import pytest

        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    cluster = PostgresServer()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()
