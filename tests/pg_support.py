"""A throw-away PostgreSQL server for tests: ``initdb`` + ``pg_ctl`` on a unix socket.

The cluster lives in a fresh temp directory, listens on no TCP port (``listen_addresses=''``)
and is stopped and deleted at the end of the test session. PostgreSQL refuses to run as root,
so under root (CI) the server runs as the ``postgres`` user that Debian's package creates.

Tests ask for the ``pg_url`` fixture (``tests/conftest.py``): a new, empty database per test,
as a SQLAlchemy URL. Without PostgreSQL's binaries the fixture skips, unless
``PRDIGEST_REQUIRE_POSTGRES=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from itertools import count
from pathlib import Path

PORT = 5432  # only names the socket file (.s.PGSQL.5432): nothing listens on TCP
_names = count(1)


def find_bin(name: str) -> str | None:
    """A PostgreSQL server binary: on PATH, else in Debian's versioned directory."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


@dataclass
class PgServer:
    directory: Path
    pg_ctl: str

    @property
    def socket_dir(self) -> Path:
        return self.directory / "socket"

    @property
    def user(self) -> str:
        return "postgres"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@/{database}?host={self.socket_dir}&port={PORT}"

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = f"{prefix}{os.getpid()}_{next(_names)}"
        with psycopg.connect(
            host=str(self.socket_dir),
            port=PORT,
            user=self.user,
            dbname="postgres",
            autocommit=True,
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            _as_server_user(
                [self.pg_ctl, "-D", str(self.directory / "data"), "-m", "immediate", "stop"]
            ),
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.directory, ignore_errors=True)


def start_server() -> PgServer | str:
    """Start a cluster; returns it, or why it cannot be started (for the skip message)."""
    initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not installed"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    directory = Path(tempfile.mkdtemp(prefix="prdigest-pg-"))
    (directory / "socket").mkdir()
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres")
        shutil.chown(directory / "socket", "postgres")
    data = directory / "data"
    init = subprocess.run(
        _as_server_user(
            [initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]
        ),
        capture_output=True,
        text=True,
        check=False,
    )
    if init.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        return f"initdb failed: {init.stderr.strip()[-300:]}"
    options = (
        f"-c listen_addresses='' -c unix_socket_directories={directory / 'socket'} "
        f"-c port={PORT} -c fsync=off -c max_connections=60"
    )
    start = subprocess.run(
        _as_server_user(
            [
                pg_ctl,
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(directory / "server.log"),
                "-w",
                "-t",
                "120",
                "start",
            ]
        ),
        capture_output=True,
        text=True,
        check=False,
    )
    if start.returncode != 0:
        log = (directory / "server.log").read_text(errors="replace")[-500:]
        shutil.rmtree(directory, ignore_errors=True)
        return f"pg_ctl start failed: {start.stderr.strip()[-300:]} {log}"
    return PgServer(directory, pg_ctl)
