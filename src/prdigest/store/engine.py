"""The database engine: where a store lives, how it is opened, and its migrations.

A target is a path (SQLite) or a SQLAlchemy URL (``postgresql+psycopg://…``). Opening creates
and migrates the schema as needed (alembic, ``migrations/``). Timestamps go in as naive UTC
``DateTime`` so that window queries compare correctly on every backend.
"""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError

HEAD_REVISION = "0006"  # newest migration; a test keeps it equal to alembic's head


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
        # WAL keeps readers going while a sync writes; NORMAL is durable enough with WAL.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.close()


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
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def open_engine(target: str | Path) -> Engine:
    """An engine for the database at a path or URL, created and migrated as needed."""
    url = url_for(target)
    if url.startswith("sqlite:///"):
        db_path = Path(url.removeprefix("sqlite:///"))
        if str(db_path) != ":memory:":
            try:
                db_path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create {db_path.parent}: {exc.strerror}") from exc
    try:
        engine = create_engine(url)
        _enable_sqlite_pragmas(engine)
        if _current_revision(engine) != HEAD_REVISION:
            _migrate(engine)
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open store {safe_url(url)}: {exc.__class__.__name__}") from exc
    except ImportError as exc:  # the URL's driver (e.g. psycopg) is not installed
        raise StorageError(
            f"cannot open store {safe_url(url)}: its database driver {exc.name or ''} is not "
            "installed (PostgreSQL: pip install 'prdigest[postgres]')"
        ) from exc
    return engine
