"""The database engine: where a store lives, how it is opened, and its migrations.

A target is a path (SQLite) or a SQLAlchemy URL (``postgresql+psycopg://…``). Opening creates
and migrates the schema as needed (alembic, ``migrations/``). Timestamps go in as naive UTC
``DateTime`` so that window queries compare correctly on every backend.

Crash safety: schema creation and every migration run in one transaction, so a kill at any
point leaves either the old schema or the new one. PostgreSQL's DDL is transactional as it is;
Python's ``sqlite3`` module would commit before each ``CREATE TABLE``, so SQLite connections run
with the driver's own transaction handling off and the store issues ``BEGIN`` itself
(:func:`_enable_sqlite_transactions`). Two processes opening a new store at once take turns: the
migration holds ``BEGIN IMMEDIATE`` (SQLite) or an advisory lock (PostgreSQL) and alembic reads
the revision again inside it. Write transactions (:func:`begin_write`) start with ``BEGIN
IMMEDIATE`` on SQLite, so a second writer waits for the first (``busy_timeout``) instead of
failing on a stale snapshot.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError

HEAD_REVISION = "0007"  # newest migration; a test keeps it equal to alembic's head
MIGRATION_LOCK = 0x70726467  # PostgreSQL advisory lock key ("prdg") held while migrating
BUSY_TIMEOUT_MS = 60_000  # how long a SQLite writer waits for another one


def utc_naive(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def aware(moment: datetime) -> datetime:
    """A naive UTC timestamp read back from the database, as an aware one."""
    return moment.replace(tzinfo=UTC)


def url_for(target: str | Path) -> str:
    value = str(target)
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser()}"


def safe_url(url: str) -> str:
    """The URL without a password, for messages."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # an unparsable URL is shown only by its scheme
        return url.split("://", 1)[0] + "://…"


def _enable_sqlite_pragmas(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        # the wait first: switching to WAL needs a lock that another run creating the schema holds
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # WAL keeps readers going while a sync writes; NORMAL is durable enough with WAL.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()
        dbapi_conn.isolation_level = None  # no implicit COMMIT before DDL: see the module doc

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("begin_immediate", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def begin_write(engine: Engine) -> AbstractContextManager[Connection]:
    """A write transaction: ``BEGIN IMMEDIATE`` on SQLite (waits for other writers)."""
    return engine.execution_options(begin_immediate=True).begin()


def describe(exc: BaseException) -> str:
    """A database error as one line: the class and the driver's first line, never SQL."""
    cause = getattr(exc, "orig", None) or exc
    first = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    name = cause.__class__.__name__
    return f"{name}: {first[:200]}" if first else name


def _current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _migrate(engine: Engine) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("prdigest.store").joinpath("migrations"))
    )
    with begin_write(engine) as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def _sqlite_directory(file: str, create_dirs: bool) -> None:
    """The SQLite file's directory must exist; it is created only when asked (the default
    store in the user data directory), so a mistyped ``--db`` is an error, not a new tree."""
    db_path = Path(file)
    if db_path.parent.is_dir():
        return
    if not create_dirs:
        raise StorageError(
            f"cannot open store {db_path}: directory {db_path.parent} does not exist"
        )
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create {db_path.parent}: {exc.strerror}") from exc


@contextmanager
def _sqlite_open_turn(db_path: str) -> Iterator[None]:
    """Processes opening one SQLite file take turns (a blocking ``flock`` beside it) for the
    first connection and the migration: switching a new file to WAL fails at once with
    "database is locked" when another process is switching it too, busy timeout or not."""
    try:
        fd = os.open(f"{db_path}.lock-open", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot open store {db_path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def open_engine(target: str | Path, *, create_dirs: bool = False) -> Engine:
    """An engine for the database at a path or URL, created and migrated as needed."""
    url = url_for(target)
    file = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else ""
    on_disk = file not in ("", ":memory:")  # a SQLite file: not PostgreSQL, not in memory
    if on_disk:
        _sqlite_directory(file, create_dirs)
    turn = _sqlite_open_turn(file) if on_disk else nullcontext()
    try:
        with turn:
            engine = create_engine(url)
            _enable_sqlite_pragmas(engine)
            if _current_revision(engine) != HEAD_REVISION:
                _migrate(engine)
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open store {safe_url(url)}: {describe(exc)}") from exc
    except ImportError as exc:  # the URL's driver (e.g. psycopg) is not installed
        raise StorageError(
            f"cannot open store {safe_url(url)}: its database driver {exc.name or ''} is not "
            "installed (PostgreSQL: pip install 'prdigest[postgres]')"
        ) from exc
    return engine
